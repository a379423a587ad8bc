//! Deferred discovery: large catalogs stay out of the prompt. A request
//! carries the eager tools plus `tool_search`; the model states what it
//! needs in natural language, and the chosen tools' schemas are disclosed
//! for the next request, within a context budget.
//!
//! - **Exposure.** Tools are eager or deferred (`#[tool(deferred)]`,
//!   [`ToolRegistry::register_as`], configuration). [`Discovery`] refuses a
//!   registry with deferred tools but no `tool_search`, or with every tool
//!   deferred.
//! - **`tool_search`** takes 1 to 8 intents; each is ranked on its first
//!   500 characters (a longer one is cut at a word and the answer says so). Per
//!   intent it answers at most one selected tool and up to five candidates
//!   (name, one-line summary, score). An intent that is exactly a tool's
//!   name or alias selects it. The local ranker is BM25 over names,
//!   tags, descriptions and parameters, where a request's words also reach
//!   related words a tool uses instead, for a small share of the score
//!   (`associations`). The local rule: the top candidate is
//!   selected when it matched at least [`SELECT_MIN_COVERAGE`] of the
//!   intent's weight and its confidence (coverage times its lead over the
//!   runner-up) reaches [`SELECT_MIN_CONFIDENCE`];
//!   otherwise the answer is none. Candidates are the deferred tools the
//!   request's view allows; eager tools never are.
//! - **Loading.** A selected tool loads. An intent with no selection loads
//!   the head of its ranking as [`DisclosurePolicy`] says (by default up
//!   to five candidates scoring at least a fifth of the first one's, when
//!   the first matched at least 35% of the intent's weight), within a
//!   quarter of the budget per search, and the answer names them.
//! - **Budget.** Tools load in order while their estimated schema tokens
//!   ([`schema_tokens`]) fit the run's budget; the result says which did
//!   not fit and why.
//! - **Disclosure is authorization.** Disclosure lives in the run's slot of
//!   the run ledger (the executor's, when built with
//!   [`DiscoveryBuilder::ledger`]) and grows only inside the `tool_search` body, from the
//!   answer the backend gave it: a middleware's substitute result, a hook's
//!   feedback or the model's own text cannot add a tool. A deferred tool
//!   not disclosed is not in [`ToolRequest::offered`], so calling it is
//!   `tool_not_available` even under its exact name; disclosed tools still
//!   pass the permission stage.
//!
//! ```
//! use std::sync::Arc;
//!
//! use iris_core::{RunId, ToolContext};
//! use iris_runtime::ToolRegistry;
//! use iris_tools::discovery::{Discovery, ToolSearch};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut registry = ToolRegistry::new();
//! registry.register(ToolSearch)?;
//! // ... eager and deferred tools ...
//! # #[iris_macros::tool(crate = "::iris_core", read_only)] /// Say hi.
//! # fn hello() -> &'static str { "hi" }
//! # registry.register(Hello)?;
//! let registry = Arc::new(registry);
//! let discovery = Arc::new(Discovery::builder(Arc::clone(&registry)).build()?);
//!
//! // For each model request:
//! let run = RunId::new("run-1");
//! let request = discovery.request(&registry.view(), &run);
//! let cx = ToolContext::builder(".", run)
//!     .offered(request.offered.iter().cloned())
//!     .shared_state(Arc::clone(&discovery))
//!     .build();
//! // send `request.specs`, execute the calls with `cx`
//! # let _ = cx;
//! # Ok(())
//! # }
//! ```

mod associations;
mod backend;
mod budget;
#[cfg(feature = "decision")]
pub mod decision;
mod disclosure;
mod index;
mod parameters;
mod postings;
mod tokenize;
mod tool_search;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use iris_core::{Exposure, RunId, ToolContext, ToolErrorKind, ToolName, ToolResult, ToolSpec};
use rustc_hash::FxHashSet;
use serde_json::{Value, json};

use iris_runtime::RuntimeError;
use iris_runtime::ledger::RunLedger;
use iris_runtime::{SharedRegistry, ToolRegistry, ToolRegistryView};

pub use backend::{
    CANDIDATES_PER_INTENT, Candidate, IntentAnswer, LocalRanker, RankedCandidate, Ranking,
    SELECT_MIN_CONFIDENCE, SELECT_MIN_COVERAGE, SearchAnswer, SearchBackend, SearchFailure,
    SearchScope, SelectionRule, candidate_of,
};
pub use budget::{CHARS_PER_TOKEN, DEFAULT_BUDGET_TOKENS, schema_tokens};
pub use disclosure::{
    DisclosurePolicy, LOAD_HEAD_RATIO, LOAD_MAX_TOOLS, LOAD_MIN_COVERAGE, LOAD_SEARCH_SHARE,
};
pub use index::{Explanation, SearchIndex, TermGain, TermSource};
pub use tool_search::{ToolSearch, tool_search};

/// The name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";
/// Most intents in one search.
pub const MAX_INTENTS: usize = 8;
/// Most characters of one intent that are ranked; a longer intent is
/// ranked on its first this many, and the answer says so.
pub const MAX_INTENT_CHARS: usize = 500;

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
struct Disclosure {
    /// The deferred tools the run's latest request allowed.
    allowed: Option<Arc<FxHashSet<ToolName>>>,
    /// Disclosed tools with their estimated tokens, in disclosure order.
    disclosed: Vec<(ToolName, usize)>,
}

/// The discovery service: search backend, budget, and each run's
/// disclosures. Put it in the context as shared state.
pub struct Discovery {
    registry: SharedRegistry,
    /// The ranking index over the deferred tools of one snapshot of the
    /// registry: built once, and again only after the registry changed
    /// (an MCP server's tools refreshed), by the first search that sees it.
    indexed: ArcSwap<Indexed>,
    /// Held while the index is rebuilt, so concurrent searches build once.
    reindexing: Mutex<()>,
    backend: Arc<dyn SearchBackend>,
    budget_tokens: usize,
    /// What a search loads when it selects nothing.
    policy: DisclosurePolicy,
    /// Where each run's disclosure is kept.
    ledger: Arc<RunLedger>,
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
struct Indexed {
    registry: Arc<ToolRegistry>,
    index: SearchIndex,
}

impl Indexed {
    fn of(registry: Arc<ToolRegistry>) -> Self {
        Self {
            index: SearchIndex::of_deferred(&registry),
            registry,
        }
    }
}

/// Builds a [`Discovery`].
#[must_use]
pub struct DiscoveryBuilder {
    registry: SharedRegistry,
    backend: Arc<dyn SearchBackend>,
    budget_tokens: usize,
    policy: DisclosurePolicy,
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
    /// least 35% of the intent; [`DisclosurePolicy::selected_only`] loads
    /// only selections).
    pub fn disclosure(mut self, policy: DisclosurePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Checks the registry and finishes.
    ///
    /// # Errors
    /// [`RuntimeError::DeferredWithoutSearch`] when tools are deferred but
    /// `tool_search` is not registered (or is itself deferred);
    /// [`RuntimeError::EveryToolDeferred`] when no tool but `tool_search`
    /// is eager.
    pub fn build(self) -> Result<Discovery, RuntimeError> {
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
            return Err(RuntimeError::DeferredWithoutSearch {
                deferred: list_names(&deferred),
            });
        }
        let other_eager = registry
            .tools()
            .map(|t| t.definition_dyn())
            .any(|d| d.exposure() == Exposure::Eager && d.name() != TOOL_SEARCH);
        if !other_eager {
            return Err(RuntimeError::EveryToolDeferred {
                count: deferred.len(),
            });
        }
        Ok(Discovery {
            indexed: ArcSwap::from_pointee(Indexed::of(registry)),
            reindexing: Mutex::new(()),
            registry: self.registry,
            backend: self.backend,
            budget_tokens: self.budget_tokens,
            policy: self.policy,
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
    fn indexed(&self) -> Arc<Indexed> {
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
        let fresh = Arc::new(Indexed::of(current));
        self.indexed.store(Arc::clone(&fresh));
        fresh
    }

    /// The body of `tool_search`: the only place disclosure grows.
    pub(crate) async fn search(&self, cx: &ToolContext, intents: Vec<String>) -> ToolResult {
        if let Err(message) = check_intents(&intents) {
            return ToolResult::error(ToolErrorKind::InvalidArguments, message);
        }
        // Long intents are ranked on a bounded prefix rather than refused.
        let shortened: Vec<bool> = intents.iter().map(|i| bounded(i).is_some()).collect();
        let intents: Vec<String> = intents
            .into_iter()
            .map(|intent| bounded(&intent).unwrap_or(intent))
            .collect();
        let allowed = self
            .ledger
            .read_slot(cx.run_id(), |s: &Disclosure| s.allowed.clone())
            .flatten();
        let indexed = self.indexed();
        let scope = SearchScope {
            registry: &indexed.registry,
            index: std::borrow::Cow::Borrowed(&indexed.index),
            allowed: allowed.as_deref().map(std::borrow::Cow::Borrowed),
            eager_too: false,
        };

        // Exact names answer themselves; the rest go to the backend.
        let mut answers: Vec<Option<IntentAnswer>> = intents
            .iter()
            .map(|intent| exact_answer(intent, &scope))
            .collect();
        let open: Vec<String> = intents
            .iter()
            .zip(&answers)
            .filter(|(_, a)| a.is_none())
            .map(|(i, _)| i.clone())
            .collect();
        let mut metadata = None;
        if !open.is_empty() {
            match self.backend.search(&open, &scope).await {
                Ok(answer) => {
                    metadata = answer.metadata;
                    let mut backend_answers = answer.intents.into_iter();
                    for slot in answers.iter_mut().filter(|a| a.is_none()) {
                        *slot = backend_answers.next();
                    }
                }
                Err(failure) => {
                    let mut result = ToolResult::error(
                        ToolErrorKind::Execution,
                        format!("tool_search failed: {}", failure.message),
                    );
                    if let Some((key, value)) = failure.metadata {
                        result = result.with_stat(key, value);
                    }
                    return result;
                }
            }
        }
        let answers: Vec<IntentAnswer> = answers
            .into_iter()
            .zip(&intents)
            .map(|(answer, intent)| {
                let mut answer = answer.unwrap_or_else(|| IntentAnswer {
                    intent: intent.clone(),
                    selected: None,
                    candidates: Vec::new(),
                });
                // Whatever a backend says, only the scope's tools count.
                answer.selected = answer.selected.filter(|n| scope.contains(n.as_str()));
                answer
                    .candidates
                    .retain(|c| scope.contains(c.name.as_str()));
                answer
            })
            .collect();

        let loading = self.disclose(cx.run_id(), &answers, &indexed.registry);
        let text = describe(&answers, &shortened, &loading, self.budget_tokens);
        let shortened: Vec<usize> = shortened
            .iter()
            .enumerate()
            .filter(|(_, cut)| **cut)
            .map(|(i, _)| i + 1)
            .collect();
        let mut result = ToolResult::text(text).with_data(json!({
            "intents": answers,
            "shortened_intents": shortened,
            "loaded": loading.loaded,
            "already_loaded": loading.already,
            "not_loaded": loading.not_loaded,
            "backend": self.backend.name(),
        }));
        if let Some((key, value)) = metadata {
            result = result.with_stat(key, value);
        }
        result
    }

    /// Adds what each intent loads to the run's disclosure, intent by
    /// intent, while it fits this search's share of the budget and the
    /// budget.
    fn disclose(&self, run: &RunId, answers: &[IntentAnswer], registry: &ToolRegistry) -> Loading {
        let mut loading = Loading::default();
        let mut wanted: Vec<&ToolName> = Vec::new();
        for name in answers.iter().flat_map(|a| self.policy.to_load(a)) {
            if !wanted.contains(&name) {
                wanted.push(name);
            }
        }
        let search_tokens = self.policy.search_tokens(self.budget_tokens);
        self.ledger.with_slot(run, |state: &mut Disclosure| {
            let mut used: usize = state.disclosed.iter().map(|(_, t)| t).sum();
            let mut this_search = 0_usize;
            for name in wanted {
                if state.disclosed.iter().any(|(n, _)| n == name) {
                    if !loading.already.contains(name) {
                        loading.already.push(name.clone());
                    }
                    continue;
                }
                let Some(tool) = registry.resolve(name.as_str()) else {
                    continue;
                };
                let tokens = schema_tokens(tool.definition_dyn());
                let selected = answers.iter().any(|a| a.selected.as_ref() == Some(name));
                // A candidate loaded without a selection stays within the
                // search's share; a selection only within the budget.
                if !selected && this_search + tokens > search_tokens {
                    continue;
                }
                if used + tokens <= self.budget_tokens {
                    used += tokens;
                    this_search += tokens;
                    state.disclosed.push((name.clone(), tokens));
                    loading.loaded.push(name.clone());
                } else {
                    loading.not_loaded.push(json!({
                        "name": name,
                        "tokens": tokens,
                        "budget_left": self.budget_tokens.saturating_sub(used),
                        "reason": format!(
                            "its schema needs about {tokens} tokens and {} of the {}-token budget are left",
                            self.budget_tokens.saturating_sub(used),
                            self.budget_tokens
                        ),
                    }));
                }
            }
        });
        loading
    }
}

#[derive(Debug, Default)]
struct Loading {
    loaded: Vec<ToolName>,
    already: Vec<ToolName>,
    not_loaded: Vec<Value>,
}

fn check_intents(intents: &[String]) -> Result<(), String> {
    if intents.is_empty() || intents.len() > MAX_INTENTS {
        return Err(format!(
            "give 1 to {MAX_INTENTS} intents, one per separate need; got {}",
            intents.len()
        ));
    }
    for (i, intent) in intents.iter().enumerate() {
        if intent.trim().is_empty() {
            return Err(format!(
                "intent {} is empty; say what the tool should do",
                i + 1
            ));
        }
    }
    Ok(())
}

/// `intent` cut to its first [`MAX_INTENT_CHARS`] characters, at the last
/// word boundary before them when there is one; `None` when it fits.
fn bounded(intent: &str) -> Option<String> {
    let (cut, _) = intent.char_indices().nth(MAX_INTENT_CHARS)?;
    let head = &intent[..cut];
    let at_word = head
        .rfind(char::is_whitespace)
        .filter(|&space| space > cut / 2)
        .map_or(head, |space| &head[..space]);
    Some(at_word.trim_end().to_owned())
}

fn exact_answer(intent: &str, scope: &SearchScope<'_>) -> Option<IntentAnswer> {
    let tool = scope.registry().resolve(intent.trim())?;
    let definition = tool.definition_dyn();
    if !scope.contains(definition.name().as_str()) {
        return None;
    }
    Some(IntentAnswer {
        intent: intent.to_owned(),
        selected: Some(definition.name().clone()),
        candidates: vec![candidate_of(definition)],
    })
}

/// The short text the model reads.
fn describe(
    answers: &[IntentAnswer],
    shortened: &[bool],
    loading: &Loading,
    budget: usize,
) -> String {
    let mut out = String::new();
    for (i, answer) in answers.iter().enumerate() {
        let _ = write!(out, "{}. \"{}\": ", i + 1, clip(&answer.intent, 80));
        if shortened.get(i).copied().unwrap_or(false) {
            let _ = write!(out, "(ranked on its first {MAX_INTENT_CHARS} characters) ");
        }
        let closest: Vec<String> = answer
            .candidates
            .iter()
            .filter(|c| loading.loaded.contains(&c.name))
            .map(|c| format!("`{}`", c.name))
            .collect();
        match &answer.selected {
            Some(name) => {
                let _ = write!(out, "selected `{name}`");
            }
            None if !closest.is_empty() => {
                let _ = write!(
                    out,
                    "no single tool stands out, so the closest were loaded: {}",
                    closest.join(", ")
                );
            }
            None => out.push_str("no tool selected"),
        }
        let others: Vec<String> = answer
            .candidates
            .iter()
            .filter(|c| {
                Some(&c.name) != answer.selected.as_ref() && !loading.loaded.contains(&c.name)
            })
            .map(|c| match c.score {
                Some(score) => format!("`{}` ({score:.2}): {}", c.name, clip(&c.summary, 80)),
                None => format!("`{}`: {}", c.name, clip(&c.summary, 80)),
            })
            .collect();
        if !others.is_empty() {
            let _ = write!(out, "; other candidates: {}", others.join("; "));
        }
        out.push('\n');
    }
    if !loading.loaded.is_empty() {
        let names: Vec<String> = loading.loaded.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(
            out,
            "Loaded for your next request: {}. Call them then with the schema they come with.",
            names.join(", ")
        );
    }
    if !loading.already.is_empty() {
        let names: Vec<String> = loading.already.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(out, "Already available: {}.", names.join(", "));
    }
    for skipped in &loading.not_loaded {
        let _ = writeln!(
            out,
            "Not loaded: `{}`: {} (budget {budget} tokens). Narrow the search, or work with what is loaded.",
            skipped["name"].as_str().unwrap_or_default(),
            skipped["reason"].as_str().unwrap_or_default()
        );
    }
    if answers.iter().all(|a| a.selected.is_none()) && loading.loaded.is_empty() {
        out.push_str("Nothing was selected: rephrase an intent with the words a tool description would use, or name a candidate exactly.\n");
    }
    out.truncate(out.trim_end().len());
    out
}

/// `text` cut to `max` characters ending in `...`, for one line of a list.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max.saturating_sub(3)).collect();
        format!("{cut}...")
    }
}
