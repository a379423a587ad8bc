//! Reading a server's whole catalog: every page of `tools/list`, each tool
//! read on its own so one malformed entry is reported and skipped while the
//! rest stay usable.

use std::collections::HashSet;

use rmcp::model::{ClientRequest, CustomRequest, CustomResult, ServerResult, Tool};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use super::connection::IrisClient;
use super::{McpCatalogReport, McpSkipped};
use crate::McpError;
use crate::config::McpServerConfig;

/// Most pages of `tools/list` followed; a server whose cursors never end is
/// stopped there and reported.
const MAX_PAGES: usize = 1000;

/// Every tool the server lists that could be read, following cursors until
/// they end (or repeat, or pass [`MAX_PAGES`]: then reported).
pub(super) async fn list_all(
    service: &RunningService<RoleClient, IrisClient>,
    config: &McpServerConfig,
    report: &mut McpCatalogReport,
) -> Result<Vec<Tool>, McpError> {
    let peer = service.peer().clone();
    let server = config.name.as_str();
    let failed = |message: String| McpError::Catalog {
        server: server.to_owned(),
        message,
        source: None,
    };
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    for page in 0.. {
        if page == MAX_PAGES {
            report.notes.push(format!(
                "listing stopped after {MAX_PAGES} pages; the server's cursors did not end"
            ));
            break;
        }
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        // Sent as a request of its own so the answer arrives as JSON when
        // one of its tools does not parse: the others are still read.
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
        let answer = tokio::time::timeout(config.startup_timeout(), peer.send_request(request))
            .await
            .map_err(|_| {
                failed(format!(
                    "`tools/list` got no answer within {} s",
                    config.startup_timeout().as_secs_f64()
                ))
            })?
            .map_err(|error| McpError::Catalog {
                server: server.to_owned(),
                message: format!("`tools/list` failed: {error}"),
                source: Some(Box::new(error)),
            })?;
        let (tools, next) = match answer {
            ServerResult::ListToolsResult(page) => (page.tools, page.next_cursor),
            ServerResult::CustomResult(CustomResult(raw)) => {
                read_page(&raw, report).ok_or_else(|| {
                    failed("its `tools/list` answer holds no `tools` list".to_owned())
                })?
            }
            _ => {
                return Err(failed(
                    "its `tools/list` answer is not a list of tools".to_owned(),
                ));
            }
        };
        listed.extend(tools);
        match next {
            Some(next) if seen_cursors.insert(next.clone()) => cursor = Some(next),
            Some(_) => {
                report
                    .notes
                    .push("listing stopped: the server repeated a cursor".to_owned());
                break;
            }
            None => break,
        }
    }
    Ok(listed)
}

/// The readable tools and the next cursor of a page given as JSON; each
/// tool that does not read is reported.
fn read_page(raw: &Value, report: &mut McpCatalogReport) -> Option<(Vec<Tool>, Option<String>)> {
    let entries = raw.get("tools")?.as_array()?;
    let mut tools = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        match serde_json::from_value::<Tool>(entry.clone()) {
            Ok(tool) => tools.push(tool),
            Err(error) => report.skipped.push(McpSkipped {
                wire_name: entry
                    .get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("(tool {index}, unnamed)"), str::to_owned),
                reason: format!("its listing could not be read: {error}"),
            }),
        }
    }
    let next = raw
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((tools, next))
}
