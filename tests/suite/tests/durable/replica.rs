//! What the killed replicas of the durable-run tests share: dying by
//! SIGKILL at a named point, and the files their tools write.
#![allow(
    clippy::unwrap_used,
    reason = "a replica that cannot write fails loudly"
)]

use std::path::Path;

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
