//! Tool calls put together from what a Chat Completions server sends, by
//! rules that hold for every server's dialect (each drawn from a way
//! llama.cpp, vLLM, Ollama or LM Studio was seen to bend the wire):
//!
//! - a fragment with a new id on an index already used opens a new call
//!   (some servers number every call 0);
//! - a server index is only a key: gaps and any order are fine;
//! - the first fragment may carry the whole arguments, or a prefix of them;
//! - a name is taken once, never joined to a repeat of itself;
//! - an id that is a number is read as text, and a missing one is minted
//!   from the answer's id and the call's place (the same every time the
//!   answer is read);
//! - arguments given as a JSON object are that object's text;
//! - a call with no arguments has `{}`, unless the answer was cut off by
//!   its token limit (then its empty arguments reach the tool as they are,
//!   and the model reads why they were refused);
//! - calls present make the answer a call answer, whatever
//!   `finish_reason` says.

use std::sync::atomic::{AtomicU64, Ordering};

use iris_core::ToolUseBlock;
use serde_json::Value;

use crate::{FinishReason, ModelError};

/// Most tool calls one answer may hold.
pub(super) const MAX_CALLS: usize = 1024;

/// One call being put together from its fragments.
#[derive(Debug, Default)]
struct PartialCall {
    /// The server's index for it.
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// The calls of one answer, in the order they appeared.
#[derive(Debug, Default)]
pub(super) struct Calls {
    open: Vec<PartialCall>,
}

/// A fragment's part of a call: where it went, and what it carried.
pub(super) struct Taken<'a> {
    /// The call's place among the answer's calls.
    pub(super) position: usize,
    pub(super) id: Option<&'a str>,
    pub(super) name: Option<&'a str>,
    /// The next piece of the arguments' JSON text.
    pub(super) arguments: String,
}

impl Calls {
    /// Takes in one fragment (or one whole call) as the server sent it.
    ///
    /// # Errors
    /// [`ModelError`] past [`MAX_CALLS`] calls.
    pub(super) fn take<'a>(&mut self, fragment: &'a Value) -> Result<Taken<'a>, ModelError> {
        self.take_as(fragment, false)
    }

    /// Takes in one whole call of an answer that was not streamed: each is
    /// a call of its own, whatever its index says.
    ///
    /// # Errors
    /// [`ModelError`] past [`MAX_CALLS`] calls.
    pub(super) fn take_whole(&mut self, call: &Value) -> Result<(), ModelError> {
        self.take_as(call, true).map(|_| ())
    }

    fn take_as<'a>(&mut self, fragment: &'a Value, whole: bool) -> Result<Taken<'a>, ModelError> {
        let index = fragment["index"].as_u64();
        let id = fragment["id"].as_str().filter(|id| !id.is_empty());
        // A numeric id, read as text.
        let numeric_id = fragment["id"].as_u64().map(|n| n.to_string());
        let id_text = id.map(str::to_owned).or(numeric_id);
        let position = if whole {
            self.open_call(index)?
        } else {
            self.position_of(index, id_text.as_deref())?
        };
        let call = &mut self.open[position];
        if call.id.is_empty()
            && let Some(id) = id_text
        {
            call.id = id;
        }
        let function = &fragment["function"];
        let name = function["name"].as_str().filter(|n| !n.is_empty());
        if call.name.is_empty()
            && let Some(name) = name
        {
            name.clone_into(&mut call.name);
        }
        let arguments = match &function["arguments"] {
            Value::String(piece) => piece.clone(),
            Value::Null => String::new(),
            // Arguments as a JSON value, whole.
            whole => whole.to_string(),
        };
        call.arguments.push_str(&arguments);
        Ok(Taken {
            position,
            id,
            name,
            arguments,
        })
    }

    /// The place of the call a fragment belongs to, opening a new one when
    /// it is the first of its index, or carries a new id on a used index.
    fn position_of(&mut self, index: Option<u64>, id: Option<&str>) -> Result<usize, ModelError> {
        let found = match index {
            Some(index) => self.open.iter().rposition(|c| c.index == Some(index)),
            // No index: a fragment of the last call, unless it names another.
            None => self.open.len().checked_sub(1),
        };
        if let Some(position) = found {
            let call = &self.open[position];
            let another = id.is_some_and(|id| !call.id.is_empty() && call.id != id);
            if !another {
                return Ok(position);
            }
        }
        self.open_call(index)
    }

    /// Opens a new call for the server's `index`.
    fn open_call(&mut self, index: Option<u64>) -> Result<usize, ModelError> {
        if self.open.len() >= MAX_CALLS {
            return Err(ModelError::new(format!(
                "the answer sent more than {MAX_CALLS} tool calls; Iris reads at most {MAX_CALLS} per answer"
            )));
        }
        self.open.push(PartialCall {
            index,
            ..PartialCall::default()
        });
        Ok(self.open.len() - 1)
    }

    /// Whether no call was made.
    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The finished calls, ids minted from `answer_id` where missing.
    pub(super) fn finish(self, answer_id: Option<&str>, finish: FinishReason) -> Vec<ToolUseBlock> {
        let minted_base = answer_id.map_or_else(fresh_base, str::to_owned);
        self.open
            .into_iter()
            .enumerate()
            .map(|(position, call)| {
                let id = if call.id.is_empty() {
                    format!("call_{minted_base}_{position}")
                } else {
                    call.id
                };
                let raw = if call.arguments.trim().is_empty() && finish != FinishReason::Length {
                    "{}".to_owned()
                } else {
                    call.arguments
                };
                // Arguments that are not JSON reach the tool as text, and the
                // model reads why they were refused.
                let input = serde_json::from_str(&raw).unwrap_or(Value::String(raw));
                ToolUseBlock::new(id, call.name, input)
            })
            .collect()
    }
}

/// The finish reason a server gave, calls present beating a `stop`.
pub(super) fn finish_reason(reason: Option<&str>, refused: bool, has_calls: bool) -> FinishReason {
    match reason {
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        _ if refused => FinishReason::ContentFilter,
        _ if has_calls => FinishReason::ToolCalls,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}

/// A base no other answer of this process has, for an answer without an id.
fn fresh_base() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("iris{:x}{:x}", nanos, NEXT.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Calls, MAX_CALLS};
    use crate::FinishReason;

    /// A small seeded generator: the same hostile streams on every run.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self, below: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % below
        }
    }

    /// A fragment as any server might send one: indexes in any order or
    /// none, ids as text, numbers, empty or missing, names repeated,
    /// arguments as text pieces, objects, null or other JSON.
    fn fragment(random: &mut XorShift) -> Value {
        let mut fragment = json!({"function": {}});
        match random.next(4) {
            0 => {}
            _ => fragment["index"] = json!(random.next(6)),
        }
        match random.next(5) {
            0 => fragment["id"] = json!(format!("call_{}", random.next(4))),
            1 => fragment["id"] = json!(random.next(4)),
            2 => fragment["id"] = json!(""),
            _ => {}
        }
        if random.next(3) == 0 {
            fragment["function"]["name"] =
                json!(["a", "b", ""][usize::try_from(random.next(3)).unwrap_or(0)]);
        }
        fragment["function"]["arguments"] = match random.next(6) {
            0 => json!({"n": random.next(9)}),
            1 => Value::Null,
            2 => json!([1, 2]),
            3 => json!("{\"n\": "),
            4 => json!("1}"),
            _ => json!(""),
        };
        fragment
    }

    #[test]
    fn any_stream_of_fragments_assembles_without_panic_or_loss() {
        let mut random = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2_000 {
            let mut calls = Calls::default();
            let count = random.next(40);
            for _ in 0..count {
                let fragment = fragment(&mut random);
                let taken = calls.take(&fragment).expect("far below the bound");
                assert!(taken.position < calls.open.len());
            }
            let open = calls.open.len();
            let finish = if random.next(2) == 0 {
                FinishReason::Stop
            } else {
                FinishReason::Length
            };
            let finished = calls.finish(Some("chatcmpl-x"), finish);
            // Every call opened is handed on, each with an id.
            assert_eq!(finished.len(), open);
            assert!(finished.iter().all(|call| !call.id.is_empty()));
        }
    }

    #[test]
    fn a_server_past_the_bound_is_refused() {
        let mut calls = Calls::default();
        for index in 0..MAX_CALLS {
            calls
                .take(
                    &json!({"index": index, "id": format!("c{index}"), "function": {"name": "a"}}),
                )
                .unwrap();
        }
        let refused = calls
            .take(&json!({"index": MAX_CALLS, "id": "one-more", "function": {"name": "a"}}))
            .err()
            .unwrap();
        assert!(refused.message.contains("at most 1024"), "{refused}");
    }
}
