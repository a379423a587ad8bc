//! How Anthropic is sent a run's output format: as structured output
//! (`output_config`) when the model has it and the schema can be closed,
//! otherwise as a tool the model must call to answer, whose call the
//! adapter turns back into the answer's text.

use iris_core::ToolSpec;
use serde_json::{Value, json};

use crate::{ModelRequest, OutputFormat, ToolChoice};

/// The name of the answering tool: the output's, made unlike every tool
/// offered (a tool of the agent's may have the output's name).
fn tool_name(output: &OutputFormat, tools: &[ToolSpec]) -> String {
    let mut name = output.name().to_owned();
    while tools.iter().any(|tool| tool.name().as_str() == name) {
        name.push_str("_answer");
    }
    name
}

/// The tool whose call is the answer, when `request`'s output travels as
/// one to `model`.
pub(crate) fn answering_tool(model: &str, request: &ModelRequest<'_>) -> Option<String> {
    let output = request.output?;
    output
        .anthropic_sent_as_tool(model)
        .then(|| tool_name(output, request.tools))
}

/// Sends `request`'s output in `body`: as structured output, or as the
/// answering tool the model is made to call (alone when it may call no
/// other, or among the tools, one of which it must call).
pub(crate) fn send(model: &str, request: &ModelRequest<'_>, body: &mut Value) {
    let Some(output) = request.output else {
        return;
    };
    // The projection made once: it decides the route and is the schema
    // structured output is sent.
    let (schema, report) = output.anthropic();
    if !crate::output::sent_as_tool(model, &report) {
        body["output_config"] = json!({"format": {"type": "json_schema", "schema": schema}});
        return;
    }
    let name = tool_name(output, request.tools);
    let tool = json!({
        "name": name,
        "description": format!(
            "Give your final answer by calling this tool, once, with the answer as its input. {}",
            output.description()
        ),
        "input_schema": output.schema(),
    });
    let alone = request.tools.is_empty() || request.options.tool_choice == ToolChoice::None;
    if alone {
        body["tools"] = json!([tool]);
        body["tool_choice"] = json!({"type": "tool", "name": name});
    } else {
        if let Some(tools) = body["tools"].as_array_mut() {
            tools.push(tool);
        }
        let parallel = body["tool_choice"]["disable_parallel_tool_use"].clone();
        body["tool_choice"] = json!({"type": "any"});
        if parallel == Value::Bool(true) {
            body["tool_choice"]["disable_parallel_tool_use"] = parallel;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use iris_core::{ToolName, ToolSpec};
    use serde_json::{Value, json};

    use crate::{AnthropicMessages, ModelOptions, ModelRequest, OutputFormat, ToolChoice};

    fn invoice() -> OutputFormat {
        OutputFormat::new(
            "Invoice",
            json!({
                "type": "object",
                "description": "An invoice.",
                "properties": {"total": {"type": "integer", "minimum": 0}},
                "required": ["total"],
            }),
        )
    }

    fn body(model: &str, tools: &[ToolSpec], choice: ToolChoice, output: &OutputFormat) -> Value {
        let anthropic =
            AnthropicMessages::new(model, "", "http://127.0.0.1:9/v1", Duration::from_secs(1))
                .expect("a client");
        let options = ModelOptions {
            tool_choice: choice,
            ..ModelOptions::default()
        };
        anthropic.body(&ModelRequest {
            instructions: None,
            messages: &[],
            tools,
            options: &options,
            output: Some(output),
        })
    }

    fn tool(name: &str) -> ToolSpec {
        ToolSpec::new(
            ToolName::from_lossy(name),
            "A tool.",
            json!({"type": "object", "properties": {}}),
        )
    }

    #[test]
    fn models_with_structured_outputs_are_sent_it() {
        for model in [
            "claude-sonnet-4-5",
            "claude-opus-4-1-20250805",
            "claude-haiku-4-5",
            "anthropic/claude-sonnet-4.5",
            "claude-future-9",
        ] {
            let body = body(model, &[], ToolChoice::Auto, &invoice());
            assert_eq!(
                body["output_config"]["format"]["type"], "json_schema",
                "{model}"
            );
            assert!(body.get("tools").is_none(), "{model}: {body}");
        }
    }

    #[test]
    fn older_models_must_call_the_answering_tool() {
        for model in [
            "claude-3-5-haiku-20241022",
            "claude-3.7-sonnet",
            "anthropic.claude-3-haiku-20240307-v1:0",
            "us.anthropic.claude-sonnet-4-20250514-v1:0",
            "claude-sonnet-4-20250514",
            "claude-opus-4-0",
        ] {
            let body = body(model, &[], ToolChoice::Auto, &invoice());
            assert!(body.get("output_config").is_none(), "{model}: {body}");
            assert_eq!(body["tools"][0]["name"], "Invoice", "{model}");
            assert_eq!(
                body["tools"][0]["input_schema"]["required"],
                json!(["total"])
            );
            assert!(
                body["tools"][0]["description"]
                    .as_str()
                    .is_some_and(|d| d.contains("An invoice.")),
                "{body}"
            );
            assert_eq!(
                body["tool_choice"],
                json!({"type": "tool", "name": "Invoice"}),
                "{model}"
            );
        }
    }

    #[test]
    fn beside_other_tools_one_must_be_called_and_names_never_clash() {
        let tools = [tool("Invoice"), tool("lookup")];
        let body = body("claude-3-5-haiku", &tools, ToolChoice::Auto, &invoice());
        let names: Vec<&str> = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["Invoice", "lookup", "Invoice_answer"]);
        // The request's own choice of one call at a time is kept.
        assert_eq!(
            body["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true})
        );

        // A turn that may call no tool still may answer.
        let body = body_none(&tools);
        assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "Invoice_answer"})
        );
    }

    fn body_none(tools: &[ToolSpec]) -> Value {
        body("claude-3-5-haiku", tools, ToolChoice::None, &invoice())
    }

    #[test]
    fn the_report_says_the_schema_travels_as_a_tool() {
        let config = crate::ModelConfig::new(crate::ModelProvider::Anthropic, "claude-3-5-haiku");
        let report = invoice().report(&config);
        assert!(!report.strict);
        assert!(
            report.notes.iter().any(|note| matches!(
                note,
                iris_core::provider::ProjectionNote::NotStrict { reason, .. }
                    if reason.contains("no structured outputs") && reason.contains("`Invoice`")
            )),
            "{report:?}"
        );
        let config = crate::ModelConfig::new(crate::ModelProvider::Anthropic, "claude-sonnet-4-5");
        assert!(invoice().report(&config).strict);
    }
}
