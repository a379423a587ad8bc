//! What exporting traces costs a run: the same scripted run (four calls a
//! step, a model that answers at once) with no subscriber, and with Iris's
//! spans exported over OTLP/HTTP to a collector on loopback (a sink of the
//! benchmark's own that reads each export and answers 200), in one run.
//! The goal: under 5 % per step.
//!
//! Run with `cargo bench -p iris-benches --bench traces`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::unused_async,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use iris::agent::{Agent, AgentRunner, RunContext, RunOutcome};
use iris::assembly::Assembly;
use iris::model::{Model, ModelError, ModelRequest, ModelResponse};
use iris::serde_json::json;
use iris::tool::BoxFuture;
use iris::{RunId, ToolUseBlock};
use tracing_subscriber::layer::SubscriberExt as _;

const STEPS: u32 = 20;

/// Look up a price.
#[iris::tool(read_only, concurrency_safe)]
async fn price(
    /// The item.
    item: String,
) -> String {
    format!("{item}: 3")
}

/// Answers every step at once with four calls.
struct FourCalls;

impl Model for FourCalls {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let step = request.messages.len();
        Box::pin(async move {
            Ok(ModelResponse {
                tool_calls: (0..4)
                    .map(|i| {
                        ToolUseBlock::new(format!("s{step}-c{i}"), "price", json!({"item": "tea"}))
                    })
                    .collect(),
                ..ModelResponse::default()
            })
        })
    }
}

fn agent() -> Arc<Agent> {
    let yaml = format!(
        "name: prices\ntools: {{ functions: [price] }}\nlimits: {{ max_steps: {STEPS} }}\n"
    );
    Arc::new(
        Assembly::builder()
            .tool(Price)
            .build()
            .parse(&yaml, Path::new("agent.yaml"))
            .unwrap(),
    )
}

/// A collector on loopback that takes every export; the number taken.
fn sink() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let taken = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&taken);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    counted.fetch_add(1, Ordering::Relaxed);
                    let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                }
            });
        }
    });
    (url, taken)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let runner = AgentRunner::new(agent(), FourCalls);
    let mut run = 0_u64;
    let mut one_run = || {
        run += 1;
        let cx = RunContext::new(".", RunId::new(format!("r{run}")));
        let outcome = rt.block_on(runner.run("prices", &cx)).unwrap();
        assert!(matches!(outcome, RunOutcome::MaxSteps(_)));
    };
    let (url, taken) = sink();
    let (layer, guard) = iris::telemetry::Otlp::new(&url).layer().unwrap();
    let exporting = tracing_subscriber::registry().with(layer);
    let dispatch = tracing::Dispatch::new(exporting);

    // Each span's callsite is asked once whether anyone wants it, and the
    // answer kept: the first runs are with the exporter, so that it is
    // asked (with no subscriber at all, a disabled span costs the same).
    tracing::dispatcher::with_default(&dispatch, &mut one_run);
    let mut group = c.benchmark_group("traces");
    group.bench_function("run_20_steps/no_exporter", |b| b.iter(&mut one_run));
    group.bench_function("run_20_steps/otlp_export", |b| {
        b.iter(|| tracing::dispatcher::with_default(&dispatch, &mut one_run));
    });
    group.finish();

    // Same-run ratio, best of 5 rounds of 20 runs each, alternating.
    let time = |f: &mut dyn FnMut()| {
        let started = Instant::now();
        for _ in 0..20 {
            f();
        }
        started.elapsed().as_secs_f64() / 20.0 / f64::from(STEPS)
    };
    // The parts: the spans built and recorded by the layer, with an
    // exporter that drops them (no encoding, no HTTP).
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_simple_exporter(Dropped)
        .build();
    let spans_only = tracing::Dispatch::new(tracing_subscriber::registry().with(
        tracing_opentelemetry::layer().with_tracer(opentelemetry::trace::TracerProvider::tracer(
            &provider, "iris",
        )),
    ));
    tracing::dispatcher::with_default(&spans_only, &mut one_run);
    let (mut off, mut on, mut built) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..5 {
        off = off.min(time(&mut one_run));
        on = on.min(time(&mut || {
            tracing::dispatcher::with_default(&dispatch, &mut one_run);
        }));
        built = built.min(time(&mut || {
            tracing::dispatcher::with_default(&spans_only, &mut one_run);
        }));
    }
    guard.flush().unwrap();
    println!("\n== traces summary (4-call steps, scripted model answering at once) ==");
    println!(
        "per step: no exporter {:.1} us, OTLP export {:.1} us ({:+.1} %; goal under 5 %); {} exports taken by the collector",
        off * 1e6,
        on * 1e6,
        (on / off - 1.0) * 100.0,
        taken.load(Ordering::Relaxed)
    );
    println!(
        "of which the spans alone (built, recorded, handed to an exporter that drops them): {:.1} us ({:+.1} %)",
        built * 1e6,
        (built / off - 1.0) * 100.0
    );
}

/// An exporter that drops every span: what building them costs alone.
#[derive(Debug)]
struct Dropped;

impl opentelemetry_sdk::trace::SpanExporter for Dropped {
    async fn export(
        &self,
        _batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
