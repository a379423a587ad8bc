//! The `ask_question` tool as the model is offered it: strict on every
//! provider, in the shape models know from Claude's `AskUserQuestion`.

use std::sync::{Arc, LazyLock};

use iris_core::ToolSpec;
use serde_json::{Value, json};

use super::{ASK_QUESTION, Question};

const MAX_QUESTIONS: usize = Question::MAX_PER_CALL;
const MIN_OPTIONS: usize = Question::MIN_OPTIONS;
const MAX_OPTIONS: usize = Question::MAX_OPTIONS;
const MAX_HEADER_CHARS: usize = Question::MAX_HEADER_CHARS;

const DESCRIPTION: &str = "Ask the person you are working for one to four questions when you cannot go on well without their answer: a choice only they can make, a preference, or missing facts. Each question has a short header (at most 12 characters), 2 to 4 options with a label and a description of what picking it means, and multi_select when several may be chosen. The person can always answer in their own words instead. Do not ask what you can find out with your tools.";

static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
    // A valid tool name, as a test checks.
    let name = iris_core::__private::checked_tool_name(ASK_QUESTION);
    ToolSpec::new(name, DESCRIPTION, Arc::new(parameters())).with_strict(true)
});

/// The `ask_question` tool's spec, built once.
#[must_use]
pub fn ask_question_spec() -> ToolSpec {
    SPEC.clone()
}

fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": format!("The questions, 1-{MAX_QUESTIONS}."),
                "minItems": 1,
                "maxItems": MAX_QUESTIONS,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {
                            "type": "string",
                            "description": "The full question, clear on its own.",
                        },
                        "header": {
                            "type": "string",
                            "description": format!("A short label for the question, at most {MAX_HEADER_CHARS} characters."),
                            "maxLength": MAX_HEADER_CHARS,
                        },
                        "options": {
                            "type": "array",
                            "description": format!("{MIN_OPTIONS}-{MAX_OPTIONS} choices; the person may also answer in words."),
                            "minItems": MIN_OPTIONS,
                            "maxItems": MAX_OPTIONS,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {
                                        "type": "string",
                                        "description": "What the person picks, a few words.",
                                    },
                                    "description": {
                                        "type": "string",
                                        "description": "What picking it means.",
                                    },
                                },
                                "required": ["label", "description"],
                                "additionalProperties": false,
                            },
                        },
                        "multi_select": {
                            "type": "boolean",
                            "description": "Whether several options may be chosen.",
                        },
                    },
                    "required": ["question", "header", "options", "multi_select"],
                    "additionalProperties": false,
                },
            },
        },
        "required": ["questions"],
        "additionalProperties": false,
    })
}
