//! Skills, offered and activated by run control: the runner offers the
//! catalog as one activation tool (never a discovery candidate, never in
//! the executor's offer), reads the model's call itself (no hook,
//! middleware or permission rule sees it), and records each activation in
//! the run state, so a resume in another process, or with another model,
//! knows which skills are active.

use iris_core::{ToolResult, ToolUseBlock};
use iris_runtime::RunEvent;
use iris_skills::ACTIVATE_SKILL;

use super::AgentRunner;
use crate::Skills;

impl AgentRunner {
    /// Whether `call` activates a skill (run control's, where skills are
    /// offered).
    pub(super) fn is_skill_activation(&self, call: &ToolUseBlock) -> bool {
        call.name == ACTIVATE_SKILL && self.run_skills().is_some_and(|s| !s.catalog().is_empty())
    }

    /// Run control's answer to an activation: the skill's body, folder and
    /// files, or a short note when `active` already holds it (the skills
    /// active in the run, to which a new activation is added); with a
    /// `file`, that file of the skill.
    pub(super) fn activate(
        &self,
        call: &ToolUseBlock,
        run: &iris_core::RunId,
        active: &mut Vec<String>,
    ) -> ToolResult {
        let Some(skills) = self.run_skills() else {
            return iris_skills::not_offered("?", std::iter::empty());
        };
        let (result, activated) = skills.answer(&call.input, active);
        if let Some(skill) = activated {
            self.agent.executor().emit_event(RunEvent::SkillActivated {
                run_id: run.clone(),
                call_id: call.id.clone(),
                skill,
            });
        }
        result
    }

    /// The skills this runner's runs offer: its own, else its agent's.
    fn run_skills(&self) -> Option<&Skills> {
        self.skills.as_ref().or_else(|| self.agent.skills())
    }

    /// The skills `child` preloads, activated into `messages` (after the
    /// task) as one activation call and its results: their bodies are in
    /// the child's first request, as tool results, and the child's run
    /// starts with them active. Each name is looked up among the child's
    /// own skills, then this runner's; one found in neither is left out
    /// with a warning. The names active.
    pub(super) fn preload(
        &self,
        child: &crate::ChildAgent,
        child_runner: &AgentRunner,
        messages: &mut Vec<iris_model::Message>,
        run: &iris_core::RunId,
    ) -> Vec<String> {
        let mut active = Vec::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for name in child.preloaded_skills() {
            let skill = child_runner
                .run_skills()
                .and_then(|s| s.skill(name))
                .or_else(|| self.run_skills().and_then(|s| s.skill(name)));
            let Some(skill) = skill else {
                tracing::warn!(child = child.name(), skill = %name, "a skill to preload is neither the child's nor its parent's; left out");
                continue;
            };
            if active.contains(name) {
                continue;
            }
            active.push(name.clone());
            let call = ToolUseBlock::new(
                format!("preload-{name}"),
                ACTIVATE_SKILL,
                serde_json::json!({"name": name, "file": null}),
            );
            self.agent.executor().emit_event(RunEvent::SkillActivated {
                run_id: run.clone(),
                call_id: call.id.clone(),
                skill: name.clone(),
            });
            results.push(iris_model::Message::Tool {
                call_id: call.id.clone(),
                tool: ACTIVATE_SKILL.to_owned(),
                result: iris_skills::activation(skill),
            });
            calls.push(call);
        }
        if !calls.is_empty() {
            messages.push(iris_model::Message::Assistant {
                text: None,
                tool_calls: calls,
            });
            messages.extend(results);
        }
        active
    }

    /// The result of a call the policy asked about that an active skill's
    /// `allowed-tools` pre-approve (the host opted in): approved by run
    /// control and run at once. None when no active skill names the tool;
    /// the call then waits for a person as usual.
    pub(super) async fn pre_approved(
        &self,
        request: &iris_runtime::ApprovalRequest,
        active: &[String],
        cx: &iris_core::ToolContext,
    ) -> Option<ToolResult> {
        let skill = self
            .run_skills()?
            .pre_approving(active, request.tool.as_str())?;
        if self.ancestors_ask(request) {
            // A pre-approval waives this agent's own "ask", never a
            // ceiling an agent above it set: the person decides.
            return None;
        }
        tracing::info!(
            tool = %request.tool,
            skill = %skill.name,
            "a call the policy asks about runs, pre-approved by an active skill's allowed-tools"
        );
        let decision = iris_runtime::ApprovalDecision::approve(request);
        match self
            .agent
            .executor()
            .resume(&request.call_id, decision, cx)
            .await
        {
            Ok(iris_runtime::ToolOutcome::Finished { result, .. }) => Some(result),
            _ => None,
        }
    }

    /// Whether an agent above this one asks about (or refuses) the call
    /// `request` shows, whatever this agent's own policy says.
    fn ancestors_ask(&self, request: &iris_runtime::ApprovalRequest) -> bool {
        let Some(ceiling) = &self.place.ceiling else {
            return false;
        };
        let registry = self.agent.registry();
        let Some(tool) = registry.resolve(request.tool.as_str()) else {
            return true;
        };
        let definition = tool.definition_dyn();
        let probe = iris_runtime::PermissionRequest {
            definition,
            arguments: &request.arguments,
            read_only: definition
                .capabilities()
                .contains(iris_core::Capability::ReadOnly),
            run_id: &request.run_id,
        };
        !matches!(
            ceiling.check(iris_runtime::Permission::Allow, &probe),
            iris_runtime::Permission::Allow
        )
    }

    /// The activation tool's spec, when skills are offered.
    pub(super) fn skill_spec(&self) -> Option<iris_core::ToolSpec> {
        self.run_skills().and_then(|s| s.catalog().spec())
    }
}
