//! What one search loads when it cannot single out a tool: the head of the
//! ranking, as far as it is flat, for requests some tool plausibly fits.
//!
//! A selected tool loads alone. Without a selection, the candidates whose
//! score is close to the first one's load too, up to a few, when the first
//! candidate matched enough of the request (a request no tool fits loads
//! nothing); so the right tool is usually loaded after one search instead
//! of after a second round trip. One search loads at most a share of the
//! run's budget. The defaults were chosen on the tuning half of a labelled
//! set (the most requests with a right tool loaded after one search, at
//! three schemas per search or fewer on average and with 70% of requests
//! no tool fits loading nothing) and reported on the other half in the
//! README's discovery section.

use iris_core::ToolName;

use super::backend::IntentAnswer;

/// How much a search loads for an intent with no selected tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DisclosurePolicy {
    /// Most tools loaded for one intent without a selection.
    pub max_tools: usize,
    /// A candidate loads only when its score is at least this share of the
    /// first candidate's.
    pub head_ratio: f32,
    /// Least share of the intent's weight the first candidate must match
    /// for anything to load without a selection.
    pub min_coverage: f32,
    /// Most share of the run's token budget one search loads.
    pub search_share: f32,
    /// Least similarity to the intent the first candidate needs for
    /// anything to load without a selection, when ranked with an encoder
    /// (ignored without one).
    pub min_similarity: f32,
}

/// Tools loaded for an intent without a selection, unless set.
pub const LOAD_MAX_TOOLS: usize = 5;
/// Share of the first candidate's score a loaded candidate needs, unless set.
pub const LOAD_HEAD_RATIO: f32 = 0.2;
/// Coverage the first candidate needs for a load without selection, unless set.
pub const LOAD_MIN_COVERAGE: f32 = 0.25;
/// Share of the budget one search loads at most, unless set.
pub const LOAD_SEARCH_SHARE: f32 = 0.25;

/// With an encoder: tools loaded for an intent without a selection...
///
/// Chosen on the tuning half of the labelled set as the word ranker's were
/// (`discovery_eval --encoder DIR --calibrate`), over the fused scores: the
/// most requests with a right tool loaded after one search, at three
/// schemas per search or fewer on average and with 70% of requests no tool
/// fits loading nothing. A request's similarity to its closest tool tells
/// "some tool fits" from "none does" far better than word coverage, so the
/// gate is on similarity and the head can be wider.
pub const ENCODER_LOAD_MAX_TOOLS: usize = 5;
/// ...the share of the first candidate's fused score a loaded one needs...
pub const ENCODER_LOAD_HEAD_RATIO: f32 = 0.2;
/// ...and the similarity the first candidate needs for anything to load.
pub const ENCODER_LOAD_MIN_SIMILARITY: f32 = 0.375;

impl Default for DisclosurePolicy {
    /// The policy of the word ranker alone.
    fn default() -> Self {
        Self {
            max_tools: LOAD_MAX_TOOLS,
            head_ratio: LOAD_HEAD_RATIO,
            min_coverage: LOAD_MIN_COVERAGE,
            search_share: LOAD_SEARCH_SHARE,
            min_similarity: 0.0,
        }
    }
}

impl DisclosurePolicy {
    /// A policy that loads only selected tools.
    #[must_use]
    pub fn selected_only() -> Self {
        Self {
            max_tools: 0,
            ..Self::default()
        }
    }

    /// The policy of rankings fused with an encoder: a gate on the first
    /// candidate's similarity instead of its word coverage.
    #[must_use]
    pub fn with_encoder() -> Self {
        Self {
            max_tools: ENCODER_LOAD_MAX_TOOLS,
            head_ratio: ENCODER_LOAD_HEAD_RATIO,
            min_coverage: 0.0,
            search_share: LOAD_SEARCH_SHARE,
            min_similarity: ENCODER_LOAD_MIN_SIMILARITY,
        }
    }

    /// How many of `ranked` (score and coverage of each candidate, best
    /// first) load for an intent without a selection; `similarity` is the
    /// first candidate's, when ranked with an encoder.
    #[must_use]
    pub fn head(&self, ranked: &[(f32, f32)], similarity: Option<f32>) -> usize {
        let Some(&(top, coverage)) = ranked.first() else {
            return 0;
        };
        if top <= 0.0 || coverage < self.min_coverage {
            return 0;
        }
        if similarity.is_some_and(|s| s < self.min_similarity) {
            return 0;
        }
        ranked
            .iter()
            .take(self.max_tools)
            .take_while(|(score, _)| *score >= top * self.head_ratio)
            .count()
    }

    /// What an intent's answer asks to load: its selected tool, or without
    /// one the flat head of its candidates.
    #[must_use]
    pub fn to_load<'a>(&self, answer: &'a IntentAnswer) -> Vec<&'a ToolName> {
        if let Some(selected) = &answer.selected {
            return vec![selected];
        }
        let ranked: Vec<(f32, f32)> = answer
            .candidates
            .iter()
            .map_while(|c| Some((c.score?, c.coverage?)))
            .collect();
        let similarity = answer.candidates.first().and_then(|c| c.similarity);
        let head = self.head(&ranked, similarity);
        answer
            .candidates
            .iter()
            .take(head)
            .map(|c| &c.name)
            .collect()
    }

    /// What the first search of a run loads for `answer` with a token
    /// `budget`, each with its schema's tokens (`tokens_of`): what
    /// [`to_load`](Self::to_load) asks, a candidate loaded without a
    /// selection only within this search's share of the budget.
    #[must_use]
    pub fn first_search<'a>(
        &self,
        answer: &'a IntentAnswer,
        tokens_of: impl Fn(&ToolName) -> usize,
        budget: usize,
    ) -> Vec<(&'a ToolName, usize)> {
        let share = self.search_tokens(budget);
        let mut loaded = Vec::new();
        let mut used = 0_usize;
        for name in self.to_load(answer) {
            let tokens = tokens_of(name);
            let selected = answer.selected.as_ref() == Some(name);
            if (!selected && used + tokens > share) || used + tokens > budget {
                continue;
            }
            used += tokens;
            loaded.push((name, tokens));
        }
        loaded
    }

    /// The tokens one search may load from a run's `budget`.
    #[must_use]
    pub fn search_tokens(&self, budget: usize) -> usize {
        let share = f64::from(self.search_share.clamp(0.0, 1.0));
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a share of a token count, rounded down"
        )]
        let tokens = (budget as f64 * share) as usize;
        tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_head_loads_up_to_the_limit_and_a_clear_leader_alone() {
        let policy = DisclosurePolicy {
            max_tools: 3,
            head_ratio: 0.5,
            ..DisclosurePolicy::default()
        };
        assert_eq!(
            policy.head(&[(10.0, 0.8), (9.0, 0.7), (8.0, 0.7), (7.5, 0.6)], None),
            3
        );
        assert_eq!(policy.head(&[(10.0, 0.8), (3.0, 0.2)], None), 1);
        assert_eq!(
            policy.head(&[(10.0, 0.1), (9.0, 0.1)], None),
            0,
            "nothing fits"
        );
        assert_eq!(policy.head(&[], None), 0);
        assert_eq!(
            DisclosurePolicy::selected_only().head(&[(10.0, 0.9)], None),
            0
        );
        assert_eq!(policy.search_tokens(8_000), 2_000);
    }

    #[test]
    fn with_an_encoder_similarity_decides_whether_anything_loads() {
        let policy = DisclosurePolicy::with_encoder();
        let ranked = [(0.6, 0.0), (0.5, 0.0), (0.2, 0.0)];
        assert_eq!(policy.head(&ranked, Some(0.55)), 3, "words matched nothing");
        assert_eq!(
            policy.head(&[(0.6, 0.0), (0.1, 0.0)], Some(0.55)),
            1,
            "a clear leader"
        );
        assert_eq!(
            policy.head(&ranked, Some(0.2)),
            0,
            "no tool is alike enough"
        );
        assert_eq!(
            DisclosurePolicy::default().head(&[(10.0, 0.8)], Some(0.0)),
            1,
            "the word policy sets no similarity gate"
        );
    }
}
