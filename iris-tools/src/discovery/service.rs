//! [`Discovery`]: the ranker's index over a registry's deferred tools
//! (rebuilt when the registry changes), each run's disclosures in the run
//! ledger, and the tools each model request carries.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use super::{
    DEFAULT_BUDGET_TOKENS, DisclosurePolicy, LocalRanker, SearchBackend, SearchIndex, TOOL_SEARCH,
    schema_tokens,
};

use arc_swap::ArcSwap;
use iris_core::{Exposure, RunId, ToolName, ToolSpec};
use rustc_hash::FxHashSet;

use super::DiscoveryError;
use super::meaning::{EncodeError, TextEncoder, ToolVectors, VectorCache};
use iris_runtime::ledger::RunLedger;
use iris_runtime::{SharedRegistry, ToolRegistry, ToolRegistryView};

/// The tools of one model request.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRequest {
    /// The specs to send: eager tools (with `tool_search`), then disclosed
    /// tools in the order they were disclosed.
    pub specs: Vec<ToolSpec>,
    /// Their canonical names, for `ToolContextBuilder::offered`.
    pub offered: Vec<ToolName>,
    /// The disclosed tools among them.
    pub disclosed: Vec<ToolName>,
    /// Estimated tokens of all the specs ([`schema_tokens`]).
    pub schema_tokens: usize,
}

/// One run's disclosure: discovery's slot in the run ledger.
#[derive(Debug, Default)]
pub(super) struct Disclosure {
    /// The deferred tools the run's latest request allowed.
    pub(super) allowed: Option<Arc<FxHashSet<ToolName>>>,
    /// Disclosed tools with their estimated tokens, in disclosure order.
    pub(super) disclosed: Vec<(ToolName, usize)>,
}

/// The discovery service: search backend, budget, and each run's
/// disclosures. Put it in the context as shared state.
pub struct Discovery {
    pub(super) registry: SharedRegistry,
    /// The ranking index over the deferred tools of one snapshot of the
    /// registry: built once, and again only after the registry changed
    /// (an MCP server's tools refreshed), by the first search that sees it.
    pub(super) indexed: ArcSwap<Indexed>,
    /// Held while the index is rebuilt, so concurrent searches build once.
    pub(super) reindexing: Mutex<()>,
    pub(super) backend: Arc<dyn SearchBackend>,
    pub(super) budget_tokens: usize,
    /// What a search loads when it selects nothing.
    pub(super) policy: DisclosurePolicy,
    /// The same for answers ranked with the encoder.
    pub(super) encoder_policy: DisclosurePolicy,
    /// The encoder and the tool vectors it made, when searches fuse meaning
    /// with words.
    pub(super) meaning: Option<Meaning>,
    /// Where each run's disclosure is kept.
    pub(super) ledger: Arc<RunLedger>,
}

/// The encoder of a discovery service and the vectors it made before, so
/// a registry that changed is indexed again without encoding the tools it
/// kept.
pub(super) struct Meaning {
    encoder: Arc<dyn TextEncoder>,
    cache: VectorCache,
}

impl std::fmt::Debug for Discovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discovery")
            .field("backend", &self.backend.name())
            .field("budget_tokens", &self.budget_tokens)
            .finish_non_exhaustive()
    }
}

/// A registry snapshot and the ranking index over its deferred tools.
pub(super) struct Indexed {
    pub(super) registry: Arc<ToolRegistry>,
    pub(super) index: SearchIndex,
}

impl Indexed {
    /// The index of `registry`'s deferred tools, with their vectors when
    /// there is an encoder.
    fn of(registry: Arc<ToolRegistry>, meaning: Option<&Meaning>) -> Result<Self, EncodeError> {
        let mut index = SearchIndex::of_deferred(&registry);
        if let Some(meaning) = meaning {
            let vectors = ToolVectors::of_index(
                &index,
                &registry,
                Arc::clone(&meaning.encoder),
                &meaning.cache,
            )?;
            index = index.with_vectors(Arc::new(vectors));
        }
        Ok(Self { registry, index })
    }
}

/// Builds a [`Discovery`].
#[must_use]
pub struct DiscoveryBuilder {
    registry: SharedRegistry,
    backend: Arc<dyn SearchBackend>,
    budget_tokens: usize,
    policy: DisclosurePolicy,
    encoder_policy: DisclosurePolicy,
    encoder: Option<Arc<dyn TextEncoder>>,
    ledger: Option<Arc<RunLedger>>,
}

impl DiscoveryBuilder {
    /// Keeps each run's disclosure in `ledger` (usually the executor's,
    /// [`ToolExecutor::ledger`](iris_runtime::ToolExecutor::ledger)), so that
    /// ending a run there forgets it; without it discovery keeps a ledger
    /// of its own, bounded as the executor's is.
    pub fn ledger(mut self, ledger: Arc<RunLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Uses `backend` instead of the local ranker.
    pub fn backend(mut self, backend: impl SearchBackend) -> Self {
        self.backend = Arc::new(backend);
        self
    }

    /// Uses a backend that is already shared.
    pub fn shared_backend(mut self, backend: Arc<dyn SearchBackend>) -> Self {
        self.backend = backend;
        self
    }

    /// Sets the tokens disclosed schemas may take per run
    /// (default [`DEFAULT_BUDGET_TOKENS`]).
    pub fn budget_tokens(mut self, tokens: usize) -> Self {
        self.budget_tokens = tokens;
        self
    }

    /// Sets what a search loads for an intent with no selected tool
    /// (default [`DisclosurePolicy::default`]: up to five candidates
    /// scoring at least a fifth of the first one's, when it matched at
    /// least 25% of the intent; [`DisclosurePolicy::selected_only`] loads
    /// only selections).
    pub fn disclosure(mut self, policy: DisclosurePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Ranks with `encoder` too: each deferred tool's name and description
    /// are encoded when the service is built (and again only for tools that
    /// changed, when the registry does), each intent when it is searched,
    /// and the local ranker fuses the cosine of the two with its word
    /// score, selecting and loading by [`SelectionRule::with_encoder`] and
    /// [`DisclosurePolicy::with_encoder`]. A backend set with
    /// [`backend`](Self::backend) gets the fused index in its scope.
    ///
    /// Costs: building encodes every deferred tool once (milliseconds
    /// each, on the calling thread); a search encodes its intents on a
    /// blocking thread; each tool's vector takes `4 × dimensions` bytes.
    ///
    /// [`SelectionRule::with_encoder`]: super::SelectionRule::with_encoder
    pub fn encoder(mut self, encoder: Arc<dyn TextEncoder>) -> Self {
        self.encoder = Some(encoder);
        self
    }

    /// Sets what a search ranked with the encoder loads for an intent with
    /// no selected tool (default [`DisclosurePolicy::with_encoder`]).
    pub fn encoder_disclosure(mut self, policy: DisclosurePolicy) -> Self {
        self.encoder_policy = policy;
        self
    }

    /// Checks the registry and finishes.
    ///
    /// # Errors
    /// [`DiscoveryError::DeferredWithoutSearch`] when tools are deferred but
    /// `tool_search` is not registered (or is itself deferred);
    /// [`DiscoveryError::EveryToolDeferred`] when no tool but `tool_search`
    /// is eager.
    pub fn build(self) -> Result<Discovery, DiscoveryError> {
        let registry = self.registry.snapshot();
        let deferred: Vec<String> = registry
            .tools()
            .map(|t| t.definition_dyn())
            .filter(|d| d.exposure() == Exposure::Deferred)
            .map(|d| d.name().to_string())
            .collect();
        let search_is_eager = registry
            .resolve(TOOL_SEARCH)
            .is_some_and(|t| t.definition_dyn().exposure() == Exposure::Eager);
        if !search_is_eager {
            return Err(DiscoveryError::DeferredWithoutSearch {
                deferred: list_names(&deferred),
            });
        }
        let other_eager = registry
            .tools()
            .map(|t| t.definition_dyn())
            .any(|d| d.exposure() == Exposure::Eager && d.name() != TOOL_SEARCH);
        if !other_eager {
            return Err(DiscoveryError::EveryToolDeferred {
                count: deferred.len(),
            });
        }
        let meaning = self.encoder.map(|encoder| Meaning {
            encoder,
            cache: VectorCache::default(),
        });
        let indexed = Indexed::of(registry, meaning.as_ref()).map_err(DiscoveryError::Encoder)?;
        Ok(Discovery {
            indexed: ArcSwap::from_pointee(indexed),
            reindexing: Mutex::new(()),
            registry: self.registry,
            backend: self.backend,
            budget_tokens: self.budget_tokens,
            policy: self.policy,
            encoder_policy: self.encoder_policy,
            meaning,
            ledger: self.ledger.unwrap_or_default(),
        })
    }
}

fn list_names(names: &[String]) -> String {
    const SHOWN: usize = 5;
    if names.is_empty() {
        return "(none yet)".to_owned();
    }
    let mut out = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let _ = write!(out, " and {} more", names.len() - SHOWN);
    }
    out
}

impl Discovery {
    /// Starts a discovery service over `registry` with the local ranker:
    /// a fixed registry, or the [`SharedRegistry`] of an executor
    /// ([`ToolExecutor::shared_registry`](iris_runtime::ToolExecutor::shared_registry)),
    /// whose changes searches then see.
    pub fn builder(registry: impl Into<SharedRegistry>) -> DiscoveryBuilder {
        DiscoveryBuilder {
            registry: registry.into(),
            backend: Arc::new(LocalRanker::default()),
            budget_tokens: DEFAULT_BUDGET_TOKENS,
            policy: DisclosurePolicy::default(),
            encoder_policy: DisclosurePolicy::with_encoder(),
            encoder: None,
            ledger: None,
        }
    }

    /// The tools of the next request of `run` within `view`: the eager
    /// ones, then those disclosed in this run that the view allows. The
    /// view's deferred tools become the candidates of the run's searches.
    #[must_use]
    pub fn request(&self, view: &ToolRegistryView, run: &RunId) -> ToolRequest {
        let mut specs = Vec::new();
        let mut offered = Vec::new();
        let mut allowed = FxHashSet::default();
        let mut schema_total = 0;
        for definition in view.definitions() {
            match definition.exposure() {
                Exposure::Eager => {
                    schema_total += schema_tokens(definition);
                    specs.push(definition.spec());
                    offered.push(definition.name().clone());
                }
                Exposure::Deferred => {
                    allowed.insert(definition.name().clone());
                }
            }
        }
        let mut disclosed = Vec::new();
        self.ledger.with_slot(run, |state: &mut Disclosure| {
            for (name, tokens) in &state.disclosed {
                let Some(tool) = view.registry().resolve(name.as_str()) else {
                    continue;
                };
                if allowed.contains(name) {
                    schema_total += tokens;
                    specs.push(tool.definition_dyn().spec());
                    offered.push(name.clone());
                    disclosed.push(name.clone());
                }
            }
            state.allowed = Some(Arc::new(allowed));
        });
        ToolRequest {
            specs,
            offered,
            disclosed,
            schema_tokens: schema_total,
        }
    }

    /// The tools disclosed in `run`, in disclosure order.
    #[must_use]
    pub fn disclosed(&self, run: &RunId) -> Vec<ToolName> {
        self.ledger
            .read_slot(run, |s: &Disclosure| {
                s.disclosed.iter().map(|(n, _)| n.clone()).collect()
            })
            .unwrap_or_default()
    }

    /// Restores what `run` had disclosed (as [`Discovery::disclosed`] gave
    /// it), for a run resumed from saved state, possibly in another process.
    /// Names that are no longer deferred tools of the registry are skipped,
    /// and the budget holds as for a search.
    pub fn restore_disclosed(&self, run: &RunId, names: &[ToolName]) {
        let registry = self.registry.snapshot();
        self.ledger.with_slot(run, |state: &mut Disclosure| {
            let mut used: usize = state.disclosed.iter().map(|(_, t)| t).sum();
            for name in names {
                if state.disclosed.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let Some(tool) = registry.resolve(name.as_str()) else {
                    continue;
                };
                let definition = tool.definition_dyn();
                if definition.exposure() != Exposure::Deferred {
                    continue;
                }
                let tokens = schema_tokens(definition);
                if used + tokens <= self.budget_tokens {
                    used += tokens;
                    state.disclosed.push((definition.name().clone(), tokens));
                }
            }
        });
    }

    /// The ledger each run's disclosure is kept in; ending a run there
    /// forgets what it disclosed.
    #[must_use]
    pub fn ledger(&self) -> &Arc<RunLedger> {
        &self.ledger
    }

    /// The backend's name.
    #[must_use]
    pub fn backend_name(&self) -> &str {
        self.backend.name()
    }

    /// The tokens disclosed schemas may take per run.
    #[must_use]
    pub fn budget_tokens(&self) -> usize {
        self.budget_tokens
    }

    /// The index of the registry as it stands: the one built before when
    /// the registry has not changed since, else a new one.
    pub(super) fn indexed(&self) -> Arc<Indexed> {
        let indexed = self.indexed.load_full();
        if Arc::ptr_eq(&indexed.registry, &self.registry.peek()) {
            return indexed;
        }
        let _one_at_a_time = self
            .reindexing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.registry.snapshot();
        let indexed = self.indexed.load_full();
        if Arc::ptr_eq(&indexed.registry, &current) {
            return indexed;
        }
        let fresh = match Indexed::of(Arc::clone(&current), self.meaning.as_ref()) {
            Ok(fresh) => fresh,
            Err(error) => {
                // The catalog changed and its new tools could not be
                // encoded: rank by words until the next change.
                tracing::warn!(%error, "tool search ranks by words alone until the registry changes again");
                Indexed {
                    index: SearchIndex::of_deferred(&current),
                    registry: current,
                }
            }
        };
        let fresh = Arc::new(fresh);
        self.indexed.store(Arc::clone(&fresh));
        fresh
    }

    /// What a search loads for `answer` without a selection: the encoder's
    /// policy when the answer was ranked with it.
    pub(super) fn policy_for(&self, answer: &super::IntentAnswer) -> &DisclosurePolicy {
        if answer
            .candidates
            .first()
            .is_some_and(|c| c.similarity.is_some())
        {
            &self.encoder_policy
        } else {
            &self.policy
        }
    }

    /// Whether searches fuse meaning with words.
    #[must_use]
    pub fn has_encoder(&self) -> bool {
        self.meaning.is_some()
    }
}
