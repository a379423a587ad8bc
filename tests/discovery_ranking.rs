//! What the local ranker reads and how hosts can inspect it: word forms,
//! unsegmented scripts, enum values, related words, examples kept from
//! winning alone, the ranking call over a view, and the reserved
//! search-tool name.

use iris::RuntimeError;
use iris::ToolRegistry;
use iris::definition::{Exposure, ToolName};
use iris::discovery::{LocalRanker, SearchScope, ToolSearch};

/// Tell who discovered something.
#[iris::tool(read_only, deferred)]
fn get_discoverer(
    /// What was discovered.
    thing: String,
) -> String {
    thing
}

/// Get the current weather for a location.
#[iris::tool(read_only, deferred)]
fn get_weather(
    /// The location, such as 'San Francisco, CA' or "Paris".
    location: String,
) -> String {
    location
}

/// Find restaurants by cuisine near a place.
#[iris::tool(read_only, deferred)]
fn find_restaurant(
    /// The cuisine.
    cuisine: String,
    /// The place.
    near: String,
) -> String {
    format!("{cuisine} {near}")
}

/// Kinds of practitioner.
#[derive(serde::Deserialize, schemars::JsonSchema)]
enum Practitioner {
    Psychologist,
    Dentist,
}

/// Look up health practitioners.
#[iris::tool(read_only, deferred)]
fn search_practitioners(
    /// Which kind.
    kind: Practitioner,
    /// The city.
    city: String,
) -> String {
    let _ = kind;
    city
}

/// 天气预报：查询城市的天气。
#[iris::tool(read_only, deferred)]
fn tianqi() -> &'static str {
    "晴"
}

/// Tell the time.
#[iris::tool(read_only)]
fn clock() -> &'static str {
    "12:00"
}

fn catalog() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(GetDiscoverer)
        .and_then(|r| r.register(GetWeather))
        .and_then(|r| r.register(FindRestaurant))
        .and_then(|r| r.register(SearchPractitioners))
        .and_then(|r| r.register(Tianqi))
        .and_then(|r| r.register(Clock))
        .expect("distinct names");
    registry
}

fn top(intent: &str, registry: &ToolRegistry) -> Option<String> {
    let scope = SearchScope::all(registry);
    LocalRanker::default()
        .rank(intent, &scope, 5)
        .candidates
        .first()
        .map(|c| c.name.to_string())
}

#[test]
fn word_forms_scripts_and_enum_values_reach_the_right_tool() {
    let registry = catalog();
    assert_eq!(
        top("Who discovered the neutron?", &registry).as_deref(),
        Some("get_discoverer")
    );
    assert_eq!(
        top("北京明天的天气怎么样", &registry).as_deref(),
        Some("tianqi")
    );
    assert_eq!(
        top("a psychologist in Santa Rosa", &registry).as_deref(),
        Some("search_practitioners")
    );
}

/// An example value in a parameter description ("such as 'San Francisco,
/// CA'") does not outweigh what a tool is for.
#[test]
fn examples_in_parameters_do_not_win_alone() {
    let registry = catalog();
    assert_eq!(
        top("Find a Japanese restaurant in San Francisco", &registry).as_deref(),
        Some("find_restaurant")
    );
}

/// The ranking call shows scores, coverage and the rule's decision, and
/// takes a view to rank within.
#[test]
fn rank_reports_scores_and_keeps_to_a_view() {
    let registry = std::sync::Arc::new(catalog());
    let ranker = LocalRanker::default();
    let all = SearchScope::all(&registry);
    let ranking = ranker.rank("weather for a location", &all, 3);
    let first = ranking.candidates.first().expect("a candidate");
    assert_eq!(first.name.as_str(), "get_weather");
    assert!(first.coverage > 0.0 && first.coverage <= 1.0);
    assert!(
        ranking
            .candidates
            .windows(2)
            .all(|w| w[0].score >= w[1].score)
    );
    assert_eq!(
        ranking.selected.as_ref().map(ToolName::as_str),
        Some("get_weather")
    );

    let view = registry.view().names(["find_restaurant", "clock"]);
    let narrowed = SearchScope::all(&registry).within(&view);
    let ranking = ranker.rank("weather for a location", &narrowed, 3);
    assert!(
        ranking
            .candidates
            .iter()
            .all(|c| c.name.as_str() == "find_restaurant"),
        "{ranking:?}"
    );
}

/// Compare what shops charge for a product.
#[iris::tool(read_only, deferred)]
fn compare_prices(
    /// The product.
    product: String,
) -> String {
    product
}

/// Read what buyers wrote about a product.
#[iris::tool(read_only, deferred)]
fn product_reviews(
    /// The product.
    product: String,
) -> String {
    product
}

/// A request in words no description uses ("cheap" for prices) still finds
/// the tool through related words, ranks it first, and is not selected on
/// them alone: the model sees a candidate to pick, not a guess made for it.
#[test]
fn related_words_rank_a_tool_described_in_other_words() {
    let mut registry = catalog();
    registry
        .register(ComparePrices)
        .and_then(|r| r.register(ProductReviews))
        .expect("distinct names");
    let scope = SearchScope::all(&registry);
    let ranking = LocalRanker::default().rank("somewhere cheap for headphones", &scope, 5);
    let first = ranking.candidates.first().expect("a candidate");
    assert_eq!(first.name.as_str(), "compare_prices", "{ranking:?}");
    assert!(first.coverage.abs() < f32::EPSILON, "{ranking:?}");
    assert_eq!(ranking.selected, None, "{ranking:?}");

    // Words the request and a tool share still count in full.
    let direct = LocalRanker::default().rank("compare prices of headphones", &scope, 5);
    assert_eq!(
        direct.selected.as_ref().map(ToolName::as_str),
        Some("compare_prices"),
        "{direct:?}"
    );
}

/// A host's own tools that happen to be called `tool_search` and
/// `read_history`.
mod mine {
    /// Search for anything.
    #[iris::tool(read_only)]
    pub(super) fn tool_search() -> &'static str {
        "mine"
    }

    /// Read anything back.
    #[iris::tool(read_only)]
    pub(super) fn read_history() -> &'static str {
        "mine"
    }
}

#[test]
fn the_search_tool_name_is_reserved_with_a_way_out() {
    let mut registry = ToolRegistry::new();
    let err = registry
        .register_as(mine::ToolSearch, Exposure::Deferred)
        .map(|_| ())
        .expect_err("the name is reserved");
    assert!(
        matches!(err, RuntimeError::ReservedToolName { .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains("reserved for the tool of that name that ships with Iris"),
        "{message}"
    );
    assert!(message.contains("register_renamed"), "{message}");
    assert!(matches!(
        registry.register(mine::ReadHistory).map(|_| ()),
        Err(RuntimeError::ReservedToolName { .. })
    ));

    registry
        .register(ToolSearch)
        .expect("the built-in takes its own name");
    let renamed = ToolName::new("my_search").expect("valid");
    registry
        .register_renamed(mine::ToolSearch, renamed)
        .expect("another name is free");
    assert!(registry.resolve("my_search").is_some());
}
