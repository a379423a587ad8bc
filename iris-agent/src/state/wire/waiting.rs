//! Waiting items as JSON, in the shape of their state's version.
//!
//! Version 3 keeps each fact once: an item names a call of the history's
//! last step by id and holds only what that call does not say; the
//! request a person is shown is derived from the call when the state is
//! read. Versions 1 and 2 kept copies (the call, its request, the call id
//! again): such a state is read only when every copy is what the call
//! derives, so what a person approves is what runs, and it is written back
//! in its own shape, byte for byte, so a seal over it still verifies.

use iris_core::{RunId, ToolName, ToolUseBlock};
use iris_runtime::ApprovalRequest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::children::child_run_id;
use crate::state::{RunState, Wait, WaitingItem};

/// A version-3 item as written.
#[derive(Serialize)]
pub(super) struct ItemOut<'a> {
    call_id: &'a str,
    #[serde(flatten)]
    kind: KindOut<'a>,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum KindOut<'a> {
    Approval {
        tool: &'a ToolName,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<&'a str>,
    },
    Question {
        #[serde(skip_serializing_if = "Option::is_none")]
        expires_at_ms: Option<u64>,
    },
    Child {
        state: &'a RunState,
    },
}

/// A version-3 item as read.
#[derive(Deserialize)]
struct ItemIn {
    call_id: String,
    #[serde(flatten)]
    kind: KindIn,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum KindIn {
    Approval {
        tool: ToolName,
        #[serde(default)]
        reason: Option<String>,
    },
    Question {
        #[serde(default)]
        expires_at_ms: Option<u64>,
    },
    Child {
        state: Box<RunState>,
    },
}

/// A version-2 item, written as it was: with copies of its call and id.
#[derive(Serialize)]
pub(super) struct ItemV2Out<'a> {
    id: &'a str,
    call: &'a ToolUseBlock,
    #[serde(flatten)]
    wait: &'a Wait,
}

#[derive(Deserialize)]
struct ItemV2In {
    id: String,
    call: ToolUseBlock,
    #[serde(flatten)]
    wait: Wait,
}

/// A version-1 waiting call (approvals only).
#[derive(Serialize)]
pub(super) struct PendingOut<'a> {
    call: &'a ToolUseBlock,
    request: &'a ApprovalRequest,
}

#[derive(Deserialize)]
pub(super) struct PendingIn {
    call: ToolUseBlock,
    request: ApprovalRequest,
}

/// `item` in version 3's shape.
pub(super) fn out(item: &WaitingItem) -> ItemOut<'_> {
    let kind = match &item.wait {
        Wait::Approval { request } => KindOut::Approval {
            tool: &request.tool,
            reason: request.reason.as_deref(),
        },
        Wait::Question { request } => KindOut::Question {
            expires_at_ms: request.expires_at_ms,
        },
        Wait::Child { state, .. } => KindOut::Child { state },
    };
    ItemOut {
        call_id: item.id(),
        kind,
    }
}

/// `item` in version 2's shape.
pub(super) fn out_v2(item: &WaitingItem) -> ItemV2Out<'_> {
    ItemV2Out {
        id: item.id(),
        call: &item.call,
        wait: &item.wait,
    }
}

/// `item` in version 1's shape, when it is an approval (the only kind
/// version 1 has).
pub(super) fn out_v1(item: &WaitingItem) -> Option<PendingOut<'_>> {
    match &item.wait {
        Wait::Approval { request } => Some(PendingOut {
            call: &item.call,
            request,
        }),
        _ => None,
    }
}

/// Reads the waiting items of a state of run `run_id` whose history's
/// last step made `calls`.
pub(super) struct Reader<'a> {
    pub(super) run_id: &'a RunId,
    pub(super) calls: &'a [ToolUseBlock],
}

impl Reader<'_> {
    /// Version 3's items.
    pub(super) fn items(&self, items: Vec<Value>) -> Result<Vec<WaitingItem>, String> {
        let mut read = Vec::with_capacity(items.len());
        for item in items {
            let item: ItemIn = serde_json::from_value(item).map_err(|e| e.to_string())?;
            let call = self.call(&item.call_id)?;
            read.push(match item.kind {
                KindIn::Approval { tool, reason } => {
                    WaitingItem::approval(self.run_id, call, tool, reason)
                }
                KindIn::Question { expires_at_ms } => {
                    let id = call.id.clone();
                    WaitingItem::question(self.run_id, call, expires_at_ms).map_err(|why| {
                        format!("waiting call `{}` asks no questions: {why}", echo(&id))
                    })?
                }
                KindIn::Child { state } => self.child(call, *state)?,
            });
        }
        Self::once_each(read)
    }

    /// Version 2's items: each copy must be what its call derives.
    pub(super) fn items_v2(&self, items: Vec<Value>) -> Result<Vec<WaitingItem>, String> {
        let mut read = Vec::with_capacity(items.len());
        for item in items {
            let item: ItemV2In = serde_json::from_value(item).map_err(|e| e.to_string())?;
            if item.id != item.call.id {
                return Err(format!(
                    "waiting item `{}` names call `{}`: an item's id is its call's",
                    echo(&item.id),
                    echo(&item.call.id)
                ));
            }
            read.push(self.copied(item.call, item.wait)?);
        }
        Self::once_each(read)
    }

    /// Version 1's waiting calls.
    pub(super) fn items_v1(&self, pending: Vec<PendingIn>) -> Result<Vec<WaitingItem>, String> {
        let read = pending
            .into_iter()
            .map(|p| self.copied(p.call, Wait::Approval { request: p.request }))
            .collect::<Result<Vec<_>, _>>()?;
        Self::once_each(read)
    }

    /// An item of an older version, read from its copies of `call` and
    /// `wait`, which must be what the history's call derives.
    fn copied(&self, call: ToolUseBlock, wait: Wait) -> Result<WaitingItem, String> {
        if self.call(&call.id)? != call {
            return Err(format!(
                "waiting call `{}` is not the call the history's last step made under that id",
                echo(&call.id)
            ));
        }
        match wait {
            Wait::Child { agent, state, .. } => {
                named_child(&call, &agent)?;
                self.child(call, *state)
            }
            wait => derived(Some(self.run_id), call, wait),
        }
    }

    /// A child agent's item: its run is the one `call` delegated to. Its
    /// depth counts from this state (1), and its own children's from it.
    fn child(&self, call: ToolUseBlock, mut state: RunState) -> Result<WaitingItem, String> {
        if state.run_id != child_run_id(self.run_id, &call.id) {
            return Err(format!(
                "the child run that call `{}` waits on is `{}`, not the run the call delegated to",
                echo(&call.id),
                echo(state.run_id.as_str())
            ));
        }
        deepen(&mut state);
        Ok(WaitingItem::child(call, 1, state))
    }

    /// The last step's call `id`.
    fn call(&self, id: &str) -> Result<ToolUseBlock, String> {
        self.calls
            .iter()
            .find(|call| call.id == id)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "waiting call `{}` is not one the history's last step made",
                    echo(id)
                )
            })
    }

    /// `items`, unless two wait on one call.
    fn once_each(items: Vec<WaitingItem>) -> Result<Vec<WaitingItem>, String> {
        let mut seen = rustc_hash::FxHashSet::default();
        if let Some(twice) = items.iter().find(|item| !seen.insert(item.id())) {
            return Err(format!(
                "call `{}` waits twice; a call waits on one thing",
                echo(twice.id())
            ));
        }
        Ok(items)
    }
}

/// The item `call` derives for `wait`, a copy that must be it, in run
/// `run_id` (the copy's own run when the item stands alone).
fn derived(run_id: Option<&RunId>, call: ToolUseBlock, wait: Wait) -> Result<WaitingItem, String> {
    let id = call.id.clone();
    let item = match wait {
        Wait::Approval { request } => {
            let run_id = run_id.unwrap_or(&request.run_id);
            let derived =
                WaitingItem::approval(run_id, call, request.tool.clone(), request.reason.clone());
            (derived.approval_request() == Some(&request)).then_some(derived)
        }
        Wait::Question { request } => {
            let run_id = run_id.unwrap_or(&request.run_id);
            WaitingItem::question(run_id, call, request.expires_at_ms)
                .ok()
                .filter(|derived| derived.question_request() == Some(&request))
        }
        Wait::Child {
            agent,
            depth,
            state,
        } => {
            named_child(&call, &agent)?;
            let wait = Wait::Child {
                agent,
                depth,
                state,
            };
            Some(WaitingItem::from_parts(call, wait))
        }
    };
    item.ok_or_else(|| {
        format!(
            "what waiting call `{}` shows is not what the call makes (another run, call, tool, arguments or questions): it was edited",
            echo(&id)
        )
    })
}

/// Refuses a child item naming another agent than its call delegated to.
fn named_child(call: &ToolUseBlock, agent: &str) -> Result<(), String> {
    if agent == call.name {
        return Ok(());
    }
    Err(format!(
        "waiting call `{}` delegated to `{}`, but the item names child agent `{}`",
        echo(&call.id),
        echo(&call.name),
        echo(agent)
    ))
}

/// An item on its own (as [`PendingItem`](crate::PendingItem) carries
/// it): written with its call and what it shows, read only when what it
/// shows is what its call derives.
impl Serialize for WaitingItem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        out_v2(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for WaitingItem {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let item = ItemV2In::deserialize(deserializer)?;
        if item.id != item.call.id {
            return Err(serde::de::Error::custom(format!(
                "waiting item `{}` names call `{}`: an item's id is its call's",
                echo(&item.id),
                echo(&item.call.id)
            )));
        }
        derived(None, item.call, item.wait).map_err(serde::de::Error::custom)
    }
}

/// Counts every child item below `state` one level deeper: `state` has
/// become a child of the state being read.
fn deepen(state: &mut RunState) {
    for item in &mut state.waiting {
        if let Wait::Child { depth, state, .. } = &mut item.wait {
            *depth = depth.saturating_add(1);
            deepen(state);
        }
    }
}

fn echo(text: &str) -> std::borrow::Cow<'_, str> {
    iris_runtime::__wings::shorten(text)
}
