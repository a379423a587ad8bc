//! `iris check --agent AGENT.yaml`: every problem of an agent file, with
//! `file:line:column`, as the loader reports them, assembled as the host
//! assembles it (its toolbox services, hooks and middleware).

use clap::Command;
use std::path::Path;

use iris_agent::assembly::Assembly;
use serde_json::json;

use crate::exit::Exit;
use crate::output::Out;

pub(crate) async fn run(path: &Path, assembly: &Assembly, out: Out) -> Exit {
    if !path.exists() {
        return out.fail(
            Exit::Unreachable,
            &format!("`{}` does not exist", path.display()),
        );
    }
    match assembly.connect(path).await {
        Ok(agent) => {
            let tools = agent.registry().tools().count();
            let children = crate::commands::list::children(&agent);
            // What a lenient reading of its skills forgave: loaded, and
            // worth knowing.
            let warnings: Vec<String> = agent
                .skills()
                .map(|s| s.warnings().iter().map(ToString::to_string).collect())
                .unwrap_or_default();
            if out.json {
                let agents: Vec<_> = children
                    .iter()
                    .map(|c| json!({"name": c.name, "agent": c.agent, "depth": c.depth, "tools": c.tools.len()}))
                    .collect();
                out.json(json!({"file": path.display().to_string(), "problems": [], "warnings": warnings, "agent": agent.name(), "tools": tools, "agents": agents}));
            } else {
                for warning in &warnings {
                    out.line(warning);
                }
                let below = if children.is_empty() {
                    String::new()
                } else {
                    let named: Vec<String> = children
                        .iter()
                        .map(|c| format!("`{}` ({} tool(s))", c.path, c.tools.len()))
                        .collect();
                    format!(
                        " and {} child agent(s): {}",
                        children.len(),
                        named.join(", ")
                    )
                };
                out.line(&format!(
                    "{}: agent `{}` assembles, with {tools} tool(s){below}",
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
        .arg(crate::catalog::agent_file_arg())
        .arg(crate::catalog::json_arg())
}
