//! `iris serve`: the catalog as one MCP server, over this process's
//! standard input and output or streamable HTTP, with the catalog's
//! permissions and hooks, approvals asked of the person through the
//! client (elicitation), and deferred tools behind `tool_search`. Over
//! HTTP the agent file's `auth:` section says who may call; without it,
//! only a loopback address is served unless `--no-auth` says otherwise.

use clap::{Arg, ArgAction, Command};
use std::sync::Arc;

use iris_core::Exposure;
use iris_mcp::server::{ServeOptions, ServeTransport, ServedTools};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

/// Where to serve over HTTP, and whether without authentication.
pub(crate) struct Http<'a> {
    pub(crate) address: Option<&'a str>,
    pub(crate) no_auth: bool,
}

pub(crate) async fn run(
    catalog: Catalog,
    sub: &clap::ArgMatches,
    http: Http<'_>,
    out: Out,
) -> Exit {
    let transport = match http.address {
        None => ServeTransport::Stdio,
        Some(address) => match address.parse() {
            Ok(address) => ServeTransport::Http(address),
            Err(e) => {
                return out.fail(
                    Exit::Usage,
                    &format!("`--http {address}` is not an address such as 127.0.0.1:8000 ({e})"),
                );
            }
        },
    };
    if http.address.is_some() && sub.get_one::<String>("workspace").is_none() {
        return out.fail(
            Exit::Usage,
            "`serve --http` lets callers over the network use the file tools: name the folder they may read and write with `--workspace DIR` (the agent's own files and .iris/ are never served)",
        );
    }
    let agent = &catalog.agent;
    if http.no_auth && agent.gateway_auth().is_some() {
        return out.fail(
            Exit::Usage,
            "`--no-auth` was given, but the agent file's `auth:` section says who may call; remove one of them",
        );
    }
    let as_tool = sub.get_flag("as-tool");
    let executor = if as_tool {
        match the_agent_as_a_tool(agent) {
            Ok(executor) => Arc::new(executor),
            Err(message) => return out.fail(Exit::Usage, &message),
        }
    } else {
        let executor = Arc::new(agent.executor().clone());
        if let Err(message) = serve_children(agent, &executor, out) {
            return out.fail(Exit::Usage, &message);
        }
        executor
    };
    let registry = executor.registry();
    // Deferred tools stay behind `tool_search`, as a model in Iris finds
    // them; the agent's instructions go to the client's model.
    let deferring = registry
        .resolve(iris_tools::discovery::TOOL_SEARCH)
        .is_some()
        && registry
            .tools()
            .any(|t| t.definition_dyn().exposure() == Exposure::Deferred);
    let options = ServeOptions {
        name: agent.name().to_owned(),
        instructions: agent.instructions().map(str::to_owned),
        workspace: Catalog::workspace(sub),
        // What the agent is made of (its file, its children's, its skills)
        // is never read or written through the tools it serves.
        hidden: agent.own_files(),
        tools: if deferring {
            ServedTools::EagerAndSearch
        } else {
            ServedTools::All
        },
        // The gateway's clients with a person behind them (elicitation)
        // may be asked the model's questions.
        // (Served as one tool, the agent's run asks and activates.)
        questions: !as_tool,
        // The agent file's skills: `activate_skill`, and their files as
        // resources.
        skills: agent.skills().filter(|_| !as_tool).cloned(),
        auth: agent.gateway_auth().cloned(),
        unauthenticated: http.no_auth,
        ..ServeOptions::default()
    };
    let served = match transport {
        // Where it listens is said at every start (a port of 0 is chosen
        // by the system).
        ServeTransport::Http(address) => {
            match iris_mcp::server::McpHttpServer::bind(executor, address, options).await {
                Ok(http) => {
                    out.note(&format!("serving MCP at {}", http.url()));
                    http.run().await
                }
                Err(e) => Err(e),
            }
        }
        stdio => iris_mcp::server::serve_with(executor, stdio, options).await,
    };
    match served {
        Ok(()) => Exit::Ok,
        Err(e) => out.fail(Exit::Unreachable, &e.to_string()),
    }
}

/// A parent's children served as tools beside its own: each call runs the
/// child with its model (its own, or the parent's), and a typed child lists
/// its output's schema. The operator is told which, since each call spends
/// the model.
fn serve_children(
    agent: &iris_agent::Agent,
    executor: &iris_runtime::ToolExecutor,
    out: Out,
) -> Result<(), String> {
    // The parent's model, made once when a child has none of its own.
    let mut parent_model: Option<Arc<dyn iris_model::Model>> = None;
    let mut names = Vec::new();
    for child in agent.children() {
        let tool = match iris_agent::AgentTool::new(child, None) {
            Err(iris_agent::AgentBuildError::NoModel { .. }) if agent.model().is_some() => {
                if parent_model.is_none() {
                    parent_model = agent
                        .model()
                        .map(iris_model::ModelConfig::build_model)
                        .transpose()
                        .map_err(|e| {
                            format!(
                                "child agent `{}` is served with the model of `{}`, which cannot be made: {e}",
                                child.name(),
                                agent.name()
                            )
                        })?
                        .map(Arc::from);
                }
                iris_agent::AgentTool::new(child, parent_model.clone())
            }
            made => made,
        }
        .map_err(|e| e.to_string())?
        // Held to the parent's rules, guards and budget, as a delegation is.
        .under(agent);
        executor
            .shared_registry()
            .update(|registry| registry.register(tool).map(|_| ()))
            .map_err(|e| format!("child agent `{}` cannot be served: {e}", child.name()))?;
        names.push(format!("`{}`", child.name()));
    }
    if names.is_empty() {
        return Ok(());
    }
    out.note(&format!(
        "serving the child agents {} as tools: each call runs the agent with its model",
        names.join(", ")
    ));
    Ok(())
}

/// The agent itself as the one tool served (`--as-tool`): each call runs it
/// with its model; its own policy judges the calls of its run, and the
/// gateway's rules (by the agent's name) who may start one.
fn the_agent_as_a_tool(
    agent: &Arc<iris_agent::Agent>,
) -> Result<iris_runtime::ToolExecutor, String> {
    let description = agent
        .output()
        .map(|output| output.format().description().to_owned())
        .filter(|said| said != "The final answer.")
        .unwrap_or_else(|| {
            format!(
                "Runs the agent `{}` on a task and answers with what it comes to.",
                agent.name()
            )
        });
    let itself = iris_agent::ChildAgent::new(agent.name(), description, Arc::clone(agent));
    let model = agent
        .model()
        .map(iris_model::ModelConfig::build_model)
        .transpose()
        .map_err(|e| {
            format!(
                "`--as-tool` runs agent `{}` with its model, which cannot be made: {e}",
                agent.name()
            )
        })?
        .map(Arc::from);
    let tool = iris_agent::AgentTool::new(&itself, model).map_err(|e| match e {
        iris_agent::AgentBuildError::NoModel { .. } => format!(
            "`--as-tool` runs agent `{}` with its model, and it names none: give its file a `model` section",
            agent.name()
        ),
        other => other.to_string(),
    })?;
    let mut registry = iris_runtime::ToolRegistry::new();
    registry.register(tool).map_err(|e| e.to_string())?;
    iris_runtime::ToolExecutor::builder(registry)
        .policy(iris_runtime::RulePolicy::new().other(iris_runtime::Rule::Allow))
        .build()
        .map_err(|e| e.to_string())
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("serve")
        .about("Serve the catalog as one MCP server (stdio, or --http ADDRESS)")
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("ADDRESS")
                .help("Streamable HTTP on this address instead of stdio"),
        )
        .arg(
            Arg::new("no-auth")
                .long("no-auth")
                .action(ArgAction::SetTrue)
                .requires("http")
                .help("Serve a non-loopback HTTP address without `auth:` (anyone may call)"),
        )
        .arg(
            Arg::new("as-tool")
                .long("as-tool")
                .action(ArgAction::SetTrue)
                .help("Serve the agent itself as one tool that runs it with its model (typed by its `output:`), instead of its tools"),
        )
        .arg(crate::catalog::workspace_arg())
        .args(crate::catalog::args())
}
