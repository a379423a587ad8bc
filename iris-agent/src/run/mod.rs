//! The run loop: an [`AgentRunner`] drives an [`Agent`] with a [`Model`],
//! one file per stage a step goes through: what a step offers
//! ([`request`]), the model's answer ([`answer`]), the calls' results
//! ([`calls`]), the waiting path ([`waiting`]) and resuming ([`resume`]),
//! tied together by the loop ([`steps`]).

mod calls;
mod checkpoints;
mod control;
mod identity;
mod model_turn;
mod place;
mod replies;
mod resume;
mod spans;
mod spend;
mod steps;
mod waiting;

use std::path::PathBuf;
use std::sync::Arc;

use iris_core::RunId;
use tokio_util::sync::CancellationToken;

#[cfg(doc)]
use iris_model::ModelConfig;
use iris_model::{Model, ModelError, ModelOptions, ToolChoice};

pub use control::delegation::{AgentTool, Delegation};
pub use control::questions::{Answerer, Questions};

use crate::durable::Durable;
use crate::{Agent, Engine, RunError, RunStore, Skills, StateKey};

/// Where a run's calls happen and how it is stopped.
#[derive(Debug, Clone)]
pub struct RunContext {
    workspace: PathBuf,
    run_id: RunId,
    cancel: CancellationToken,
    /// The questions asked in the tree this run belongs to, once its root
    /// started counting them (the host's context has none).
    questions: Option<control::questions::Tally>,
    /// What the tree this run belongs to spends against its budget, once
    /// its root started counting (none without a budget).
    budget: Option<crate::budget::Ledger>,
}

impl RunContext {
    /// Calls of run `run_id` in `workspace` (the file tools' root).
    pub fn new(workspace: impl Into<PathBuf>, run_id: RunId) -> Self {
        Self {
            workspace: workspace.into(),
            run_id,
            cancel: CancellationToken::new(),
            questions: None,
            budget: None,
        }
    }

    /// This context, counting the tree's questions from `asked` unless it
    /// counts them already (a child's context shares its root's count).
    fn counting_questions(&self, asked: impl FnOnce() -> u32) -> Self {
        let mut counting = self.clone();
        if counting.questions.is_none() {
            counting.questions = Some(control::questions::Tally::new(asked()));
        }
        counting
    }

    /// This context, counting the tree's spend against `spending`'s budget
    /// from `spent` unless it counts already (a child's context shares its
    /// root's ledger).
    fn counting_spend(
        mut self,
        spending: &crate::budget::Spending,
        timed: bool,
        spent: impl FnOnce() -> crate::Spent,
    ) -> Result<Self, RunError> {
        if self.budget.is_none()
            && let Some(budget) = spending.budget.clone().filter(crate::Budget::is_bounded)
        {
            if !timed && budget.bounds_time() {
                return Err(RunError::Budget {
                    why: "a run on a durable engine is replayed, and a replay's clock is not its first attempt's: bound it by tokens, money, requests or calls, or bound its time with the engine's own timeout".to_owned(),
                });
            }
            self.budget = Some(crate::budget::Ledger::new(budget, spent(), timed));
        }
        Ok(self)
    }

    /// Stops the run with this token: between steps, while the model
    /// answers, and in the middle of a tool (which is cancelled).
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// The run.
    #[must_use]
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    /// The token that cancels the run.
    #[must_use]
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }
}

/// How a runner seals the states it hands out.
#[derive(Clone)]
enum Sealing {
    /// With the host's own key (the default).
    Host,
    /// With the key the host gave.
    Key(StateKey),
    /// Not at all: the host keeps states where nobody else writes (and a
    /// child agent's state travels inside its root's, sealed there).
    Trusted,
}

/// Drives an [`Agent`] with a [`Model`]. A clone shares the agent, the
/// model and the store, and may be configured apart.
#[derive(Clone)]
pub struct AgentRunner {
    agent: Arc<Agent>,
    model: Arc<dyn Model>,
    /// The configuration of the model asked, when one is known (a child
    /// without a model of its own asks its parent's): what its spans name.
    model_config: Option<iris_model::ModelConfig>,
    options: ModelOptions,
    /// How the states handed out are sealed, and which ones resume.
    sealing: Sealing,
    /// Where runs are written, when they outlive this process.
    durable: Option<Durable>,
    /// The lease's holder and length asked for, kept for a store given
    /// later: the builder's order does not matter.
    holder: Option<String>,
    lease: Option<std::time::Duration>,
    /// The durable engine the loop runs on, if any.
    engine: Option<Arc<dyn Engine>>,
    /// The owners of run control's calls (questions, skills, child
    /// agents), asked before the executor.
    control: control::Controls,
    /// Where this runner runs in a tree of agents: the root's run and the
    /// depth (0 for a root), with what a child's runner is held to.
    place: place::Place,
    /// What the final answer must be, over the agent's.
    output: Option<crate::Output>,
    /// The budget and prices over the agent's.
    spending: crate::budget::Spending,
}

impl std::fmt::Debug for AgentRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRunner")
            .field("agent", &self.agent.name())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl AgentRunner {
    /// A runner of `agent` asking `model`; sampling options come from the
    /// agent's model configuration.
    pub fn new(agent: impl Into<Arc<Agent>>, model: impl Model) -> Self {
        Self::from_parts(agent.into(), Arc::new(model))
    }

    /// A runner of `agent` asking `model`.
    fn from_parts(agent: Arc<Agent>, model: Arc<dyn Model>) -> Self {
        let options = ModelOptions {
            temperature: agent.model().and_then(|m| m.temperature),
            max_tokens: agent.model().and_then(|m| m.max_tokens),
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
        };
        Self {
            model_config: agent.model().cloned(),
            agent,
            model,
            options,
            sealing: Sealing::Host,
            durable: None,
            holder: None,
            lease: None,
            engine: None,
            control: control::Controls::default(),
            place: place::Place::default(),
            output: None,
            spending: crate::budget::Spending::default(),
        }
    }

    /// A runner of the same agent and model on `engine`: model answers,
    /// calls and states are kept in the engine's journal, and a run the
    /// engine replays gets its kept answers back (see [`engine`](crate::engine)). Made per
    /// run by the engine's integration (for Restate, per invocation); an
    /// engine takes the place of a store.
    #[must_use]
    pub fn on_engine(&self, engine: Arc<dyn Engine>) -> Self {
        Self {
            durable: None,
            engine: Some(engine),
            ..self.clone()
        }
    }

    /// How far this runner's runs delegate to child agents (by default
    /// [`Delegation::DEFAULT_MAX_DEPTH`]: the agent's children are offered, and they
    /// delegate no further), and how many children run at once.
    #[must_use]
    pub fn with_delegation(mut self, delegation: Delegation) -> Self {
        self.control.delegation.delegation = delegation;
        self
    }

    /// What this runner's runs must answer in the end, over the agent's
    /// own ([`AgentBuilder::output`](crate::AgentBuilder::output)): the
    /// schema goes with each request as the provider's structured output,
    /// a final answer is checked by the parser of tool arguments, and one
    /// that does not fit goes back to the model with its faults, at most
    /// [`Output::retries`](crate::Output::retries) times; then the run ends
    /// as [`RunOutcome::OutputInvalid`](crate::RunOutcome::OutputInvalid).
    #[must_use]
    pub fn with_output(mut self, output: crate::Output) -> Self {
        self.output = Some(output);
        self
    }

    /// Says a person can answer this runner's runs: the model is offered
    /// `ask_question`, and each question is answered as `questions` says
    /// (a reply that resumes the waiting run, or an answerer in this
    /// process). Without it the tool is never offered. A question is run
    /// control: no hook, middleware or permission rule sees it, and an
    /// answer is never an approval.
    #[must_use]
    pub fn with_questions(mut self, questions: Questions) -> Self {
        self.control.questions.questions = Some(questions);
        self
    }

    /// Offers the model `skills`: their catalog (names and descriptions,
    /// within its budget) as one `activate_skill` tool, which returns a
    /// skill's instructions, folder and files and records it as active in
    /// the run state. Activation is run control: no hook, middleware or
    /// permission rule sees it; observers get
    /// [`RunEvent::SkillActivated`](iris_runtime::RunEvent::SkillActivated).
    /// With no skill in the catalog, no tool is offered.
    #[must_use]
    pub fn with_skills(mut self, skills: Skills) -> Self {
        // The file tools of the agent (and its children) neither read nor
        // rewrite a skill however it is given.
        self.agent
            .hide_from_files(&crate::files::skill_folders(&skills));
        self.agent
            .protect_in_files(&crate::files::skill_roots(&skills));
        self.control.skills.skills = Some(skills);
        self
    }

    /// Writes every run to `store` at each step boundary, under this
    /// runner's lease: a run that waits can then be resumed by any process
    /// with the same store ([`AgentRunner::resume_stored`]), and a run whose
    /// process died is taken over once its lease has run out. See
    /// [`store`](crate::store) for what is written when.
    #[must_use]
    pub fn with_store(mut self, store: impl Into<Arc<dyn RunStore>>) -> Self {
        let mut durable = Durable::new(store.into());
        if let Some(holder) = &self.holder {
            durable.holder.clone_from(holder);
        }
        if let Some(lease) = self.lease {
            durable.lease = lease;
        }
        self.durable = Some(durable);
        self
    }

    /// Names this process in the leases it takes (by default host, process
    /// id and start time). Two processes must never share a name. Before
    /// or after [`with_store`](Self::with_store), alike.
    #[must_use]
    pub fn with_holder(mut self, holder: impl Into<String>) -> Self {
        let holder = holder.into();
        if let Some(durable) = &mut self.durable {
            durable.holder.clone_from(&holder);
        }
        self.holder = Some(holder);
        self
    }

    /// How long a lease lasts without a write (by default
    /// [`store::DEFAULT_LEASE`](crate::store::DEFAULT_LEASE)): a run whose
    /// process died is taken over that long after its last step at most.
    /// Longer than the slowest step. Before or after
    /// [`with_store`](Self::with_store), alike.
    #[must_use]
    pub fn with_lease(mut self, lease: std::time::Duration) -> Self {
        if let Some(durable) = &mut self.durable {
            durable.lease = lease;
        }
        self.lease = Some(lease);
        self
    }

    /// The store runs are written to, if any.
    #[must_use]
    pub fn store(&self) -> Option<&Arc<dyn RunStore>> {
        self.durable.as_ref().map(|d| &d.store)
    }

    /// Seals every state this runner hands out with `key`, and resumes
    /// only states that carry a seal of `key` over exactly what they hold,
    /// with a store too. Give every machine that resumes the same runs the
    /// same key. Without one, a runner without a store or engine seals the
    /// states of runs that wait with the host's own key
    /// ([`StateKey::host`]), so they resume on this machine only, and a
    /// run that ended (its step limit, a cut-off answer) does not resume.
    #[must_use]
    pub fn with_state_key(mut self, key: StateKey) -> Self {
        self.sealing = Sealing::Key(key);
        self
    }

    /// Hands out states without a seal and resumes states that carry none,
    /// as they are: for a host that keeps every state where nobody else can
    /// write (its own memory, a store only it writes). A state edited
    /// outside is then caught only by the checks a state can make of
    /// itself (see [`RunState`](crate::RunState)): a finished call made to
    /// wait again, a step count or a skill list edited, pass them.
    #[must_use]
    pub fn trust_unsealed_states(mut self) -> Self {
        self.sealing = Sealing::Trusted;
        self
    }

    /// Whether every state handed out is sealed (a key the host gave), not
    /// only those of runs that wait (the host's own key).
    pub(super) fn seals_every_state(&self) -> bool {
        matches!(self.sealing, Sealing::Key(_))
    }

    /// The key states are sealed and verified with, if any: the one given;
    /// else the host's, unless a store or an engine keeps the runs (what
    /// they hold is trusted, and other machines have other host keys).
    pub(super) fn sealing_key(&self) -> Option<&StateKey> {
        match &self.sealing {
            Sealing::Key(key) => Some(key),
            Sealing::Trusted => None,
            Sealing::Host if self.durable.is_some() || self.engine.is_some() => None,
            Sealing::Host => crate::seal::host_key(),
        }
    }

    /// A runner of `agent` asking the model its configuration names,
    /// through the matching adapter (`openai_chat` and `openai_responses`
    /// with feature `openai`, `anthropic` with feature `anthropic`).
    ///
    /// # Errors
    /// [`RunError::Model`] when the agent names no model, names one whose
    /// adapter is not built in, or its key variable is not set.
    pub fn from_config(agent: impl Into<Arc<Agent>>) -> Result<Self, RunError> {
        let agent = agent.into();
        let Some(config) = agent.model() else {
            return Err(ModelError::new(
                "the agent names no `model`; give it one (`Agent::builder(..).model(..)`, or a `model` section in its file), or build the runner with `AgentRunner::new(agent, model)`",
            )
            .into());
        };
        let model = config.build_model()?;
        Ok(Self::new(agent, model))
    }

    /// Bounds what each run spends, its child agents' spend included,
    /// over the agent's own budget (see [`Budget`](crate::Budget)): a
    /// model request that cannot be reserved is not sent, and the run ends
    /// [`RunOutcome::OverBudget`](crate::RunOutcome::OverBudget).
    #[must_use]
    pub fn with_budget(mut self, budget: crate::Budget) -> Self {
        self.spending.budget = Some(budget);
        self
    }

    /// The prices a money budget counts at, over the agent's.
    #[must_use]
    pub fn with_prices(mut self, prices: crate::PriceTable) -> Self {
        self.spending.prices = Some(prices);
        self
    }

    /// The agent.
    #[must_use]
    pub fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }

    /// What this runner's runs must answer in the end: its own output, else
    /// its agent's.
    pub(super) fn output(&self) -> Option<&crate::Output> {
        self.output.as_ref().or_else(|| self.agent.output())
    }

    /// The configuration of the model asked, when one is known.
    pub(super) fn model_config(&self) -> Option<&iris_model::ModelConfig> {
        self.model_config.as_ref()
    }
}
