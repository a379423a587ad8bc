//! What a call would meet, without running it: the tool it resolves to,
//! whether its arguments parse, the policy's answer, and the hooks and
//! middleware it would pass through (`iris call --dry-run --explain`).

use serde::Serialize;

use super::Call;
use crate::executor::ToolExecutor;
use crate::executor::permissions::Permission;
use crate::hooks::HookEvent;

/// Where a call would go and why, decided as the executor would decide it,
/// with nothing run: no hook, no middleware, no body, no claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallPlan {
    /// The tool the call resolves to (its canonical name).
    pub tool: String,
    /// Whether the tool says this call only reads.
    pub read_only: bool,
    /// The permission policy's answer.
    pub permission: Permission,
    /// The hooks that would see the call, in the order they run.
    pub hooks: Vec<PlannedHook>,
    /// The middleware around the call, outermost first.
    pub middleware: Vec<String>,
}

/// A hook a call would meet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedHook {
    /// Its name.
    pub name: String,
    /// `tool.before` (it may deny the call) or `tool.after` (it may add
    /// feedback to the result).
    pub event: HookEvent,
}

impl Call<'_> {
    /// The plan of this call, whose arguments parsed and say `read_only`.
    pub(in crate::executor) fn plan(
        &self,
        ex: &ToolExecutor,
        read_only: bool,
        cx: &iris_core::ToolContext,
    ) -> CallPlan {
        let permission = ex
            .inner
            .policy
            .check(&self.permission_request(read_only, cx));
        let name = self.definition.name();
        let hooks = [HookEvent::ToolBefore, HookEvent::ToolAfter]
            .into_iter()
            .flat_map(|event| {
                ex.inner
                    .hooks
                    .names_watching(event, name)
                    .into_iter()
                    .map(move |hook| PlannedHook { name: hook, event })
            })
            .collect();
        CallPlan {
            tool: name.to_string(),
            read_only,
            permission,
            hooks,
            middleware: ex
                .inner
                .middleware
                .iter()
                .map(|m| m.name().to_owned())
                .collect(),
        }
    }
}
