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

/// With an encoder, the top candidate is selected when its similarity to
/// the request (the cosine of their vectors) reaches this...
///
/// Both thresholds were calibrated on the tuning half of the `MetaTool` set
/// for a selection precision of 0.90 over the fused ranking
/// (`discovery_eval --encoder DIR --calibrate`).
pub const ENCODER_SELECT_MIN_SIMILARITY: f32 = 0.425;
/// ...and its fused score leads the runner-up's by at least this share
/// (`1 − second / top`).
pub const ENCODER_SELECT_MIN_LEAD: f32 = 0.21;

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

impl SearchScope<'_> {
    /// The scope with each of its tools encoded by `encoder`, so that its
    /// rankings fuse meaning with words (as [`Discovery`](super::Discovery)
    /// does when built with an encoder). Encodes every tool once: make it
    /// once and ask it many times.
    ///
    /// # Errors
    /// When the encoder fails on a tool's text.
    pub fn with_encoder(
        mut self,
        encoder: std::sync::Arc<dyn super::TextEncoder>,
    ) -> Result<Self, super::EncodeError> {
        let vectors = super::ToolVectors::of_index(
            &self.index,
            self.registry,
            encoder,
            &super::meaning::VectorCache::default(),
        )?;
        let index = std::mem::take(self.index.to_mut());
        self.index = Cow::Owned(index.with_vectors(std::sync::Arc::new(vectors)));
        Ok(self)
    }
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

    /// The ranking index of the scope's tools (with their vectors, when
    /// encoded): its size and memory, for checking a catalog.
    #[must_use]
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// Whether rankings of this scope fuse meaning with words (its tools
    /// were encoded: [`with_encoder`](Self::with_encoder)).
    #[must_use]
    pub fn has_encoder(&self) -> bool {
        self.index.vectors().is_some()
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
    /// The cosine of the tool's and the intent's vectors (-1 to 1), when
    /// the ranker has an encoder: what decides, with the scores, whether
    /// anything loads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
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
    /// Least similarity of the top candidate to the intent, when ranked
    /// with an encoder (ignored without one).
    pub min_similarity: f32,
    /// Least share by which the top score leads the runner-up's.
    pub min_lead: f32,
}

impl Default for SelectionRule {
    /// The rule of the word ranker alone.
    fn default() -> Self {
        Self {
            min_coverage: SELECT_MIN_COVERAGE,
            min_confidence: SELECT_MIN_CONFIDENCE,
            min_similarity: 0.0,
            min_lead: 0.0,
        }
    }
}

impl SelectionRule {
    /// The rule of rankings fused with an encoder: similarity and lead,
    /// whatever words matched.
    #[must_use]
    pub fn with_encoder() -> Self {
        Self {
            min_coverage: 0.0,
            min_confidence: 0.0,
            min_similarity: ENCODER_SELECT_MIN_SIMILARITY,
            min_lead: ENCODER_SELECT_MIN_LEAD,
        }
    }
}

/// The default backend: BM25 over tool metadata, no index service; fused
/// with the cosine of sentence vectors when the index has them (discovery
/// built with an encoder).
#[derive(Debug, Clone, Copy)]
pub struct LocalRanker {
    rule: SelectionRule,
    encoder_rule: SelectionRule,
    word_weight: f32,
}

impl Default for LocalRanker {
    fn default() -> Self {
        Self {
            rule: SelectionRule::default(),
            encoder_rule: SelectionRule::with_encoder(),
            word_weight: super::ENCODER_WORD_WEIGHT,
        }
    }
}

impl LocalRanker {
    /// A ranker selecting by `rule` instead of the default when it ranks
    /// by words alone.
    #[must_use]
    pub fn with_rule(rule: SelectionRule) -> Self {
        Self {
            rule,
            ..Self::default()
        }
    }

    /// The ranker selecting by `rule` when it ranks with an encoder.
    #[must_use]
    pub fn with_encoder_rule(mut self, rule: SelectionRule) -> Self {
        self.encoder_rule = rule;
        self
    }

    /// The ranker fusing with an encoder at `weight` for the word score
    /// instead of [`ENCODER_WORD_WEIGHT`](super::ENCODER_WORD_WEIGHT).
    #[must_use]
    pub fn with_word_weight(mut self, weight: f32) -> Self {
        self.word_weight = weight;
        self
    }

    /// The rule this ranker selects by with words alone.
    #[must_use]
    pub fn rule(&self) -> SelectionRule {
        self.rule
    }

    /// The rule this ranker selects by with an encoder.
    #[must_use]
    pub fn encoder_rule(&self) -> SelectionRule {
        self.encoder_rule
    }

    /// The `limit` best tools of `scope` for `intent`, scored, with what
    /// the selection rule looks at and what it decides: for evaluating and
    /// debugging a catalog without running `tool_search`.
    #[must_use]
    pub fn rank(&self, intent: &str, scope: &SearchScope<'_>, limit: usize) -> Ranking {
        let vector = request_vector(intent, scope);
        let (ranked, selected) = self.scored(intent, vector.as_deref(), scope, limit);
        Ranking {
            candidates: ranked
                .iter()
                .filter_map(|scored| {
                    Some(RankedCandidate {
                        name: scope.definition_of(scored.tool)?.name().clone(),
                        score: scored.score,
                        coverage: scored.coverage,
                        similarity: scored.similarity,
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
        let vector = request_vector(intent, scope);
        self.answer_with(intent, vector.as_deref(), scope)
    }

    /// Answers one intent whose vector (with an encoder) is already made.
    fn answer_with(
        &self,
        intent: &str,
        vector: Option<&[f32]>,
        scope: &SearchScope<'_>,
    ) -> IntentAnswer {
        let (ranked, selected) = self.scored(intent, vector, scope, CANDIDATES_PER_INTENT);
        let candidates: Vec<Candidate> = ranked
            .iter()
            .filter_map(|scored| {
                let definition = scope.definition_of(scored.tool)?;
                Some(Candidate {
                    name: definition.name().clone(),
                    summary: summary_of(definition.description()),
                    score: Some((scored.score * 100.0).round() / 100.0),
                    coverage: Some((scored.coverage * 100.0).round() / 100.0),
                    similarity: scored.similarity.map(|s| (s * 100.0).round() / 100.0),
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

    /// The best `limit` of `scope` and the index id of the selected one;
    /// fused with meaning when the intent's `vector` is given.
    fn scored(
        self,
        intent: &str,
        vector: Option<&[f32]>,
        scope: &SearchScope<'_>,
        limit: usize,
    ) -> (Vec<Scored>, Option<u32>) {
        let index = &scope.index;
        // The runner-up is ranked even when one candidate is asked for: the
        // rule compares the two.
        let wanted = limit.max(2);
        let in_scope = |name: &str| scope.allowed.as_deref().is_none_or(|a| a.contains(name));
        // Only the scope's tools are indexed: an unrestricted scope needs no
        // check.
        let allowed: Option<&dyn Fn(&str) -> bool> = match scope.allowed {
            None => None,
            Some(_) => Some(&in_scope),
        };
        let (mut ranked, rule) = match (index.vectors(), vector) {
            (Some(vectors), Some(vector)) => (
                super::fusion::fused_search(
                    index,
                    (vectors, vector),
                    intent,
                    self.word_weight,
                    wanted,
                    allowed,
                ),
                self.encoder_rule,
            ),
            _ => (index.search(intent, wanted, allowed), self.rule),
        };
        let selected = match ranked.as_slice() {
            [top, rest @ ..] => rule
                .selects(
                    top.score,
                    rest.first().map(|s| s.score),
                    top.coverage,
                    top.similarity,
                )
                .then_some(top.tool),
            [] => None,
        };
        ranked.truncate(limit);
        (ranked, selected)
    }
}

impl SelectionRule {
    /// Whether a top candidate scoring `top` (matching `coverage` of the
    /// intent's weight, and as alike as `similarity` when ranked with an
    /// encoder) is selected over a runner-up scoring `second`.
    #[must_use]
    pub fn selects(
        self,
        top: f32,
        second: Option<f32>,
        coverage: f32,
        similarity: Option<f32>,
    ) -> bool {
        if top <= 0.0 || coverage < self.min_coverage {
            return false;
        }
        if similarity.is_some_and(|s| s < self.min_similarity) {
            return false;
        }
        let lead = second.map_or(1.0, |second| (1.0 - second / top).max(0.0));
        lead >= self.min_lead && coverage * lead >= self.min_confidence
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
    /// The cosine of the tool's and the intent's vectors, when ranked with
    /// an encoder (the score is then this plus a share of the word score).
    pub similarity: Option<f32>,
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
        Box::pin(async move {
            let vectors = match scope.index.vectors() {
                Some(vectors) => encode_requests(vectors, intents).await,
                None => None,
            };
            let intents = intents
                .iter()
                .enumerate()
                .map(|(i, intent)| {
                    let vector = vectors.as_ref().and_then(|v| v.get(i)).map(Vec::as_slice);
                    self.answer_with(intent, vector, scope)
                })
                .collect();
            Ok(SearchAnswer {
                intents,
                metadata: None,
            })
        })
    }
}

/// The vector of `intent` when the scope's index has vectors; `None`
/// without, or when the encoder fails (logged: the search then ranks by
/// words alone).
fn request_vector(intent: &str, scope: &SearchScope<'_>) -> Option<Vec<f32>> {
    let vectors = scope.index.vectors()?;
    vectors
        .encode_request(intent)
        .inspect_err(|error| tracing::warn!(%error, "ranking by words alone"))
        .ok()
}

/// The vectors of a search's intents, made on a blocking thread (encoding
/// is milliseconds of CPU work per intent, too long for an async worker);
/// `None` when the encoder fails (logged: the search ranks by words alone).
async fn encode_requests(
    vectors: &std::sync::Arc<super::ToolVectors>,
    intents: &[String],
) -> Option<Vec<Vec<f32>>> {
    let owned = std::sync::Arc::clone(vectors);
    let texts = intents.to_vec();
    let encode = move || {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        owned.encode_requests(&texts)
    };
    let encoded = match tokio::runtime::Handle::try_current() {
        Ok(runtime) => match runtime.spawn_blocking(encode).await {
            Ok(encoded) => encoded,
            Err(error) => Err(super::EncodeError::new(error.to_string())),
        },
        Err(_) => encode(),
    };
    encoded
        .inspect_err(|error| tracing::warn!(%error, "ranking by words alone"))
        .ok()
}

/// A candidate entry for a definition (used by backends that do not score).
#[must_use]
pub fn candidate_of(definition: &ToolDefinition) -> Candidate {
    Candidate {
        name: definition.name().clone(),
        summary: summary_of(definition.description()),
        score: None,
        coverage: None,
        similarity: None,
    }
}
