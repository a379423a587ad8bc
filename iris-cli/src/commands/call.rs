//! `iris call TOOL k=v k:=json`: one call through the real executor
//! (permissions, hooks, middleware, result limits, artifacts). A call that
//! waits for approval is decided by `--approve` or `--deny`, asked on the
//! terminal, or ends with exit code 4.

use iris_core::{RunId, ToolErrorKind, ToolResult, ToolUseBlock};
use iris_runtime::ToolOutcome;
use serde_json::{Value, json};

use crate::approve::{Decide, decide};
use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

pub(crate) async fn run(
    catalog: &Catalog,
    workspace: &std::path::Path,
    tool: &str,
    arguments: Value,
    how: Decide,
    out: Out,
) -> Exit {
    let agent = &catalog.agent;
    let cx = match agent.context_builder(workspace, RunId::new("iris-call")) {
        Ok(builder) => builder.build(),
        Err(e) => return out.fail(Exit::Unreachable, &e.to_string()),
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

/// Prints `result` and gives the exit its kind calls for.
fn report(tool: &str, result: &ToolResult, out: Out) -> Exit {
    let exit = match result.error_kind() {
        None => Exit::Ok,
        Some(ToolErrorKind::PermissionDenied | ToolErrorKind::DeniedByHook) => Exit::Denied,
        Some(ToolErrorKind::UnknownTool | ToolErrorKind::InvalidArguments) => Exit::Usage,
        Some(_) => Exit::ToolError,
    };
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
