//! Skills, offered and activated by run control: the runner offers the
//! catalog as one activation tool (never a discovery candidate, never in
//! the executor's offer), reads the model's call itself (no hook,
//! middleware or permission rule sees it), and records each activation in
//! the run state, so a resume in another process, or with another model,
//! knows which skills are active.

use iris_core::{BoxFuture, ToolResult, ToolSpec, ToolUseBlock};
use iris_runtime::RunEvent;
use iris_skills::ACTIVATE_SKILL;

use super::{Answered, Control, ItemReplies, Turn};
use crate::run::AgentRunner;
use crate::{RunError, Skills, WaitingItem};

/// The owner of `activate_skill`: offered when the run has skills.
#[derive(Clone, Default)]
pub(in crate::run) struct Activator {
    /// The skills the runner was given; `None`: its agent's, if any.
    pub(in crate::run) skills: Option<Skills>,
}

impl Control for Activator {
    fn claims(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> bool {
        call.name == ACTIVATE_SKILL
            && self
                .offered(turn.runner)
                .is_some_and(|s| !s.catalog().is_empty())
    }

    fn offer(&self, turn: &Turn<'_>, specs: &mut Vec<ToolSpec>) -> Result<(), RunError> {
        // Never a discovery candidate, never in the executor's offer.
        let Some(spec) = self.offered(turn.runner).and_then(|s| s.catalog().spec()) else {
            return Ok(());
        };
        let name = spec.name().as_str();
        if turn.runner.agent.registry().resolve(name).is_some() {
            return Err(RunError::NameTaken {
                name: name.to_owned(),
            });
        }
        specs.push(spec);
        Ok(())
    }

    fn answers_first(&self) -> bool {
        // An activation in a step pre-approves (through the skill's
        // `allowed-tools`) the step's other calls.
        true
    }

    fn answer<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        calls: Vec<ToolUseBlock>,
    ) -> BoxFuture<'a, Vec<Answered>> {
        // In call order: a second activation of the same skill in one step
        // reads as already active.
        let answers = calls
            .iter()
            .map(|call| Answered::done(self.activate(turn, call)))
            .collect();
        Box::pin(std::future::ready(answers))
    }

    fn resume<'a>(
        &'a self,
        _: &'a Turn<'a>,
        item: WaitingItem,
        _: ItemReplies,
        _: u64,
    ) -> BoxFuture<'a, Result<Answered, RunError>> {
        // An activation never waits.
        Box::pin(std::future::ready(Ok(Answered::Waiting(Box::new(item)))))
    }

    fn take_over<'a>(
        &'a self,
        turn: &'a Turn<'a>,
        call: ToolUseBlock,
        _: Option<WaitingItem>,
        _: ItemReplies,
    ) -> BoxFuture<'a, Answered> {
        // Activated again: the same answer.
        Box::pin(std::future::ready(Answered::done(
            self.activate(turn, &call),
        )))
    }
}

impl Activator {
    /// Run control's answer to an activation: the skill's body, folder and
    /// files, or a short note when it is active already (a new activation
    /// is added to the turn's active skills); with a `file`, that file of
    /// the skill.
    fn activate(&self, turn: &Turn<'_>, call: &ToolUseBlock) -> ToolResult {
        let Some(skills) = self.offered(turn.runner) else {
            return iris_skills::not_offered("?", std::iter::empty());
        };
        let (result, activated) = turn.change_skills(|active| skills.answer(&call.input, active));
        if let Some(skill) = activated {
            turn.runner
                .agent
                .executor()
                .emit_event(RunEvent::SkillActivated {
                    run_id: turn.state.run_id.clone(),
                    call_id: call.id.clone(),
                    skill,
                });
        }
        result
    }

    /// The skills `runner`'s runs offer: its own, else its agent's.
    fn offered<'a>(&'a self, runner: &'a AgentRunner) -> Option<&'a Skills> {
        self.skills.as_ref().or_else(|| runner.agent.skills())
    }

    /// The skills `child` preloads, activated into `messages` (after the
    /// task) as one activation call and its results: their bodies are in
    /// the child's first request, as tool results, and the child's run
    /// starts with them active. Each name is looked up among the child's
    /// own skills, then this runner's; one found in neither is left out
    /// with a warning. The names active.
    pub(super) fn preload(
        &self,
        runner: &AgentRunner,
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
                .control
                .skills
                .offered(child_runner)
                .and_then(|s| s.skill(name))
                .or_else(|| self.offered(runner).and_then(|s| s.skill(name)));
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
            runner
                .agent
                .executor()
                .emit_event(RunEvent::SkillActivated {
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
    pub(in crate::run) async fn pre_approved(
        &self,
        turn: &Turn<'_>,
        request: &iris_runtime::ApprovalRequest,
        cx: &iris_core::ToolContext,
    ) -> Option<ToolResult> {
        let runner = turn.runner;
        let active = turn.active_skills();
        let skill = self
            .offered(runner)?
            .pre_approving(&active, request.tool.as_str())?;
        if ancestors_ask(runner, request) {
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
        match runner
            .agent
            .executor()
            .resume(&request.call_id, decision, cx)
            .await
        {
            Ok(iris_runtime::ToolOutcome::Finished { result, .. }) => Some(result),
            _ => None,
        }
    }
}

/// Whether an agent above `runner`'s asks about (or refuses) the call
/// `request` shows, whatever its own policy says.
fn ancestors_ask(runner: &AgentRunner, request: &iris_runtime::ApprovalRequest) -> bool {
    let Some(ceiling) = &runner.place.ceiling else {
        return false;
    };
    let registry = runner.agent.registry();
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
