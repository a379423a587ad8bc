//! A note on stderr for anything that takes over a second, so a terminal
//! never sits silent: said once, and not at all when it finishes sooner or
//! the output is JSON.
#![allow(clippy::print_stderr, reason = "progress is a diagnostic")]

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::output::Out;

/// How long something runs before it is announced.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// An announcement pending until dropped.
pub(crate) struct Progress(Option<JoinHandle<()>>);

/// Says `what` on stderr if this guard lives past a second.
pub(crate) fn after_a_second(what: &str, out: Out) -> Progress {
    if out.json {
        return Progress(None);
    }
    let what = what.to_owned();
    Progress(Some(tokio::spawn(async move {
        tokio::time::sleep(QUIET_FOR).await;
        eprintln!("{}: {what}...", crate::output::program());
    })))
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}
