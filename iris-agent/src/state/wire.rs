//! A [`RunState`] as JSON, in the shape of its version: a state read from
//! version 1 (`pending`, approvals only) is written back in that shape,
//! byte for byte, so a seal or fingerprint taken over it still verifies;
//! every state a run writes now is of the current version (`waiting`).

use iris_core::{RunId, ToolName, ToolUseBlock};
use iris_model::{Message, Usage};
use iris_runtime::ApprovalRequest;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ChildRun, FinishedCall, RunState, Wait, WaitingItem};

/// The version whose waiting part is `pending`: approvals only.
const PENDING_VERSION: u32 = 1;

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
    pending: Vec<PendingOut<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    waiting: &'a [WaitingItem],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    disclosed: &'a [ToolName],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    skills: &'a [String],
    usage: &'a Usage,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    children: &'a [ChildRun],
    #[serde(skip_serializing_if = "Option::is_none")]
    seal: Option<&'a str>,
}

/// A version-1 waiting call.
#[derive(Serialize)]
struct PendingOut<'a> {
    call: &'a ToolUseBlock,
    request: &'a ApprovalRequest,
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
    pending: Vec<PendingIn>,
    #[serde(default)]
    waiting: Vec<WaitingItem>,
    #[serde(default)]
    disclosed: Vec<ToolName>,
    #[serde(default)]
    skills: Vec<String>,
    usage: Usage,
    #[serde(default)]
    children: Vec<ChildRun>,
    #[serde(default)]
    seal: Option<String>,
}

#[derive(Deserialize)]
struct PendingIn {
    call: ToolUseBlock,
    request: ApprovalRequest,
}

impl Serialize for RunState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let old = self.version == PENDING_VERSION;
        let pending = if old {
            self.waiting
                .iter()
                .filter_map(|item| match &item.wait {
                    Wait::Approval { request } => Some(PendingOut {
                        call: &item.call,
                        request,
                    }),
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        StateOut {
            version: self.version,
            agent: &self.agent,
            run_id: &self.run_id,
            step: self.step,
            messages: &self.messages,
            finished: &self.finished,
            pending,
            waiting: if old { &[] } else { &self.waiting },
            disclosed: &self.disclosed,
            skills: &self.skills,
            usage: &self.usage,
            children: &self.children,
            seal: self.seal.as_deref(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RunState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = StateIn::deserialize(deserializer)?;
        let mut waiting = read.waiting;
        if read.version == PENDING_VERSION {
            waiting = read
                .pending
                .into_iter()
                .map(|p| WaitingItem::approval(p.call, p.request))
                .collect();
        } else if !read.pending.is_empty() {
            return Err(serde::de::Error::custom(format!(
                "a state of version {} lists `pending` calls, which only version {PENDING_VERSION} has; its waiting calls belong in `waiting`",
                read.version
            )));
        }
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
            seal: read.seal,
        })
    }
}
