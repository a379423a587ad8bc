//! What is wrong with a `tools/call` request's params, said the same way
//! over every transport: the MCP library reads a call whose params are not
//! a call's as a request of an unknown kind, and would answer "method not
//! found" (-32601), which tells the client the server cannot call tools.

use serde_json::Value;

/// Why `message` (a JSON-RPC request) is a `tools/call` whose params are
/// not a call's; `None` for any other message, or a well-formed call.
pub(crate) fn problem(message: &Value) -> Option<&'static str> {
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    Some(match message.get("params") {
        None => "`tools/call` needs `params` naming the tool (`name`)",
        Some(params) if !params.is_object() => "`params` must be an object",
        Some(params) => match (params.get("name"), params.get("arguments")) {
            (None, _) => "`params` has no `name`: name the tool to call",
            (Some(name), _) if !name.is_string() => "`name` must be the tool's name, a string",
            (_, Some(arguments)) if !(arguments.is_object() || arguments.is_null()) => {
                "`arguments` must be an object of the tool's arguments"
            }
            _ => return None,
        },
    })
}

/// The JSON-RPC error answering request `id` whose params are wrong as
/// `why` says (invalid params, -32602).
pub(crate) fn invalid(id: &Value, why: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32602, "message": why},
    })
}
