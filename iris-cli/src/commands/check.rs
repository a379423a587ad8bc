//! `iris check AGENT.yaml`: every problem of an agent file, with
//! `file:line:column`, as the loader reports them.

use clap::{Arg, Command};
use std::path::Path;

use iris_agent::Agent;
use serde_json::json;

use crate::exit::Exit;
use crate::output::Out;

pub(crate) async fn run(path: &Path, out: Out) -> Exit {
    if !path.exists() {
        return out.fail(
            Exit::Unreachable,
            &format!("`{}` does not exist", path.display()),
        );
    }
    match Agent::connect(path).await {
        Ok(agent) => {
            let tools = agent.registry().tools().count();
            if out.json {
                out.json(json!({"file": path.display().to_string(), "problems": [], "agent": agent.name(), "tools": tools}));
            } else {
                out.line(&format!(
                    "{}: agent `{}` assembles, with {tools} tool(s)",
                    path.display(),
                    agent.name()
                ));
            }
            Exit::Ok
        }
        Err(error) => {
            let problems: Vec<String> = error.issues.iter().map(ToString::to_string).collect();
            if out.json {
                out.json(json!({"file": path.display().to_string(), "problems": problems}));
            } else {
                for problem in &problems {
                    out.line(problem);
                }
            }
            out.fail(
                Exit::Invalid,
                &format!("{} problem(s) in {}", problems.len(), path.display()),
            )
        }
    }
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("check")
        .about("Check an agent file: every problem, with file:line:column")
        .arg(
            Arg::new("file")
                .required(true)
                .value_name("AGENT.yaml")
                .help("The agent file"),
        )
        .arg(crate::catalog::json_arg())
}
