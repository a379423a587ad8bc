//! A [`RunState`] as JSON, in the shape of its version: a state read from
//! an older version (1: `pending`, approvals only; 2: `waiting` items with
//! copies of their calls and requests) is written back in that shape,
//! byte for byte, so a seal or fingerprint taken over it still verifies;
//! every state a run writes now is of the current version.

use iris_core::{RunId, ToolName, ToolUseBlock};
use iris_model::{Message, Usage};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{ChildRun, FinishedCall, RunState};
use crate::budget::Spent;

mod waiting;

/// The version whose waiting part is `pending`: approvals only.
const PENDING_VERSION: u32 = 1;

/// The version whose waiting items hold copies of their calls.
const COPYING_VERSION: u32 = 2;

/// A state as written, fields in the order every version writes them.
#[derive(Serialize)]
struct StateOut<'a> {
    version: u32,
    agent: &'a str,
    run_id: &'a RunId,
    step: u32,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    finished: &'a [FinishedCall],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pending: Vec<waiting::PendingOut<'a>>,
    #[serde(skip_serializing_if = "Waiting::is_empty")]
    waiting: Waiting<'a>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    disclosed: &'a [ToolName],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    skills: &'a [String],
    usage: &'a Usage,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    children: &'a [ChildRun],
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a Value>,
    #[serde(skip_serializing_if = "is_zero")]
    output_faults: u32,
    #[serde(skip_serializing_if = "Spent::is_empty")]
    spent: &'a Spent,
    #[serde(skip_serializing_if = "Option::is_none")]
    seal: Option<&'a str>,
}

/// Whether a count is nothing (and left out).
#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde passes a reference"
)]
fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// The waiting items as written, in the shape of the state's version.
#[derive(Serialize)]
#[serde(untagged)]
enum Waiting<'a> {
    Derived(Vec<waiting::ItemOut<'a>>),
    Copying(Vec<waiting::ItemV2Out<'a>>),
}

impl Waiting<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Waiting::Derived(items) => items.is_empty(),
            Waiting::Copying(items) => items.is_empty(),
        }
    }
}

/// A state as read, of any version.
#[derive(Deserialize)]
struct StateIn {
    version: u32,
    agent: String,
    run_id: RunId,
    step: u32,
    messages: Vec<Message>,
    #[serde(default)]
    finished: Vec<FinishedCall>,
    #[serde(default)]
    pending: Vec<waiting::PendingIn>,
    #[serde(default)]
    waiting: Vec<Value>,
    #[serde(default)]
    disclosed: Vec<ToolName>,
    #[serde(default)]
    skills: Vec<String>,
    usage: Usage,
    #[serde(default)]
    children: Vec<ChildRun>,
    #[serde(default)]
    output: Option<Value>,
    #[serde(default)]
    output_faults: u32,
    #[serde(default)]
    spent: Spent,
    #[serde(default)]
    seal: Option<String>,
}

impl Serialize for RunState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items = self.waiting.iter();
        let (pending, waiting) = match self.version {
            PENDING_VERSION => (
                items.filter_map(waiting::out_v1).collect(),
                Waiting::Derived(Vec::new()),
            ),
            COPYING_VERSION => (
                Vec::new(),
                Waiting::Copying(items.map(waiting::out_v2).collect()),
            ),
            _ => (
                Vec::new(),
                Waiting::Derived(items.map(waiting::out).collect()),
            ),
        };
        StateOut {
            version: self.version,
            agent: &self.agent,
            run_id: &self.run_id,
            step: self.step,
            messages: &self.messages,
            finished: &self.finished,
            pending,
            waiting,
            disclosed: &self.disclosed,
            skills: &self.skills,
            usage: &self.usage,
            children: &self.children,
            output: self.output.as_ref(),
            output_faults: self.output_faults,
            spent: &self.spent,
            seal: self.seal.as_deref(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RunState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = StateIn::deserialize(deserializer)?;
        if read.version != PENDING_VERSION && !read.pending.is_empty() {
            return Err(serde::de::Error::custom(format!(
                "a state of version {} lists `pending` calls, which only version {PENDING_VERSION} has; its waiting calls belong in `waiting`",
                read.version
            )));
        }
        let calls: &[ToolUseBlock] = match read.messages.last() {
            Some(Message::Assistant { tool_calls, .. }) => tool_calls,
            _ => &[],
        };
        let reader = waiting::Reader {
            run_id: &read.run_id,
            calls,
        };
        let waiting = match read.version {
            PENDING_VERSION => reader.items_v1(read.pending),
            COPYING_VERSION => reader.items_v2(read.waiting),
            _ => reader.items(read.waiting),
        }
        .map_err(serde::de::Error::custom)?;
        Ok(RunState {
            version: read.version,
            agent: read.agent,
            run_id: read.run_id,
            step: read.step,
            messages: read.messages,
            finished: read.finished,
            waiting,
            disclosed: read.disclosed,
            skills: read.skills,
            usage: read.usage,
            children: read.children,
            output: read.output,
            output_faults: read.output_faults,
            spent: read.spent,
            seal: read.seal,
        })
    }
}
