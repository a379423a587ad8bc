//! Whether a call may run: the permission stage, the pause for a person,
//! and the gate right before the body.

use std::time::Instant;

use iris_core::{ParsedArgs, RunId, ToolContext, ToolErrorKind, ToolResult};

use super::pending::{Pending, Refusal};
use super::permissions::{ApprovalDecision, ApprovalRequest, Permission, PermissionRequest};
use super::pipeline::Prepared;
use super::{ToolExecutor, ToolOutcome};
use crate::observers::RunEvent;

/// An approval carried from `resume` to the gate. `resume` already matched
/// it against the waiting request (run, call id, tool, arguments), none of
/// which can change after; the call id was claimed when the call began to
/// wait.
pub(super) struct Grant {
    run_id: RunId,
}

/// The answer of the permission stage.
pub(super) enum Admission {
    /// Allowed, and nothing runs before the body, so the gate passed too:
    /// the body may start now.
    Start,
    /// Allowed; hooks or middleware run before the gate.
    Staged,
    /// Finished with this result (denied, or the call id already ran).
    Refused(ToolResult),
    /// Waits for a person.
    Ask { reason: Option<String> },
}

impl ToolExecutor {
    /// The permission stage. With nothing between it and the body
    /// (`staged` false) it is the gate as well: a policy changed in between
    /// could not be told apart from one changed just after.
    pub(super) fn admit(
        &self,
        request: &PermissionRequest<'_>,
        call_id: &str,
        cx: &ToolContext,
        staged: bool,
    ) -> Admission {
        match self.permission_for(request) {
            Permission::Allow if staged => Admission::Staged,
            Permission::Allow => match self.record_once(call_id, cx) {
                Ok(()) => Admission::Start,
                Err(duplicate) => Admission::Refused(duplicate),
            },
            Permission::Deny { reason } => {
                Admission::Refused(ToolResult::error(ToolErrorKind::PermissionDenied, reason))
            }
            Permission::Ask { reason } => Admission::Ask { reason },
        }
    }

    pub(super) fn permission_for(&self, request: &PermissionRequest<'_>) -> Permission {
        self.inner.policy.check(request)
    }

    /// Parks a call until a person decides. Its id is claimed now, as if it
    /// ran: a later call that reuses it is refused, and never replaces it.
    pub(super) fn wait_for_approval(
        &self,
        prepared: Prepared,
        args: ParsedArgs,
        reason: Option<String>,
        cx: &ToolContext,
        started: Option<Instant>,
    ) -> ToolOutcome {
        if let Err(duplicate) = self.record_once(&prepared.call_id, cx) {
            return self.finish_prepared(prepared, duplicate, cx, started);
        }
        let request = ApprovalRequest::new(
            cx.run_id().clone(),
            prepared.call_id.clone(),
            prepared.tool.definition_dyn().name().clone(),
            prepared.arguments.clone(),
            reason,
        );
        let config = &self.inner.config;
        let parked = self.inner.pending.insert(
            &self.inner.ledger,
            Pending {
                request: request.clone(),
                prepared,
                args,
                since: Instant::now(),
            },
            config.max_pending_approvals,
            config.approval_ttl,
        );
        if let Err((Refusal::Full { limit }, pending)) = parked {
            let result = ToolResult::error(
                ToolErrorKind::PermissionDenied,
                format!(
                    "this call needs a person's approval, but {limit} calls already wait for one, so it did not run; wait until the user has decided on those, then call it again"
                ),
            );
            return self.finish_prepared(pending.prepared, result, cx, started);
        }
        self.emit(|| RunEvent::ToolWaiting {
            run_id: cx.run_id().clone(),
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
        });
        ToolOutcome::Waiting(Box::new(request))
    }

    pub(super) async fn resume_pending(
        &self,
        pending: Pending,
        decision: ApprovalDecision,
        cx: &ToolContext,
    ) -> ToolOutcome {
        let started = self.clock();
        let Pending {
            request,
            prepared,
            args,
            ..
        } = pending;
        match decision {
            ApprovalDecision::Deny { reason } => {
                let result = ToolResult::error(
                    ToolErrorKind::PermissionDenied,
                    format!("the user denied this call: {reason}"),
                );
                self.finish_prepared(prepared, result, cx, started)
            }
            // `resume` matched the approval against this request already.
            ApprovalDecision::Approve { .. } => {
                let registry = self.inner.registry.peek();
                if let Err(not_offered) =
                    super::resolve::offered_tool(&registry, request.tool.as_str(), cx)
                {
                    return self.finish_prepared(prepared, not_offered, cx, started);
                }
                let grant = Grant {
                    run_id: request.run_id,
                };
                let result = self.run_staged(&prepared, args, cx, Some(&grant)).await;
                self.finish_prepared(prepared, result, cx, started)
            }
        }
    }

    /// The side-effect gate: right before the body, the policy, the run and
    /// the approval are checked against the state at this moment, and a call
    /// id runs at most once (an approved call claimed its id when it began
    /// to wait).
    pub(super) fn gate(
        &self,
        prepared: &Prepared,
        cx: &ToolContext,
        grant: Option<&Grant>,
    ) -> Result<(), ToolResult> {
        let refuse =
            |message: String| Err(ToolResult::error(ToolErrorKind::PermissionDenied, message));
        if let Some(grant) = grant
            && grant.run_id != *cx.run_id()
        {
            return refuse(format!(
                "the approval was given in run `{}` but the call was resumed in run `{}`, so it did not run",
                grant.run_id,
                cx.run_id()
            ));
        }
        match self.permission_for(&prepared.permission_request(cx)) {
            Permission::Deny { reason } => {
                return refuse(format!(
                    "refused at the last check before running: {reason}"
                ));
            }
            Permission::Ask { .. } if grant.is_none() => {
                return refuse(
                    "the call needs approval since the permission policy changed; ask again"
                        .to_owned(),
                );
            }
            Permission::Allow | Permission::Ask { .. } => {}
        }
        match grant {
            Some(_) => Ok(()),
            None => self.record_once(&prepared.call_id, cx),
        }
    }

    /// Records that `call_id` reaches its body (or waits for approval);
    /// refuses an id that already did.
    pub(super) fn record_once(&self, call_id: &str, cx: &ToolContext) -> Result<(), ToolResult> {
        let first_time = self.inner.ledger.claim(cx.run_id(), call_id);
        if first_time {
            Ok(())
        } else {
            Err(ToolResult::error(
                ToolErrorKind::DuplicateCall,
                format!(
                    "call id `{}` was already used in this run (that call ran, or waits for approval), and an id runs once, so this call did not run; give every call its own id",
                    crate::echo::shorten(call_id)
                ),
            ))
        }
    }
}
