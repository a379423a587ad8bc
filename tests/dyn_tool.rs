//! `DynTool::start_dyn`: the checks decide before a body is made, and a held
//! call keeps arguments that run later exactly as parsed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unused_async,
    reason = "tests fail by panicking; the tools are async to test async bodies"
)]

use iris::definition::ToolDefinition;
use iris::tool::{ArgumentError, CallTraits, DynTool, ParsedArgs, Proceed, Started, ToolBody};
use iris::{RunId, ToolContext, ToolResult};
use serde_json::{Value, json};

/// Double an integer.
#[iris::tool(read_only, concurrency_safe)]
async fn double(
    /// The integer.
    value: i64,
) -> i64 {
    value * 2
}

/// Store a note.
#[iris::tool(write)]
async fn store(
    /// The note.
    note: String,
) -> String {
    format!("stored {note}")
}

/// A tool written by hand on the object-safe face, which gets the provided
/// `start_dyn` (parse, check, then call).
struct ByHand(Double);

impl DynTool for ByHand {
    fn definition_dyn(&self) -> &ToolDefinition {
        self.0.definition_dyn()
    }

    fn parse_dyn(&self, input: &Value) -> Result<ParsedArgs, ArgumentError> {
        self.0.parse_dyn(input)
    }

    fn call_dyn<'a>(&'a self, args: ParsedArgs, cx: &'a ToolContext) -> ToolBody<'a> {
        self.0.call_dyn(args, cx)
    }
}

fn cx() -> ToolContext {
    ToolContext::builder(".", RunId::new("dyn")).build()
}

fn text(result: &ToolResult) -> String {
    result.text_content()
}

async fn start_then_hold(tool: &dyn DynTool) {
    let cx = cx();
    let mut seen = Vec::new();
    let mut check = |traits: CallTraits| {
        seen.push(traits);
        Proceed::Start
    };
    let Ok(Started::Body(body)) = tool.start_dyn(&json!({"value": 21}), &cx, &mut check) else {
        panic!("a started call gives its body");
    };
    assert_eq!(text(&body.run_inline().await), "42");
    assert!(seen[0].read_only && seen[0].concurrency_safe, "{seen:?}");

    let Ok(Started::Held(args)) = tool.start_dyn(&json!({"value": 5}), &cx, &mut |_| Proceed::Hold)
    else {
        panic!("a held call gives its arguments back");
    };
    assert!(args.is_read_only());
    let later = tool.call_dyn(args, &cx).run_inline().await;
    assert_eq!(text(&later), "10", "held arguments run later as parsed");

    let mut called = false;
    let err = tool.start_dyn(&json!({"value": "five"}), &cx, &mut |_| {
        called = true;
        Proceed::Start
    });
    assert!(err.is_err(), "bad input is an argument error");
    assert!(!called, "the checks never see a call that did not parse");
}

#[tokio::test]
async fn macro_tools_start_and_hold() {
    start_then_hold(&Double).await;
}

#[tokio::test]
async fn hand_written_tools_get_the_same_behaviour() {
    start_then_hold(&ByHand(Double)).await;
}

#[tokio::test]
async fn traits_follow_the_tool() {
    let cx = cx();
    let mut seen = None;
    let held = Store.start_dyn(&json!({"note": "hi"}), &cx, &mut |traits| {
        seen = Some(traits);
        Proceed::Hold
    });
    assert!(matches!(held, Ok(Started::Held(_))));
    let traits = seen.expect("the check ran");
    assert!(!traits.read_only && !traits.concurrency_safe);
}
