//! What a step offers: the tools of its request and the context its calls
//! run in.

use iris_core::{ToolContext, ToolSpec};

use super::{AgentRunner, RunContext};
use crate::durable::Durable;
use crate::{RunError, RunState};

impl AgentRunner {
    /// The tools this step offers, and the context its calls run in
    /// (offering the same tools).
    pub(super) fn offer(
        &self,
        state: &RunState,
        cx: &RunContext,
    ) -> Result<(Vec<ToolSpec>, ToolContext), RunError> {
        let (tools, offered): (Vec<ToolSpec>, Vec<iris_core::ToolName>) =
            match self.agent.discovery() {
                Some(discovery) => {
                    let request = discovery.request(&self.agent.registry().view(), &state.run_id);
                    (request.specs, request.offered)
                }
                None => self
                    .agent
                    .registry()
                    .tools()
                    .map(|t| {
                        let definition = t.definition_dyn();
                        (definition.spec(), definition.name().clone())
                    })
                    .unzip(),
            };
        let mut tools = tools;
        if self.questions.is_some() {
            // Run control's own tool: never a discovery candidate, never
            // in the executor's offer.
            let name = iris_runtime::question::ASK_QUESTION;
            if self.agent.registry().resolve(name).is_some() {
                return Err(RunError::NameTaken {
                    name: name.to_owned(),
                });
            }
            tools.push(iris_runtime::question::ask_question_spec());
        }
        // Skills: run control too, never discovery candidates.
        if let Some(spec) = self.skill_spec() {
            let name = spec.name().as_str();
            if self.agent.registry().resolve(name).is_some() {
                return Err(RunError::NameTaken {
                    name: name.to_owned(),
                });
            }
            tools.push(spec);
        }
        // Child agents: run control too, never discovery candidates.
        tools.extend(self.child_specs());
        Ok((
            tools,
            self.context_offering(cx, state.run_id.clone(), offered)?,
        ))
    }

    /// A context for calls outside a step (run events, resumed calls),
    /// offering the eager tools and those disclosed.
    pub(super) fn tool_context(
        &self,
        cx: &RunContext,
        disclosed: &[iris_core::ToolName],
    ) -> Result<ToolContext, RunError> {
        let registry = self.agent.registry();
        let offered = registry
            .tools()
            .map(|t| t.definition_dyn())
            .filter(|d| d.exposure() == iris_core::Exposure::Eager || disclosed.contains(d.name()))
            .map(|d| d.name().clone());
        self.context_offering(cx, cx.run_id.clone(), offered)
    }

    /// The context for calls of `run` offering `offered`, with the run's
    /// cancellation and its call journal.
    fn context_offering(
        &self,
        cx: &RunContext,
        run: iris_core::RunId,
        offered: impl IntoIterator<Item = iris_core::ToolName>,
    ) -> Result<ToolContext, RunError> {
        let mut builder = self
            .agent
            .context_builder(&cx.workspace, run)
            .map_err(RunError::Context)?
            .offered(offered)
            .extension(cx.cancel.clone());
        if let Some(journaled) = self.journaled() {
            builder = builder.extension(journaled);
        }
        if let Some(ceiling) = &self.place.ceiling {
            // A child's calls answer to every agent above it too.
            builder = builder.extension(ceiling.clone());
        }
        if let Some(guards) = &self.place.guards {
            builder = builder.extension(guards.clone());
        }
        Ok(builder.build())
    }

    /// The journal of the run's calls: its store's or its engine's, or for
    /// a child its root's.
    pub(super) fn journaled(&self) -> Option<iris_runtime::journal::Journaled> {
        if let Some(engine) = &self.engine {
            return Some(iris_runtime::journal::Journaled(engine.calls()));
        }
        self.durable
            .as_ref()
            .map(Durable::journaled)
            .or_else(|| self.place.journal.clone())
    }

    /// Whether `tool` (as the model called it) only observes.
    pub(super) fn is_read_only(&self, tool: &str) -> bool {
        self.agent
            .registry()
            .resolve(tool)
            .is_some_and(|t| t.definition_dyn().capabilities().is_read_only())
    }
}
