//! `ask_question` served over MCP, checked with rmcp's own client: listed
//! only to a client that can elicit, put to the person as one form (each
//! question an enum of its options beside a free-text field), answered,
//! declined, and never seen by the executor's hooks.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use iris::hooks::{BeforeAnswer, HookInput, HookRegistration};
use iris::mcp::server::{McpConnection, ServeOptions, serve_connection};
use iris::{ToolExecutor, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, Implementation,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData, ServiceExt as _};
use serde_json::{Value, json};

/// A person behind the client: answers each form with `answer`, and keeps
/// what it was shown.
struct Person {
    elicits: bool,
    answer: Option<Value>,
    shown: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicits {
            capabilities.elicitation = Some(ElicitationCapability::default());
        }
        ClientConfig::new(capabilities, Implementation::new("person", "1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = request
        {
            self.shown
                .lock()
                .unwrap()
                .push(serde_json::to_value(&requested_schema).unwrap());
        }
        Ok(match &self.answer {
            Some(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content.clone())
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

static HOOKED: AtomicUsize = AtomicUsize::new(0);

/// Reads a note.
#[iris::tool(read_only)]
fn read_note() -> &'static str {
    "a note"
}

async fn connect(person: Person) -> RunningService<RoleClient, Person> {
    let mut registry = ToolRegistry::new();
    registry.register(ReadNote).unwrap();
    let executor = ToolExecutor::builder(registry)
        .hook(HookRegistration::before("deny_all", |_: &HookInput| {
            HOOKED.fetch_add(1, Ordering::SeqCst);
            BeforeAnswer::deny("nothing runs")
        }))
        .build()
        .unwrap();
    let options = ServeOptions {
        questions: true,
        ..ServeOptions::default()
    };
    let server = McpConnection::new(Arc::new(executor), options);
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let _ = serve_connection(server, tokio::io::split(server_end)).await;
    });
    person.serve(tokio::io::split(client_end)).await.unwrap()
}

fn ask_database() -> CallToolRequestParams {
    let arguments = json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "the default"},
            {"label": "SQLite", "description": "one file"}
        ],
        "multi_select": false
    }]});
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    CallToolRequestParams::new("ask_question").with_arguments(arguments)
}

#[tokio::test]
async fn a_client_that_elicits_is_asked_and_its_answer_reaches_the_model() {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let client = connect(Person {
        elicits: true,
        answer: Some(json!({"q1": "SQLite", "q1_text": "for now"})),
        shown: Arc::clone(&shown),
    })
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ask_question"));
    let hooked = HOOKED.load(Ordering::SeqCst);
    let result = client.call_tool(ask_database()).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("Which database? -> SQLite"), "{text}");
    assert!(text.contains("for now"), "{text}");
    let form = shown.lock().unwrap()[0].clone();
    assert_eq!(
        form["properties"]["q1"]["enum"],
        json!(["Postgres", "SQLite"])
    );
    assert_eq!(form["properties"]["q1_text"]["type"], "string");
    assert_eq!(
        HOOKED.load(Ordering::SeqCst),
        hooked,
        "no hook saw the question"
    );

    let declined = connect(Person {
        elicits: true,
        answer: None,
        shown: Arc::new(Mutex::new(Vec::new())),
    })
    .await;
    let result = declined.call_tool(ask_database()).await.unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("declined"), "{text}");
}

#[tokio::test]
async fn a_client_without_elicitation_is_not_offered_ask_question() {
    let client = connect(Person {
        elicits: false,
        answer: None,
        shown: Arc::new(Mutex::new(Vec::new())),
    })
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "ask_question"));
    assert!(tools.iter().any(|t| t.name == "read_note"));
    let result = client.call_tool(ask_database()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("cannot ask"), "{text}");
}
