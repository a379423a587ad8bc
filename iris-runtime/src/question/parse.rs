//! The model's `ask_question` arguments, read into questions: the strict
//! shape, and the variants models commonly send (options as plain strings,
//! Claude's `multiSelect`, a missing `multi_select` or description).
//! Anything else is refused with what to fix.

use serde_json::{Map, Value};

use super::{Question, QuestionOption};

// The bounds by short names, for the messages that quote them.
const MAX_QUESTIONS: usize = Question::MAX_PER_CALL;
const MIN_OPTIONS: usize = Question::MIN_OPTIONS;
const MAX_OPTIONS: usize = Question::MAX_OPTIONS;
const MAX_HEADER_CHARS: usize = Question::MAX_HEADER_CHARS;
const MAX_QUESTION_CHARS: usize = Question::MAX_CHARS;
const MAX_LABEL_CHARS: usize = QuestionOption::MAX_LABEL_CHARS;
const MAX_DESCRIPTION_CHARS: usize = QuestionOption::MAX_DESCRIPTION_CHARS;

/// The questions `arguments` ask, or what is wrong with them, in words for
/// the model.
///
/// # Errors
/// A message naming the first problem and what to send instead.
pub fn parse_questions(arguments: &Value) -> Result<Vec<Question>, String> {
    let Some(object) = arguments.as_object() else {
        return Err(
            "the arguments must be an object with `questions`, a list of 1 to 4 questions"
                .to_owned(),
        );
    };
    if let Some(extra) = object.keys().find(|k| k.as_str() != "questions") {
        return Err(format!(
            "unknown argument `{}`; `ask_question` takes only `questions`",
            shown(extra)
        ));
    }
    let Some(list) = object.get("questions").and_then(Value::as_array) else {
        return Err("`questions` must be a list of 1 to 4 questions".to_owned());
    };
    if list.is_empty() || list.len() > MAX_QUESTIONS {
        return Err(format!(
            "`questions` holds {} questions; ask 1 to {MAX_QUESTIONS} at a time",
            list.len()
        ));
    }
    let questions = list
        .iter()
        .enumerate()
        .map(|(at, question)| {
            parse_question(question).map_err(|why| format!("question {}: {why}", at + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(questions)
}

/// The keys a question may have (`multiSelect` as Claude writes it).
const QUESTION_KEYS: [&str; 5] = [
    "question",
    "header",
    "options",
    "multi_select",
    "multiSelect",
];

fn parse_question(value: &Value) -> Result<Question, String> {
    let Some(object) = value.as_object() else {
        return Err(
            "must be an object with `question`, `header`, `options` and `multi_select`".to_owned(),
        );
    };
    if let Some(extra) = object.keys().find(|k| !QUESTION_KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key `{}`; a question has `question`, `header`, `options` and `multi_select`",
            shown(extra)
        ));
    }
    let question = text(object, "question", MAX_QUESTION_CHARS)?;
    let header = text(object, "header", MAX_HEADER_CHARS)?;
    let multi_select = match object
        .get("multi_select")
        .or_else(|| object.get("multiSelect"))
    {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(_) => return Err("`multi_select` must be true or false".to_owned()),
    };
    let Some(list) = object.get("options").and_then(Value::as_array) else {
        return Err(format!(
            "`options` must be a list of {MIN_OPTIONS} to {MAX_OPTIONS} choices, each with `label` and `description`"
        ));
    };
    if list.len() < MIN_OPTIONS || list.len() > MAX_OPTIONS {
        return Err(format!(
            "`options` holds {} choices; offer {MIN_OPTIONS} to {MAX_OPTIONS} (the person can always answer in their own words)",
            list.len()
        ));
    }
    let mut options: Vec<QuestionOption> = Vec::with_capacity(list.len());
    for (at, option) in list.iter().enumerate() {
        let option = parse_option(option).map_err(|why| format!("option {}: {why}", at + 1))?;
        if options.iter().any(|o| o.label == option.label) {
            return Err(format!(
                "two options are labelled `{}`; give each its own label",
                shown(&option.label)
            ));
        }
        options.push(option);
    }
    Ok(Question {
        question,
        header,
        options,
        multi_select,
    })
}

fn parse_option(value: &Value) -> Result<QuestionOption, String> {
    match value {
        // A common variant: the choices alone.
        Value::String(label) => Ok(QuestionOption {
            label: checked(label, "label", MAX_LABEL_CHARS)?,
            description: String::new(),
        }),
        Value::Object(object) => {
            if let Some(extra) = object
                .keys()
                .find(|k| !["label", "description"].contains(&k.as_str()))
            {
                return Err(format!(
                    "unknown key `{}`; an option has `label` and `description`",
                    shown(extra)
                ));
            }
            let description = match object.get("description") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => {
                    checked_len(text, "description", MAX_DESCRIPTION_CHARS)?;
                    text.clone()
                }
                Some(_) => return Err("`description` must be text".to_owned()),
            };
            Ok(QuestionOption {
                label: text(object, "label", MAX_LABEL_CHARS)?,
                description,
            })
        }
        _ => Err("must be an object with `label` and `description`".to_owned()),
    }
}

/// The text under `key`: present, not blank, at most `max` characters.
fn text(object: &Map<String, Value>, key: &str, max: usize) -> Result<String, String> {
    match object.get(key) {
        Some(Value::String(text)) => checked(text, key, max),
        Some(_) => Err(format!("`{key}` must be text")),
        None => Err(format!("`{key}` is missing")),
    }
}

fn checked(text: &str, key: &str, max: usize) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(format!("`{key}` is empty"));
    }
    checked_len(text, key, max)?;
    Ok(text.to_owned())
}

fn checked_len(text: &str, key: &str, max: usize) -> Result<(), String> {
    let chars = text.chars().count();
    if chars > max {
        return Err(format!(
            "`{key}` has {chars} characters; keep it to {max} at most"
        ));
    }
    Ok(())
}

fn shown(text: &str) -> String {
    crate::echo::for_person(text, crate::echo::ECHO_CHARS)
}
