//! What a `tool_search` backend receives and answers, and the default
//! backend: the local ranker with its selection rule.

use iris_core::{BoxFuture, ToolDefinition, ToolName};
use rustc_hash::FxHashSet;
use serde::Serialize;
use serde_json::Value;

use std::borrow::Cow;

use super::index::summary_of;
use super::index::{Scored, SearchIndex};
use iris_runtime::{ToolRegistry, ToolRegistryView};

/// Candidates listed per intent.
pub const CANDIDATES_PER_INTENT: usize = 5;

/// The local selection rule: the top candidate is selected when it matched
/// at least this share of the intent's weight (IDF of its words; words no
/// tool has count fully, so requests about things the catalog lacks stay
/// unmatched)...
///
/// Both thresholds were calibrated on the tuning half of the `MetaTool` set
/// for a selection precision of 0.90 (`discovery_eval --calibrate`); on its
/// validation half a selection is right 0.86 of the time.
pub const SELECT_MIN_COVERAGE: f32 = 0.25;
/// ...and its confidence, the coverage times the share by which its score
/// leads the runner-up's (`coverage × (1 − second / top)`), reaches this;
/// otherwise the answer is none and the candidates let the model refine its
/// intent. A full match that leads a family of similar tools by a third is
/// selected; a partial match needs a wider lead.
pub const SELECT_MIN_CONFIDENCE: f32 = 0.2;

/// The deferred tools a search may choose from: those the request's view
/// allows.
pub struct SearchScope<'a> {
    pub(crate) registry: &'a ToolRegistry,
    /// The ranking index over the registry's deferred tools: borrowed from
    /// [`Discovery`](super::Discovery), which builds it once, or built here.
    pub(crate) index: Cow<'a, SearchIndex>,
    pub(crate) allowed: Option<Cow<'a, FxHashSet<ToolName>>>,
    /// Whether eager tools are candidates too (a catalog ranked as a whole).
    pub(crate) eager_too: bool,
}

impl<'a> SearchScope<'a> {
    /// Every deferred tool of `registry`, as when the view is unrestricted;
    /// builds the ranking index, so make it once and ask it many times.
    #[must_use]
    pub fn all(registry: &'a ToolRegistry) -> Self {
        Self {
            registry,
            index: Cow::Owned(SearchIndex::of_deferred(registry)),
            allowed: None,
            eager_too: false,
        }
    }

    /// Every tool of `registry`, eager ones too: the catalog ranked as a
    /// whole, as the command line's `search` shows how the ranker sees it.
    #[must_use]
    pub fn every_tool(registry: &'a ToolRegistry) -> Self {
        Self {
            registry,
            index: Cow::Owned(SearchIndex::build(
                registry.tools().map(|t| t.definition_dyn()),
            )),
            allowed: None,
            eager_too: true,
        }
    }

    /// Only the deferred tools `view` allows, as in a request made with
    /// that view (the index stays the whole registry's, so scores are the
    /// same ones a run would see).
    #[must_use]
    pub fn within(mut self, view: &ToolRegistryView) -> Self {
        let names: FxHashSet<ToolName> = view
            .definitions()
            .filter(|d| d.exposure() == iris_core::Exposure::Deferred)
            .map(|d| d.name().clone())
            .collect();
        self.allowed = Some(Cow::Owned(match self.allowed.take() {
            Some(before) => names.intersection(&before).cloned().collect(),
            None => names,
        }));
        self
    }

    /// How the tool `name` (canonical) scores for `intent`, term by term
    /// (whether or not it is a candidate); `None` when it is not indexed.
    #[must_use]
    pub fn explain(&self, intent: &str, name: &str) -> Option<super::Explanation> {
        self.index.explain(intent, name)
    }

    /// Whether `name` (canonical) is a candidate.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.registry
            .resolve(name)
            .is_some_and(|t| self.admits(t.definition_dyn()))
    }

    /// The candidate definitions, in registration order.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.registry
            .tools()
            .map(|t| t.definition_dyn())
            .filter(|d| self.admits(d))
    }

    fn admits(&self, definition: &ToolDefinition) -> bool {
        (self.eager_too || definition.exposure() == iris_core::Exposure::Deferred)
            && self
                .allowed
                .as_deref()
                .is_none_or(|a| a.contains(definition.name()))
    }

    pub(crate) fn registry(&self) -> &ToolRegistry {
        self.registry
    }

    /// The definition of the indexed tool `id`, from the registry the
    /// index was built from.
    fn definition_of(&self, id: u32) -> Option<&ToolDefinition> {
        self.registry
            .resolve(self.index.tool(id))
            .map(|tool| tool.definition_dyn())
    }
}

/// One tool offered for an intent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Canonical name.
    pub name: ToolName,
    /// The first sentence of its description.
    pub summary: String,
    /// Relevance, when the backend scores (higher is better).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// Share of the intent's weight the tool matched (0 to 1), when the
    /// backend measures it: with the scores, what decides how many
    /// candidates load when none is selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f32>,
}

/// The answer for one intent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntentAnswer {
    /// The intent as asked.
    pub intent: String,
    /// The selected tool, if one is good enough.
    pub selected: Option<ToolName>,
    /// A few candidates, best first.
    pub candidates: Vec<Candidate>,
}

/// What a backend answers for all intents of one search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchAnswer {
    /// One answer per intent, in order.
    pub intents: Vec<IntentAnswer>,
    /// What the backend reports about itself (for the result's `stats`).
    pub metadata: Option<(String, Value)>,
}

/// A failed search: the model reads the message as a tool error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SearchFailure {
    /// What went wrong and what to do.
    pub message: String,
    /// What the backend reports about the attempt.
    pub metadata: Option<(String, Value)>,
}

/// A `tool_search` backend: the same input and the same answer shape for
/// every backend.
pub trait SearchBackend: Send + Sync + 'static {
    /// A short name for logs and results (`local`, `decision`).
    fn name(&self) -> &str;

    /// Answers every intent, in order, choosing only from `scope`.
    fn search<'a>(
        &'a self,
        intents: &'a [String],
        scope: &'a SearchScope<'a>,
    ) -> BoxFuture<'a, Result<SearchAnswer, SearchFailure>>;
}

/// When the local ranker's top candidate is good enough to select.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelectionRule {
    /// Least share of the intent's weight the top candidate must match.
    pub min_coverage: f32,
    /// Least confidence: coverage times the share by which the top score
    /// leads the runner-up's.
    pub min_confidence: f32,
}

impl Default for SelectionRule {
    fn default() -> Self {
        Self {
            min_coverage: SELECT_MIN_COVERAGE,
            min_confidence: SELECT_MIN_CONFIDENCE,
        }
    }
}

/// The default backend: BM25 over tool metadata, no index service.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalRanker {
    rule: SelectionRule,
}

impl LocalRanker {
    /// A ranker selecting by `rule` instead of the default.
    #[must_use]
    pub fn with_rule(rule: SelectionRule) -> Self {
        Self { rule }
    }

    /// The rule this ranker selects by.
    #[must_use]
    pub fn rule(&self) -> SelectionRule {
        self.rule
    }

    /// The `limit` best tools of `scope` for `intent`, scored, with what
    /// the selection rule looks at and what it decides: for evaluating and
    /// debugging a catalog without running `tool_search`.
    #[must_use]
    pub fn rank(&self, intent: &str, scope: &SearchScope<'_>, limit: usize) -> Ranking {
        let (ranked, selected) = self.scored(intent, scope, limit);
        Ranking {
            candidates: ranked
                .iter()
                .filter_map(|scored| {
                    Some(RankedCandidate {
                        name: scope.definition_of(scored.tool)?.name().clone(),
                        score: scored.score,
                        coverage: scored.coverage,
                    })
                })
                .collect(),
            selected: selected
                .and_then(|id| scope.definition_of(id))
                .map(|d| d.name().clone()),
        }
    }

    /// Answers one intent.
    #[must_use]
    pub fn answer(&self, intent: &str, scope: &SearchScope<'_>) -> IntentAnswer {
        let (ranked, selected) = self.scored(intent, scope, CANDIDATES_PER_INTENT);
        let candidates: Vec<Candidate> = ranked
            .iter()
            .filter_map(|scored| {
                let definition = scope.definition_of(scored.tool)?;
                Some(Candidate {
                    name: definition.name().clone(),
                    summary: summary_of(definition.description()),
                    score: Some((scored.score * 100.0).round() / 100.0),
                    coverage: Some((scored.coverage * 100.0).round() / 100.0),
                })
            })
            .collect();
        IntentAnswer {
            intent: intent.to_owned(),
            selected: selected
                .and_then(|id| scope.definition_of(id))
                .map(|d| d.name().clone()),
            candidates,
        }
    }

    /// The best `limit` of `scope` and the index id of the selected one.
    fn scored(
        self,
        intent: &str,
        scope: &SearchScope<'_>,
        limit: usize,
    ) -> (Vec<Scored>, Option<u32>) {
        let index = &scope.index;
        // The runner-up is ranked even when one candidate is asked for: the
        // rule compares the two.
        let wanted = limit.max(2);
        let mut ranked = match scope.allowed.as_deref() {
            // Only the scope's tools are indexed: an unrestricted scope needs
            // no check.
            None => index.search(intent, wanted, None),
            Some(allowed) => {
                index.search(intent, wanted, Some(&|name: &str| allowed.contains(name)))
            }
        };
        let selected = match ranked.as_slice() {
            [top, rest @ ..] => self
                .rule
                .selects(top.score, rest.first().map(|s| s.score), top.coverage)
                .then_some(top.tool),
            [] => None,
        };
        ranked.truncate(limit);
        (ranked, selected)
    }
}

impl SelectionRule {
    /// Whether a top candidate scoring `top` (matching `coverage` of the
    /// intent's weight) is selected over a runner-up scoring `second`.
    #[must_use]
    pub fn selects(self, top: f32, second: Option<f32>, coverage: f32) -> bool {
        if top <= 0.0 || coverage < self.min_coverage {
            return false;
        }
        let lead = second.map_or(1.0, |second| (1.0 - second / top).max(0.0));
        coverage * lead >= self.min_confidence
    }
}

/// What [`LocalRanker::rank`] finds for one intent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranking {
    /// The best tools, best first.
    pub candidates: Vec<RankedCandidate>,
    /// The first candidate, when the selection rule accepts it.
    pub selected: Option<ToolName>,
}

/// One tool of a [`Ranking`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedCandidate {
    /// Canonical name.
    pub name: ToolName,
    /// BM25 score (higher is better; comparable within one catalog only).
    pub score: f32,
    /// Share of the intent's weight (IDF of its words) the tool matched,
    /// 0 to 1.
    pub coverage: f32,
}

impl SearchBackend for LocalRanker {
    fn name(&self) -> &'static str {
        "local"
    }

    fn search<'a>(
        &'a self,
        intents: &'a [String],
        scope: &'a SearchScope<'a>,
    ) -> BoxFuture<'a, Result<SearchAnswer, SearchFailure>> {
        let answer = SearchAnswer {
            intents: intents.iter().map(|i| self.answer(i, scope)).collect(),
            metadata: None,
        };
        Box::pin(std::future::ready(Ok(answer)))
    }
}

/// A candidate entry for a definition (used by backends that do not score).
#[must_use]
pub fn candidate_of(definition: &ToolDefinition) -> Candidate {
    Candidate {
        name: definition.name().clone(),
        summary: summary_of(definition.description()),
        score: None,
        coverage: None,
    }
}
