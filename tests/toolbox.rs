//! `#[iris::toolbox]`: the `#[tool]` methods of a service, registered
//! together and run against one shared value.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use iris::RuntimeError;
use iris::tool::Toolbox;
use iris::{
    Rule, RulePolicy, RunId, ToolContext, ToolErrorKind, ToolExecutor, ToolOutcome, ToolRegistry,
    ToolUseBlock,
};
use serde_json::json;

use crate::support::tools::{Library, Square};

fn library() -> Arc<Library> {
    Arc::new(Library::new(&[
        ("The Left Hand of Darkness", "Ursula K. Le Guin"),
        ("The Dispossessed", "Ursula K. Le Guin"),
        ("Darkness at Noon", "Arthur Koestler"),
    ]))
}

fn text(outcome: &ToolOutcome) -> String {
    outcome.result().expect("the call finished").text_content()
}

#[tokio::test]
async fn every_tool_method_runs_against_the_one_shared_service() {
    let library = library();
    let mut registry = ToolRegistry::new();
    registry.register_toolbox(Arc::clone(&library)).unwrap();
    let executor = ToolExecutor::builder(registry)
        .policy(RulePolicy::new().write(Rule::Allow))
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", RunId::new("reading-room")).build();
    let outcomes = executor
        .execute_batch(
            vec![
                // By its alias, with a default left out.
                ToolUseBlock::new("1", "find_books", json!({"query": "darkness"})),
                // A sync method with the context, under its `name` key.
                ToolUseBlock::new("2", "count_on_floor", json!({"floor": "Ground"})),
                // An `#[args]` method whose error becomes the model's.
                ToolUseBlock::new(
                    "3",
                    "lend",
                    json!({"title": "Darkness at Noon", "card": ""}),
                ),
                ToolUseBlock::new(
                    "4",
                    "lend",
                    json!({"title": "Darkness at Noon", "card": "7"}),
                ),
                // A method without `#[tool]` is no tool.
                ToolUseBlock::new("5", "serve", json!({})),
            ],
            &cx,
        )
        .await;
    assert_eq!(
        text(&outcomes[0]),
        r#"["The Left Hand of Darkness by Ursula K. Le Guin","Darkness at Noon by Arthur Koestler"]"#
    );
    assert_eq!(text(&outcomes[1]), "3 books (run reading-room)");
    let refused = outcomes[2].result().unwrap();
    assert_eq!(refused.error_kind(), Some(ToolErrorKind::Execution));
    assert!(
        refused.text_content().contains("no card"),
        "{}",
        refused.text_content()
    );
    assert_eq!(text(&outcomes[3]), "lent `Darkness at Noon`");
    assert_eq!(
        outcomes[4].result().unwrap().error_kind(),
        Some(ToolErrorKind::UnknownTool)
    );
    assert_eq!(library.served.load(Ordering::SeqCst), 4);
}

#[test]
fn tools_come_in_the_order_of_the_impl_with_their_capabilities() {
    let tools = Library::tools(library());
    let names: Vec<String> = tools
        .iter()
        .map(|t| t.definition_dyn().name().to_string())
        .collect();
    assert_eq!(names, ["search_books", "count_on_floor", "lend"]);
    let search = tools[0].definition_dyn();
    assert!(search.capabilities().is_read_only() && search.capabilities().is_concurrency_safe());
    assert!(!tools[2].definition_dyn().capabilities().is_read_only());
    assert!(
        tools[1].rust_item().ends_with("Library::count"),
        "{}",
        tools[1].rust_item()
    );
}

#[test]
fn a_collision_names_both_items_and_registers_none_of_the_service() {
    let mut registry = ToolRegistry::new();
    let definition = iris::definition::ToolDefinition::builder(
        iris::definition::ToolName::new("lend").unwrap(),
        "Lend a bicycle.",
    )
    .build()
    .unwrap();
    let taken =
        iris::tool::DynamicTool::new(definition, |_, _| async { iris::ToolResult::text("lent") });
    registry.register(Square).unwrap().register(taken).unwrap();
    let error = registry.register_toolbox(library()).unwrap_err();
    let RuntimeError::NameCollision { name, new_item, .. } = &error else {
        panic!("another error: {error}");
    };
    assert_eq!(name, "lend");
    assert!(new_item.ends_with("Library::lend"), "{new_item}");
    assert!(error.to_string().contains("Library::lend"), "{error}");
    // All or nothing: the methods before `lend` were not kept either.
    assert!(registry.resolve("search_books").is_none());
    assert!(registry.resolve("find_books").is_none());
    assert!(registry.resolve("square").is_some());
    assert!(registry.resolve("lend").is_some());
}
