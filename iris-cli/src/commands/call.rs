//! `iris call TOOL k=v k:=json`: one call through the real executor
//! (permissions, hooks, middleware, result limits, artifacts). A call that
//! waits for approval is decided by `--approve` or `--deny`, asked on the
//! terminal, or ends with exit code 4.

use clap::{Arg, ArgAction, ArgMatches, Command};
use iris_core::{RunId, ToolContext, ToolErrorKind, ToolResult, ToolUseBlock};
use iris_runtime::Permission;
use iris_runtime::ToolOutcome;
use serde_json::{Value, json};

use crate::approve::{Decide, decide};
use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

/// The call the command line asks for: its arguments from pairs, a file or
/// stdin.
pub(crate) async fn from_matches(sub: &ArgMatches, catalog: &Catalog, out: Out) -> Exit {
    let tool = sub.get_one::<String>("tool").map_or("", String::as_str);
    let base = match sub.get_one::<String>("args-file") {
        None => None,
        Some(file) => {
            let text = if file == "-" {
                let mut text = String::new();
                match std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    Ok(_) => text,
                    Err(e) => return out.fail(Exit::Usage, &format!("stdin: {e}")),
                }
            } else {
                match std::fs::read_to_string(file) {
                    Ok(text) => text,
                    Err(e) => return out.fail(Exit::Usage, &format!("`{file}`: {e}")),
                }
            };
            match serde_json::from_str(&text) {
                Ok(value) => Some(value),
                Err(e) => {
                    return out.fail(Exit::Usage, &format!("the arguments file is not JSON: {e}"));
                }
            }
        }
    };
    let pairs: Vec<String> = sub
        .get_many::<String>("arguments")
        .map(|values| values.cloned().collect())
        .unwrap_or_default();
    let arguments = match crate::args::parse(base, &pairs) {
        Ok(arguments) => arguments,
        Err(why) => return out.fail(Exit::Usage, &why),
    };
    let decide = crate::approve::Decide::from_flags(sub);
    let workspace = Catalog::workspace(sub);
    if sub.get_flag("dry-run") {
        return dry_run(
            catalog,
            &workspace,
            tool,
            arguments,
            sub.get_flag("explain"),
            out,
        );
    }
    run(catalog, &workspace, tool, arguments, decide, out).await
}

pub(crate) async fn run(
    catalog: &Catalog,
    workspace: &std::path::Path,
    tool: &str,
    arguments: Value,
    how: Decide,
    out: Out,
) -> Exit {
    let agent = &catalog.agent;
    let cx = match call_context(catalog, workspace) {
        Ok(cx) => cx,
        Err(why) => return out.fail(Exit::Unreachable, &why),
    };
    let executor = agent.executor();
    let call = ToolUseBlock::new("call_1", tool, arguments);
    let mut outcome = executor.execute_one(call, &cx).await;
    if let ToolOutcome::Waiting(request) = &outcome {
        let Some(decision) = decide(request, how) else {
            if out.json {
                out.json(json!({"tool": tool, "outcome": "waiting", "approval": request}));
            } else {
                out.line(&format!(
                    "waits for approval: {}",
                    request
                        .reason
                        .clone()
                        .unwrap_or_else(|| format!("the policy asks before `{}`", request.tool))
                ));
            }
            return out.fail(
                Exit::Waiting,
                "the call waits for approval; run it again with `--approve` or `--deny`, or on a terminal",
            );
        };
        outcome = match executor.resume("call_1", decision, &cx).await {
            Ok(outcome) => outcome,
            Err(e) => return out.fail(Exit::Internal, &e.to_string()),
        };
    }
    let result = match outcome {
        ToolOutcome::Finished { result, .. } => result,
        ToolOutcome::Waiting(_) => {
            return out.fail(Exit::Waiting, "the call waits for approval again");
        }
    };
    report(tool, &result, out)
}

/// What the call would meet, with nothing run; the exit is the one the
/// call would end with (0 runs, 2 arguments refused, 3 denied, 4 waits).
fn dry_run(
    catalog: &Catalog,
    workspace: &std::path::Path,
    tool: &str,
    arguments: Value,
    explain: bool,
    out: Out,
) -> Exit {
    let agent = &catalog.agent;
    let cx = match call_context(catalog, workspace) {
        Ok(cx) => cx,
        Err(why) => return out.fail(Exit::Unreachable, &why),
    };
    let plan = match agent
        .executor()
        .plan(ToolUseBlock::new("call_1", tool, arguments), &cx)
    {
        Ok(plan) => plan,
        Err(refused) => {
            if out.json {
                out.json(json!({"tool": tool, "would": "be_refused", "result": refused}));
            } else {
                out.line(&format!("would be refused: {}", refused.text_content()));
            }
            return exit_of(refused.error_kind());
        }
    };
    let (would, why, exit) = match &plan.permission {
        Permission::Allow => ("run", None, Exit::Ok),
        Permission::Ask { reason } => ("wait_for_approval", reason.clone(), Exit::Waiting),
        Permission::Deny { reason } => ("be_denied", Some(reason.clone()), Exit::Denied),
    };
    if out.json {
        out.json(json!({"tool": tool, "would": would, "why": why, "plan": plan}));
        return exit;
    }
    out.line(&format!(
        "`{}` would {}",
        plan.tool,
        would.replace('_', " ")
    ));
    if explain {
        let class = if plan.read_only {
            "reads only"
        } else {
            "may change something"
        };
        out.line(&format!(
            "  policy: {} (the tool says this call {class})",
            why.as_deref().unwrap_or("allowed")
        ));
        if plan.hooks.is_empty() {
            out.line("  hooks: none watch it");
        }
        for hook in &plan.hooks {
            let does = match hook.event {
                iris_runtime::hooks::HookEvent::ToolBefore => "may deny it before it runs",
                _ => "sees its result and may add to it",
            };
            out.line(&format!("  hook `{}` ({}): {does}", hook.name, hook.event));
        }
        if plan.middleware.is_empty() {
            out.line("  middleware: none");
        } else {
            out.line(&format!(
                "  middleware, outermost first: {}",
                plan.middleware.join(", ")
            ));
        }
    }
    exit
}

/// The context of a call from the command line: a run of its own.
fn call_context(catalog: &Catalog, workspace: &std::path::Path) -> Result<ToolContext, String> {
    catalog
        .agent
        .context_builder(workspace, RunId::new("iris-call"))
        .map(iris_core::ToolContextBuilder::build)
        .map_err(|e| e.to_string())
}

/// The exit a result's error kind calls for.
fn exit_of(kind: Option<ToolErrorKind>) -> Exit {
    match kind {
        None => Exit::Ok,
        Some(
            ToolErrorKind::InvalidArguments
            | ToolErrorKind::UnknownTool
            | ToolErrorKind::ToolNotAvailable,
        ) => Exit::Usage,
        Some(ToolErrorKind::PermissionDenied | ToolErrorKind::DeniedByHook) => Exit::Denied,
        _ => Exit::ToolError,
    }
}

/// Prints `result` and gives the exit its kind calls for.
fn report(tool: &str, result: &ToolResult, out: Out) -> Exit {
    let exit = exit_of(result.error_kind());
    if out.json {
        out.json(json!({
            "tool": tool,
            "outcome": if exit == Exit::Ok { "ok" } else { "error" },
            "error_kind": result.error_kind().map(ToolErrorKind::as_str),
            "result": result,
        }));
    }
    if exit == Exit::Ok {
        if out.json {
            return exit;
        }
        out.line(&result.text_content());
        for artifact in result.artifacts() {
            out.note(&format!(
                "artifact: {} ({} bytes)",
                artifact.handle, artifact.size
            ));
        }
        exit
    } else {
        let kind = result.error_kind().map_or("error", ToolErrorKind::as_str);
        out.fail(exit, &format!("{kind}: {}", result.text_content()))
    }
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("call")
        .about("Call a tool through the executor: key=text, key:=json")
        .arg(Arg::new("tool").required(true).value_name("TOOL").help("The tool, by the name the model calls it"))
        .arg(crate::catalog::workspace_arg())
        .arg(
            Arg::new("arguments")
                .num_args(0..)
                .value_name("KEY=VALUE")
                .help("key=text for a string, key:=json for anything else"),
        )
        .arg(
            Arg::new("args-file")
                .long("args-file")
                .value_name("FILE")
                .help("Arguments as a JSON object in a file (`-` for stdin)"),
        )
        .arg(
            Arg::new("dry-run")
                .long("dry-run")
                .action(ArgAction::SetTrue)
                .help("Run nothing: say whether the call would run, wait for approval or be refused"),
        )
        .arg(
            Arg::new("explain")
                .long("explain")
                .action(ArgAction::SetTrue)
                .requires("dry-run")
                .help("With --dry-run: which rule decides, and the hooks and middleware it would meet"),
        )
        .arg(
            Arg::new("approve")
                .long("approve")
                .action(ArgAction::SetTrue)
                .conflicts_with("deny")
                .help("Approve the call if it waits for approval"),
        )
        .arg(
            Arg::new("deny")
                .long("deny")
                .action(ArgAction::SetTrue)
                .help("Deny the call if it waits for approval"),
        )
        .args(crate::catalog::args())
}
