//! `iris run --script FILE`: the model's answers read from a file, to try
//! an agent file's tools, permissions, pauses and children without a
//! provider. The file is a JSON list with one answer per step:
//!
//! ```json
//! [
//!   {"calls": [{"name": "write_file", "input": {"path": "a.txt", "content": "hi"}}]},
//!   {"text": "Written."}
//! ]
//! ```
//!
//! A call may give its `id`; one without gets one of its step's. A step
//! past the list's end fails the run, saying which step was asked for.

use std::path::Path;

use iris_testing::{ScriptedModel, Turn};
use serde::Deserialize;
use serde_json::Value;

/// Longest script file read, in bytes.
const MAX_SCRIPT_BYTES: u64 = 4 * 1024 * 1024;

/// One answer of the script.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    calls: Vec<Call>,
}

/// One call of an answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default = "empty_object")]
    input: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// The scripted model the file at `path` describes.
///
/// # Errors
/// What is wrong with the file, for the person who wrote it.
pub(crate) fn model(path: &Path) -> Result<ScriptedModel, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("the script `{shown}`: {e}"))?
        .len();
    if size > MAX_SCRIPT_BYTES {
        return Err(format!(
            "the script `{shown}` has {size} bytes, over the {MAX_SCRIPT_BYTES} a script may have"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("the script `{shown}`: {e}"))?;
    let answers: Vec<Answer> = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the script `{shown}` is not a JSON list of answers ({e}); each is `{{\"text\": ...}}` or `{{\"calls\": [{{\"name\": ..., \"input\": {{...}}}}]}}`"
        )
    })?;
    if answers.is_empty() {
        return Err(format!(
            "the script `{shown}` holds no answer; give one per step"
        ));
    }
    let turns = answers.into_iter().enumerate().map(|(step, answer)| {
        let mut turn = match &answer.text {
            Some(text) if answer.calls.is_empty() => Turn::text(text.clone()),
            _ => Turn::calls(std::iter::empty::<(String, Value)>()),
        };
        for (at, call) in answer.calls.into_iter().enumerate() {
            let id = call
                .id
                .unwrap_or_else(|| format!("call_{}_{}", step + 1, at + 1));
            turn = turn.and_call_with_id(id, call.name, call.input);
        }
        turn
    });
    Ok(ScriptedModel::new(turns))
}
