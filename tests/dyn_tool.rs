//! The object-safe face of a tool: a parse keeps the tool's answers for the
//! call and arguments that run later exactly as parsed, a hand-written
//! `DynTool` runs through the executor like any other, and arguments parsed
//! by one tool are refused by another.

use iris::definition::ToolDefinition;
use iris::tool::{Admit, Admitted, ArgumentError, CallShape, DynTool, ParsedArgs, ToolBody};
use iris::{
    RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
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

/// A tool written by hand on the object-safe face.
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

async fn parse_then_call(tool: &dyn DynTool) {
    let cx = cx();
    let args = tool.parse_dyn(&json!({"value": 21})).unwrap();
    assert!(
        args.is_read_only() && args.is_concurrency_safe(),
        "{args:?}"
    );
    assert_eq!(
        tool.call_dyn(args, &cx).run_inline().await.text_content(),
        "42"
    );

    let kept = tool.parse_dyn(&json!({"value": 5})).unwrap();
    let _other = tool.parse_dyn(&json!({"value": 7})).unwrap();
    let later = tool.call_dyn(kept, &cx).run_inline().await;
    assert_eq!(
        later.text_content(),
        "10",
        "kept arguments run later as parsed"
    );

    let err = tool.parse_dyn(&json!({"value": "five"})).unwrap_err();
    assert_eq!(err.path(), "$.value", "{err}");
}

/// The one-step parse and admit does what each answer asks, and asks
/// nothing of input that does not parse.
async fn parse_and_admit(tool: &dyn DynTool) {
    let cx = cx();
    let input = json!({"value": 21});
    let shapes = std::cell::RefCell::new(Vec::new());
    let answer = |answer: Admit| {
        let shapes = &shapes;
        move |shape: CallShape| {
            shapes.borrow_mut().push(shape);
            answer
        }
    };
    let Admitted::Body(body) = tool
        .parse_admit_dyn(&input, &cx, &mut answer(Admit::Run))
        .unwrap()
    else {
        panic!("`Run` makes the body");
    };
    assert_eq!(body.run_inline().await.text_content(), "42");
    let Admitted::Kept(args) = tool
        .parse_admit_dyn(&input, &cx, &mut answer(Admit::Keep))
        .unwrap()
    else {
        panic!("`Keep` keeps the arguments");
    };
    assert_eq!(
        tool.call_dyn(args, &cx).run_inline().await.text_content(),
        "42",
        "kept arguments run later as parsed"
    );
    assert!(matches!(
        tool.parse_admit_dyn(&input, &cx, &mut answer(Admit::Drop)),
        Ok(Admitted::Dropped)
    ));
    let err = tool
        .parse_admit_dyn(&json!({"value": "x"}), &cx, &mut answer(Admit::Run))
        .unwrap_err();
    assert_eq!(err.path(), "$.value", "{err}");
    let shapes = shapes.into_inner();
    assert_eq!(shapes.len(), 3, "asked once per parsed call: {shapes:?}");
    assert!(
        shapes.iter().all(|s| s.read_only && s.concurrency_safe),
        "the tool's answers for the call: {shapes:?}"
    );
}

#[tokio::test]
async fn macro_tools_parse_then_call() {
    parse_then_call(&Double).await;
    parse_and_admit(&Double).await;
}

#[tokio::test]
async fn hand_written_tools_get_the_same_behaviour() {
    parse_then_call(&ByHand(Double)).await;
    parse_and_admit(&ByHand(Double)).await;
}

#[tokio::test]
async fn answers_follow_the_tool() {
    let args = Store.parse_dyn(&json!({"note": "hi"})).unwrap();
    assert!(!args.is_read_only() && !args.is_concurrency_safe());
}

#[tokio::test]
async fn arguments_of_another_tool_are_refused() {
    let args = Store.parse_dyn(&json!({"note": "hi"})).unwrap();
    let result: ToolResult = Double.call_dyn(args, &cx()).run_inline().await;
    assert_eq!(result.error_kind(), Some(ToolErrorKind::Internal));
    assert!(
        result.text_content().contains("parsed by another tool"),
        "{}",
        result.text_content()
    );
}

#[tokio::test]
async fn a_hand_written_tool_runs_through_the_executor() {
    let mut registry = ToolRegistry::new();
    registry
        .register_dyn(std::sync::Arc::new(ByHand(Double)))
        .unwrap();
    let executor = ToolExecutor::builder(registry).build().unwrap();
    let block = ToolUseBlock::new("call_1", "double", json!({"value": 4}));
    let outcome = executor.execute_one(block, &cx()).await;
    assert_eq!(outcome.result().unwrap().text_content(), "8");
}
