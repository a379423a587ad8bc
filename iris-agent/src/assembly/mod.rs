//! Agents assembled from one YAML file (feature `assembly`): the tools, hooks,
//! middleware, permissions, limits, discovery and Decision backend, built
//! from functions and factories the file names.
//!
//! Assembly decides what capabilities an agent has; what is disclosed to the
//! model on a step is discovery's, and whether one call may run is the
//! executor's.
//!
//! ```yaml
//! # yaml-language-server: $schema=agent.schema.json
//! name: ops-agent
//! instructions: "You keep the build green."   # or instructions_file: prompt.md
//! model: { provider: openai_chat, model: gpt-4.1-mini, api_key_env: OPENAI_API_KEY }
//! tools:
//!   builtin: [file.read, file.write, file.edit]
//!   functions: [square, my_crate::math::cube]
//!   command:
//!     - name: count_words
//!       description: Count the words of a text.
//!       command: [python3, tools/count.py]     # the arguments as JSON on stdin
//!       parameters: { text: { type: string, description: The text } }
//!       capabilities: [read_only]
//!   deferred: [cube]
//! hooks:
//!   - name: explain-result
//!     event: tool.after
//!     tools: [square]
//!     handler: { type: factory, factory: create_feedback, options: { text: "Squares are never negative." } }
//!   - name: audit
//!     event: tool.before
//!     handler: { type: command, command: ["./hooks/audit.sh"], timeout: 5s, env: { TOKEN: "${AUDIT_TOKEN}" } }
//! middleware:
//!   tools: [ { factory: create_timing } ]
//! permissions: { read_only: allow, write: ask, exec: deny, tools: { write_file: allow } }
//! limits: { max_steps: 40, max_concurrency: 8, timeout: 300s, max_result_chars: 40000 }
//! decision: { path: decision.yaml }
//! context_policy: { enabled: true, deferred_tools: true }
//! ```
//!
//! # Keys
//!
//! | key | what |
//! |---|---|
//! | `name` | the agent's name (required) |
//! | `instructions` / `instructions_file` | the system instructions, or a file holding them (in the agent file's folder, at most 1 MiB); not both |
//! | `model.provider` | `openai_chat`, `openai_responses`, `anthropic` or `gemini` (each needs its Iris feature) |
//! | `model.model`, `model.base_url`, `model.temperature`, `model.max_tokens` | which model, another endpoint of the same API, sampling |
//! | `telemetry` | where traces go: `otlp` (a collector's OTLP/HTTP address; `iris run --otlp` overrides it), `service_name`, `capture_content` (record messages, instructions, tool definitions, arguments and results, each cut at 8 KiB; off by default) |
//! | `model.profile` | the server behind an `openai_chat` endpoint, whose dialect requests follow: `openai` (the default), `llama_cpp`, `vllm`, `ollama` or `lm_studio` (the other providers' adapters do not read it) |
//! | `model.api_key_env` | the variable holding the API key: its name ends in `_API_KEY` (a file cannot send another secret to the endpoint it names) and it must be set (its value never appears in errors or `Debug`) |
//! | `tools.builtin` | `file.read`, `file.write`, `file.edit` (the tools `read_file`, `write_file`, `edit_file`) |
//! | `tools.functions` | `#[tool]` functions, by name (`square`) or module path (`my_crate::math::square`) |
//! | `tools.mcp` | MCP servers (feature `mcp`), each as the `McpServerConfig` of `iris::mcp::client` reads it; load the file with `Agent::connect(path).await`, which starts them |
//! | `tools.command[]` | a tool whose body is a program, never run by a shell: `name`, `description`, `command` (argv; a relative program path is taken from `cwd`), `parameters` (`{name: {type, description, optional, enum, items}}`) or `input_schema` (a JSON Schema object), `capabilities`, `output` (`auto`: JSON when stdout is JSON; `text`; `json`), `timeout`, `env`, `cwd` (relative to the agent file, its folder by default). The arguments, checked against the schema, arrive as JSON on stdin; a non-zero exit is an error with the end of stderr; the bounds and cleanup of command hooks apply (4 MiB of stdout) |
//! | `tools.deferred` | tools, by the name the model calls, kept out of requests until `tool_search` finds them (`tool_search` is then added) |
//! | `hooks[].name`, `hooks[].event` | a name for logs; `tool.before`, `tool.after`, `run.started` or `run.finished` |
//! | `hooks[].tools` | only calls of these tools, by the name the model calls (`write_file`, never `file.write`); run events take none |
//! | `hooks[].timeout` | the hook's deadline (`5s`, `2m`, `250ms` or a number of seconds; 30 seconds when left out) |
//! | `hooks[].handler.type: factory` | `factory` names a `#[hook_factory]` function, `options` are its typed options |
//! | `hooks[].handler.type: command` | `command` is the program and its arguments; `env` adds variables (`${NAME}` takes the host's, which must be set); `cwd` is relative to the agent file; `timeout` |
//! | `middleware.tools[]` | `factory` names a `#[middleware_factory]` function, `options` its options; outermost first |
//! | `permissions.read_only`, `.write`, `.exec`, `.other` | `allow`, `ask` or `deny` per capability (defaults: read-only allowed, the rest asks) |
//! | `permissions.tools` | per tool, by the name the model calls; these come first |
//! | `limits.max_steps` | most model steps per run (for the runner) |
//! | `limits.max_concurrency`, `limits.timeout`, `limits.max_result_chars` | calls at once, a call's deadline, the longest result read whole |
//! | `decision.path` | a `decision.yaml` (relative to the agent file) for the remote `tool_search` backend (feature `decision`) |
//! | `context_policy.enabled`, `.deferred_tools` | whether deferral applies; with either false every tool is sent on every step |
//! | `context_policy.results_budget` | characters of tool results one request may carry; past it, older results of read-only tools go to the model as previews with a handle, and the added `read_history` tool gives them back (off when left out) |
//! | `skills.roots` | folders Agent Skills are found under: relative to the agent file the project's, `~/…` the user's (default `.agents/skills` beside the file and `~/.agents/skills`); project skills win |
//! | `agents[].skills` | skills the child starts with, active (its own or this agent's) |
//! | `output.schema`, `.schema_file`, `.name`, `.retries` | what the final answer must be: a JSON Schema (inline, or a JSON or YAML file beside this one) sent with the provider's structured output and checked; an answer that does not fit goes back to the model with its faults at most `retries` times (2). A child agent's own file sets its output, which reaches the parent as structured content |
//! | `skills.allow`, `.lenient`, `.catalog_tokens` | only these skills (a name not found is a problem); read leniently (default) or strictly (a skill's problem is the file's, at its place in `SKILL.md`); the catalog's token budget |
//! | `skills.honour_allowed_tools` | an active skill's `allowed-tools` pre-approve calls the permissions would ask about (never one they deny); off by default |
//!
//! # Names
//!
//! [`Agent::from_path`] finds functions and factories in the link-time
//! catalog: every free `#[tool]`, `#[hook_factory]` and
//! `#[middleware_factory]` linked into the program, by name and by module
//! path. A name two functions share is an error that lists their paths.
//! Hosts that want no link-time collection list them by hand with
//! [`Assembly::builder`] and call [`Assembly::load`].
//!
//! The catalog is gathered by the linker: an item in a library crate that
//! nothing in the program uses may be left out of the binary with its
//! entry. Use something of that crate from the program (call a function,
//! name a type); an unused `use` is not enough.
//!
//! # Errors
//!
//! [`AssemblyError`] lists every problem found, each with the file, line,
//! column and key path (`hooks[1].handler.options.text`) and what to do: an
//! unknown key or name comes with the closest known one, bad factory options
//! name the factory and the option, a missing variable is named. A file that
//! is not YAML is reported alone; otherwise unknown keys, values of the wrong
//! type and unknown names are found in one pass, each with its place, and
//! only a problem that follows from another is held back. Input is
//! bounded: a file over 1 MiB, more than 1,000 aliases, nesting deeper than
//! 32 or duplicate keys are errors.

mod auth;
mod budget;
mod build;
mod children;
mod command;
mod error;
mod factory;
mod file;
mod handlers;
#[cfg(feature = "mcp")]
mod mcp;
mod names;
mod output;
mod parse;
mod runner;
mod schema;
mod skills;
mod sources;

use std::path::Path;

use crate::Agent;

pub use error::{AssemblyError, Problem};
// The file's sections are how it is read, not an API: the keys are
// documented above and in `agent.schema.json` (`agent_schema()`).
use file::AgentFile;
pub use file::Seconds;

#[cfg(feature = "mcp")]
pub use mcp::mcp_servers;
pub use names::{Assembly, AssemblyBuilder};
pub use parse::MAX_FILE_BYTES;
pub use schema::agent_schema;

impl Assembly {
    /// Reads and assembles the agent file at `path`.
    ///
    /// # Errors
    /// [`AssemblyError`] with every problem found.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<Agent, AssemblyError> {
        let path = path.as_ref();
        let text = read_file(path)?;
        self.parse(&text, path)
    }

    /// Assembles `text` as the agent file at `origin` (relative paths in it
    /// are taken from `origin`'s folder).
    ///
    /// # Errors
    /// [`AssemblyError`] with every problem found.
    pub fn parse(&self, text: &str, origin: &Path) -> Result<Agent, AssemblyError> {
        let first = origin
            .canonicalize()
            .unwrap_or_else(|_| origin.to_path_buf());
        self.parse_below(text, origin, &[first])
    }

    /// Assembles `text` as the agent file at `origin`, a child agent's file
    /// below the files of `chain` (the first first, `origin` last).
    pub(crate) fn parse_below(
        &self,
        text: &str,
        origin: &Path,
        chain: &[std::path::PathBuf],
    ) -> Result<Agent, AssemblyError> {
        let parsed = parse::parse(text, origin)?;
        assembled(parsed, |file, text| {
            build::assemble(self, file, origin, text, chain)
        })
    }
}

impl Agent {
    /// Assembles the agent file at `path`, naming functions and factories
    /// from the link-time catalog ([`Assembly::from_catalog`]).
    ///
    /// # Errors
    /// [`AssemblyError`] with every problem found, each with file, line,
    /// column and key path.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, AssemblyError> {
        Assembly::from_catalog().load(path)
    }
}

/// The agent `build` makes of a parsed file, or every problem: those of
/// the file's shape with those `build` finds on the text read.
fn assembled(
    parsed: parse::Parsed,
    make: impl FnOnce(AgentFile, &str) -> Result<Agent, AssemblyError>,
) -> Result<Agent, AssemblyError> {
    let parse::Parsed {
        file,
        text,
        problems,
        blanked,
    } = parsed;
    let built = make(file, &text);
    let rest = parse::Parsed::held_back(&blanked);
    match built {
        Ok(agent) if problems.is_empty() => Ok(agent),
        Ok(_) => Err(AssemblyError { issues: problems }),
        Err(error) => Err(AssemblyError {
            issues: rest(problems, error.issues),
        }),
    }
}

/// The file's text, or the issue that it cannot be read.
fn read_file(path: &Path) -> Result<String, AssemblyError> {
    iris_runtime::config::yaml::read_bounded(path, "agent file").map_err(|message| AssemblyError {
        issues: vec![Problem::new(path, "", message)],
    })
}

/// What `#[hook_factory]` and `#[middleware_factory]` expansions call. Not a
/// public API.
#[doc(hidden)]
pub mod __private {
    pub use super::factory::{CatalogHookFactory, CatalogMiddlewareFactory};
    pub use crate::__iris_catalog_hook_factory as catalog_hook_factory;
    pub use crate::__iris_catalog_middleware_factory as catalog_middleware_factory;
    pub use ::inventory;
}
