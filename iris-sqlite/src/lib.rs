#![cfg_attr(docsrs, feature(doc_cfg))]
//! Iris runs kept in SQLite: a [`RunStore`] in one file that every process
//! of a machine can open at once (SQLite's write-ahead log), compiled in,
//! with no system library or server.
//!
//! ```no_run
//! # async fn demo(agent: iris_agent::Agent, model: impl iris_model::Model) -> Result<(), Box<dyn std::error::Error>> {
//! use iris_agent::AgentRunner;
//! use iris_sqlite::SqliteStore;
//!
//! let store = SqliteStore::open("runs.db")?;
//! let runner = AgentRunner::new(agent, model).with_store(store);
//! # Ok(()) }
//! ```
//!
//! Each write is one transaction, compare-and-swap on the run's version and
//! checked against its lease, so two processes never both drive a run. The
//! log is synced as SQLite's `NORMAL` level does: what was written survives
//! the death of any process; a power cut may lose the last writes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use iris_agent::store::{Retention, RunStore, StoreError};
use iris_core::BoxFuture;
use rusqlite::Connection;

mod retention;
mod rows;
mod runs;
#[cfg(test)]
mod tests;

/// How long a write waits for another process's write to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs kept in one SQLite file; cheap to clone (clones share the
/// connection).
///
/// Runs are forgotten as its [`Retention`] says (finished runs after a
/// week, any run not written for thirty days, unless set), swept when a
/// run is created, at most once a minute unless set.
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    path: PathBuf,
    retention: Retention,
    /// When this handle last swept for expired runs (ms).
    swept: Arc<AtomicU64>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Turns on WAL and makes the tables. Processes opening a new file at once
/// contend here, and SQLite answers "database is locked" for the switch to
/// WAL without waiting on its busy handler: every step is idempotent, so
/// the whole is tried again, a little later each time, until the busy
/// timeout has passed.
fn set_up(connection: &Connection) -> rusqlite::Result<()> {
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        let attempt = connection
            .pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| connection.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|()| connection.execute_batch(rows::SCHEMA));
        match attempt {
            Err(rusqlite::Error::SqliteFailure(failure, _))
                if matches!(
                    failure.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

impl SqliteStore {
    /// Opens (or creates) the store in the file at `path`.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when the file cannot be opened as a SQLite
    /// database, or its tables cannot be made.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let backend = |e: rusqlite::Error| StoreError::Backend(format!("{}: {e}", path.display()));
        let connection = Connection::open(&path).map_err(backend)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        set_up(&connection).map_err(backend)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            path,
            retention: Retention::default(),
            swept: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Keeps runs as long as `retention` says.
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Whether this handle is due a sweep at `now`, claiming it if so.
    fn sweep_due(&self, now: u64) -> bool {
        let every = u64::try_from(self.retention.sweep_every.as_millis()).unwrap_or(u64::MAX);
        let last = self.swept.load(Ordering::Relaxed);
        (last == 0 || now.saturating_sub(last) >= every)
            && self
                .swept
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// The file the store is in.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the connection, off the async workers.
    fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        let connection = Arc::clone(&self.connection);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                f(&mut connection)
            })
            .await
            .map_err(|e| StoreError::Backend(format!("a store task failed: {e}")))?
        })
    }
}

impl From<SqliteStore> for Arc<dyn RunStore> {
    fn from(store: SqliteStore) -> Self {
        Arc::new(store)
    }
}
