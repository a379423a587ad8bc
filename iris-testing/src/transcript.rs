//! What a run did, gathered from its outcomes and the decisions made on
//! its waiting calls: the model's steps, each call with its arguments and
//! outcome, each approval asked and how it was decided, and each question
//! asked and how it was answered.

use std::time::Duration;

use iris_agent::{PendingItem, RunOutcome, RunState};
use iris_core::{RunId, ToolErrorKind};
use iris_model::Message;
use iris_runtime::hooks::HookEvent;
use iris_runtime::{
    ApprovalDecision, ApprovalRequest, HookOutcome, QuestionReply, QuestionRequest, Reply, RunEvent,
};
use serde::Serialize;
use serde_json::Value;

use crate::events::EventLog;

/// How long [`Transcript::with_events`] waits for the observers to hear
/// the end of the run.
const SETTLE: Duration = Duration::from_secs(5);

/// A run as a test sees it, gathered by [`run_to_end`](crate::run_to_end)
/// or [`run_answering`](crate::run_answering); its `assert_*` methods say
/// what can be asserted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Transcript {
    /// The run.
    pub run_id: Option<RunId>,
    /// What the person asked.
    pub task: Option<String>,
    /// The model's answers, in order.
    pub steps: Vec<Step>,
    /// Every approval asked, in order, with its decision once made.
    pub approvals: Vec<Approval>,
    /// Every question the model asked the person, in order, with the reply
    /// once given.
    pub questions: Vec<Asked>,
    /// The child agents the run delegated to, each with its own
    /// trajectory: those that ended, then those that wait.
    pub children: Vec<ChildTranscript>,
    /// How the run stands: `finished`, `waiting`, `max_steps` or
    /// `cancelled`.
    pub ended: String,
    /// The model's final text, when it finished.
    pub answer: Option<String>,
    /// The hooks that ran, in order (from the run's events: see
    /// [`Transcript::with_events`]).
    pub hooks: Vec<HookFiring>,
    /// The skills active in the run, in activation order (preloaded ones
    /// first, for a child).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
}

/// A hook that ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookFiring {
    /// Its registered name.
    pub hook: String,
    /// The event it ran for.
    pub on: HookEvent,
    /// The call, for tool hooks.
    pub call_id: Option<String>,
    /// How it answered.
    pub outcome: HookOutcome,
}

/// One answer of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Its text, if any.
    pub text: Option<String>,
    /// Its calls, in order.
    pub calls: Vec<CallRecord>,
}

/// One call and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRecord {
    /// The call's id.
    pub call_id: String,
    /// The tool, as the model named it.
    pub tool: String,
    /// The arguments the model sent.
    pub arguments: Value,
    /// What it gave.
    pub outcome: CallOutcome,
}

/// What a call gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CallOutcome {
    /// A result the model reads.
    Ok {
        /// Its text.
        text: String,
        /// The handles of the artifacts it saved or published.
        artifacts: Vec<String>,
    },
    /// An error, with its kind.
    Error {
        /// The kind, such as `permission_denied`.
        kind: ToolErrorKind,
        /// The message the model reads.
        message: String,
    },
    /// It waits for a person's approval.
    Waiting,
}

/// An approval asked of a person.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Approval {
    /// What was shown.
    pub request: ApprovalRequest,
    /// How it was decided, once it was.
    pub decision: Option<ApprovalDecision>,
}

/// A child agent's part of a run: its own steps and how it stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChildTranscript {
    /// The parent's call that delegated.
    pub call_id: String,
    /// The child agent's name.
    pub agent: String,
    /// Its own run, as a transcript (its `task` is what it was given).
    pub transcript: Transcript,
}

/// Questions the model asked the person (`ask_question`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Asked {
    /// What was asked.
    pub request: QuestionRequest,
    /// The person's reply, once given.
    pub reply: Option<QuestionReply>,
}

impl Transcript {
    /// The transcript of a run that produced `outcome` in one go.
    #[must_use]
    pub fn of(outcome: &RunOutcome) -> Self {
        let mut transcript = Self::default();
        transcript.record(outcome);
        transcript
    }

    /// Takes in `outcome`, the run's latest: its history (which holds the
    /// earlier steps too) and any approvals it waits for.
    pub fn record(&mut self, outcome: &RunOutcome) {
        let ended = match outcome {
            RunOutcome::Finished { .. } => "finished",
            RunOutcome::CutOff { .. } => "cut_off",
            RunOutcome::Waiting(_) => "waiting",
            RunOutcome::MaxSteps(_) => "max_steps",
            RunOutcome::Cancelled(_) => "cancelled",
            RunOutcome::OutputInvalid { .. } => "output_invalid",
            RunOutcome::Refused { .. } => "refused",
            RunOutcome::OverBudget { .. } => "over_budget",
        };
        self.record_state(outcome.state(), ended);
        if let RunOutcome::Finished { text, .. }
        | RunOutcome::CutOff { text, .. }
        | RunOutcome::OutputInvalid { text, .. } = outcome
        {
            self.answer = Some(text.clone());
        }
    }

    /// Takes in `state`, which stands as `ended` says (a child agent's run
    /// is recorded this way).
    fn record_state(&mut self, state: &RunState, ended: &str) {
        ended.clone_into(&mut self.ended);
        self.skills.clone_from(&state.skills);
        // A run that finished answered with its last text.
        self.answer = (ended == "finished")
            .then(|| match state.messages.last() {
                Some(Message::Assistant { text, .. }) => text.clone(),
                _ => None,
            })
            .flatten();
        self.run_id = Some(state.run_id.clone());
        self.task = state.messages.iter().find_map(|m| match m {
            Message::User { text } => Some(text.clone()),
            _ => None,
        });
        self.steps = steps(state);
        self.children = children(state);
        let pending = state.pending();
        for request in pending.iter().filter_map(|p| p.item.approval_request()) {
            let known = self
                .approvals
                .iter()
                .any(|a| a.request.approval_id == request.approval_id);
            if !known {
                self.approvals.push(Approval {
                    request: request.clone(),
                    decision: None,
                });
            }
        }
        for request in pending.iter().filter_map(|p| p.item.question_request()) {
            let known = self
                .questions
                .iter()
                .any(|q| q.request.question_id == request.question_id);
            if !known {
                self.questions.push(Asked {
                    request: request.clone(),
                    reply: None,
                });
            }
        }
    }

    /// Notes the reply given to `pending`, an item the run waited on (at
    /// any depth): a decision on an approval, an answer to a question.
    pub fn record_reply(&mut self, pending: &PendingItem, reply: &Reply) {
        let shown = pending.item.request_id();
        match reply {
            Reply::Decision(decision) => {
                if let Some(approval) = self
                    .approvals
                    .iter_mut()
                    .find(|a| a.request.approval_id == shown)
                {
                    approval.decision = Some(decision.clone());
                }
            }
            Reply::Answer(answer) => {
                if let Some(asked) = self
                    .questions
                    .iter_mut()
                    .find(|q| q.request.question_id == shown)
                {
                    asked.reply = Some(answer.clone());
                }
            }
        }
    }

    /// Notes the decision made on waiting call `call_id`.
    pub fn record_decision(&mut self, call_id: &str, decision: &ApprovalDecision) {
        if let Some(approval) = self
            .approvals
            .iter_mut()
            .rev()
            .find(|a| a.request.call_id == call_id)
        {
            approval.decision = Some(decision.clone());
        }
    }

    /// Adds what the run's observers heard in `log` (the hooks that
    /// fired), once they heard the run end (or, for a run that waits, its
    /// waiting calls), waiting at most a few seconds.
    #[must_use]
    pub fn with_events(mut self, log: &EventLog) -> Self {
        let Some(run) = self.run_id.clone() else {
            return self;
        };
        let waiting: Vec<String> = self
            .calls()
            .filter(|c| matches!(c.outcome, CallOutcome::Waiting))
            .map(|c| c.call_id.clone())
            .collect();
        let ended = self.ended != "waiting";
        let events = log.wait_until(
            |events| {
                if ended {
                    events.iter().any(|e| matches!(e, RunEvent::RunFinished { run_id } if *run_id == run))
                } else {
                    waiting.iter().all(|id| {
                        events.iter().any(|e| matches!(e, RunEvent::ToolWaiting { run_id, call_id, .. } if *run_id == run && call_id == id))
                    })
                }
            },
            SETTLE,
        );
        self.hooks = events
            .into_iter()
            .filter_map(|event| match event {
                RunEvent::HookFired {
                    run_id,
                    call_id,
                    hook,
                    on,
                    outcome,
                } if run_id == run => Some(HookFiring {
                    hook,
                    on,
                    call_id,
                    outcome,
                }),
                _ => None,
            })
            .collect();
        self
    }

    /// Every call, in the order the model made them.
    pub fn calls(&self) -> impl Iterator<Item = &CallRecord> {
        self.steps.iter().flat_map(|s| s.calls.iter())
    }

    /// The calls of `tool`, in order.
    pub fn calls_of<'t>(&'t self, tool: &'t str) -> impl Iterator<Item = &'t CallRecord> {
        self.calls().filter(move |c| c.tool == tool)
    }

    /// The tools called, in order.
    #[must_use]
    pub fn trajectory(&self) -> Vec<&str> {
        self.calls().map(|c| c.tool.as_str()).collect()
    }

    /// The transcript as JSON for a snapshot: call ids numbered in order
    /// (`call#1`, ...), approval ids and argument hashes, run ids and
    /// artifact handles (`artifact#1`, ...) replaced, so that a snapshot
    /// holds only what the test decides.
    #[must_use]
    pub fn redacted(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut names = Redactions::default();
        names.walk(&mut value);
        value
    }
}

/// The steps of `state`'s history, with each call's outcome.
/// The child agents' parts of `state`: those that ended, then those that
/// wait.
fn children(state: &RunState) -> Vec<ChildTranscript> {
    let ended = state.children.iter().map(|child| {
        let mut transcript = Transcript::default();
        transcript.record_state(&child.state, &child.ending);
        (child.call_id.clone(), child.agent.clone(), transcript)
    });
    let waiting = state.waiting.iter().filter_map(|item| {
        let child = item.child_state()?;
        let mut transcript = Transcript::default();
        transcript.record_state(child, "waiting");
        Some((item.id().to_owned(), item.call().name.clone(), transcript))
    });
    ended
        .chain(waiting)
        .map(|(call_id, agent, transcript)| ChildTranscript {
            call_id,
            agent,
            transcript,
        })
        .collect()
}

fn steps(state: &RunState) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for message in &state.messages {
        match message {
            Message::Assistant { text, tool_calls } => steps.push(Step {
                text: text.clone(),
                calls: tool_calls
                    .iter()
                    .map(|call| CallRecord {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        arguments: call.input.clone(),
                        outcome: CallOutcome::Waiting,
                    })
                    .collect(),
            }),
            Message::Tool {
                call_id, result, ..
            } => {
                if let Some(call) = steps
                    .iter_mut()
                    .rev()
                    .flat_map(|s| s.calls.iter_mut())
                    .find(|c| &c.call_id == call_id)
                {
                    call.outcome = match result.error_kind() {
                        Some(kind) => CallOutcome::Error {
                            kind,
                            message: result.text_content(),
                        },
                        None => CallOutcome::Ok {
                            text: result.text_content(),
                            artifacts: result
                                .artifacts()
                                .iter()
                                .map(|a| a.handle.clone())
                                .collect(),
                        },
                    };
                }
            }
            Message::User { .. } => {}
        }
    }
    // Calls the pause finished already carry their results in the state.
    for finished in &state.finished {
        if let Some(call) = steps
            .iter_mut()
            .flat_map(|s| s.calls.iter_mut())
            .find(|c| c.call_id == finished.call_id)
        {
            call.outcome = match finished.result.error_kind() {
                Some(kind) => CallOutcome::Error {
                    kind,
                    message: finished.result.text_content(),
                },
                None => CallOutcome::Ok {
                    text: finished.result.text_content(),
                    artifacts: finished
                        .result
                        .artifacts()
                        .iter()
                        .map(|a| a.handle.clone())
                        .collect(),
                },
            };
        }
    }
    steps
}

/// Stable names for what changes from run to run.
#[derive(Default)]
struct Redactions {
    seen: Vec<(String, String)>,
    calls: usize,
    artifacts: usize,
}

impl Redactions {
    fn name(&mut self, original: &str, kind: &str) -> String {
        if let Some((_, name)) = self.seen.iter().find(|(o, _)| o == original) {
            return name.clone();
        }
        let name = if kind == "call" {
            self.calls += 1;
            format!("call#{}", self.calls)
        } else {
            self.artifacts += 1;
            format!("artifact#{}", self.artifacts)
        };
        self.seen.push((original.to_owned(), name.clone()));
        name
    }

    fn walk(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    match (key.as_str(), &*field) {
                        ("id" | "call_id", Value::String(id)) => {
                            let id = id.clone();
                            *field = Value::String(self.name(&id, "call"));
                        }
                        ("approval_id" | "arguments_hash" | "run_id", Value::String(_)) => {
                            *field = Value::String(format!("<{key}>"));
                        }
                        _ => self.walk(field),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v)),
            Value::String(text) if text.starts_with("artifact://") => {
                let handle = text.clone();
                *text = self.name(&handle, "artifact");
            }
            _ => {}
        }
    }
}
