//! Related words, for requests that name what a tool does in other words
//! than its description: "temperature" for a weather tool, "price" for a
//! discount finder. Plain BM25 gives such a tool nothing.
//!
//! The table maps an English stem to its closest stems (at most six, with a
//! cosine similarity of 0.65 or more, written as 65 to 100). It was computed
//! once from a sentence encoder's view of each whole word of its English
//! vocabulary, without looking at any tool catalog; `data/
//! make_word_associations.py` says how and rebuilds it. It ships inside the
//! crate (no download, no model at run time) and is parsed once per
//! process, on the first search that needs it.
//!
//! A related stem adds [`RELATED_SHARE`] of its BM25 gain, scaled by the
//! similarity, and never counts toward coverage: a tool matched only
//! through related words can rank but is not selected on them alone. The
//! share was chosen on the tuning half of the evaluation set and kept
//! because the validation half improved with it.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

/// The share of a related stem's BM25 gain that a match earns, before the
/// similarity is applied.
pub(crate) const RELATED_SHARE: f32 = 0.2;

static TABLE: &str = include_str!("../../data/word_associations.txt");

/// Stem to the rest of its line: `stem:similarity` pairs, closest first.
fn table() -> &'static FxHashMap<&'static str, &'static str> {
    static PARSED: OnceLock<FxHashMap<&'static str, &'static str>> = OnceLock::new();
    PARSED.get_or_init(|| {
        TABLE
            .lines()
            .filter_map(|line| line.split_once(' '))
            .collect()
    })
}

/// Calls `emit` with each stem related to `stem` and its similarity, 0 to 1.
pub(crate) fn for_each_related(stem: &str, mut emit: impl FnMut(&str, f32)) {
    let Some(related) = table().get(stem) else {
        return;
    };
    for pair in related.split(' ') {
        let Some((other, similarity)) = pair.rsplit_once(':') else {
            continue;
        };
        if let Ok(similarity) = similarity.parse::<u8>() {
            emit(other, f32::from(similarity) / 100.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn related(stem: &str) -> Vec<(String, f32)> {
        let mut out = Vec::new();
        for_each_related(stem, |other, similarity| {
            out.push((other.to_owned(), similarity));
        });
        out
    }

    #[test]
    fn every_line_is_a_stem_and_similar_pairs_closest_first() {
        for line in TABLE.lines() {
            let (stem, rest) = line.split_once(' ').unwrap_or((line, ""));
            assert!(
                !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_lowercase()),
                "{line}"
            );
            let similarities: Vec<u8> = rest
                .split(' ')
                .map(|pair| {
                    let (other, similarity) = pair.rsplit_once(':').unwrap_or(("", ""));
                    assert!(other.bytes().all(|b| b.is_ascii_lowercase()), "{line}");
                    similarity.parse().unwrap_or(0)
                })
                .collect();
            assert!((1..=6).contains(&similarities.len()), "{line}");
            assert!(
                similarities.iter().all(|s| (65..=100).contains(s)),
                "{line}"
            );
            assert!(similarities.windows(2).all(|w| w[0] >= w[1]), "{line}");
        }
    }

    #[test]
    fn related_words_meet_and_unknown_words_have_none() {
        let temperature = related("temperatur");
        assert!(
            temperature.iter().any(|(s, _)| s == "colder"),
            "{temperature:?}"
        );
        assert!(temperature.iter().all(|(_, w)| (0.65..=1.0).contains(w)));
        assert!(related("discount").iter().any(|(s, _)| s == "price"));
        assert!(related("zzzzqx").is_empty());
    }
}
