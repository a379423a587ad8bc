//! A deterministic synthetic tool catalog for discovery examples and
//! benchmarks: domains x actions x qualifiers, each tool with a description
//! and a parameter schema of realistic size.

use iris::ToolResult;
use iris::definition::{Capability, Exposure, ToolDefinition, ToolName};
use iris::serde_json::{Map, Value, json};
use iris::tool::DynamicTool;

const DOMAINS: &[(&str, &str)] = &[
    ("invoice", "billing documents sent to customers"),
    ("customer", "people and companies that buy from us"),
    (
        "weather_forecast",
        "expected temperature, rain and wind for a place",
    ),
    ("calendar_event", "meetings and appointments on a calendar"),
    ("flight_booking", "reserved seats on airline flights"),
    ("hotel_reservation", "booked rooms in hotels"),
    ("stock_quote", "share prices on stock exchanges"),
    ("shipment", "parcels on their way to an address"),
    (
        "support_ticket",
        "customer problems reported to the help desk",
    ),
    ("code_repository", "source code kept under version control"),
    ("playlist", "ordered lists of songs"),
    ("recipe", "dishes with ingredients and cooking steps"),
    ("expense_report", "costs employees claim back"),
    ("contract", "signed agreements with terms and parties"),
    ("vehicle", "cars and trucks in the company fleet"),
    ("patient_appointment", "visits booked at a clinic"),
    ("online_course", "lessons and courses for learners"),
    ("job_posting", "open positions advertised to candidates"),
    ("sensor_reading", "measurements sent by devices"),
    ("payment", "money transfers between accounts"),
    ("news_article", "published news stories"),
    ("translation", "texts turned into another language"),
    ("spreadsheet", "tables of numbers and formulas"),
    ("email_message", "messages in a mailbox"),
    ("chat_channel", "team conversations"),
    ("database_backup", "saved copies of databases"),
    ("virtual_machine", "cloud servers"),
    ("dns_record", "domain name entries"),
    ("marketing_campaign", "advertising efforts across channels"),
    ("survey_response", "answers people gave to questionnaires"),
    ("warehouse_stock", "items stored in warehouses"),
    ("purchase_order", "orders placed with suppliers"),
    ("tax_return", "yearly tax filings"),
    ("insurance_claim", "requests to be paid for a loss"),
    ("real_estate_listing", "houses and flats for sale or rent"),
    ("restaurant_table", "reservations at restaurants"),
    ("fitness_workout", "exercise sessions and training plans"),
    ("podcast_episode", "audio shows and their episodes"),
    ("photo_album", "collections of pictures"),
    ("energy_meter", "electricity and gas consumption"),
];

const ACTIONS: &[(&str, &str)] = &[
    ("create", "Create a new"),
    ("get", "Get one"),
    ("list", "List the"),
    ("update", "Update fields of a"),
    ("delete", "Delete a"),
    ("search", "Search the"),
    ("export", "Export to CSV the"),
    ("archive", "Archive an old"),
    ("share", "Share with a colleague a"),
    ("summarize", "Summarize in a few sentences a"),
    ("validate", "Check for mistakes a"),
    ("import", "Import from a file the"),
    ("approve", "Approve a pending"),
    ("cancel", "Cancel a"),
    ("schedule", "Schedule for later a"),
    ("compare", "Compare two versions of a"),
    ("forecast", "Forecast the next month of"),
    ("notify", "Send a notification about a"),
    ("tag", "Add labels to a"),
    ("merge", "Merge two duplicates of a"),
    ("restore", "Restore a deleted"),
    ("rate", "Rate the quality of a"),
    ("lock", "Lock against edits a"),
    ("count", "Count the"),
    ("audit", "Show the change history of a"),
];

const READ_ONLY_ACTIONS: &[&str] = &[
    "get",
    "list",
    "search",
    "export",
    "summarize",
    "validate",
    "compare",
    "forecast",
    "count",
    "audit",
];

const QUALIFIERS: &[(&str, &str)] = &[
    ("", ""),
    ("eu", " in the European region"),
    ("us", " in the United States region"),
    ("mobile", " from the mobile app"),
    ("partner", " for partner accounts"),
    ("sandbox", " in the test sandbox"),
    ("archive", " in long-term storage"),
    ("team", " shared by the whole team"),
    ("legacy", " in the legacy system"),
    ("vip", " for premium customers"),
];

/// The definition of tool number `i` of the catalog.
pub(crate) fn definition(i: usize) -> ToolDefinition {
    let per_qualifier = DOMAINS.len() * ACTIONS.len();
    let (qualifier, rest) = (
        QUALIFIERS[(i / per_qualifier) % QUALIFIERS.len()],
        i % per_qualifier,
    );
    let (domain, action) = (DOMAINS[rest / ACTIONS.len()], ACTIONS[rest % ACTIONS.len()]);
    let round = i / (per_qualifier * QUALIFIERS.len());
    let mut name = format!("{}_{}", action.0, domain.0);
    if !qualifier.0.is_empty() {
        name = format!("{name}_{}", qualifier.0);
    }
    if round > 0 {
        name = format!("{name}_{round}");
    }
    let noun = domain.0.replace('_', " ");
    let starts_with_vowel = noun.starts_with(['a', 'e', 'i', 'o', 'u']);
    let verb = match action.1.strip_suffix(" a") {
        Some(stem) if starts_with_vowel => format!("{stem} an"),
        _ => action.1.to_owned(),
    };
    let description = format!(
        "{verb} {noun}{}. A {noun} record describes {}. Returns the {noun} as JSON with its id, status and timestamps.",
        qualifier.1, domain.1
    );
    let mut properties = Map::new();
    properties.insert(
        format!("{}_id", domain.0),
        json!({"type": "string", "description": format!("The id of the {noun}, as returned when it was created.")}),
    );
    match action.0 {
        "list" | "search" | "count" | "export" => {
            properties.insert("query".into(), json!({"type": "string", "description": format!("Words to look for in the {noun}.")}));
            properties.insert("limit".into(), json!({"type": "integer", "minimum": 1, "maximum": 100, "description": "Most items to return."}));
            properties.insert("cursor".into(), json!({"type": ["string", "null"], "description": "Where the previous page ended."}));
        }
        "create" | "update" | "import" => {
            properties.insert(
                "fields".into(),
                json!({
                    "type": "object",
                    "description": format!("Field values of the {noun}."),
                    "properties": {
                        "title": {"type": "string", "description": "A short title."},
                        "notes": {"type": "string", "description": "Free text."},
                        "owner": {"type": "string", "description": "Who is responsible."},
                    },
                    "additionalProperties": false,
                }),
            );
        }
        _ => {
            properties.insert(
                "reason".into(),
                json!({"type": "string", "description": "Why, for the audit log."}),
            );
        }
    }
    let required = vec![Value::String(format!("{}_id", domain.0))];
    ToolDefinition::builder(ToolName::new(name).unwrap_or_else(|e| panic!("{e}")), description)
        .input_schema(json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false}))
        .capability(if READ_ONLY_ACTIONS.contains(&action.0) {
            Capability::ReadOnly
        } else {
            Capability::Write
        })
        .exposure(Exposure::Deferred)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The first `n` tools of the catalog as deferred tools that answer `ok`.
pub(crate) fn tools(n: usize) -> Vec<DynamicTool> {
    (0..n)
        .map(|i| {
            DynamicTool::new(definition(i), |input, _| async move {
                ToolResult::text(format!("ok: {input}"))
            })
        })
        .collect()
}
