//! The workflow as a Restate service: its handlers' dispatch and the
//! manifest Restate discovers it by.

use std::sync::Arc;

use restate_sdk::discovery;
use restate_sdk::endpoint::{self, ContextInternal};
use restate_sdk::service::macro_support::{ServiceBoxFuture, service_definition};
use restate_sdk::service::{IntoServiceDefinition, Service, ServiceDefinition};

use crate::AgentWorkflow;
use crate::handlers;

/// Hands each invocation to its handler.
struct Dispatch(Arc<AgentWorkflow>);

impl Service for Dispatch {
    type Future = ServiceBoxFuture;

    fn handle(&self, ctx: ContextInternal) -> Self::Future {
        let workflow = Arc::clone(&self.0);
        Box::pin(async move {
            let (input, metadata): (Vec<u8>, _) = ctx.input().await;
            match ctx.handler_name() {
                "run" => {
                    let result = handlers::run(&workflow, &ctx, metadata.key, &input).await;
                    ctx.handle_handler_result(result);
                }
                "decide" => {
                    let result = handlers::decide(&ctx, &input).await;
                    ctx.handle_handler_result(result);
                }
                "status" => {
                    let result = handlers::status(&ctx).await;
                    ctx.handle_handler_result(result);
                }
                other => {
                    return Err(endpoint::Error::unknown_handler(ctx.service_name(), other));
                }
            }
            ctx.end();
            Ok(())
        })
    }
}

impl IntoServiceDefinition for AgentWorkflow {
    fn into_service_definition(self) -> ServiceDefinition {
        let manifest = manifest(&self);
        service_definition(Dispatch(Arc::new(self)), manifest)
    }
}

/// The manifest of the workflow: `run` (the workflow handler), `decide`
/// and `status` (shared).
fn manifest(workflow: &AgentWorkflow) -> discovery::Service {
    let json_in = || serde_json::json!({"contentType": "application/json", "required": true});
    let out = |schema: serde_json::Value| serde_json::json!({"contentType": "application/json", "jsonSchema": schema, "setContentTypeIfEmpty": false});
    let mut manifest = serde_json::json!({
        "name": workflow.name,
        "ty": "WORKFLOW",
        "documentation": format!("Runs of the Iris agent `{}`, keyed by run id", workflow.runner.agent().name()),
        "handlers": [
            {"name": "run", "ty": "WORKFLOW", "input": json_in(), "output": out(serde_json::json!({}))},
            {"name": "decide", "ty": "SHARED", "input": json_in(), "output": {"setContentTypeIfEmpty": false}},
            {"name": "status", "ty": "SHARED", "input": {}, "output": out(serde_json::json!({}))},
        ],
        "metadata": {},
    });
    if let Some(retry) = workflow.retry {
        manifest["retryPolicyInitialInterval"] = millis(retry.initial).into();
        manifest["retryPolicyMaxInterval"] = millis(retry.max).into();
    }
    // The manifest types are generated from Restate's schema: built from
    // JSON, fields added by later versions keep their defaults.
    serde_json::from_value(manifest)
        .unwrap_or_else(|err| unreachable!("the workflow manifest matches Restate's schema: {err}"))
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `agent` as a service name: every character Restate does not take (it
/// takes letters, digits, `_`, `-` and `.`) becomes `_`, and a name that does not start with a letter gets `Agent_`
/// before it.
pub(crate) fn name_for(agent: &str) -> String {
    let name: String = agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if is_valid_name(&name) {
        name
    } else {
        format!("Agent_{name}")
    }
}

/// Whether Restate takes `name` for a service (asked of Restate's own
/// manifest type, so that the manifest built from it cannot be refused).
pub(crate) fn is_valid_name(name: &str) -> bool {
    discovery::ServiceName::try_from(name.to_owned()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_become_service_names_restate_takes() {
        assert_eq!(name_for("cashier"), "cashier");
        assert_eq!(name_for("order-desk v2.1"), "order-desk_v2.1");
        assert_eq!(name_for("7-eleven"), "Agent_7-eleven");
        assert_eq!(name_for("støre"), "st_re");
        assert_eq!(name_for(""), "Agent_");
        for name in ["cashier", "order-desk_v2.1", "Agent_7-eleven", "Agent_"] {
            assert!(is_valid_name(name), "{name}");
        }
        for name in ["7up", "has space", "-dash", ""] {
            assert!(!is_valid_name(name), "{name}");
        }
    }
}
