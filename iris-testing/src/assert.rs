//! Assertions on a [`Transcript`]. Each fails the test by panicking, as
//! `assert!` does, with a message that names what was expected and lists
//! the calls the run made.
#![allow(
    clippy::panic,
    clippy::manual_assert,
    clippy::missing_panics_doc,
    clippy::must_use_candidate,
    reason = "every assertion fails the test by panicking, as assert! does (said once, in the module docs), and returns the transcript only so that assertions chain"
)]

use std::fmt::Write as _;

use iris_core::ToolErrorKind;
use iris_runtime::{ApprovalDecision, QuestionReply};
use serde_json::Value;

use crate::transcript::{CallOutcome, CallRecord, Transcript};

/// How [`Transcript::assert_trajectory`] compares the tools called with the
/// ones expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trajectory {
    /// Exactly these calls, in this order.
    Strict,
    /// Exactly these calls, in any order (each as many times as listed).
    Unordered,
    /// Every call the run made is among these (as many times at most).
    Subset,
    /// The run made at least these calls (as many times at least), and
    /// perhaps others.
    Superset,
}

/// Who refused a call, for [`Transcript::assert_denied`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeniedBy {
    /// The permission policy.
    Policy,
    /// A `tool.before` hook.
    Hook,
    /// A person, deciding on an approval.
    Person,
}

/// What a person decided, for [`Transcript::assert_decided`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// Approved.
    Approved,
    /// Denied.
    Denied,
}

impl Transcript {
    /// The run's calls, one per line, for failure messages.
    #[must_use]
    pub fn describe_calls(&self) -> String {
        let mut out = String::new();
        let calls: Vec<&CallRecord> = self.calls().collect();
        if calls.is_empty() {
            return "the run made no call".to_owned();
        }
        let _ = write!(out, "the run made {} call(s):", calls.len());
        for (n, call) in calls.iter().enumerate() {
            let outcome = match &call.outcome {
                CallOutcome::Ok { artifacts, .. } if artifacts.is_empty() => "ok".to_owned(),
                CallOutcome::Ok { artifacts, .. } => format!("ok, {} artifact(s)", artifacts.len()),
                CallOutcome::Error { kind, .. } => format!("error {}", kind.as_str()),
                CallOutcome::Waiting => "waiting for approval".to_owned(),
            };
            let _ = write!(
                out,
                "\n  {}. {} {} -> {outcome}",
                n + 1,
                call.tool,
                call.arguments
            );
        }
        out
    }

    /// The run called `tool` at least once.
    #[track_caller]
    pub fn assert_called(&self, tool: &str) -> &Self {
        if self.calls_of(tool).next().is_none() {
            panic!("expected a call of `{tool}`; {}", self.describe_calls());
        }
        self
    }

    /// The run called `tool` at least once with arguments that hold
    /// `expected` (every key of an expected object with a matching value,
    /// at any depth; other values equal).
    #[track_caller]
    pub fn assert_called_with(&self, tool: &str, expected: &Value) -> &Self {
        if !self
            .calls_of(tool)
            .any(|c| contains(&c.arguments, expected))
        {
            panic!(
                "expected a call of `{tool}` with arguments holding {expected}; {}",
                self.describe_calls()
            );
        }
        self
    }

    /// The run called `tool` at least once with arguments for which
    /// `check` holds; `what` says what it checks, for the message.
    #[track_caller]
    pub fn assert_called_where(
        &self,
        tool: &str,
        what: &str,
        check: impl Fn(&Value) -> bool,
    ) -> &Self {
        if !self.calls_of(tool).any(|c| check(&c.arguments)) {
            panic!(
                "expected a call of `{tool}` whose arguments {what}; {}",
                self.describe_calls()
            );
        }
        self
    }

    /// The run called `tool` exactly `times` times.
    #[track_caller]
    pub fn assert_called_times(&self, tool: &str, times: usize) -> &Self {
        let made = self.calls_of(tool).count();
        if made != times {
            panic!(
                "expected {times} call(s) of `{tool}`, found {made}; {}",
                self.describe_calls()
            );
        }
        self
    }

    /// The run never called `tool`.
    #[track_caller]
    pub fn assert_not_called(&self, tool: &str) -> &Self {
        if self.calls_of(tool).next().is_some() {
            panic!("expected no call of `{tool}`; {}", self.describe_calls());
        }
        self
    }

    /// The run called no tool at all.
    #[track_caller]
    pub fn assert_no_tools(&self) -> &Self {
        if self.calls().next().is_some() {
            panic!("expected no tool calls; {}", self.describe_calls());
        }
        self
    }

    /// The run called `tools` in this order (other calls may come between).
    #[track_caller]
    pub fn assert_in_order(&self, tools: &[&str]) -> &Self {
        let mut wanted = tools.iter().peekable();
        for call in self.calls() {
            if wanted.peek().is_some_and(|t| **t == call.tool) {
                wanted.next();
            }
        }
        if let Some(missing) = wanted.next() {
            panic!(
                "expected calls of {} in this order, but found no `{missing}` after the ones before it; {}",
                list(tools),
                self.describe_calls()
            );
        }
        self
    }

    /// The tools called match `expected` as `how` says.
    #[track_caller]
    pub fn assert_trajectory(&self, how: Trajectory, expected: &[&str]) -> &Self {
        let actual = self.trajectory();
        let holds = match how {
            Trajectory::Strict => actual == expected,
            Trajectory::Unordered => sorted(&actual) == sorted(expected),
            Trajectory::Subset => within(&actual, expected),
            Trajectory::Superset => within(expected, &actual),
        };
        if !holds {
            panic!(
                "expected a trajectory {how:?} {}, found {}; {}",
                list(expected),
                list(&actual),
                self.describe_calls()
            );
        }
        self
    }

    /// The run paused for a person's approval of a call of `tool`.
    #[track_caller]
    pub fn assert_paused_for(&self, tool: &str) -> &Self {
        if !self
            .approvals
            .iter()
            .any(|a| a.request.tool.as_str() == tool)
        {
            let asked: Vec<&str> = self
                .approvals
                .iter()
                .map(|a| a.request.tool.as_str())
                .collect();
            panic!(
                "expected the run to pause for approval of `{tool}`; approvals asked: {}; {}",
                list(&asked),
                self.describe_calls()
            );
        }
        self
    }

    /// The skill `skill` was active in the run: the model activated it, or
    /// (a child) it was preloaded.
    #[track_caller]
    pub fn assert_skill_activated(&self, skill: &str) -> &Self {
        if !self.skills.iter().any(|s| s == skill) {
            panic!(
                "expected skill `{skill}` to be activated; active: {}; {}",
                list(&self.skills.iter().map(String::as_str).collect::<Vec<_>>()),
                self.describe_calls()
            );
        }
        self
    }

    /// No skill was activated in the run.
    #[track_caller]
    pub fn assert_no_skills(&self) -> &Self {
        if !self.skills.is_empty() {
            panic!(
                "expected no skill to be activated; active: {}",
                list(&self.skills.iter().map(String::as_str).collect::<Vec<_>>())
            );
        }
        self
    }

    /// The model asked the person a question whose text or header contains
    /// `text` (with `ask_question`).
    #[track_caller]
    pub fn assert_asked(&self, text: &str) -> &Self {
        if self.asked(text).is_none() {
            panic!(
                "expected the model to ask a question about `{text}`; questions asked: {}; {}",
                list(&self.question_texts()),
                self.describe_calls()
            );
        }
        self
    }

    /// The question whose text or header contains `text` was answered, and
    /// the model read the answer: its call's result says `answered` and
    /// carries each answer given.
    #[track_caller]
    pub fn assert_answered(&self, text: &str) -> &Self {
        let Some(asked) = self.asked(text) else {
            return self.assert_asked(text);
        };
        let call_id = &asked.request.call_id;
        if !matches!(asked.reply, Some(QuestionReply::Answered { .. })) {
            panic!(
                "expected the question about `{text}` (call `{call_id}`) to be answered; its reply: {:?}",
                asked.reply
            );
        }
        let read = self
            .steps
            .iter()
            .flat_map(|step| &step.calls)
            .find(|call| &call.call_id == call_id);
        match read.map(|call| &call.outcome) {
            Some(CallOutcome::Ok { text: read, .. }) if read.starts_with("The person answered") => {
                self
            }
            other => panic!(
                "expected the model to read the answer to `{text}` (call `{call_id}`); the call gave {other:?}; {}",
                self.describe_calls()
            ),
        }
    }

    /// The part of the run the child agent `agent` played, to assert on its
    /// own trajectory (the first delegation to it).
    #[track_caller]
    #[must_use]
    pub fn child(&self, agent: &str) -> &Transcript {
        if let Some(child) = self.children.iter().find(|c| c.agent == agent) {
            return &child.transcript;
        }
        let delegated: Vec<&str> = self.children.iter().map(|c| c.agent.as_str()).collect();
        panic!(
            "expected the run to delegate to `{agent}`; it delegated to: {}; {}",
            list(&delegated),
            self.describe_calls()
        )
    }

    /// The model asked no question.
    #[track_caller]
    pub fn assert_no_questions(&self) -> &Self {
        if !self.questions.is_empty() {
            panic!(
                "expected no question; the model asked: {}",
                list(&self.question_texts())
            );
        }
        self
    }

    fn asked(&self, text: &str) -> Option<&crate::Asked> {
        self.questions.iter().find(|asked| {
            asked
                .request
                .questions
                .iter()
                .any(|q| q.question.contains(text) || q.header.contains(text))
        })
    }

    fn question_texts(&self) -> Vec<&str> {
        self.questions
            .iter()
            .flat_map(|asked| &asked.request.questions)
            .map(|q| q.question.as_str())
            .collect()
    }

    /// A person decided `decided` on the approval of a call of `tool`, and
    /// the call then ended as that decision says (ran, or was refused).
    #[track_caller]
    pub fn assert_decided(&self, tool: &str, decided: Decided) -> &Self {
        let approval = self
            .approvals
            .iter()
            .find(|a| a.request.tool.as_str() == tool);
        let Some(approval) = approval else {
            return self.assert_paused_for(tool);
        };
        let call_id = &approval.request.call_id;
        let made = match &approval.decision {
            Some(ApprovalDecision::Approve { .. }) => Decided::Approved,
            Some(ApprovalDecision::Deny { .. }) => Decided::Denied,
            None => panic!(
                "expected the approval of `{tool}` (call `{call_id}`) to be {decided:?}, but no decision was recorded; {}",
                self.describe_calls()
            ),
        };
        if made != decided {
            panic!(
                "expected the approval of `{tool}` (call `{call_id}`) to be {decided:?}, but it was {made:?}; {}",
                self.describe_calls()
            );
        }
        // The call of the run the approval is bound to: a child agent's
        // call ids are its own, and may be a root call's too.
        let outcome = self
            .run_transcript(&approval.request.run_id)
            .and_then(|run| run.calls().find(|c| &c.call_id == call_id))
            .map(|c| &c.outcome);
        let followed = match (decided, outcome) {
            (Decided::Approved, Some(CallOutcome::Ok { .. } | CallOutcome::Error { .. })) => {
                !matches!(
                    outcome,
                    Some(CallOutcome::Error {
                        kind: ToolErrorKind::PermissionDenied,
                        ..
                    })
                )
            }
            (Decided::Denied, Some(CallOutcome::Error { kind, .. })) => {
                *kind == ToolErrorKind::PermissionDenied
            }
            _ => false,
        };
        if !followed {
            panic!(
                "the approval of `{tool}` (call `{call_id}`) was {decided:?}, but the call did not end so (its outcome: {outcome:?}); was the run resumed with the decision? {}",
                self.describe_calls()
            );
        }
        self
    }

    /// The transcript of run `run_id`: this one, or a child agent's at
    /// any depth.
    fn run_transcript(&self, run_id: &iris_core::RunId) -> Option<&Transcript> {
        if self.run_id.as_ref() == Some(run_id) {
            return Some(self);
        }
        self.children
            .iter()
            .find_map(|child| child.transcript.run_transcript(run_id))
            // A transcript that never saw a state knows no run: its own
            // calls are the run's.
            .or_else(|| self.run_id.is_none().then_some(self))
    }

    /// A call of `tool` was refused by `by`.
    #[track_caller]
    pub fn assert_denied(&self, tool: &str, by: DeniedBy) -> &Self {
        let denied_by_person = |call: &CallRecord| {
            self.approvals.iter().any(|a| {
                a.request.call_id == call.call_id
                    && matches!(a.decision, Some(ApprovalDecision::Deny { .. }))
            })
        };
        let refused = self.calls_of(tool).any(|call| match (&call.outcome, by) {
            (CallOutcome::Error { kind, .. }, DeniedBy::Hook) => {
                *kind == ToolErrorKind::DeniedByHook
            }
            (CallOutcome::Error { kind, .. }, DeniedBy::Policy) => {
                *kind == ToolErrorKind::PermissionDenied && !denied_by_person(call)
            }
            (CallOutcome::Error { kind, .. }, DeniedBy::Person) => {
                *kind == ToolErrorKind::PermissionDenied && denied_by_person(call)
            }
            _ => false,
        });
        if !refused {
            panic!(
                "expected a call of `{tool}` denied by the {}; {}",
                match by {
                    DeniedBy::Policy => "permission policy",
                    DeniedBy::Hook => "a hook",
                    DeniedBy::Person => "person deciding on its approval",
                },
                self.describe_calls()
            );
        }
        self
    }

    /// A call of `tool` failed with `kind`.
    #[track_caller]
    pub fn assert_failed(&self, tool: &str, kind: ToolErrorKind) -> &Self {
        let failed = self
            .calls_of(tool)
            .any(|c| matches!(&c.outcome, CallOutcome::Error { kind: k, .. } if *k == kind));
        if !failed {
            panic!(
                "expected a call of `{tool}` to fail with `{}`; {}",
                kind.as_str(),
                self.describe_calls()
            );
        }
        self
    }

    /// A call of `tool` saved or published an artifact.
    #[track_caller]
    pub fn assert_artifact_saved(&self, tool: &str) -> &Self {
        let saved = self.calls_of(tool).any(
            |c| matches!(&c.outcome, CallOutcome::Ok { artifacts, .. } if !artifacts.is_empty()),
        );
        if !saved {
            panic!(
                "expected a call of `{tool}` to save an artifact; {}",
                self.describe_calls()
            );
        }
        self
    }

    /// Hook `hook` ran (needs [`Transcript::with_events`]).
    #[track_caller]
    pub fn assert_hook_fired(&self, hook: &str) -> &Self {
        if !self.hooks.iter().any(|h| h.hook == hook) {
            panic!(
                "{}",
                self.hooks_missing(&format!("expected hook `{hook}` to fire"))
            );
        }
        self
    }

    /// Hook `hook` ran for a call of `tool`.
    #[track_caller]
    pub fn assert_hook_fired_on(&self, hook: &str, tool: &str) -> &Self {
        let fired = self.hooks.iter().any(|h| {
            h.hook == hook
                && h.call_id
                    .as_ref()
                    .is_some_and(|id| self.calls_of(tool).any(|c| &c.call_id == id))
        });
        if !fired {
            panic!(
                "{}",
                self.hooks_missing(&format!(
                    "expected hook `{hook}` to fire on a call of `{tool}`"
                ))
            );
        }
        self
    }

    /// The message of a hook assertion that failed: what fired instead.
    fn hooks_missing(&self, expected: &str) -> String {
        if self.hooks.is_empty() {
            return format!(
                "{expected}, but no hook fired (or the run's events were not added: give the executor an `EventLog` and call `Transcript::with_events`); {}",
                self.describe_calls()
            );
        }
        let fired: Vec<String> = self
            .hooks
            .iter()
            .map(|h| match &h.call_id {
                Some(call) => format!("`{}` on call `{call}`", h.hook),
                None => format!("`{}`", h.hook),
            })
            .collect();
        format!(
            "{expected}; the hooks that fired: {}; {}",
            fired.join(", "),
            self.describe_calls()
        )
    }

    /// The run finished with an answer holding `text`.
    #[track_caller]
    pub fn assert_answer_contains(&self, text: &str) -> &Self {
        match &self.answer {
            Some(answer) if answer.contains(text) => self,
            Some(answer) => panic!("expected the answer to hold {text:?}; it was {answer:?}"),
            None => panic!(
                "expected the run to finish with an answer holding {text:?}; it ended `{}`; {}",
                self.ended,
                self.describe_calls()
            ),
        }
    }
}

/// Whether `actual` holds `expected`: every key of an expected object with
/// a value `actual` holds in turn; anything else equal.
#[must_use]
pub fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected
            .iter()
            .all(|(key, value)| actual.get(key).is_some_and(|a| contains(a, value))),
        _ => actual == expected,
    }
}

fn sorted<'a>(tools: &[&'a str]) -> Vec<&'a str> {
    let mut tools = tools.to_vec();
    tools.sort_unstable();
    tools
}

/// Whether every item of `part` is in `whole`, counting repeats.
fn within(part: &[&str], whole: &[&str]) -> bool {
    let mut left = whole.to_vec();
    part.iter()
        .all(|tool| match left.iter().position(|t| t == tool) {
            Some(at) => {
                left.swap_remove(at);
                true
            }
            None => false,
        })
}

fn list(tools: &[&str]) -> String {
    if tools.is_empty() {
        return "[]".to_owned();
    }
    format!("[{}]", tools.join(", "))
}
