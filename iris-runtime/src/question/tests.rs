use iris_core::RunId;
use serde_json::json;

use super::*;
use crate::ApprovalDecision;

fn two_choices() -> serde_json::Value {
    json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "the team's default"},
            {"label": "SQLite", "description": "one file"}
        ],
        "multi_select": false
    }]})
}

fn request() -> QuestionRequest {
    let questions = parse_questions(&two_choices()).expect("valid");
    QuestionRequest::new(RunId::new("run-1"), "c1".into(), questions, None)
}

#[test]
fn the_name_is_a_valid_tool_name() {
    assert!(iris_core::ToolName::new(ASK_QUESTION).is_ok());
    assert_eq!(ask_question_spec().name().as_str(), ASK_QUESTION);
    assert!(ask_question_spec().strict());
}

#[test]
fn plain_string_options_and_claude_multi_select_are_accepted() {
    let questions = parse_questions(&json!({"questions": [{
        "question": "Which?", "header": "Pick", "options": ["a", "b"], "multiSelect": true
    }]}))
    .expect("a common variant");
    assert_eq!(questions[0].options[1].label, "b");
    assert_eq!(questions[0].options[1].description, "");
    assert!(questions[0].multi_select);
}

#[test]
fn anything_else_is_refused_with_what_to_fix() {
    let cases = [
        (json!({}), "`questions` must be a list"),
        (json!({"questions": []}), "ask 1 to 4"),
        (
            json!({"questions": [{"question": "q", "header": "far too long a header", "options": ["a", "b"], "multi_select": false}]}),
            "question 1: `header` has 21 characters",
        ),
        (
            json!({"questions": [{"question": "q", "header": "h", "options": ["a"], "multi_select": false}]}),
            "offer 2 to 4",
        ),
        (
            json!({"questions": [{"question": "q", "header": "h", "options": ["a", "a"], "multi_select": false}]}),
            "two options are labelled `a`",
        ),
        (
            json!({"questions": [{"question": "q", "header": "h", "options": [1, 2], "multi_select": false}]}),
            "option 1: must be an object",
        ),
        (
            json!({"questions": [{"question": "q", "header": "h", "options": ["a", "b"], "urgent": true}]}),
            "unknown key `urgent`",
        ),
        (
            json!({"questions": two_choices()["questions"], "also": 1}),
            "unknown argument `also`",
        ),
    ];
    for (arguments, expected) in cases {
        let why = parse_questions(&arguments).expect_err("refused");
        assert!(why.contains(expected), "{arguments}: {why}");
    }
}

#[test]
fn a_question_id_binds_run_call_questions_and_expiry_and_is_never_an_approval_id() {
    let asked = request();
    assert!(asked.is_intact());
    let mut edited = asked.clone();
    edited.questions[0].options[0].label = "MySQL".into();
    assert!(!edited.is_intact());
    let mut later = asked.clone();
    later.expires_at_ms = Some(1);
    assert!(!later.is_intact());
    let other_call = QuestionRequest::new(
        RunId::new("run-1"),
        "c2".into(),
        asked.questions.clone(),
        None,
    );
    assert_ne!(other_call.question_id, asked.question_id);
}

#[test]
fn answers_are_checked_against_what_was_asked() {
    let asked = request();
    let ok = QuestionReply::answer(&asked, vec![Answer::choose("SQLite")]);
    assert!(asked.check(&ok).is_ok());
    let words = QuestionReply::answer(&asked, vec![Answer::text("whatever ops runs")]);
    assert!(asked.check(&words).is_ok());
    let refused = [
        (
            QuestionReply::answer(&asked, vec![Answer::choose("MySQL")]),
            "not offered",
        ),
        (
            QuestionReply::answer(&asked, vec![Answer::choose_all(["Postgres", "SQLite"])]),
            "takes one",
        ),
        (
            QuestionReply::answer(&asked, vec![]),
            "one answer per question",
        ),
        (
            QuestionReply::answer(&asked, vec![Answer::default()]),
            "chooses nothing",
        ),
        (
            QuestionReply::Answered {
                question_id: "another".into(),
                answers: vec![Answer::choose("SQLite")],
            },
            "another question set",
        ),
        (
            QuestionReply::answer(
                &asked,
                vec![Answer::text("x".repeat(Answer::MAX_CHARS + 1))],
            ),
            "keep it to",
        ),
    ];
    for (reply, expected) in refused {
        let why = asked.check(&reply).expect_err("refused");
        assert!(why.contains(expected), "{why}");
    }
}

#[test]
fn each_ending_is_a_status_the_model_can_tell_apart() {
    let asked = request();
    let answer = QuestionReply::answer(&asked, vec![Answer::choose("SQLite")]);
    let answered = asked.result(QuestionEnding::Answered, Some(&answer));
    assert_eq!(answered.data().expect("data")["status"], "answered");
    assert!(
        answered
            .text_content()
            .contains("Which database? -> SQLite")
    );
    for ending in [
        QuestionEnding::Declined,
        QuestionEnding::Expired,
        QuestionEnding::Cancelled,
    ] {
        let result = asked.result(ending, None);
        assert!(!result.is_error());
        assert_eq!(result.data().expect("data")["status"], ending.as_str());
    }
}

#[test]
fn a_reply_reads_back_as_the_decision_or_answer_it_is() {
    let decision: Reply =
        serde_json::from_value(json!({"decision": "approve", "approval_id": "a"})).expect("reads");
    assert_eq!(
        decision,
        Reply::Decision(ApprovalDecision::Approve {
            approval_id: "a".into()
        })
    );
    let answer: Reply = serde_json::from_value(json!({"answer": "declined"})).expect("reads");
    assert_eq!(answer, Reply::Answer(QuestionReply::Declined));
    let round = serde_json::to_value(Reply::from(ApprovalDecision::deny("no"))).expect("writes");
    assert_eq!(round, json!({"decision": "deny", "reason": "no"}));
}
