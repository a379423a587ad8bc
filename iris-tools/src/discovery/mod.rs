//! Deferred discovery: large catalogs stay out of the prompt. A request
//! carries the eager tools plus `tool_search`; the model states what it
//! needs in natural language, and the chosen tools' schemas are disclosed
//! for the next request, within a context budget.
//!
//! - **Exposure.** Tools are eager or deferred (`#[tool(deferred)]`,
//!   [`ToolRegistry::register_as`](iris_runtime::ToolRegistry::register_as), configuration). [`Discovery`] refuses a
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
//! - **Meaning (optional).** Built with an encoder
//!   ([`DiscoveryBuilder::encoder`]; `iris::discovery::encoder` runs
//!   all-MiniLM-L6-v2 in process), each deferred tool's name and description
//!   are encoded once per catalog and each intent per search; a tool's score
//!   is then the cosine of the two vectors plus [`ENCODER_WORD_WEIGHT`] times
//!   its word score relative to the intent's best, and selection and loading
//!   follow [`SelectionRule::with_encoder`] and
//!   [`DisclosurePolicy::with_encoder`], which gate on that similarity.
//! - **Loading.** A selected tool loads. An intent with no selection loads
//!   the head of its ranking as [`DisclosurePolicy`] says (by default up
//!   to five candidates scoring at least a fifth of the first one's, when
//!   the first matched at least 25% of the intent's weight), within a
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
//! | file | what it holds |
//! |---|---|
//! | `service.rs` | [`Discovery`]: the index over a registry, each run's disclosures, each request's tools |
//! | `tool_search.rs`, `search.rs` | the `tool_search` tool, and one search: intents, answers, loading |
//! | `backend.rs` | [`SearchBackend`] and the local ranker's selection rule |
//! | `disclosure.rs`, `budget.rs` | what a search loads beyond selections, and the token budget |
//! | `index.rs`, `postings.rs`, `tokenize.rs`, `parameters.rs`, `associations.rs` | the BM25 index: terms, postings, parameter text, related words |
//! | `meaning/` | the encoder trait, the tools' vectors and the fused ranking |
//! | `decision/` | the remote Decision backend (feature `decision`) |
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
mod error;
mod fusion;
mod index;
mod meaning;
mod parameters;
mod postings;
mod search;
mod service;
mod tokenize;
mod tool_search;

pub use backend::{
    CANDIDATES_PER_INTENT, Candidate, ENCODER_SELECT_MIN_LEAD, ENCODER_SELECT_MIN_SIMILARITY,
    IntentAnswer, LocalRanker, RankedCandidate, Ranking, SELECT_MIN_CONFIDENCE,
    SELECT_MIN_COVERAGE, SearchAnswer, SearchBackend, SearchFailure, SearchScope, SelectionRule,
    candidate_of,
};
pub use budget::{CHARS_PER_TOKEN, DEFAULT_BUDGET_TOKENS, schema_tokens};
pub use disclosure::{
    DisclosurePolicy, ENCODER_LOAD_HEAD_RATIO, ENCODER_LOAD_MAX_TOOLS, ENCODER_LOAD_MIN_SIMILARITY,
    LOAD_HEAD_RATIO, LOAD_MAX_TOOLS, LOAD_MIN_COVERAGE, LOAD_SEARCH_SHARE,
};
pub use fusion::ENCODER_WORD_WEIGHT;
pub use index::{Explanation, SearchIndex, TermGain, TermSource};
pub use meaning::{EncodeError, TextEncoder, ToolVectors};
pub use tool_search::{ToolSearch, tool_search};

/// The name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";
/// Most intents in one search.
pub const MAX_INTENTS: usize = 8;
/// Most characters of one intent that are ranked; a longer intent is
/// ranked on its first this many, and the answer says so.
pub const MAX_INTENT_CHARS: usize = 500;
pub use error::DiscoveryError;
pub use service::{Discovery, DiscoveryBuilder, ToolRequest};
