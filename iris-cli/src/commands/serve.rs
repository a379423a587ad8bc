//! `iris serve`: the catalog as one MCP server, over this process's
//! standard input and output or streamable HTTP, with the catalog's
//! permissions and hooks.

use clap::{Arg, Command};
use std::sync::Arc;

use iris_mcp::ServeTransport;

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

pub(crate) async fn run(catalog: Catalog, http: Option<&str>, out: Out) -> Exit {
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
    let executor = Arc::new(catalog.agent.executor().clone());
    match iris_mcp::serve(executor, transport).await {
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
