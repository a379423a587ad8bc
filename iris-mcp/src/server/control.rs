//! Run control under the gateway's rules. `ask_question` and
//! `activate_skill` are answered beside the executor (no hook, middleware
//! or policy sees them), but who may use them is the rules' word, as for
//! every tool: by name, or by capability (both only read), and a skill's
//! files as resources are `activate_skill`'s. A principal no rule grants
//! them neither sees nor uses them, and every use is audited.

use std::sync::OnceLock;
use std::time::Instant;

use iris_core::{Capability, ToolDefinition, ToolErrorKind, ToolName, ToolResult};
use iris_runtime::__wings::shorten;
use iris_runtime::question::ASK_QUESTION;
use iris_skills::ACTIVATE_SKILL;
use rmcp::ErrorData;
use rmcp::model::ResourceContents;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::auth::{AuditEntry, Grant, Principal, millis};
use super::stateless::{Round, Rounds};
use super::{McpConnection, questions};

/// What the rules judge a run-control tool by: its name and capability.
fn definition(name: &str) -> Option<&'static ToolDefinition> {
    static ASK: OnceLock<Option<ToolDefinition>> = OnceLock::new();
    static ACTIVATE: OnceLock<Option<ToolDefinition>> = OnceLock::new();
    let (slot, description) = match name {
        ASK_QUESTION => (&ASK, "Ask the person behind the client."),
        ACTIVATE_SKILL => (&ACTIVATE, "Activate an Agent Skill."),
        _ => return None,
    };
    slot.get_or_init(|| {
        let name = ToolName::new(name.to_owned()).ok()?;
        ToolDefinition::builder(name, description)
            .capability(Capability::ReadOnly)
            .build()
            .ok()
    })
    .as_ref()
}

impl McpConnection {
    /// Whether `name` is the served `activate_skill`.
    pub(super) fn serves_skill_activation(&self, name: &str) -> bool {
        name == ACTIVATE_SKILL && self.skills_listing(&self.executor.registry()).is_some()
    }

    /// Run control's answer to a granted call of `name` (`ask_question`
    /// or `activate_skill`) with `arguments`.
    pub(super) async fn answer_control(
        &self,
        name: &str,
        arguments: &Value,
        call_id: &str,
        principal: Option<&Principal>,
        rounds: Option<&Rounds>,
        context: &RequestContext<RoleServer>,
    ) -> Round<ToolResult> {
        if name == ACTIVATE_SKILL {
            return Round::Done(self.activate_skill(name, arguments).unwrap_or_else(|| {
                ToolResult::error(
                    ToolErrorKind::UnknownTool,
                    "this server serves no skills; call only the tools listed",
                )
            }));
        }
        match rounds {
            Some(rounds) => self.questions_in_rounds(arguments, call_id, principal, rounds),
            None => Round::Done(
                questions::ask(
                    arguments,
                    call_id,
                    &self.run_id,
                    self.options.approval_timeout,
                    context,
                )
                .await,
            ),
        }
    }

    /// The rule granting `principal` the run-control tool `name` (`None`
    /// when the server has no gate), or the refusal it reads: a hidden
    /// tool reads as one that does not exist.
    pub(super) fn control_granted(
        &self,
        principal: Option<&Principal>,
        name: &str,
    ) -> Result<Option<usize>, (&'static str, ToolResult)> {
        let Some(gate) = &self.shared.gate else {
            return Ok(None);
        };
        let grant = match (principal, definition(name)) {
            (Some(principal), Some(definition)) => gate.grant(principal, definition),
            _ => Grant::Hidden,
        };
        super::call::verdict(grant, name)
    }

    /// Whether `principal` sees the run-control tool `name` listed.
    pub(super) fn control_listed(&self, principal: Option<&Principal>, name: &str) -> bool {
        self.control_granted(principal, name).is_ok()
    }

    /// A read of the skill's file `uri` (none when it is not a
    /// `skill://` address), for a caller granted `activate_skill`; audited.
    /// To anyone else the file does not exist.
    pub(super) fn granted_skill_read(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<ResourceContents, ErrorData>> {
        if !uri.starts_with(super::skills::SCHEME) {
            return None;
        }
        let started = Instant::now();
        let principal = super::call::principal_of(context);
        let granted = self
            .control_granted(principal.as_ref(), ACTIVATE_SKILL)
            .map_err(|(decision, _)| decision);
        let read = match granted {
            Ok(_) => self.read_skill_resource(uri)?,
            Err(_) => Err(ErrorData::resource_not_found(
                format!("`{}` is not a resource of this server", shorten(uri)),
                Some(serde_json::json!({"uri": uri})),
            )),
        };
        let outcome = if read.is_ok() { "ok" } else { "not_found" };
        let address = super::call::address_of(context);
        self.audit_skill_read(principal.as_ref(), address, uri, granted, outcome, started);
        Some(read)
    }

    /// Audits a read of a skill's file `uri` by `principal`.
    fn audit_skill_read(
        &self,
        principal: Option<&Principal>,
        address: Option<std::net::IpAddr>,
        uri: &str,
        granted: Result<Option<usize>, &'static str>,
        outcome: &str,
        started: Instant,
    ) {
        let Some(gate) = &self.shared.gate else {
            return;
        };
        let (rule_decision, rule) = match granted {
            Ok(rule) => ("allowed", rule),
            Err(decision) => (decision, None),
        };
        gate.log(&AuditEntry {
            method: Some("resources/read"),
            tool: Some(&shorten(uri)),
            rule_decision,
            rule,
            outcome,
            duration_ms: millis(started.elapsed()),
            ..AuditEntry::by(principal, address)
        });
    }
}
