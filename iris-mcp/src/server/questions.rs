//! `ask_question` over MCP: listed only to a client that can elicit (a
//! person is behind it), and answered through one form elicitation, each
//! question an enum of its options beside a free-text field. Run control:
//! the call never reaches the executor, so no hook, middleware or
//! permission rule sees it.

use std::time::Duration;

use iris_core::{ToolErrorKind, ToolResult};
use iris_runtime::__wings::for_person;
use iris_runtime::question::{
    ASK_QUESTION, Answer, QuestionEnding, ask_question_spec, parse_questions,
};
use iris_runtime::{QuestionReply, QuestionRequest};
use rmcp::model::{
    self as mcp, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

/// Characters of a question's text or an option a person is shown.
const MAX_SHOWN: usize = 500;

/// Whether the client behind `context` can put a question to a person.
pub(super) fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.elicitation.is_some())
}

/// The listing of `ask_question`.
pub(super) fn listing() -> mcp::Tool {
    let spec = ask_question_spec();
    let schema = match spec.parameters() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    mcp::Tool::new(ASK_QUESTION, spec.description().to_owned(), schema).with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .open_world(false),
    )
}

/// Whether `name` is the served `ask_question`.
pub(super) fn is_ask_question(name: &str) -> bool {
    name == ASK_QUESTION
}

/// The questions of the client's `ask_question` call `call_id` and the
/// form that puts them to the person; arguments that do not fit are
/// `invalid_arguments` (as the error), and nothing is asked.
pub(super) fn put(
    arguments: &Value,
    call_id: &str,
    run_id: &iris_core::RunId,
) -> Result<(QuestionRequest, ElicitRequestParams), ToolResult> {
    let questions = parse_questions(arguments).map_err(|why| {
        ToolResult::error(
            ToolErrorKind::InvalidArguments,
            format!("{why}; nothing was asked"),
        )
    })?;
    let request = QuestionRequest::new(run_id.clone(), call_id.to_owned(), questions, None);
    let schema = ElicitationSchema::from_json_schema(form(&request)).map_err(|error| {
        ToolResult::error(
            ToolErrorKind::Internal,
            format!("the form for the person could not be built ({error}); nothing was asked"),
        )
    })?;
    let asked = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(&request),
        requested_schema: schema,
    };
    Ok((request, asked))
}

/// The result the person's `answer` to `request` makes.
pub(super) fn answered(request: &QuestionRequest, answer: &ElicitResult) -> ToolResult {
    match answer.action {
        ElicitationAction::Accept => {
            let reply = reply_of(request, answer.content.as_ref());
            match request.check(&reply) {
                Ok(()) => request.result(QuestionEnding::Answered, Some(&reply)),
                Err(why) => ToolResult::error(
                    ToolErrorKind::Internal,
                    format!("the person's answer did not fit the questions ({why}); ask again"),
                ),
            }
        }
        ElicitationAction::Decline => request.result(QuestionEnding::Declined, None),
        _ => request.result(QuestionEnding::Cancelled, None),
    }
}

/// Why the questions cannot be asked through a client without
/// elicitation.
pub(super) fn cannot_ask() -> ToolResult {
    ToolResult::error(
        ToolErrorKind::ToolNotAvailable,
        "`ask_question` needs a person to answer, and this MCP client cannot ask one (it does not support elicitation)",
    )
}

/// The result of the client's `ask_question` call `call_id`, asked in its
/// session: the questions put to the person through elicitation, their
/// answer, or one of the other endings.
pub(super) async fn ask(
    arguments: &Value,
    call_id: &str,
    run_id: &iris_core::RunId,
    timeout: Duration,
    context: &RequestContext<RoleServer>,
) -> ToolResult {
    if !can_elicit(context) {
        return cannot_ask();
    }
    let (request, asked) = match put(arguments, call_id, run_id) {
        Ok(put) => put,
        Err(result) => return result,
    };
    let asked = context.peer.create_elicitation(asked).into_future();
    let Ok(answered_in_time) = tokio::time::timeout(timeout, asked).await else {
        return request.result(QuestionEnding::Expired, None);
    };
    match answered_in_time {
        Ok(answer) => answered(&request, &answer),
        Err(error) => {
            tracing::debug!(%error, "the question could not be put to the person");
            request.result(QuestionEnding::Cancelled, None)
        }
    }
}

/// What the person reads above the form.
fn message(request: &QuestionRequest) -> String {
    let mut text = String::new();
    for question in &request.questions {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&for_person(&question.question, MAX_SHOWN));
        for option in &question.options {
            text.push_str("\n- ");
            text.push_str(&for_person(&option.label, MAX_SHOWN));
            if !option.description.is_empty() {
                text.push_str(": ");
                text.push_str(&for_person(&option.description, MAX_SHOWN));
            }
        }
    }
    text
}

/// The form: per question `qN` (its options, one or several) and
/// `qN_text` (words of the person's own); none required, since either
/// answers.
fn form(request: &QuestionRequest) -> Map<String, Value> {
    let mut properties = Map::new();
    for (at, question) in request.questions.iter().enumerate() {
        let labels: Vec<String> = question
            .options
            .iter()
            .map(|o| for_person(&o.label, MAX_SHOWN))
            .collect();
        let title = for_person(&question.header, MAX_SHOWN);
        let choice = if question.multi_select {
            json!({"type": "array", "title": title, "items": {"type": "string", "enum": labels}})
        } else {
            json!({"type": "string", "title": title, "enum": labels})
        };
        properties.insert(format!("q{}", at + 1), choice);
        properties.insert(
            format!("q{}_text", at + 1),
            json!({"type": "string", "title": format!("{title}: in your own words")}),
        );
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema
}

/// The answers the form's `content` gives, labels mapped back to the ones
/// offered (the form showed them escaped); a question left blank reads as
/// left unanswered.
fn reply_of(request: &QuestionRequest, content: Option<&Value>) -> QuestionReply {
    let field = |name: String| content.and_then(|c| c.get(name));
    let answers = request
        .questions
        .iter()
        .enumerate()
        .map(|(at, question)| {
            let shown: Vec<&str> = match field(format!("q{}", at + 1)) {
                Some(Value::String(one)) => vec![one.as_str()],
                Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            let selected: Vec<String> = question
                .options
                .iter()
                .filter(|o| shown.contains(&for_person(&o.label, MAX_SHOWN).as_str()))
                .map(|o| o.label.clone())
                .collect();
            let text = field(format!("q{}_text", at + 1))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if selected.is_empty() && text.is_none() {
                return Answer::text("(left unanswered)");
            }
            Answer { selected, text }
        })
        .collect();
    QuestionReply::answer(request, answers)
}

#[cfg(test)]
mod tests {
    use iris_core::RunId;

    use super::*;

    fn request() -> QuestionRequest {
        let questions = parse_questions(&json!({"questions": [
            {"question": "Which database?", "header": "Database", "options": ["Postgres", "SQLite"], "multi_select": false},
            {"question": "Which regions?", "header": "Regions", "options": ["eu", "us", "ap"], "multi_select": true}
        ]}))
        .expect("valid");
        QuestionRequest::new(RunId::new("r"), "c1".into(), questions, None)
    }

    #[test]
    fn each_question_is_an_enum_of_its_options_beside_a_free_text_field() {
        let form = form(&request());
        let properties = &form["properties"];
        assert_eq!(properties["q1"]["enum"], json!(["Postgres", "SQLite"]));
        assert_eq!(properties["q2"]["items"]["enum"], json!(["eu", "us", "ap"]));
        assert_eq!(properties["q1_text"]["type"], "string");
        assert!(ElicitationSchema::from_json_schema(form).is_ok());
    }

    #[test]
    fn the_form_reads_back_as_answers_that_fit() {
        let asked = request();
        let reply = reply_of(
            &asked,
            Some(&json!({"q1": "SQLite", "q2": ["eu", "ap"], "q2_text": "and nowhere else"})),
        );
        assert!(asked.check(&reply).is_ok());
        let QuestionReply::Answered { answers, .. } = reply else {
            panic!("answered");
        };
        assert_eq!(answers[0], Answer::choose("SQLite"));
        assert_eq!(answers[1].selected, ["eu", "ap"]);
        assert_eq!(answers[1].text.as_deref(), Some("and nowhere else"));
        let blank = reply_of(&asked, Some(&json!({})));
        assert!(asked.check(&blank).is_ok());
    }
}
