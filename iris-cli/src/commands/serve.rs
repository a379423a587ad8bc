//! `iris serve`: the catalog as one MCP server, over this process's
//! standard input and output or streamable HTTP, with the catalog's
//! permissions and hooks, approvals asked of the person through the
//! client (elicitation), and deferred tools behind `tool_search`.

use clap::{Arg, Command};
use std::sync::Arc;

use iris_core::Exposure;
use iris_mcp::{ServeOptions, ServeTransport, ServedTools};

use crate::catalog::{Catalog, Source};
use crate::exit::Exit;
use crate::output::Out;

pub(crate) async fn run(catalog: Catalog, source: &Source, http: Option<&str>, out: Out) -> Exit {
    let transport = match http {
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
    let agent = &catalog.agent;
    // Deferred tools stay behind `tool_search`, as a model in Iris finds
    // them; the agent's instructions go to the client's model.
    let registry = agent.registry();
    let deferring = registry
        .resolve(iris_tools::discovery::TOOL_SEARCH)
        .is_some()
        && registry
            .tools()
            .any(|t| t.definition_dyn().exposure() == Exposure::Deferred);
    let options = ServeOptions {
        name: agent.name().to_owned(),
        instructions: agent.instructions().map(str::to_owned),
        workspace: Catalog::workspace(source),
        tools: if deferring {
            ServedTools::EagerAndSearch
        } else {
            ServedTools::All
        },
        // The gateway's clients with a person behind them (elicitation)
        // may be asked the model's questions.
        questions: true,
        ..ServeOptions::default()
    };
    let executor = Arc::new(agent.executor().clone());
    match iris_mcp::serve_with(executor, transport, options).await {
        Ok(()) => Exit::Ok,
        Err(e) => out.fail(Exit::Unreachable, &e.to_string()),
    }
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
        .args(crate::catalog::args())
}
