//! Loading an agent file of 200 functions, 20 hooks and 5 middleware, next
//! to only reading the same YAML into a JSON value, in one run.
//!
//! Run with `cargo bench -p iris-benches --bench assembly`.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use iris::assembly::Assembly;
use iris::definition::{ToolDefinition, ToolName};
use iris::hooks::{AfterAnswer, Hook, HookInput};
use iris::middleware::MiddlewareError;
use iris::tool::DynamicTool;
use iris::{Next, ToolCall, ToolResult};

const FUNCTIONS: usize = 200;
const HOOKS: usize = 20;
const MIDDLEWARE: usize = 5;

/// Adds a sentence after a tool's result.
#[iris::hook_factory]
fn create_feedback(
    /// The sentence to add.
    text: String,
) -> Hook {
    Hook::after(move |_input: &HookInput| AfterAnswer::feedback(&text))
}

/// Passes every call on.
#[iris::middleware]
async fn pass(call: ToolCall, next: Next<'_>) -> Result<ToolResult, MiddlewareError> {
    next.run(call).await
}

/// Makes the pass-through middleware.
#[iris::middleware_factory]
fn create_pass() -> Pass {
    Pass
}

fn assembly() -> Assembly {
    let mut builder = Assembly::builder()
        .hook_factory("create_feedback", CreateFeedback)
        .middleware_factory("create_pass", CreatePass);
    for i in 0..FUNCTIONS {
        let definition = ToolDefinition::builder(
            ToolName::new(format!("tool_{i}")).unwrap(),
            format!("Tool number {i}."),
        )
        .build()
        .unwrap();
        builder = builder.tool(DynamicTool::new(definition, |_, _| async {
            ToolResult::text("ok")
        }));
    }
    builder.build()
}

fn agent_file() -> String {
    let mut text = String::from("name: bench\ntools:\n  functions:\n");
    for i in 0..FUNCTIONS {
        let _ = writeln!(text, "    - tool_{i}");
    }
    text.push_str("  deferred: [tool_0, tool_1, tool_2]\nhooks:\n");
    for i in 0..HOOKS {
        let _ = writeln!(
            text,
            "  - name: hook-{i}\n    event: tool.after\n    tools: [tool_{i}]\n    handler: {{ type: factory, factory: create_feedback, options: {{ text: \"note {i}\" }} }}"
        );
    }
    text.push_str("middleware:\n  tools:\n");
    for _ in 0..MIDDLEWARE {
        text.push_str("    - factory: create_pass\n");
    }
    text.push_str("permissions: { write: ask, tools: { tool_3: allow } }\nlimits: { max_steps: 20, timeout: 60s }\n");
    text
}

fn bench(c: &mut Criterion) {
    let assembly = assembly();
    let text = agent_file();
    let origin = Path::new("agent.yaml");
    assembly.parse(&text, origin).unwrap();
    let mut group = c.benchmark_group("assembly_load");
    group.bench_function("iris_assemble", |b| {
        b.iter(|| assembly.parse(&text, origin).unwrap());
    });
    group.bench_function("yaml_to_json_value", |b| {
        b.iter(|| serde_saphyr::from_str::<serde_json::Value>(&text).unwrap());
    });
    group.finish();

    let rounds = 200;
    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..rounds {
            f();
        }
        started.elapsed().as_secs_f64() * 1000.0 / f64::from(rounds)
    };
    let assembling = time(&|| {
        assembly.parse(&text, origin).unwrap();
    });
    let read = time(&|| {
        serde_saphyr::from_str::<serde_json::Value>(&text).unwrap();
    });
    println!(
        "\n== assembly summary ({FUNCTIONS} functions, {HOOKS} hooks, {MIDDLEWARE} middleware, {} bytes) ==",
        text.len()
    );
    println!(
        "assemble {assembling:.3} ms (goal < 5 ms), only reading the YAML {read:.3} ms ({:.1}x)",
        assembling / read
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
