//! Words for ranking: names split at `_`, `-`, `.`, `/` and camelCase humps,
//! everything lowercased, stop words dropped (including the request
//! boilerplate models write: "can you help me find ..."), English words
//! reduced to their Snowball stems so "discovered" and "discover" meet, and
//! scripts written without spaces (Chinese, Japanese, Korean, Thai) indexed
//! as overlapping character pairs, as Lucene's CJK analyzer does.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Words that say nothing about which tool is wanted.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "against", "all", "also", "am", "among", "an", "and", "any",
    "are", "around", "as", "at", "be", "been", "before", "being", "between", "both", "but", "by",
    "can", "could", "did", "do", "does", "doing", "don", "down", "during", "each", "every", "few",
    "find", "for", "from", "further", "get", "give", "had", "has", "have", "having", "he", "help",
    "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "know",
    "let", "like", "may", "me", "might", "more", "most", "must", "my", "need", "no", "nor", "not",
    "now", "of", "on", "once", "only", "or", "other", "our", "out", "over", "own", "please",
    "same", "shall", "she", "should", "so", "some", "such", "tell", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "up", "use", "using", "very", "want", "was", "we", "were", "what", "when", "where", "which",
    "who", "whom", "whose", "why", "will", "with", "without", "would", "you", "your",
];

/// Calls `emit` with each indexable word of `text`, stemmed.
#[cfg(test)]
fn for_each_term(text: &str, mut emit: impl FnMut(&str)) {
    let mut stemmed = String::with_capacity(24);
    for_each_word(text, |word| {
        if term_of(word, &mut stemmed) {
            emit(&stemmed);
        }
    });
}

/// Calls `emit` with each word of `text`, lowercased, before stop words and
/// stemming: runs of letters and digits of two or more characters, and the
/// character pairs of runs in scripts written without spaces.
pub(crate) fn for_each_word(text: &str, mut emit: impl FnMut(&str)) {
    let mut word = String::with_capacity(24);
    let mut unspaced: Vec<char> = Vec::new();
    let mut previous_lower = false;
    for ch in text.chars() {
        if !ch.is_ascii() && is_unspaced_script(ch) {
            flush(&mut word, &mut emit);
            unspaced.push(ch);
            previous_lower = false;
            continue;
        }
        if !unspaced.is_empty() {
            flush_pairs(&mut unspaced, &mut word, &mut emit);
        }
        if ch.is_alphanumeric() {
            // A lower-to-upper step is a camelCase boundary.
            if ch.is_uppercase() && previous_lower && !word.is_empty() {
                flush(&mut word, &mut emit);
            }
            previous_lower = ch.is_lowercase() || ch.is_ascii_digit();
            if ch.is_ascii() {
                word.push(ch.to_ascii_lowercase());
            } else {
                word.extend(ch.to_lowercase());
            }
        } else {
            previous_lower = false;
            flush(&mut word, &mut emit);
        }
    }
    flush_pairs(&mut unspaced, &mut word, &mut emit);
    flush(&mut word, &mut emit);
}

/// Han, kana, Hangul and Thai: a request in them has no spaces between
/// words, so a whole sentence would otherwise be one token.
fn is_unspaced_script(ch: char) -> bool {
    matches!(ch,
        '\u{3040}'..='\u{30FF}'     // Hiragana, Katakana
        | '\u{3400}'..='\u{4DBF}'   // CJK Extension A
        | '\u{4E00}'..='\u{9FFF}'   // CJK Unified Ideographs
        | '\u{F900}'..='\u{FAFF}'   // CJK Compatibility Ideographs
        | '\u{AC00}'..='\u{D7AF}'   // Hangul syllables
        | '\u{0E00}'..='\u{0E7F}'   // Thai
        | '\u{20000}'..='\u{2FA1F}' // CJK Extensions B to F
    )
}

/// Emits each overlapping pair of a run (the character itself when the
/// run has one), then empties it.
fn flush_pairs(run: &mut Vec<char>, buffer: &mut String, emit: &mut impl FnMut(&str)) {
    match run.as_slice() {
        [] => return,
        [single] => {
            buffer.clear();
            buffer.push(*single);
            emit(buffer);
        }
        chars => {
            for pair in chars.windows(2) {
                buffer.clear();
                buffer.extend(pair);
                emit(buffer);
            }
        }
    }
    buffer.clear();
    run.clear();
}

fn flush(word: &mut String, emit: &mut impl FnMut(&str)) {
    if word.len() > 1 {
        emit(word);
    }
    word.clear();
}

/// The term a lowercased `word` indexes as, written to `out`; `false` for
/// a stop word.
pub(crate) fn term_of(word: &str, out: &mut String) -> bool {
    if is_stop_word(word) {
        return false;
    }
    stem_into(word, out);
    true
}

/// The terms of `text`, in order.
#[cfg(test)]
fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// Stop words as a set: checked for every word indexed, so a hash beats a
/// binary search of string comparisons.
fn is_stop_word(word: &str) -> bool {
    /// The longest stop word: longer words skip the lookup.
    const LONGEST: usize = 7;
    static SET: OnceLock<rustc_hash::FxHashSet<&'static str>> = OnceLock::new();
    if word.len() > LONGEST {
        return false;
    }
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect())
        .contains(word)
}

/// The Snowball English stem of an ASCII word; other words (numbers,
/// identifiers with digits, other scripts) are kept as they are.
fn stem_into(word: &str, out: &mut String) {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    out.clear();
    if !word.bytes().all(|b| b.is_ascii_lowercase()) {
        out.push_str(word);
        return;
    }
    let stemmer = STEMMER.get_or_init(|| Stemmer::create(Algorithm::English));
    out.push_str(&stemmer.stem(word));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_listed_once() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stop_word("the") && !is_stop_word("weather"));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
    }

    #[test]
    fn names_split_and_words_meet() {
        assert_eq!(terms("getWeatherForecast"), ["weather", "forecast"]);
        assert_eq!(terms("house_renting_tool"), ["hous", "rent", "tool"]);
        assert_eq!(terms("houses"), terms("house"));
        assert_eq!(terms("fs.read-file/v2"), ["fs", "read", "file", "v2"]);
        assert_eq!(terms("Can you help me find rentals?"), ["rental"]);
        assert_eq!(terms("rents"), terms("renting"));
        assert_eq!(terms("discovered"), terms("discover"));
        assert_eq!(terms("HTTPServer"), ["httpserver"]);
    }

    #[test]
    fn unspaced_scripts_become_character_pairs() {
        assert_eq!(terms("天气预报"), ["天气", "气预", "预报"]);
        assert_eq!(terms("北京 weather"), ["北京", "weather"]);
        assert_eq!(terms("查weather"), ["查", "weather"]);
        assert_eq!(terms("날씨를 알려줘"), ["날씨", "씨를", "알려", "려줘"]);
    }
}
