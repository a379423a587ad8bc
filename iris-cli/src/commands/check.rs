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
            let mut warnings: Vec<String> = agent
                .skills()
                .map(|s| s.warnings().iter().map(ToString::to_string).collect())
                .unwrap_or_default();
            warnings.extend(output_warnings(path, &agent));
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

/// What the agent's model makes of its output's schema that the file's
/// author should know: a schema it will not enforce strictly, and keywords
/// it is not sent (the runner checks every answer against all of them).
fn output_warnings(path: &Path, agent: &iris_agent::Agent) -> Vec<String> {
    use iris_core::provider::ProjectionNote;
    let (Some(output), Some(model)) = (agent.output(), agent.model()) else {
        return Vec::new();
    };
    let provider = model.provider.name();
    let report = output.format().report(model);
    report
        .notes
        .iter()
        .filter_map(|note| {
            let said = match note {
                ProjectionNote::NotStrict { at, reason } if at.is_empty() => format!(
                    "{provider} will not enforce this schema strictly ({reason}); Iris checks every answer against it"
                ),
                ProjectionNote::NotStrict { at, reason } => format!(
                    "{provider} will not enforce this schema strictly ({reason}, at `{at}`); Iris checks every answer against it"
                ),
                ProjectionNote::DroppedKeyword { at, keyword }
                | ProjectionNote::DescribedKeyword { at, keyword } => format!(
                    "{provider} is not sent `{keyword}` (at `{at}`); Iris checks every answer against it"
                ),
                _ => return None,
            };
            let problem = iris_runtime::config::Problem::new(path, "output.schema", said).warning();
            Some(problem.to_string())
        })
        .collect()
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("check")
        .about("Check an agent file: every problem, with file:line:column")
        .arg(crate::catalog::agent_file_arg())
        .arg(crate::catalog::json_arg())
}
