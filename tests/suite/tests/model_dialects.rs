//! The OpenAI Chat adapter against the ways servers bend the wire: each
//! rule of its call assembly with a fixture (`cassettes/dialects/`, one
//! per rule, each saying which server was seen doing it; one recorded from
//! the real llama.cpp server of the real-model tests), replayed through
//! the testing kit's cassettes, streamed or whole as the fixture is; and
//! each server profile's requests as that server takes them.

use std::sync::Arc;
use std::time::Duration;

use iris::model::{
    FinishReason, Message, Model, ModelOptions, ModelRequest, ModelResponse, OpenAiChat,
    ServerProfile, ToolChoice,
};
use iris::serde_json::{Value, json};
use iris::testing::cassette::{Cassette, CassetteServer};

use crate::loopback::{Reply, Script, serve};

/// The fixture `name`'s answer, read by the adapter as the fixture was
/// sent: streamed when it holds events, whole when it holds a body.
async fn play(name: &str) -> ModelResponse {
    let path = format!(
        "{}/tests/cassettes/dialects/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let cassette = Cassette::load(&path).unwrap();
    let response = cassette.interactions[0].response.clone();
    let streamed = response.events.is_some();
    let server = CassetteServer::answering(vec![response]).await.unwrap();
    let model = OpenAiChat::new(
        "local",
        "",
        &format!("{}/v1", server.url()),
        Duration::from_secs(5),
    )
    .unwrap()
    .with_profile(ServerProfile::LlamaCpp)
    .streaming(streamed);
    let messages = vec![Message::User {
        text: "Status of orders 3 and 4?".into(),
    }];
    let options = ModelOptions::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: &[],
        options: &options,
        output: None,
    };
    let deltas = std::sync::Mutex::new(Vec::new());
    let answer = model
        .complete_streaming(request, &|delta| {
            if let iris::model::ModelDelta::ToolCall { index, .. } = delta {
                deltas.lock().unwrap().push(index);
            }
        })
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // Every fragment was handed on under its call's place.
    let places = deltas.into_inner().unwrap();
    assert!(
        places.iter().all(|&place| place < answer.tool_calls.len()),
        "{name}: {places:?}"
    );
    answer
}

fn calls(answer: &ModelResponse) -> Vec<(String, String, Value)> {
    answer
        .tool_calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.input.clone()))
        .collect()
}

#[tokio::test]
async fn a_new_id_on_a_used_index_opens_a_new_call() {
    let answer = play("new_id_on_used_index").await;
    assert_eq!(
        calls(&answer),
        [
            ("call_a".into(), "order_status".into(), json!({"number": 3})),
            ("call_b".into(), "order_status".into(), json!({"number": 4})),
        ]
    );
    assert_eq!(answer.finish, FinishReason::ToolCalls);
}

#[tokio::test]
async fn index_gaps_are_keys_not_places() {
    let answer = play("index_gaps").await;
    assert_eq!(
        calls(&answer),
        [
            ("call_a".into(), "order_status".into(), json!({"number": 3})),
            ("call_b".into(), "order_status".into(), json!({"number": 4})),
        ]
    );
}

#[tokio::test]
async fn a_whole_call_in_the_first_chunk_is_read_whole() {
    let answer = play("whole_call_in_first_chunk").await;
    assert_eq!(
        calls(&answer),
        [("call_x".into(), "order_status".into(), json!({"number": 7}))]
    );
}

#[tokio::test]
async fn a_repeated_name_is_taken_once() {
    let answer = play("repeated_name").await;
    assert_eq!(
        calls(&answer),
        [("call_n".into(), "order_status".into(), json!({"number": 5}))]
    );
}

#[tokio::test]
async fn missing_ids_are_minted_the_same_way_every_time() {
    let first = play("missing_ids").await;
    let again = play("missing_ids").await;
    let ids: Vec<&str> = first.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_chatcmpl-d1_0", "call_chatcmpl-d1_1"]);
    assert_eq!(calls(&first), calls(&again), "read twice, the same ids");
    assert_eq!(first.tool_calls[1].input, json!({"number": 2}));
}

#[tokio::test]
async fn numeric_ids_and_object_arguments_are_read() {
    let answer = play("numeric_ids_object_arguments").await;
    assert_eq!(
        calls(&answer),
        [
            ("17".into(), "order_status".into(), json!({"number": 3})),
            ("18".into(), "order_status".into(), json!({"number": 4})),
        ]
    );
    let streamed = play("object_arguments_streamed").await;
    assert_eq!(
        calls(&streamed),
        [("call_o".into(), "order_status".into(), json!({"number": 9}))]
    );
}

#[tokio::test]
async fn empty_arguments_are_an_empty_object_unless_cut_off() {
    let answer = play("empty_arguments").await;
    assert_eq!(answer.tool_calls[0].input, json!({}));
    let cut = play("empty_arguments_cut_by_length").await;
    assert_eq!(cut.finish, FinishReason::Length);
    // Kept as they came, so the tool refuses them and the model reads why.
    assert_eq!(cut.tool_calls[0].input, json!(""));
}

#[tokio::test]
async fn calls_present_beat_a_stop() {
    let answer = play("calls_beat_stop").await;
    assert_eq!(answer.finish, FinishReason::ToolCalls);
    assert_eq!(answer.tool_calls[0].input, json!({"number": 8}));
}

/// Recorded from the real llama.cpp server: each call's arguments begin
/// in the fragment that names it, and usage comes in a chunk with no
/// choices after the finish.
#[tokio::test]
async fn llama_cpp_streams_two_calls_and_its_usage() {
    let answer = play("llama_cpp_two_calls").await;
    let inputs: Vec<&Value> = answer.tool_calls.iter().map(|c| &c.input).collect();
    assert_eq!(inputs, [&json!({"number": 3}), &json!({"number": 4})]);
    assert!(
        answer
            .tool_calls
            .iter()
            .all(|c| c.name == "order_status" && c.id.len() == 32)
    );
    assert_eq!(answer.finish, FinishReason::ToolCalls);
    assert_eq!(
        (answer.usage.input_tokens, answer.usage.output_tokens),
        (372, 56)
    );
}

/// What each profile sends: the token limit under the server's name for
/// it, `tool_choice` only when the server honours the value,
/// `parallel_tool_calls` and `stream_options` only where taken.
#[tokio::test]
async fn each_profile_asks_in_its_servers_dialect() {
    let cases = [
        (
            ServerProfile::Openai,
            "max_completion_tokens",
            true,
            true,
            true,
        ),
        (ServerProfile::LlamaCpp, "max_tokens", true, true, true),
        (ServerProfile::Vllm, "max_tokens", true, true, true),
        (ServerProfile::Ollama, "max_tokens", false, false, true),
        (ServerProfile::LmStudio, "max_tokens", true, false, false),
    ];
    let tool = {
        use iris::Tool as _;
        crate::model_anthropic::Price.definition().spec()
    };
    for (profile, max_field, required_sent, parallel_sent, usage_sent) in cases {
        let script = Arc::new(Script::default());
        let endpoint = serve(Arc::clone(&script)).await;
        let base = endpoint.trim_end_matches("/chat/completions").to_owned();
        script.replies.lock().unwrap().push_back(Reply::Events(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into(),
        ));
        let model = OpenAiChat::new("local", "", &base, Duration::from_secs(5))
            .unwrap()
            .with_profile(profile)
            .streaming(true);
        let messages = vec![Message::User { text: "hi".into() }];
        let tools = [tool.clone()];
        let options = ModelOptions {
            max_tokens: Some(64),
            tool_choice: ToolChoice::Required,
            parallel_tool_calls: true,
            ..ModelOptions::default()
        };
        model
            .complete_streaming(
                ModelRequest {
                    instructions: None,
                    messages: &messages,
                    tools: &tools,
                    options: &options,
                    output: None,
                },
                &|_| {},
            )
            .await
            .unwrap();
        let body = script.requests.lock().unwrap()[0].1.clone();
        let name = profile.name();
        assert_eq!(body[max_field], 64, "{name}: {body}");
        let other = if max_field == "max_tokens" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        assert!(body.get(other).is_none(), "{name}: {body}");
        assert_eq!(
            body.get("tool_choice").is_some(),
            required_sent,
            "{name}: {body}"
        );
        assert_eq!(
            body.get("parallel_tool_calls").is_some(),
            parallel_sent,
            "{name}: {body}"
        );
        assert_eq!(
            body.get("stream_options").is_some(),
            usage_sent,
            "{name}: {body}"
        );
    }
}
