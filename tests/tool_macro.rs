//! What a `#[tool]` does when it runs: parsing, conversion of every return
//! shape, context and state, and the function staying callable.

#[allow(dead_code, reason = "each test binary uses part of the shared tools")]
use crate::support;

use iris::tool::{DynTool, ToolBody};
use iris::{RunId, Tool, ToolContext, ToolErrorKind, ToolResult};
use serde_json::{Value, json};
use support::tools::*;

fn cx() -> ToolContext {
    ToolContext::builder("/workspace", RunId::new("run-1"))
        .state(HttpClient {
            base_url: "https://example.test".into(),
        })
        .build()
}

/// The error of arguments that must be refused.
#[allow(clippy::panic, reason = "a test helper fails the test")]
fn refused<T>(parsed: Result<T, iris::tool::ArgumentError>) -> iris::tool::ArgumentError {
    match parsed {
        Ok(_) => panic!("the arguments were accepted"),
        Err(err) => err,
    }
}

/// Parses and runs a tool the way a runtime would, on the current thread.
async fn run(tool: &dyn DynTool, input: Value) -> ToolResult {
    let args = match tool.parse_dyn(&input) {
        Ok(args) => args,
        Err(err) => return ToolResult::error(ToolErrorKind::InvalidArguments, err.to_string()),
    };
    let cx = cx();
    tool.call_dyn(args, &cx).run_inline().await
}

#[tokio::test]
async fn sync_tool_parses_once_and_serializes_its_result() {
    let result = run(&Square, json!({"value": 4})).await;
    assert_eq!(result.text_content(), "16");
    assert_eq!(result.data(), Some(&json!(16)));
    assert!(!result.is_error());
    assert!(matches!(
        Square.call(Square.parse(&json!({"value": 2})).unwrap(), &cx()),
        ToolBody::Blocking(_)
    ));
}

#[tokio::test]
async fn async_tool_runs_as_a_future() {
    let args = SearchWeb
        .parse(&json!({"query": "rust", "limit": 2}))
        .unwrap();
    let cx = cx();
    let body = SearchWeb.call(args, &cx);
    assert!(matches!(body, ToolBody::Async(_)));
    let result = body.run_inline().await;
    assert_eq!(result.data(), Some(&json!(["rust #0", "rust #1"])));
}

#[tokio::test]
async fn functions_stay_callable_as_written() {
    assert_eq!(square(4), 16);
    assert_eq!(search_web("x".into(), Some(1)).await, vec!["x #0"]);
    assert_eq!(current_time(), "2026-01-01T00:00:00Z");
}

#[test]
fn argument_errors_name_the_path_and_the_expected_type() {
    let err = refused(Square.parse(&json!({"value": "4"})));
    assert_eq!(err.path(), "$.value");
    assert_eq!(err.message(), "expected an integer, found the string \"4\"");

    let err = refused(Square.parse(&json!({})));
    assert!(err.message().contains("missing field `value`"), "{err}");

    let err = refused(Square.parse(&json!({"value": 1, "extra": true})));
    assert!(err.message().contains("unknown field `extra`"), "{err}");

    let err = refused(CreateEvent.parse(
        &json!({"title": "t", "when": {"start": "a", "end": "b"}, "attendees": [{"email": 1}]}),
    ));
    assert_eq!(err.path(), "$.attendees[0].email");
}

#[tokio::test]
async fn optional_renamed_and_defaulted_parameters() {
    let renamed = run(&RenameUser, json!({"userId": 7, "new_name": "Ada"})).await;
    assert_eq!(renamed.text_content(), "user 7 is now Ada (notify: false)");
    // Strict-mode providers send null for what they would leave out.
    let strict = run(
        &RenameUser,
        json!({"userId": 7, "new_name": "Ada", "notify": null}),
    )
    .await;
    assert_eq!(strict.text_content(), renamed.text_content());
    assert!(
        RenameUser
            .parse(&json!({"user_id": 7, "new_name": "Ada"}))
            .is_err()
    );

    let summary = run(&Summarise, json!({"text": "a. b. c. d. e"})).await;
    assert_eq!(summary.text_content(), "a. b. c");

    let customer = run(&RegisterCustomer, json!({"name": "Bo"})).await;
    assert_eq!(customer.text_content(), "Bo (None) at None");
}

#[tokio::test]
async fn every_return_shape_becomes_a_result() {
    let unit = run(&ToggleFeature, json!({"key": "k", "enabled": true})).await;
    assert_eq!(unit.text_content(), "done");

    let static_str = run(&CurrentTime, json!({})).await;
    assert_eq!(static_str.text_content(), "2026-01-01T00:00:00Z");

    let structured = run(
        &DrawShape,
        json!({"shape": {"kind": "circle", "radius": 2.0}}),
    )
    .await;
    assert_eq!(
        structured.data(),
        Some(&json!({"kind": "circle", "radius": 2.0}))
    );

    let value = run(&StoreJson, json!({"key": "k", "value": [1, 2]})).await;
    assert_eq!(value.data(), Some(&json!({"stored": "k", "value": [1, 2]})));

    let err = run(
        &CreateEvent,
        json!({"title": "t", "when": {"start": "a", "end": "b"}, "attendees": []}),
    )
    .await;
    assert_eq!(err.error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(err.text_content(), "an event needs at least one attendee");

    let io = run(&LoadConfig, json!({"path": "app.toml"})).await;
    assert_eq!(io.error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(io.text_content(), "no config file at app.toml");
}

#[tokio::test]
async fn args_struct_takes_the_whole_input() {
    let ok = run(
        &BookFlight,
        json!({"from": "AMS", "to": "LIS", "date": "2026-12-01"}),
    )
    .await;
    assert_eq!(ok.text_content(), "AMS -> LIS on 2026-12-01 for 1");
    let err =
        refused(BookFlight.parse(&json!({"from": "AMS", "to": "LIS", "date": "d", "seat": "1A"})));
    assert_eq!(err.path(), "$.seat");
    assert!(
        err.message().contains("`from`, `to`, `date`, `passengers`"),
        "{err}"
    );
}

#[tokio::test]
async fn context_and_state_parameters_stay_out_of_the_schema() {
    let schema = FetchPage.definition().input_schema();
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(schema["properties"].as_object().unwrap().len(), 1);

    let page = run(&FetchPage, json!({"path": "/a"})).await;
    assert_eq!(page.text_content(), "https://example.test/a for run run-1");

    let bare = ToolContext::builder("/workspace", RunId::new("run-2")).build();
    let args = FetchPage.parse(&json!({"path": "/a"})).unwrap();
    let missing = FetchPage.call(args, &bare).run_inline().await;
    assert_eq!(missing.error_kind(), Some(ToolErrorKind::Internal));
    assert!(missing.text_content().contains("HttpClient"), "{missing:?}");
}

#[test]
fn attribute_keys_reach_the_definition() {
    let def = SearchWeb.definition();
    assert_eq!(def.aliases(), ["web_search", "google"]);
    assert_eq!(def.exposure(), iris::definition::Exposure::Deferred);
    assert_eq!(def.result_policy().max_chars, Some(4000));
    assert!(
        def.capabilities()
            .contains(iris::definition::Capability::Network)
    );

    let renamed = LoadConfig.definition();
    assert_eq!(renamed.name(), "read_config");
    assert_eq!(
        renamed.description(),
        "Read a configuration file and return its text."
    );

    assert!(Square.is_read_only(&Square.parse(&json!({"value": 1})).unwrap()));
    let parsed = Square.parse_dyn(&json!({"value": 1})).unwrap();
    assert!(parsed.is_read_only() && parsed.is_concurrency_safe());
    let write = SetVolume
        .parse_dyn(&json!({"speaker": 1, "percent": 5}))
        .unwrap();
    assert!(!write.is_read_only() && !write.is_concurrency_safe());
}

#[test]
fn definitions_are_built_once() {
    assert!(std::ptr::eq(Square.definition(), Square.definition()));
    assert!(std::ptr::eq(
        Square.definition().input_schema(),
        Square.definition().spec().parameters()
    ));
}

/// Convert a temperature.
#[iris::tool(read_only)]
fn documented_elsewhere_fallback(celsius: f64) -> f64 {
    celsius
}

#[doc = include_str!("support/description.md")]
#[iris::tool(read_only)]
fn convert_temperature(
    /// Degrees Celsius.
    celsius: f64,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

#[tokio::test]
async fn doc_comments_may_come_from_files() {
    let def = ConvertTemperature.definition();
    assert!(
        def.description().starts_with(
            "Convert a temperature between Celsius and Fahrenheit.\n\nThe description"
        )
    );
    assert!(!def.description().ends_with('\n'));
    assert_eq!(
        run(&ConvertTemperature, json!({"celsius": 100.0}))
            .await
            .text_content(),
        "212.0"
    );
    assert_eq!(
        DocumentedElsewhereFallback.definition().description(),
        "Convert a temperature."
    );
}

/// The generated argument type is `Debug`, so a failed parse can be
/// asserted with `expect_err`, even when a parameter's type is not `Debug`.
#[test]
fn a_failed_parse_can_be_expected() {
    /// A point, deliberately not `Debug`.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Point {
        x: i64,
    }
    /// Take a value that is not `Debug` itself.
    #[iris::tool(read_only)]
    fn opaque(
        /// A point.
        p: Point,
    ) -> String {
        p.x.to_string()
    }
    use iris::Tool as _;
    let error = Opaque
        .parse(&serde_json::json!({"p": {"x": "one"}}))
        .expect_err("a string is no number");
    assert_eq!(error.path(), "$.p.x");
    let args = Opaque.parse(&serde_json::json!({"p": {"x": 1}})).unwrap();
    assert_eq!(format!("{args:?}"), "Args { .. }");
}

/// Constraints that a strict projection may drop still hold: a value
/// outside one is refused with its path and the bound.
#[test]
fn schema_constraints_hold_at_parse_time() {
    let ok = RollDice.parse(&json!({"sides": 6, "player": "ada"}));
    assert!(ok.is_ok(), "{ok:?}");
    for (input, path, says) in [
        (
            json!({"sides": 0, "player": "ada"}),
            "$.sides",
            "0 is below the minimum 1",
        ),
        (
            json!({"sides": 101, "player": "ada"}),
            "$.sides",
            "101 is above the maximum 100",
        ),
        (json!({"sides": 6, "player": "a"}), "$.player", "at least 2"),
        (
            json!({"sides": 6, "player": "Ada"}),
            "$.player",
            "does not match the pattern",
        ),
        (
            json!({"sides": 6, "player": "ada", "history": [1, 2, 3, 4]}),
            "$.history",
            "at most 3",
        ),
        // A set would drop the repeat; its schema says the items differ.
        (
            json!({"sides": 6, "player": "ada", "history": [2, 2]}),
            "$.history",
            "repeats item 1",
        ),
    ] {
        let err = refused(RollDice.parse(&input));
        assert_eq!(err.path(), path, "{input}: {err}");
        assert!(err.message().contains(says), "{input}: {err}");
    }
    // A type's own range stays serde's to enforce, with serde's message.
    let err = refused(RollDice.parse(&json!({"sides": 1000, "player": "ada"})));
    assert_eq!(err.path(), "$.sides");
}
