//! The local discovery index against an in-memory tantivy index over the
//! same fields of the same deterministic 10,000-tool catalog, in one run:
//! index build, a single-intent top-5 query, and index memory. Also the
//! tokens of tool definitions per request for a 1,000-tool catalog with
//! deferral on and off (OpenAI Chat Completions projection).
//!
//! Run with `cargo bench --manifest-path benches/discovery-baseline/Cargo.toml`.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    missing_docs,
    reason = "a benchmark harness, not library code"
)]

#[path = "../../../examples/discovery/catalog.rs"]
#[allow(dead_code, reason = "shared with the examples")]
mod catalog;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use iris::discovery::{
    Discovery, LocalRanker, SearchIndex, SearchScope, ToolSearch, schema_tokens,
};
use iris::{RunId, ToolRegistry};
use iris::definition::ToolDefinition;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, STORED, Schema, TEXT};
use tantivy::{Index, IndexReader, TantivyDocument, doc};

#[path = "../../support/heap.rs"]
#[allow(dead_code, reason = "each benchmark uses part of it")]
mod heap;

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

const CATALOG: usize = 10_000;
const QUERY: &str = "cancel a flight booking made in the mobile app";

/// The text of each indexed field: name words, description, parameter
/// names and descriptions (the catalog has no tags or aliases).
fn parameters_text(definition: &ToolDefinition) -> String {
    let mut out = String::new();
    if let Some(properties) = definition.input_schema()["properties"].as_object() {
        for (name, property) in properties {
            out.push_str(name);
            out.push(' ');
            if let Some(d) = property["description"].as_str() {
                out.push_str(d);
                out.push(' ');
            }
        }
    }
    out
}

struct Tantivy {
    reader: IndexReader,
    parser: QueryParser,
    name: Field,
}

fn tantivy_build(definitions: &[ToolDefinition]) -> Tantivy {
    let mut builder = Schema::builder();
    let name = builder.add_text_field("name", TEXT | STORED);
    let description = builder.add_text_field("description", TEXT);
    let parameters = builder.add_text_field("parameters", TEXT);
    let index = Index::create_in_ram(builder.build());
    let mut writer = index.writer_with_num_threads(1, 50_000_000).unwrap();
    for definition in definitions {
        writer
            .add_document(doc!(
                name => definition.name().as_str().replace('_', " "),
                description => definition.description(),
                parameters => parameters_text(definition),
            ))
            .unwrap();
    }
    writer.commit().unwrap();
    let reader = index.reader().unwrap();
    let mut parser = QueryParser::for_index(&index, vec![name, description, parameters]);
    parser.set_field_boost(name, 3.0);
    Tantivy {
        reader,
        parser,
        name,
    }
}

fn tantivy_query(t: &Tantivy, query: &str) -> Vec<String> {
    let searcher = t.reader.searcher();
    let (query, _) = t.parser.parse_query_lenient(query);
    let top = searcher
        .search(&query, &TopDocs::with_limit(5).order_by_score())
        .unwrap();
    top.into_iter()
        .map(|(_, address)| {
            let document: TantivyDocument = searcher.doc(address).unwrap();
            tantivy::schema::document::Value::as_str(&document.get_first(t.name).unwrap())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn time_per<T>(iterations: u32, mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(f());
    }
    start.elapsed().as_secs_f64() / f64::from(iterations)
}

fn bench(c: &mut Criterion) {
    let definitions: Vec<ToolDefinition> = (0..CATALOG).map(catalog::definition).collect();

    let mut group = c.benchmark_group("discovery_build_10k");
    group.sample_size(10);
    group.bench_function("iris_search_index", |b| {
        b.iter(|| SearchIndex::build(&definitions))
    });
    group.bench_function("tantivy_in_ram", |b| b.iter(|| tantivy_build(&definitions)));
    group.finish();

    let (index, index_bytes) = heap::retained(|| SearchIndex::build(&definitions));
    let (tantivy, tantivy_bytes) = heap::retained(|| tantivy_build(&definitions));
    let (_, index_peak) = heap::peak_during(|| SearchIndex::build(&definitions));

    let mut registry = ToolRegistry::new();
    for tool in catalog::tools(CATALOG) {
        registry.register(tool).unwrap();
    }
    let registry = Arc::new(registry);
    let scope = SearchScope::all(&registry);
    let local = LocalRanker::default();

    let mut group = c.benchmark_group("discovery_query_10k");
    group.bench_function("iris_index_top5", |b| {
        b.iter(|| index.top(black_box(QUERY), 5))
    });
    group.bench_function("iris_tool_search_answer", |b| {
        b.iter(|| local.answer(black_box(QUERY), &scope));
    });
    group.bench_function("tantivy_top5", |b| {
        b.iter(|| tantivy_query(&tantivy, black_box(QUERY)))
    });
    group.finish();

    // Side-by-side timings for the summary, in the same run.
    let build_iris = time_per(10, || SearchIndex::build(&definitions));
    let build_tantivy = time_per(3, || tantivy_build(&definitions));
    let query_iris = time_per(20_000, || index.top(QUERY, 5));
    let answer_iris = time_per(20_000, || local.answer(QUERY, &scope));
    let query_tantivy = time_per(20_000, || tantivy_query(&tantivy, QUERY));
    let register_start = Instant::now();
    let mut fresh = ToolRegistry::new();
    for tool in catalog::tools(CATALOG) {
        fresh.register(tool).unwrap();
    }
    let register_all = register_start.elapsed().as_secs_f64();

    // Tokens of tool definitions per request, 1,000 deferred tools.
    let mut thousand = ToolRegistry::new();
    thousand.register(ToolSearch).unwrap();
    thousand.register(SmallEager).unwrap();
    for tool in catalog::tools(1_000) {
        thousand.register(tool).unwrap();
    }
    let thousand = Arc::new(thousand);
    let every: usize = thousand
        .tools()
        .map(|t| schema_tokens(t.definition_dyn()))
        .sum();
    let discovery = Discovery::builder(Arc::clone(&thousand)).build().unwrap();
    let deferred = discovery
        .request(&thousand.view(), &RunId::new("r"))
        .schema_tokens;

    println!("\n== discovery benchmark summary ({CATALOG} tools, query {QUERY:?}) ==");
    println!(
        "top 5, iris index:   {:?}",
        index
            .top(QUERY, 5)
            .iter()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>()
    );
    println!("top 5, tantivy:      {:?}", tantivy_query(&tantivy, QUERY));
    println!(
        "build: iris {:.1} ms, tantivy {:.1} ms ({:.1}x faster); registering all {CATALOG} tools with indexing {:.1} ms",
        build_iris * 1e3,
        build_tantivy * 1e3,
        build_tantivy / build_iris,
        register_all * 1e3
    );
    println!(
        "query: iris index {:.2} us, full tool_search answer {:.2} us, tantivy {:.2} us ({:.1}x / {:.1}x faster)",
        query_iris * 1e6,
        answer_iris * 1e6,
        query_tantivy * 1e6,
        query_tantivy / query_iris,
        query_tantivy / answer_iris
    );
    println!(
        "memory: iris index {:.2} MiB retained ({:.2} MiB by its own estimate, {:.2} MiB peak while building), tantivy {:.2} MiB retained",
        index_bytes as f64 / 1048576.0,
        index.heap_bytes() as f64 / 1048576.0,
        index_peak as f64 / 1048576.0,
        tantivy_bytes as f64 / 1048576.0
    );
    println!(
        "tokens of tool definitions per request, 1,000 deferred tools + 1 eager: deferral off {every}, on {deferred} ({:.1}x fewer)",
        every as f64 / deferred as f64
    );
}

/// Tell the current time.
#[iris::tool(read_only)]
fn small_eager() -> &'static str {
    "12:00"
}

criterion_group!(benches, bench);
criterion_main!(benches);
