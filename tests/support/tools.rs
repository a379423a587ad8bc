//! Representative tools: every schema shape `#[tool]` must get right.
#![allow(clippy::unused_async, reason = "the async tools stand in for real I/O")]

use std::collections::BTreeMap;

use iris::{State, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Return the square of an integer.
#[iris::tool(read_only, concurrency_safe)]
pub(crate) fn square(
    /// The integer to square.
    value: i64,
) -> i64 {
    value * value
}

/// Set the volume of a speaker.
#[iris::tool(write)]
pub(crate) fn set_volume(
    /// Speaker index, as printed on its label.
    speaker: u8,
    /// Volume in percent.
    #[schemars(range(min = 0, max = 100))]
    percent: i32,
) -> String {
    format!("speaker {speaker} at {percent}%")
}

/// Average a list of measurements.
#[iris::tool(read_only)]
pub(crate) fn average(
    /// The measurements.
    values: Vec<f64>,
    /// Weight of the newest value, between 0 and 1.
    weight: f32,
) -> f64 {
    let n = values.iter().map(|_| 1.0).sum::<f64>().max(1.0);
    values.iter().sum::<f64>() / n * f64::from(weight)
}

/// Turn a feature flag on or off.
#[iris::tool(write)]
pub(crate) fn toggle_feature(
    /// The flag's key.
    key: String,
    /// Whether the flag is on.
    enabled: bool,
) {
    let _ = (key, enabled);
}

/// Search the web.
#[iris::tool(read_only, network, deferred, aliases = ["web_search", "google"], max_result_chars = 4000)]
pub(crate) async fn search_web(
    /// What to look for.
    query: String,
    /// How many results to return; 10 when left out.
    limit: Option<u32>,
) -> Vec<String> {
    (0..limit.unwrap_or(10))
        .map(|i| format!("{query} #{i}"))
        .collect()
}

/// Attach labels to a document.
#[iris::tool(write)]
pub(crate) fn label_document(
    /// The document id.
    id: String,
    /// Labels to add.
    labels: Vec<String>,
    /// Extra key-value metadata.
    metadata: BTreeMap<String, String>,
) -> String {
    format!("{id}: {} labels, {} metadata", labels.len(), metadata.len())
}

/// A span of time.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct TimeRange {
    /// Start, RFC 3339.
    pub(crate) start: String,
    /// End, RFC 3339.
    pub(crate) end: String,
}

/// Someone invited to an event.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Attendee {
    /// Their e-mail address.
    pub(crate) email: String,
    /// Whether they must attend.
    #[serde(default)]
    pub(crate) required: bool,
}

/// Create a calendar event.
#[iris::tool(write)]
pub(crate) fn create_event(
    /// The event title.
    title: String,
    /// When it takes place.
    when: TimeRange,
    /// Who is invited.
    attendees: Vec<Attendee>,
) -> Result<String, String> {
    if attendees.is_empty() {
        return Err("an event needs at least one attendee".into());
    }
    Ok(format!("{title} from {} to {}", when.start, when.end))
}

/// How much a logger prints.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LogLevel {
    /// Everything.
    Debug,
    /// Normal operation.
    Info,
    /// Problems.
    Warn,
    /// Failures only.
    Error,
}

/// Change the log level of a service.
#[iris::tool(write)]
pub(crate) fn set_log_level(
    /// The service name.
    service: String,
    /// The new level.
    level: LogLevel,
) -> String {
    format!("{service} logs at {level:?}")
}

/// A shape to draw.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Shape {
    /// A circle.
    Circle {
        /// Radius in pixels.
        radius: f64,
    },
    /// An axis-aligned rectangle.
    Rectangle {
        /// Width in pixels.
        width: f64,
        /// Height in pixels.
        height: f64,
    },
    /// A single pixel.
    Point,
}

/// Draw a shape on the canvas.
#[iris::tool(write)]
pub(crate) fn draw_shape(
    /// What to draw.
    shape: Shape,
) -> Shape {
    shape
}

/// Rename a user account.
#[iris::tool(write)]
pub(crate) fn rename_user(
    /// The account id.
    #[serde(rename = "userId")]
    user_id: u64,
    /// The new display name.
    new_name: String,
    /// Whether to e-mail the user about it.
    #[serde(default)]
    notify: bool,
) -> String {
    format!("user {user_id} is now {new_name} (notify: {notify})")
}

/// Tell the current time in UTC.
#[iris::tool(read_only, concurrency_safe)]
pub(crate) fn current_time() -> &'static str {
    "2026-01-01T00:00:00Z"
}

/// A folder tree.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct TreeNode {
    /// The folder name.
    pub(crate) name: String,
    /// Sub-folders.
    pub(crate) children: Vec<TreeNode>,
}

/// Count the folders in a tree.
#[iris::tool(read_only)]
pub(crate) fn count_folders(
    /// The root of the tree.
    root: TreeNode,
) -> usize {
    fn count(node: &TreeNode) -> usize {
        1 + node.children.iter().map(count).sum::<usize>()
    }
    count(&root)
}

/// Summarise a document for a reader in a hurry.
///
/// The summary keeps the document's own terms and never adds facts that are
/// not in it.
///
/// Use it for documents longer than a page; shorter ones can be quoted.
#[iris::tool(read_only)]
pub(crate) fn summarise(
    /// The document's text.
    text: String,
    /// How many sentences the summary may have.
    ///
    /// Three when left out.
    #[serde(default = "three")]
    sentences: u8,
) -> String {
    text.split_terminator('.')
        .take(usize::from(sentences))
        .collect::<Vec<_>>()
        .join(".")
}

fn three() -> u8 {
    3
}

/// A flight booking request.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct FlightRequest {
    /// IATA code of the departure airport.
    pub(crate) from: String,
    /// IATA code of the arrival airport.
    pub(crate) to: String,
    /// Travel date, `YYYY-MM-DD`.
    pub(crate) date: String,
    /// Passengers, 1 when left out.
    pub(crate) passengers: Option<u8>,
}

/// Book a flight.
#[iris::tool(write, network)]
pub(crate) async fn book_flight(#[args] request: FlightRequest) -> String {
    format!(
        "{} -> {} on {} for {}",
        request.from,
        request.to,
        request.date,
        request.passengers.unwrap_or(1)
    )
}

/// An HTTP client shared by the tools.
#[derive(Debug)]
pub(crate) struct HttpClient {
    /// Prepended to every path.
    pub(crate) base_url: String,
}

/// Fetch a page from the configured site.
#[iris::tool(read_only, network, concurrency_safe)]
pub(crate) async fn fetch_page(
    /// The path to fetch, such as `/index.html`.
    path: String,
    #[ctx] cx: &ToolContext,
    #[state] client: State<HttpClient>,
) -> String {
    format!("{}{path} for run {}", client.base_url, cx.run_id())
}

/// Store arbitrary JSON under a key.
#[iris::tool(write)]
pub(crate) fn store_json(
    /// The key.
    key: String,
    /// Any JSON value.
    value: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({ "stored": key, "value": value })
}

/// A postal address.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Address {
    /// Street and number.
    pub(crate) street: String,
    /// The city.
    pub(crate) city: String,
}

/// Register a customer.
#[iris::tool(write)]
pub(crate) fn register_customer(
    /// Full name.
    name: String,
    /// Where to send letters, if anywhere.
    address: Option<Address>,
    /// Age in years.
    age: Option<u16>,
) -> String {
    format!("{name} ({age:?}) at {address:?}")
}

/// Read a configuration file.
#[iris::tool(
    read_only,
    name = "read_config",
    description = "Read a configuration file and return its text."
)]
pub(crate) async fn load_config(
    /// Path relative to the config folder.
    path: String,
) -> Result<String, std::io::Error> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("no config file at {path}"),
    ))
}

/// A service whose methods are tools: a library catalogue that counts the
/// calls it served.
pub(crate) struct Library {
    pub(crate) books: Vec<(String, String)>,
    pub(crate) served: std::sync::atomic::AtomicUsize,
}

/// A shelf's position in the building.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) enum Floor {
    /// The ground floor.
    Ground,
    /// The first floor, up the stairs.
    First,
}

#[iris::toolbox]
impl Library {
    pub(crate) fn new(books: &[(&str, &str)]) -> Self {
        Self {
            books: books
                .iter()
                .map(|(title, author)| ((*title).to_owned(), (*author).to_owned()))
                .collect(),
            served: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn serve(&self) {
        self.served
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Find books whose title contains the words given.
    ///
    /// Returns matching titles with their authors.
    #[tool(read_only, concurrency_safe, aliases = ["find_books"])]
    async fn search_books(
        &self,
        /// Words of the title, compared case-insensitively.
        query: String,
        /// At most this many results.
        #[serde(default)]
        limit: Option<u8>,
    ) -> Vec<String> {
        self.serve();
        let query = query.to_lowercase();
        self.books
            .iter()
            .filter(|(title, _)| title.to_lowercase().contains(&query))
            .take(usize::from(limit.unwrap_or(10)))
            .map(|(title, author)| format!("{title} by {author}"))
            .collect()
    }

    /// Count the books on a floor.
    #[iris::tool(read_only, name = "count_on_floor")]
    fn count(
        &self,
        /// The floor.
        floor: Floor,
        #[ctx] cx: &iris::ToolContext,
    ) -> String {
        self.serve();
        let n = match floor {
            Floor::Ground => self.books.len(),
            Floor::First => 0,
        };
        format!("{n} books (run {})", cx.run_id())
    }

    /// Lend a book to a member.
    #[tool(write, description = "Lend a book; the member must have a card.")]
    async fn lend(&self, #[args] request: LendRequest) -> Result<String, String> {
        self.serve();
        if request.card.is_empty() {
            return Err("the member has no card".to_owned());
        }
        Ok(format!("lent `{}`", request.title))
    }
}

/// Who borrows what.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LendRequest {
    /// The book's title.
    pub(crate) title: String,
    /// The member's card number.
    pub(crate) card: String,
}

/// Roll a die and name the player.
#[iris::tool(read_only)]
pub(crate) fn roll_dice(
    /// How many sides the die has.
    #[schemars(range(min = 1, max = 100))]
    sides: u8,
    /// Who rolls: lowercase letters.
    #[schemars(length(min = 2, max = 12), regex(pattern = r"^[a-z]+$"))]
    player: String,
    /// Earlier results, each different.
    #[serde(default)]
    #[schemars(length(max = 3))]
    history: std::collections::BTreeSet<u8>,
) -> String {
    format!("{player} rolls a d{sides} ({} before)", history.len())
}

/// Move the cursor to a point.
#[iris::tool]
pub(crate) fn move_cursor(
    /// Where to: column, then row.
    point: (u32, u32),
    /// A label and a weight for the move.
    tag: Option<(String, f32)>,
) -> String {
    format!("{point:?} {tag:?}")
}
