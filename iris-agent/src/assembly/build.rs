//! From a parsed agent file to an [`Agent`]: every name resolved, every
//! factory called with its options, and every problem gathered before
//! anything is given up.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use iris_core::{Exposure, ToolName};
use serde_saphyr::Spanned;

use super::error::{AssemblyError, Issues};
use super::file::{AgentFile, LimitsSection};
use super::handlers::{hooks, middleware};
use super::names::{Assembly, UNKNOWN_TOOL, shared_names, unknown_name, unknown_tool};
use super::sources::{Chosen, read_beneath};
use crate::Agent;
use iris_runtime::ToolRegistry;
use iris_runtime::config::yaml::closest;
use iris_runtime::hooks::HookRegistration;
use iris_runtime::{RulePolicy, ToolExecutor};
use iris_tools::discovery::{Discovery, TOOL_SEARCH, ToolSearch};

/// The tools of the file, before the registry is frozen.
struct Tools {
    registry: ToolRegistry,
    /// Model-facing names of every registered tool.
    names: BTreeSet<String>,
    any_deferred: bool,
}

pub(crate) fn assemble(
    names: &Assembly,
    file: AgentFile,
    origin: &Path,
    source: &str,
    chain: &[PathBuf],
) -> Result<Agent, AssemblyError> {
    assemble_with(names, file, origin, source, None, chain)
}

/// Assembles `file` with the tools of its MCP servers, connected already
/// (`None` when it was loaded without connecting them).
pub(crate) fn assemble_with(
    names: &Assembly,
    file: AgentFile,
    origin: &Path,
    source: &str,
    remote: Option<Vec<Chosen>>,
    chain: &[PathBuf],
) -> Result<Agent, AssemblyError> {
    let mut issues = Issues::with_source(origin, source);
    let base = origin.parent().unwrap_or_else(|| Path::new("."));
    let instructions = instructions(&file, base, &mut issues);
    if let Some(model) = &file.model {
        check_model(model, &mut issues);
    }
    if let Some(mcp) = &file.tools.mcp
        && remote.is_none()
    {
        let message = if cfg!(feature = "mcp") {
            "MCP servers are started and listed before the agent is built: load this file with \
             `AgentRunner::open(path).await` (or `Agent::connect(path).await`)"
        } else {
            "MCP servers are not available in this build of Iris (enable the `mcp` feature); \
             remove `tools.mcp`"
        };
        issues.at(mcp.referenced, "tools.mcp", message);
    }
    let tools = tools(names, &file, remote.unwrap_or_default(), base, &mut issues);
    let hooks = hooks(names, &file.hooks, &tools.names, base, &mut issues);
    let middleware = middleware(names, &file, &mut issues);
    let policy = policy(&file, &tools.names, &mut issues);
    let decision = decision(&file, origin, &mut issues);
    let children = super::children::children(names, &file, base, &tools.names, chain, &mut issues);
    #[cfg_attr(
        not(feature = "mcp"),
        allow(unused_variables, reason = "checked, nothing kept")
    )]
    let gateway_auth = super::auth::gateway_auth(&file, &mut issues);
    let skills = super::skills::skills(file.skills.as_ref(), base, &mut issues);
    let output = super::output::output(file.output.as_ref(), base, &mut issues);
    let spending = super::budget::spending(file.budget.as_ref(), &mut issues);
    super::skills::check_preloads(&file, &children, skills.as_ref(), &mut issues);
    hold_back_mentions_of_missing_functions(names, &file, &mut issues);
    if !issues.is_empty() {
        return Err(finish(issues));
    }
    let Tools {
        registry,
        any_deferred,
        ..
    } = tools;
    let executor = match executor(names, registry, policy, hooks, middleware, &file.limits) {
        Ok(executor) => executor,
        Err(err) => {
            issues.whole("", err.to_string());
            return Err(finish(issues));
        }
    };
    let limits = &file.limits;
    let discovery = match discovery_over(&executor, any_deferred, decision) {
        Ok(discovery) => discovery,
        Err(err) => {
            issues.whole("tools.deferred", err);
            return Err(finish(issues));
        }
    };
    let budget = results_budget(&file);
    let model = file.model.as_ref().map(super::file::ModelSection::config);
    let mut agent = Agent::builder(executor).name(file.name).origin(origin);
    if let Some(instructions) = instructions {
        agent = agent.instructions(instructions);
    }
    if let Some(model) = model {
        agent = agent.model(model);
    }
    if let Some(telemetry) = &file.telemetry {
        agent = agent.telemetry(telemetry_of(telemetry));
    }
    if let Some(steps) = limits.max_steps {
        agent = agent.max_steps(steps);
    }
    if let Some(discovery) = discovery {
        agent = agent.discovery(discovery);
    }
    if let Some(budget) = budget {
        agent = agent.results_budget(budget);
    }
    for child in children {
        agent = agent.child(child);
    }
    if let Some(skills) = skills {
        agent = agent.skills(skills);
    }
    if let Some((budget, prices)) = spending {
        agent = agent.budget(budget).prices(prices);
    }
    if let Some(output) = output {
        agent = agent.output(output);
    }
    #[cfg(feature = "mcp")]
    if let Some(auth) = gateway_auth {
        agent = agent.gateway_auth(auth);
    }
    agent.build().map_err(|err| {
        issues.whole("", err.to_string());
        finish(std::mem::replace(&mut issues, Issues::new(origin)))
    })
}

/// Discovery over `executor`'s registry when some tool is deferred (with
/// the Decision backend, when the file names one), so that a refreshed MCP
/// catalog is searched as the executor runs it.
fn discovery_over(
    executor: &ToolExecutor,
    any_deferred: bool,
    decision: Option<Arc<dyn iris_tools::discovery::SearchBackend>>,
) -> Result<Option<Arc<Discovery>>, String> {
    if !any_deferred {
        return Ok(None);
    }
    let mut builder =
        Discovery::builder(executor.shared_registry()).ledger(Arc::clone(executor.ledger()));
    if let Some(backend) = decision {
        builder = builder.shared_backend(backend);
    }
    builder
        .build()
        .map(|discovery| Some(Arc::new(discovery)))
        .map_err(|err| err.to_string())
}

/// The executor of the assembled tools, hooks and middleware (the host's
/// first), under `policy` and `limits`.
fn executor(
    names: &Assembly,
    registry: ToolRegistry,
    policy: RulePolicy,
    hooks: Vec<HookRegistration>,
    middleware: Vec<Arc<dyn iris_core::Middleware>>,
    limits: &LimitsSection,
) -> Result<ToolExecutor, iris_runtime::RuntimeError> {
    let mut builder = ToolExecutor::builder(registry).policy(policy);
    for hook in names.hooks.iter().cloned().chain(hooks) {
        builder = builder.hook(hook);
    }
    for layer in names.middleware.iter().cloned().chain(middleware) {
        builder = builder.shared_middleware(layer);
    }
    for observer in &names.observers {
        builder = builder.shared_observer(Arc::clone(observer));
    }
    if let Some(limit) = limits.max_concurrency {
        builder = builder.max_concurrency(limit);
    }
    if let Some(timeout) = limits.timeout {
        builder = builder.timeout(Some(timeout.0));
    }
    if let Some(limit) = limits.max_result_chars {
        builder = builder.max_result_chars(limit);
    }
    builder.build()
}

/// The context policy's budget for tool results, when it applies.
fn results_budget(file: &AgentFile) -> Option<usize> {
    let policy = &file.context_policy;
    policy.results_budget.filter(|_| policy.enabled)
}

fn finish(issues: Issues) -> AssemblyError {
    issues
        .finish()
        .err()
        .unwrap_or(AssemblyError { issues: Vec::new() })
}

fn instructions(file: &AgentFile, base: &Path, issues: &mut Issues) -> Option<String> {
    match (&file.instructions, &file.instructions_file) {
        (Some(_), Some(path)) => {
            issues.at(
                path.referenced,
                "instructions_file",
                "give `instructions` or `instructions_file`, not both",
            );
            None
        }
        (Some(text), None) => Some(text.clone()),
        (None, Some(path)) => {
            // A file from elsewhere (`/etc/shadow`, a secret through a
            // link) must not become the model's instructions: the file is
            // opened once, beneath the agent file's own folder, and bounded
            // like the agent file (a FIFO or a huge file must not fill
            // memory or hang the host).
            match read_beneath(base, Path::new(&path.value), "instructions file") {
                Ok(text) => Some(text),
                Err(message) => {
                    issues.at(path.referenced, "instructions_file", message);
                    None
                }
            }
        }
        (None, None) => None,
    }
}

/// An environment variable that must be set; its value never appears.
fn require_variable(variable: &Spanned<String>, key: &str, issues: &mut Issues) {
    // The file picks which variable's value goes to its endpoint: only one
    // named as an API key may, so a file cannot send another secret
    // (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`) to a host it names.
    if !variable.value.ends_with("_API_KEY") {
        issues.at(
            variable.referenced,
            key,
            format!(
                "`{}` is not named as an API key; an agent file may send only a variable whose name ends in `_API_KEY` (such as `OPENAI_API_KEY`) to its model: copy the key into such a variable",
                variable.value
            ),
        );
        return;
    }
    let set = std::env::var_os(&variable.value).is_some_and(|v| !v.is_empty());
    if !set {
        issues.at(
            variable.referenced,
            key,
            format!(
                "environment variable `{}` is not set; set it before starting the agent",
                variable.value
            ),
        );
    }
}

/// The built-in and function tools the file names.
fn chosen_tools(names: &Assembly, file: &AgentFile, issues: &mut Issues) -> Vec<Chosen> {
    let section = &file.tools;
    let mut chosen: Vec<Chosen> = Vec::new();
    for (i, key) in section.builtin.iter().enumerate() {
        if let Some(tool) = iris_tools::fs::tool_for_key(&key.value) {
            chosen.push((format!("tools.builtin[{i}]"), key.referenced, tool));
        } else {
            let known: Vec<&str> = iris_tools::fs::CONFIG_KEYS
                .iter()
                .map(|(k, _)| *k)
                .collect();
            issues.at(
                key.referenced,
                format!("tools.builtin[{i}]"),
                format!(
                    "unknown built-in tool `{}`; {}",
                    key.value,
                    closest(&key.value, &known, "built-in tool")
                ),
            );
        }
    }
    for (i, wanted) in section.functions.iter().enumerate() {
        let at = format!("tools.functions[{i}]");
        if let Some(entry) = names.tool(&wanted.value) {
            chosen.push((at, wanted.referenced, Arc::clone(&entry.item)));
            continue;
        }
        let shared = shared_names(&names.tools, &wanted.value);
        let message = if shared.len() > 1 {
            format!(
                "more than one function is named `{}` ({}); name one by its path",
                wanted.value,
                shared
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else if let Some(service) = toolbox_service_of(&wanted.value) {
            let short = service.rsplit("::").next().unwrap_or(service);
            format!(
                "`{wanted}` is a method of the toolbox service `{service}`, whose tools need the service value, which only the host has: hand one over with `Assembly::from_catalog().with_toolbox(Arc::new(the_{lower}))` and load the file with that assembly (for the command line, `iris::cli::main(iris::cli::Host::assembly(assembly))`)",
                wanted = wanted.value,
                lower = short.to_lowercase(),
            )
        } else {
            unknown_name(
                &names.tools,
                &wanted.value,
                "`#[tool]` function",
                names.from_catalog,
            )
        };
        issues.at(wanted.referenced, at, message);
    }
    chosen
}

/// The service whose toolbox method `wanted` names (by tool name or as
/// `Type::method`), when one linked into the program does.
fn toolbox_service_of(wanted: &str) -> Option<&'static str> {
    iris_core::catalog::toolbox_tools()
        .find(|entry| {
            entry.name() == wanted
                || wanted
                    .strip_suffix(entry.name())
                    .and_then(|head| head.strip_suffix("::"))
                    .is_some_and(|service| {
                        entry.service() == service
                            || entry
                                .service()
                                .strip_suffix(service)
                                .is_some_and(|path| path.ends_with("::"))
                    })
        })
        .map(iris_core::catalog::CatalogToolboxTool::service)
}

fn tools(
    names: &Assembly,
    file: &AgentFile,
    remote: Vec<Chosen>,
    base: &Path,
    issues: &mut Issues,
) -> Tools {
    let section = &file.tools;
    let mut chosen = chosen_tools(names, file, issues);
    chosen.extend(remote);
    chosen.extend(super::command::command_tools(
        &section.command,
        base,
        issues,
    ));
    let model_names: Vec<String> = chosen
        .iter()
        .map(|(_, _, tool)| tool.definition_dyn().name().to_string())
        .collect();
    let defer = file.context_policy.enabled && file.context_policy.deferred_tools;
    let mut deferred: BTreeSet<String> = BTreeSet::new();
    for (i, name) in section.deferred.iter().enumerate() {
        let key = format!("tools.deferred[{i}]");
        if model_names.contains(&name.value) {
            deferred.insert(name.value.clone());
        } else {
            issues.at(
                name.referenced,
                key,
                unknown_tool(&name.value, &model_names),
            );
        }
    }

    let mut registry = ToolRegistry::new();
    let mut any_deferred = false;
    for (key, at, tool) in chosen {
        let definition = tool.definition_dyn();
        let exposure = if !defer {
            Exposure::Eager
        } else if deferred.contains(definition.name().as_str()) {
            Exposure::Deferred
        } else {
            definition.exposure()
        };
        any_deferred |= exposure == Exposure::Deferred;
        if let Err(err) = registry.register_dyn_as(tool, exposure) {
            issues.at(at, key, err.to_string());
        }
    }
    if results_budget(file).is_some()
        && let Err(err) = registry.register(crate::ReadHistory)
    {
        issues.whole("context_policy.results_budget", err.to_string());
    }
    if any_deferred && registry.resolve(TOOL_SEARCH).is_none() {
        // Deferred tools are reached through `tool_search`, added here.
        if let Err(err) = registry.register(ToolSearch) {
            issues.whole("tools", err.to_string());
        }
    }
    let names = registry
        .tools()
        .map(|t| t.definition_dyn().name().to_string())
        .collect();
    Tools {
        registry,
        names,
        any_deferred,
    }
}

/// A function that could not be found leaves its mentions elsewhere
/// unknown too (`sqare` listed, `square` filtered on): those follow from the
/// first problem and are held back.
fn hold_back_mentions_of_missing_functions(
    names: &Assembly,
    file: &AgentFile,
    issues: &mut Issues,
) {
    let unresolved: Vec<&str> = file
        .tools
        .functions
        .iter()
        .map(|wanted| wanted.value.as_str())
        .filter(|wanted| names.tool(wanted).is_none())
        .map(|wanted| wanted.rsplit("::").next().unwrap_or(wanted))
        .collect();
    if !unresolved.is_empty() {
        issues.hold_back(|issue| {
            issue
                .message
                .strip_prefix(UNKNOWN_TOOL)
                .and_then(|rest| rest.trim_start().strip_prefix('`'))
                .and_then(|rest| rest.split('`').next())
                .is_some_and(|mentioned| {
                    unresolved
                        .iter()
                        .any(|wanted| iris_runtime::config::yaml::similar(wanted, mentioned))
                })
        });
    }
}

fn policy(file: &AgentFile, tools: &BTreeSet<String>, issues: &mut Issues) -> RulePolicy {
    let section = &file.permissions;
    let mut policy = RulePolicy::new();
    if let Some(rule) = section.read_only {
        policy = policy.read_only(rule);
    }
    if let Some(rule) = section.write {
        policy = policy.write(rule);
    }
    if let Some(rule) = section.exec {
        policy = policy.exec(rule);
    }
    if let Some(rule) = section.other {
        policy = policy.other(rule);
    }
    // A rule names a tool, or a child agent (the parent's policy gates its
    // start by its name).
    let children = file.agents.iter().map(|child| child.name.value.clone());
    let known: Vec<String> = tools.iter().cloned().chain(children).collect();
    for (name, rule) in &section.tools {
        let key = format!("permissions.tools.{name}");
        match ToolName::new(name.clone()) {
            Ok(tool) if known.contains(name) => policy = policy.tool(tool, rule.value),
            _ => issues.at(rule.referenced, key, unknown_tool(name, &known)),
        }
    }
    policy
}

#[cfg(feature = "decision")]
fn decision(
    file: &AgentFile,
    origin: &Path,
    issues: &mut Issues,
) -> Option<Arc<dyn iris_tools::discovery::SearchBackend>> {
    use iris_tools::discovery::decision::{DecisionBackend, DecisionConfig};
    let section = file.decision.as_ref()?;
    let path = &section.path;
    let loaded =
        DecisionConfig::load_for_agent(origin, Path::new(&path.value)).and_then(|config| {
            let full: std::path::PathBuf = origin
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(&path.value);
            DecisionBackend::for_discovery(config, &full)
        });
    match loaded {
        Ok(backend) => Some(Arc::new(backend)),
        Err(err) => {
            issues.at(path.referenced, "decision.path", err.to_string());
            None
        }
    }
}

#[cfg(not(feature = "decision"))]
fn decision(
    file: &AgentFile,
    _origin: &Path,
    issues: &mut Issues,
) -> Option<Arc<dyn iris_tools::discovery::SearchBackend>> {
    let section = file.decision.as_ref()?;
    issues.at(
        section.path.referenced,
        "decision.path",
        "the Decision backend needs Iris's `decision` feature; enable it or remove `decision`",
    );
    None
}

/// The model section's key variable is set.
fn check_model(model: &super::file::ModelSection, issues: &mut Issues) {
    if let Some(variable) = &model.api_key_env {
        require_variable(variable, "model.api_key_env", issues);
    }
}

/// The agent's telemetry settings from its file's section; content
/// capture, when asked, is turned on for the process, as spans are.
fn telemetry_of(section: &super::file::TelemetrySection) -> crate::Telemetry {
    if section.capture_content {
        iris_runtime::telemetry::capture_content(true);
    }
    let mut settings = crate::Telemetry::default();
    settings.otlp.clone_from(&section.otlp);
    settings.service_name.clone_from(&section.service_name);
    settings.capture_content = section.capture_content;
    settings
}
