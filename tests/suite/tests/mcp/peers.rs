//! Where the MCP peers are, installed on first use.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a missing peer fails the tests loudly"
)]

use std::path::PathBuf;
use std::sync::OnceLock;

/// The folder holding the peers (`tests/mcp-peers`).
pub(crate) fn folder() -> PathBuf {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-peers");
    INSTALLED.get_or_init(|| {
        if folder.join(".installed").exists() {
            return;
        }
        let status = std::process::Command::new("bash")
            .arg(folder.join("install.sh"))
            .status()
            .expect("bash runs tests/mcp-peers/install.sh");
        assert!(
            status.success(),
            "installing the MCP peers failed ({status}); run tests/mcp-peers/install.sh \
             (it needs npm and python3 with network access to the npm registry and PyPI)"
        );
    });
    folder.canonicalize().unwrap()
}

/// A program installed from npm, such as `mcp-server-everything`.
pub(crate) fn npm_bin(name: &str) -> String {
    let path = folder().join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run tests/mcp-peers/install.sh",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// The Python of the virtual environment holding the `mcp` package.
pub(crate) fn python() -> String {
    folder()
        .join(".venv/bin/python")
        .to_string_lossy()
        .into_owned()
}
