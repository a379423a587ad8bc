//! What the killed replicas of the durable-run tests share: dying by
//! SIGKILL at a named point, and the shop's tools with the points inside
//! them (a replica dies only at the point `IRIS_KILL_AT` names).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a replica that cannot write, or a history without the call, fails loudly"
)]

use std::path::Path;

use iris::ToolContext;
use iris::ToolResult;
use iris::journal::IdempotencyKey;
use iris::model::Message;

/// Charge a card: a write that may not run twice.
#[iris::tool(write)]
pub(crate) fn charge(
    /// Cents to charge.
    cents: u64,
    #[ctx] cx: &ToolContext,
) -> String {
    die_at("before_charge", cx.workspace_root());
    append(&cx.workspace_root().join("charges.txt"), &cents.to_string());
    die_at("in_charge", cx.workspace_root());
    format!("charged {cents}")
}

/// Send a receipt: safe to repeat, since the mail service drops a second
/// receipt with the same idempotency key.
#[iris::tool(write, idempotent)]
pub(crate) fn send_receipt(
    /// Who gets it.
    to: String,
    #[ctx] cx: &ToolContext,
) -> String {
    let key = cx
        .extension::<IdempotencyKey>()
        .expect("a call of a journaled run has its key");
    // Every time the body runs, whether or not the mail goes out.
    append(&cx.workspace_root().join("receipt_calls.txt"), key.as_str());
    let sent = cx.workspace_root().join("receipts.txt");
    if !lines(&sent)
        .iter()
        .any(|line| line.starts_with(key.as_str()))
    {
        append(&sent, &format!("{key} {to}"));
    }
    die_at("after_receipt", cx.workspace_root());
    format!("receipt sent to {to}")
}

/// Look up a price.
#[iris::tool(read_only)]
pub(crate) fn price(#[ctx] cx: &ToolContext) -> u64 {
    // Every time the body runs.
    append(&cx.workspace_root().join("prices.txt"), "1200");
    die_at("in_price", cx.workspace_root());
    1200
}

/// Dies here if this replica was told to (`IRIS_KILL_AT`), once per
/// scenario (a marker file says it happened, so the replica that takes
/// over lives).
pub(crate) fn die_at(point: &str, dir: &Path) {
    if std::env::var("IRIS_KILL_AT").as_deref() != Ok(point) {
        return;
    }
    let marker = dir.join("killed");
    if marker.exists() {
        return;
    }
    std::fs::write(&marker, point).unwrap();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGKILL);
    // SIGKILL cannot be caught; should it not arrive, die all the same.
    std::process::abort();
}

/// Appends `line` to the file at `path`.
pub(crate) fn append(path: &Path, line: &str) {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(file, "{line}").unwrap();
}

/// The lines of the file at `path` (none when it does not exist).
pub(crate) fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The result call `call` got in `history`.
pub(crate) fn result_of<'m>(history: &'m [Message], call: &str) -> &'m ToolResult {
    history
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id, result, ..
            } if call_id == call => Some(result),
            _ => None,
        })
        .unwrap_or_else(|| panic!("call {call} has a result"))
}
