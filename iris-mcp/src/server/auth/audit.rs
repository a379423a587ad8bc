//! The audit log: one JSON line per authorization decision (who, through
//! which client, which tool, which rule and what the policy said, how it
//! ended, how long it took), rotated by size and bounded in files. Tokens
//! are never written; arguments only when the operator asks.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use super::config::AuditConfig;

/// One decision.
#[derive(Debug, Serialize)]
pub(crate) struct AuditEntry<'a> {
    /// `issuer#subject`, or `null` for a caller with no valid token.
    pub(crate) principal: Option<&'a str>,
    /// The address the request came from (the proxy's, behind one).
    pub(crate) address: Option<IpAddr>,
    /// The OAuth client, when the token names one.
    pub(crate) client: Option<&'a str>,
    /// The JSON-RPC method (`tools/call`, `tools/list`, …), when one was
    /// read.
    pub(crate) method: Option<&'a str>,
    /// The tool, for a call.
    pub(crate) tool: Option<&'a str>,
    /// What the gateway's rules said: `allowed`, `needs_scopes`, `hidden`,
    /// `unauthenticated`, `limited`, or `foreign_session`.
    pub(crate) rule_decision: &'a str,
    /// The rule that granted it, by its place in `auth.rules`.
    pub(crate) rule: Option<usize>,
    /// What the executor's permission policy said, for a call that
    /// reached it: `allow`, `ask_approved`, `ask_declined` or `deny`.
    pub(crate) policy_decision: Option<&'a str>,
    /// How it ended: `ok`, an error kind, or the HTTP status refused with.
    pub(crate) outcome: &'a str,
    /// How long it took.
    pub(crate) duration_ms: u64,
    /// The call's arguments, only when the operator turned them on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) arguments: Option<&'a Value>,
}

impl<'a> AuditEntry<'a> {
    /// An entry for `principal`'s request from `address`, its client
    /// filled in and the rest blank, for the caller to complete.
    pub(crate) fn by(principal: Option<&'a super::Principal>, address: Option<IpAddr>) -> Self {
        Self {
            principal: principal.map(|p| p.key().as_str()),
            address,
            client: principal.and_then(super::Principal::client),
            method: None,
            tool: None,
            rule_decision: "",
            rule: None,
            policy_decision: None,
            outcome: "",
            duration_ms: 0,
            arguments: None,
        }
    }
}

/// The address a request came from, kept in its extensions for the
/// audit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerAddress(pub(crate) IpAddr);

/// The address in a request's extensions.
pub(crate) fn address_in(extensions: &hyper::http::Extensions) -> Option<IpAddr> {
    extensions.get::<PeerAddress>().map(|peer| peer.0)
}

/// Where entries go.
pub(crate) struct AuditLog {
    config: AuditConfig,
    file: Mutex<Option<(File, u64)>>,
}

#[derive(Serialize)]
struct Line<'a, T> {
    time: String,
    #[serde(flatten)]
    entry: &'a T,
}

impl AuditLog {
    /// A log as `config` says; its file is opened (and its folder made) now,
    /// so a path that cannot be written stops the server from starting.
    pub(crate) fn open(config: AuditConfig) -> Result<Self, String> {
        let file = open_append(&config.path)?;
        Ok(Self {
            config,
            file: Mutex::new(Some(file)),
        })
    }

    /// Whether arguments are written.
    pub(crate) fn with_arguments(&self) -> bool {
        self.config.arguments
    }

    /// Writes `entry` (an [`AuditEntry`], or a summary of many) as one
    /// line, rotating first when the file is full.
    pub(crate) fn write<T: Serialize>(&self, entry: &T) {
        let line = Line {
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            entry,
        };
        let Ok(mut text) = serde_json::to_vec(&line) else {
            return;
        };
        text.push(b'\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if file
            .as_ref()
            .is_some_and(|(_, size)| size + text.len() as u64 > self.config.max_bytes && *size > 0)
        {
            *file = None;
            if let Err(error) = self.rotate() {
                tracing::error!(%error, path = %self.config.path.display(), "the audit log could not be rotated");
            }
        }
        if file.is_none() {
            match open_append(&self.config.path) {
                Ok(opened) => *file = Some(opened),
                Err(error) => {
                    tracing::error!(%error, "an audit entry could not be written");
                    return;
                }
            }
        }
        if let Some((handle, size)) = file.as_mut() {
            match handle.write_all(&text) {
                Ok(()) => *size += text.len() as u64,
                Err(error) => tracing::error!(%error, "an audit entry could not be written"),
            }
        }
    }

    /// `log` becomes `log.1`, `log.1` becomes `log.2`, …; the oldest past
    /// `keep` is removed.
    fn rotate(&self) -> std::io::Result<()> {
        let path = &self.config.path;
        let numbered = |n: usize| {
            let mut name = path.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        let keep = self.config.keep;
        match std::fs::remove_file(numbered(keep)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        for n in (1..keep).rev() {
            match std::fs::rename(numbered(n), numbered(n + 1)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        std::fs::rename(path, numbered(1))
    }
}

fn open_append(path: &std::path::Path) -> Result<(File, u64), String> {
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(|e| {
            format!(
                "the audit log's folder {} could not be made: {e}",
                folder.display()
            )
        })?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("the audit log {} could not be opened: {e}", path.display()))?;
    let size = file.metadata().map_or(0, |m| m.len());
    Ok((file, size))
}

/// Milliseconds in `elapsed`, saturated.
pub(crate) fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}
