//! The OpenAI projections, checked against a real client library's types:
//! each projected tool deserializes into async-openai's tool type and
//! serializes back to exactly the same JSON, so no field is misnamed,
//! misplaced or silently ignored.

#[allow(dead_code, reason = "each test binary uses part of the shared tools")]
use crate::support;

use async_openai::types::chat::ChatCompletionTools;
use async_openai::types::responses::Tool as ResponsesTool;
use iris::provider::{openai_chat, openai_responses};
use iris::tool::DynTool;
use support::tools::*;

fn tools() -> [&'static dyn DynTool; 8] {
    [
        &Square,
        &SearchWeb,
        &CreateEvent,
        &DrawShape,
        &CountFolders,
        &LabelDocument,
        &CurrentTime,
        &BookFlight,
    ]
}

#[test]
fn chat_completions_shape_round_trips_through_async_openai() {
    for tool in tools() {
        for strict in [false, true] {
            let spec = tool.definition_dyn().spec().with_strict(strict);
            let wire = openai_chat(&spec).tool;
            let typed: ChatCompletionTools = serde_json::from_value(wire.clone())
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
            let ChatCompletionTools::Function(function) = &typed else {
                panic!("{} is not a function tool", spec.name());
            };
            assert_eq!(function.function.name, spec.name().as_str());
            assert_eq!(
                serde_json::to_value(&typed).unwrap(),
                wire,
                "{}",
                spec.name()
            );
        }
    }
}

#[test]
fn responses_shape_round_trips_through_async_openai() {
    for tool in tools() {
        let spec = tool.definition_dyn().spec().with_strict(true);
        let wire = openai_responses(&spec).tool;
        let typed: ResponsesTool =
            serde_json::from_value(wire.clone()).unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
        let ResponsesTool::Function(function) = &typed else {
            panic!("{} is not a function tool", spec.name());
        };
        assert_eq!(function.name, spec.name().as_str());
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            wire,
            "{}",
            spec.name()
        );
    }
}
