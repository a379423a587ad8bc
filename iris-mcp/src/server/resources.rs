//! `resources/read` of the artifacts results name.

use rmcp::ErrorData;
use rmcp::model::ResourceContents;
use serde_json::json;

use super::McpConnection;

impl McpConnection {
    /// Largest artifact `resources/read` returns whole; past it, the client
    /// is told to page it with `read_file`.
    pub const MAX_RESOURCE_BYTES: u64 = 32 * 1024 * 1024;
}

/// The contents of the artifact behind `uri` (a handle such as
/// `artifact://…` that a preview named): text when it is UTF-8, base64
/// otherwise.
pub(super) fn read_artifact(
    store: &iris_runtime::ArtifactStore,
    uri: &str,
) -> Result<ResourceContents, ErrorData> {
    use std::io::Read as _;
    let limit = McpConnection::MAX_RESOURCE_BYTES;
    if !iris_runtime::artifacts::is_handle(uri) {
        return Err(ErrorData::resource_not_found(
            format!(
                "`{uri}` is not a resource of this server; it serves the artifacts (`artifact://…`) its results name"
            ),
            Some(json!({"uri": uri})),
        ));
    }
    let file = store.open(uri).map_err(|error| {
        ErrorData::resource_not_found(error.to_string(), Some(json!({"uri": uri})))
    })?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| {
            ErrorData::internal_error(format!("`{uri}` could not be read: {error}"), None)
        })?;
    if bytes.len() as u64 > limit {
        return Err(ErrorData::invalid_params(
            format!(
                "`{uri}` is larger than {limit} bytes; page it with the `read_file` tool instead"
            ),
            None,
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(text, uri),
        Err(not_text) => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(not_text.as_bytes());
            ResourceContents::blob(blob, uri)
        }
    })
}
