//! What a running call says, passed on to its client: its progress as
//! `notifications/progress` when the client asked for it (a progress
//! token), and its progress messages as log messages
//! (`notifications/message`, level info, the tool as the logger) when the
//! session set a logging level that lets info through. In the order
//! reported, without making the reporting body wait; [`Relay::flush`]
//! sends what is queued before the call's result goes out, since nothing
//! may follow it.
#![allow(
    deprecated,
    reason = "logging is part of the 2025 revisions this server still serves (deprecated from 2026-07-28 on)"
)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use serde_json::Value;

/// One notification, queued.
enum Said {
    Progress(ProgressNotificationParam),
    Log(LoggingMessageNotificationParam),
}

type Queue = (
    tokio::sync::mpsc::UnboundedSender<Said>,
    tokio::task::JoinHandle<()>,
);

/// Relays one call's reports to its client.
pub(super) struct Relay {
    runtime: tokio::runtime::Handle,
    peer: rmcp::Peer<RoleServer>,
    token: Option<ProgressToken>,
    /// The logger name of log messages, when the session takes them.
    logger: Option<String>,
    /// The queue and the task sending it, from the first report until the
    /// flush; `None` before and after.
    open: Mutex<Option<Queue>>,
    flushed: AtomicBool,
}

impl Relay {
    /// A relay for a call of `tool`: progress when `token` is given, log
    /// messages when `logs` (the session's level lets info through);
    /// `None` when there is nothing to relay.
    pub(super) fn new(
        peer: rmcp::Peer<RoleServer>,
        token: Option<ProgressToken>,
        tool: &str,
        logs: bool,
    ) -> Option<Arc<Self>> {
        if token.is_none() && !logs {
            return None;
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        Some(Arc::new(Self {
            runtime,
            peer,
            token,
            logger: logs.then(|| tool.to_owned()),
            open: Mutex::new(None),
            flushed: AtomicBool::new(false),
        }))
    }

    pub(super) fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self.flushed.load(Ordering::Acquire) {
            return;
        }
        if let Some(token) = &self.token {
            let mut report = ProgressNotificationParam::new(token.clone(), progress);
            if let Some(total) = total {
                report = report.with_total(total);
            }
            if let Some(message) = message {
                report = report.with_message(message);
            }
            self.send(Said::Progress(report));
        }
        if let (Some(logger), Some(message)) = (&self.logger, message) {
            let mut said = LoggingMessageNotificationParam::new(
                LoggingLevel::Info,
                Value::String(message.to_owned()),
            );
            said.logger = Some(logger.clone());
            self.send(Said::Log(said));
        }
    }

    fn send(&self, said: Said) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (queue, _) = open.get_or_insert_with(|| {
            let (queue, mut reports) = tokio::sync::mpsc::unbounded_channel();
            let peer = self.peer.clone();
            let sending = self.runtime.spawn(async move {
                while let Some(said) = reports.recv().await {
                    let sent = match said {
                        Said::Progress(report) => peer.notify_progress(report).await,
                        Said::Log(message) => peer.notify_logging_message(message).await,
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
            (queue, sending)
        });
        // The client may be gone; then there is no one to tell.
        let _ = queue.send(said);
    }

    /// Sends what is queued and stops relaying.
    pub(super) async fn flush(&self) {
        self.flushed.store(true, Ordering::Release);
        let open = self
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((queue, sending)) = open {
            drop(queue);
            let _ = sending.await;
        }
    }
}

/// The logging level a session set (`logging/setLevel`): none until it
/// sets one, and then log messages at or above it.
#[derive(Default)]
pub(super) struct SessionLogs(Mutex<Option<LoggingLevel>>);

impl SessionLogs {
    pub(super) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    /// Whether info messages go through.
    pub(super) fn takes_info(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|level| matches!(level, LoggingLevel::Debug | LoggingLevel::Info))
    }
}
