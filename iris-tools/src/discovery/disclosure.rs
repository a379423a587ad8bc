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
//! three schemas per search or fewer on average and with 85% of requests
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
}

/// Tools loaded for an intent without a selection, unless set.
pub const LOAD_MAX_TOOLS: usize = 5;
/// Share of the first candidate's score a loaded candidate needs, unless set.
pub const LOAD_HEAD_RATIO: f32 = 0.2;
/// Coverage the first candidate needs for a load without selection, unless set.
pub const LOAD_MIN_COVERAGE: f32 = 0.35;
/// Share of the budget one search loads at most, unless set.
pub const LOAD_SEARCH_SHARE: f32 = 0.25;

impl Default for DisclosurePolicy {
    fn default() -> Self {
        Self {
            max_tools: LOAD_MAX_TOOLS,
            head_ratio: LOAD_HEAD_RATIO,
            min_coverage: LOAD_MIN_COVERAGE,
            search_share: LOAD_SEARCH_SHARE,
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

    /// How many of `ranked` (score and coverage of each candidate, best
    /// first) load for an intent without a selection.
    #[must_use]
    pub fn head(&self, ranked: &[(f32, f32)]) -> usize {
        let Some(&(top, coverage)) = ranked.first() else {
            return 0;
        };
        if top <= 0.0 || coverage < self.min_coverage {
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
        let head = self.head(&ranked);
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
            policy.head(&[(10.0, 0.8), (9.0, 0.7), (8.0, 0.7), (7.5, 0.6)]),
            3
        );
        assert_eq!(policy.head(&[(10.0, 0.8), (3.0, 0.2)]), 1);
        assert_eq!(policy.head(&[(10.0, 0.1), (9.0, 0.1)]), 0, "nothing fits");
        assert_eq!(policy.head(&[]), 0);
        assert_eq!(DisclosurePolicy::selected_only().head(&[(10.0, 0.9)]), 0);
        assert_eq!(policy.search_tokens(8_000), 2_000);
    }
}
