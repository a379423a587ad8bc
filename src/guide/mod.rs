//! The guide: Iris one wing at a time, in the order a project meets them.
//!
//! Each chapter is a module with nothing in it but its text, so docs.rs
//! carries the guide beside the API, and every code sample in it is compiled
//! and run by `cargo test` like any other documentation test. The chapters
//! are also plain Markdown files in `src/guide/` of the repository.
//!
//! | chapter | what it covers |
//! |---|---|
//! | [1. Tools](ch01_tools) | `#[tool]` functions and `#[toolbox]` services: names, descriptions, parameters, returns, keys |
//! | [2. Running calls](ch02_running_calls) | the registry and the executor, runs and the run ledger, results, artifacts and images |
//! | [3. Hooks, middleware and the order of a call](ch03_hooks_and_middleware) | every stage a call passes, in order, and what each may change |
//! | [4. Files](ch04_files) | `read_file`, `write_file`, `edit_file`: one workspace root, read before edit |
//! | [5. Discovery](ch05_discovery) | deferred tools found through `tool_search`, ranking and disclosure |
//! | [6. Agents and runs](ch06_agents) | an agent in code or from a YAML file, the run loop, models, local servers |
//! | [7. Run control](ch07_run_control) | approvals, questions to a person, child agents |
//! | [8. Skills](ch08_skills) | Agent Skills folders: found, offered, activated |
//! | [9. Durable runs](ch09_durable_runs) | runs that outlive a process: SQLite, Restate, what is promised |
//! | [10. MCP and the gateway](ch10_mcp) | servers' tools in Iris, Iris tools in any MCP host, a gateway for many users |
//! | [11. The command line](ch11_command_line) | `iris list`, `call`, `search`, `run`, `serve`, `lint`, `eval`, `lock`, `diff` |
//! | [12. Testing](ch12_testing) | scripted models, transcripts, the tool harness, cassettes, conformance |
//! | [13. Providers and traces](ch13_providers_and_traces) | schema projections per provider, OpenTelemetry traces |
//! | [14. Features, modules and crates](ch14_map) | what each feature costs, where each name lives, the crates, the benchmarks |

#[doc = include_str!("01-tools.md")]
pub mod ch01_tools {}

#[doc = include_str!("02-running-calls.md")]
pub mod ch02_running_calls {}

#[doc = include_str!("03-hooks-and-middleware.md")]
pub mod ch03_hooks_and_middleware {}

#[doc = include_str!("04-files.md")]
pub mod ch04_files {}

#[doc = include_str!("05-discovery.md")]
pub mod ch05_discovery {}

#[doc = include_str!("06-agents.md")]
pub mod ch06_agents {}

#[doc = include_str!("07-run-control.md")]
pub mod ch07_run_control {}

#[doc = include_str!("08-skills.md")]
pub mod ch08_skills {}

#[doc = include_str!("09-durable-runs.md")]
pub mod ch09_durable_runs {}

#[doc = include_str!("10-mcp.md")]
pub mod ch10_mcp {}

#[doc = include_str!("11-command-line.md")]
pub mod ch11_command_line {}

#[doc = include_str!("12-testing.md")]
pub mod ch12_testing {}

#[doc = include_str!("13-providers-and-traces.md")]
pub mod ch13_providers_and_traces {}

#[doc = include_str!("14-map.md")]
pub mod ch14_map {}
