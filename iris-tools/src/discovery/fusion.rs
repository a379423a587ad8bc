//! One ranking from two signals: the cosine of a tool's vector and the
//! request's, plus a share of the word ranker's score relative to the
//! request's best.

use super::index::{Scored, SearchIndex};
use super::meaning::ToolVectors;

/// The word ranker's weight beside the cosine: a tool's fused score is its
/// cosine plus this times its BM25 score divided by the request's best
/// (so 0 to this much). Fitted on the tuning half of the evaluation set for
/// ranked top-1 (`discovery_eval --encoder DIR --calibrate`; 0.10 and 0.15
/// tie at 0.597 there, availability after one search breaks the tie):
/// words break ties among tools whose meaning is close, and meaning
/// reaches tools the request names in other words.
pub const ENCODER_WORD_WEIGHT: f32 = 0.1;

/// The best `limit` tools that `allowed` accepts, by fused score (the
/// word score weighing `word_weight` at the request's best); each with its
/// word coverage and its similarity.
pub(crate) fn fused_search(
    index: &SearchIndex,
    (vectors, request_vector): (&ToolVectors, &[f32]),
    request: &str,
    word_weight: f32,
    limit: usize,
    allowed: Option<&dyn Fn(&str) -> bool>,
) -> Vec<Scored> {
    if limit == 0 || index.is_empty() {
        return Vec::new();
    }
    // Every tool a word matched, with its score and coverage, by id.
    let lexical = index.search(request, usize::MAX, allowed);
    let best_word_score = lexical.first().map_or(0.0, |s| s.score);
    let mut words: Vec<(f32, f32)> = vec![(0.0, 0.0); index.len()];
    for scored in &lexical {
        if let Some(slot) = words.get_mut(scored.tool as usize) {
            *slot = (scored.score, scored.coverage);
        }
    }
    let word_scale = if best_word_score > 0.0 {
        word_weight / best_word_score
    } else {
        0.0
    };
    let mut fused: Vec<Scored> = Vec::with_capacity(index.len());
    for id in 0..u32::try_from(index.len()).unwrap_or(u32::MAX) {
        let (word_score, coverage) = words[id as usize];
        // A tool indexed after the vectors were made ranks by words alone.
        let similarity = vectors.similarity(id, request_vector);
        if similarity.is_none() && word_score == 0.0 {
            continue;
        }
        if allowed.is_some_and(|ok| !ok(index.tool(id))) {
            continue;
        }
        fused.push(Scored {
            tool: id,
            score: similarity.unwrap_or(0.0) + word_score * word_scale,
            coverage,
            similarity,
        });
    }
    let by_score = |a: &Scored, b: &Scored| b.score.total_cmp(&a.score).then(a.tool.cmp(&b.tool));
    if fused.len() > limit {
        fused.select_nth_unstable_by(limit, by_score);
        fused.truncate(limit);
    }
    fused.sort_unstable_by(by_score);
    fused
}
