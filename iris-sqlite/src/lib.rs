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

use iris_agent::RunState;
use iris_agent::store::{
    Claimed, Lease, Retention, RunStatus, RunStore, StoreError, StoredRun, held_by_other,
    lease_end, now_ms, waits_in,
};
use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::ApprovalDecision;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// How long a write waits for another process's write to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS iris_runs (
    run_id       TEXT PRIMARY KEY,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL,
    status       TEXT NOT NULL,
    version      INTEGER NOT NULL,
    lease_holder TEXT,
    lease_until  INTEGER,
    state        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS iris_runs_by_status ON iris_runs (status, created_ms);
CREATE INDEX IF NOT EXISTS iris_runs_by_update ON iris_runs (updated_ms);
CREATE TABLE IF NOT EXISTS iris_calls (
    run_id  TEXT NOT NULL,
    call_id TEXT NOT NULL,
    result  TEXT,
    PRIMARY KEY (run_id, call_id)
);
CREATE TABLE IF NOT EXISTS iris_decisions (
    run_id   TEXT NOT NULL,
    call_id  TEXT NOT NULL,
    decision TEXT NOT NULL,
    PRIMARY KEY (run_id, call_id)
);
";

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

impl SqliteStore {
    /// Opens (or creates) the store in the file at `path`.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when the file cannot be opened as a SQLite
    /// database, or its tables cannot be made.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let connection = Connection::open(&path).map_err(|e| backend(&path, &e))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .and_then(|()| connection.pragma_update(None, "journal_mode", "WAL"))
            .and_then(|()| connection.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|()| connection.execute_batch(SCHEMA))
            .map_err(|e| backend(&path, &e))?;
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

/// Forgets the runs `retention` says have expired at `now`, with their
/// claims and decisions.
fn forget_expired(
    connection: &mut Connection,
    retention: &Retention,
    now: u64,
) -> Result<(), StoreError> {
    let before =
        |d: Duration| i64_of(now.saturating_sub(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let expired = "SELECT run_id FROM iris_runs WHERE updated_ms <= ?2 OR (status = 'finished' AND updated_ms <= ?1)";
    for table in ["iris_calls", "iris_decisions"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE run_id IN ({expired})"),
            params![before(retention.finished), before(retention.idle)],
        )
        .map_err(db)?;
    }
    let forgotten = tx
        .execute(
            "DELETE FROM iris_runs WHERE updated_ms <= ?2 OR (status = 'finished' AND updated_ms <= ?1)",
            params![before(retention.finished), before(retention.idle)],
        )
        .map_err(db)?;
    tx.commit().map_err(db)?;
    if forgotten > 0 {
        tracing::debug!(forgotten, "expired runs forgotten");
    }
    Ok(())
}

fn backend(path: &Path, err: &rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("{}: {err}", path.display()))
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "the shape `map_err` hands over"
)]
fn db(err: rusqlite::Error) -> StoreError {
    StoreError::Backend(err.to_string())
}

fn to_json(state: &RunState) -> Result<String, StoreError> {
    serde_json::to_string(state)
        .map_err(|e| StoreError::Backend(format!("a run state could not be written: {e}")))
}

fn i64_of(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn u64_of(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A run's row, as read.
struct Row {
    status: String,
    version: i64,
    lease_holder: Option<String>,
    lease_until: Option<i64>,
    state: String,
}

impl Row {
    fn lease(&self) -> Option<Lease> {
        Some(Lease {
            holder: self.lease_holder.clone()?,
            until_ms: u64_of(self.lease_until?),
        })
    }

    fn status(&self, run: &RunId) -> Result<RunStatus, StoreError> {
        RunStatus::parse(&self.status).ok_or_else(|| StoreError::Corrupt {
            run_id: run.clone(),
            detail: format!("unknown status `{}`", self.status),
        })
    }

    fn state(&self, run: &RunId) -> Result<RunState, StoreError> {
        serde_json::from_str(&self.state).map_err(|e| StoreError::Corrupt {
            run_id: run.clone(),
            detail: e.to_string(),
        })
    }
}

fn read_row(connection: &Connection, run: &RunId) -> Result<Option<Row>, StoreError> {
    connection
        .query_row(
            "SELECT status, version, lease_holder, lease_until, state FROM iris_runs WHERE run_id = ?1",
            params![run.as_str()],
            |row| {
                Ok(Row {
                    status: row.get(0)?,
                    version: row.get(1)?,
                    lease_holder: row.get(2)?,
                    lease_until: row.get(3)?,
                    state: row.get(4)?,
                })
            },
        )
        .optional()
        .map_err(db)
}

fn read_decisions(
    connection: &Connection,
    run: &RunId,
) -> Result<Vec<(String, ApprovalDecision)>, StoreError> {
    let mut statement = connection
        .prepare("SELECT call_id, decision FROM iris_decisions WHERE run_id = ?1 ORDER BY rowid")
        .map_err(db)?;
    let rows = statement
        .query_map(params![run.as_str()], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(db)?;
    let mut decisions = Vec::new();
    for row in rows {
        let (call_id, text) = row.map_err(db)?;
        let decision = serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            run_id: run.clone(),
            detail: format!("the decision for call `{call_id}`: {e}"),
        })?;
        decisions.push((call_id, decision));
    }
    Ok(decisions)
}

fn stored(connection: &Connection, run: &RunId, row: &Row) -> Result<StoredRun, StoreError> {
    Ok(StoredRun {
        state: row.state(run)?,
        status: row.status(run)?,
        version: u64_of(row.version),
        lease: row.lease(),
        decisions: read_decisions(connection, run)?,
    })
}

impl RunStore for SqliteStore {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let json = to_json(state);
        let run = state.run_id.clone();
        let holder = holder.to_owned();
        let now = now_ms();
        let sweep = self.sweep_due(now).then_some(self.retention);
        self.blocking(move |connection| {
            let json = json?;
            if let Some(retention) = sweep {
                forget_expired(connection, &retention, now)?;
            }
            let inserted = connection
                .execute(
                    "INSERT INTO iris_runs (run_id, created_ms, updated_ms, status, version, lease_holder, lease_until, state)
                     VALUES (?1, ?2, ?2, 'running', 1, ?3, ?4, ?5) ON CONFLICT (run_id) DO NOTHING",
                    params![run.as_str(), i64_of(now), holder, i64_of(lease_end(now, lease)), json],
                )
                .map_err(db)?;
            if inserted == 0 {
                return Err(StoreError::Exists { run_id: run });
            }
            Ok(1)
        })
    }

    fn load<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<Option<StoredRun>, StoreError>> {
        let run = run.clone();
        self.blocking(move |connection| {
            let tx = connection.transaction().map_err(db)?;
            let found = match read_row(&tx, &run)? {
                Some(row) => Some(stored(&tx, &run, &row)?),
                None => None,
            };
            tx.commit().map_err(db)?;
            Ok(found)
        })
    }

    fn acquire<'a>(
        &'a self,
        run: &'a RunId,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<StoredRun, StoreError>> {
        let run = run.clone();
        let holder = holder.to_owned();
        self.blocking(move |connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let row = read_row(&tx, &run)?.ok_or_else(|| StoreError::NotFound {
                run_id: run.clone(),
            })?;
            if row.status(&run)? == RunStatus::Finished {
                return Err(StoreError::Finished { run_id: run });
            }
            let now = now_ms();
            if let Some(held) = held_by_other(&run, row.lease().as_ref(), &holder, now) {
                return Err(held);
            }
            let until = lease_end(now, lease);
            tx.execute(
                "UPDATE iris_runs SET version = version + 1, lease_holder = ?2, lease_until = ?3, updated_ms = ?4 WHERE run_id = ?1",
                params![run.as_str(), holder, i64_of(until), i64_of(now)],
            )
            .map_err(db)?;
            let mut taken = stored(&tx, &run, &row)?;
            tx.commit().map_err(db)?;
            taken.version += 1;
            taken.lease = Some(Lease {
                holder,
                until_ms: until,
            });
            Ok(taken)
        })
    }

    fn save<'a>(
        &'a self,
        state: &'a RunState,
        status: RunStatus,
        holder: &'a str,
        expected: u64,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let json = to_json(state);
        let run = state.run_id.clone();
        let holder = holder.to_owned();
        self.blocking(move |connection| {
            let json = json?;
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let row = read_row(&tx, &run)?.ok_or_else(|| StoreError::NotFound {
                run_id: run.clone(),
            })?;
            if u64_of(row.version) != expected || row.lease_holder.as_deref() != Some(&holder) {
                return Err(StoreError::Conflict {
                    run_id: run,
                    expected,
                    found: u64_of(row.version),
                });
            }
            let now = now_ms();
            let (lease_holder, lease_until) = if status == RunStatus::Running {
                (Some(holder), Some(i64_of(lease_end(now, lease))))
            } else {
                (None, None)
            };
            tx.execute(
                "UPDATE iris_runs SET version = version + 1, status = ?2, lease_holder = ?3, lease_until = ?4, state = ?5, updated_ms = ?6 WHERE run_id = ?1",
                params![run.as_str(), status.as_str(), lease_holder, lease_until, json, i64_of(now)],
            )
            .map_err(db)?;
            if status == RunStatus::Waiting {
                tx.execute("DELETE FROM iris_decisions WHERE run_id = ?1", params![run.as_str()])
                    .map_err(db)?;
            }
            tx.execute("DELETE FROM iris_calls WHERE run_id = ?1", params![run.as_str()])
                .map_err(db)?;
            tx.commit().map_err(db)?;
            Ok(expected + 1)
        })
    }

    fn claim_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<Claimed, StoreError>> {
        let run = run.clone();
        let call_id = call_id.to_owned();
        let holder = holder.to_owned();
        self.blocking(move |connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let row = read_row(&tx, &run)?.ok_or_else(|| StoreError::NotFound {
                run_id: run.clone(),
            })?;
            if row.lease_holder.as_deref() != Some(&holder) {
                return Err(StoreError::Conflict {
                    run_id: run,
                    expected: u64_of(row.version),
                    found: u64_of(row.version),
                });
            }
            let earlier: Option<Option<String>> = tx
                .query_row(
                    "SELECT result FROM iris_calls WHERE run_id = ?1 AND call_id = ?2",
                    params![run.as_str(), call_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)?;
            let claimed =
                match earlier {
                    Some(Some(text)) => Claimed::Ran(serde_json::from_str(&text).map_err(|e| {
                        StoreError::Corrupt {
                            run_id: run.clone(),
                            detail: format!("the result of call `{call_id}`: {e}"),
                        }
                    })?),
                    Some(None) => Claimed::Unfinished,
                    None => {
                        tx.execute(
                            "INSERT INTO iris_calls (run_id, call_id) VALUES (?1, ?2)",
                            params![run.as_str(), call_id],
                        )
                        .map_err(db)?;
                        Claimed::New
                    }
                };
            tx.commit().map_err(db)?;
            Ok(claimed)
        })
    }

    fn record_call<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let run = run.clone();
        let call_id = call_id.to_owned();
        let result = serde_json::to_string(result)
            .map_err(|e| StoreError::Backend(format!("a result could not be written: {e}")));
        self.blocking(move |connection| {
            let updated = connection
                .execute(
                    "UPDATE iris_calls SET result = ?3 WHERE run_id = ?1 AND call_id = ?2",
                    params![run.as_str(), call_id, result?],
                )
                .map_err(db)?;
            if updated == 0 {
                return Err(StoreError::NotClaimed {
                    run_id: run,
                    call_id,
                });
            }
            Ok(())
        })
    }

    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let run = run.clone();
        let call_id = call_id.to_owned();
        let decision = serde_json::to_string(decision)
            .map_err(|e| StoreError::Backend(format!("a decision could not be written: {e}")));
        self.blocking(move |connection| {
            let decision = decision?;
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let row = read_row(&tx, &run)?.ok_or_else(|| StoreError::NotFound {
                run_id: run.clone(),
            })?;
            let status = row.status(&run)?;
            if status != RunStatus::Waiting || !waits_in(&row.state(&run)?, &call_id) {
                return Err(StoreError::NotWaiting {
                    run_id: run,
                    call_id,
                    status: status.as_str(),
                });
            }
            tx.execute(
                "INSERT INTO iris_decisions (run_id, call_id, decision) VALUES (?1, ?2, ?3)
                 ON CONFLICT (run_id, call_id) DO UPDATE SET decision = excluded.decision",
                params![run.as_str(), call_id, decision],
            )
            .map_err(db)?;
            tx.commit().map_err(db)?;
            Ok(())
        })
    }

    fn waiting(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunId>, StoreError>> {
        self.blocking(move |connection| {
            let mut statement = connection
                .prepare(
                    "SELECT run_id FROM iris_runs WHERE status = 'waiting' ORDER BY created_ms, rowid LIMIT ?1",
                )
                .map_err(db)?;
            let rows = statement
                .query_map(params![i64_of(limit as u64)], |row| row.get::<_, String>(0))
                .map_err(db)?;
            rows.map(|row| row.map(RunId::new).map_err(db)).collect()
        })
    }

    fn remove<'a>(&'a self, run: &'a RunId) -> BoxFuture<'a, Result<(), StoreError>> {
        let run = run.clone();
        self.blocking(move |connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            tx.execute(
                "DELETE FROM iris_decisions WHERE run_id = ?1",
                params![run.as_str()],
            )
            .map_err(db)?;
            tx.execute(
                "DELETE FROM iris_calls WHERE run_id = ?1",
                params![run.as_str()],
            )
            .map_err(db)?;
            tx.execute(
                "DELETE FROM iris_runs WHERE run_id = ?1",
                params![run.as_str()],
            )
            .map_err(db)?;
            tx.commit().map_err(db)
        })
    }
}

#[cfg(test)]
mod tests {
    use iris_agent::RUN_STATE_VERSION;
    use iris_model::{Message, Usage};

    use super::*;

    fn state(run: &str) -> RunState {
        RunState {
            version: RUN_STATE_VERSION,
            agent: "a".to_owned(),
            run_id: RunId::new(run),
            step: 0,
            messages: vec![Message::User {
                text: "hi".to_owned(),
            }],
            finished: Vec::new(),
            pending: Vec::new(),
            disclosed: Vec::new(),
            usage: Usage::default(),
            seal: None,
        }
    }

    fn raw(store: &SqliteStore, sql: &str) {
        store.connection.lock().unwrap().execute_batch(sql).unwrap();
    }

    #[tokio::test]
    async fn what_the_file_holds_is_checked_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("runs.db")).unwrap();
        let run = RunId::new("r");
        store
            .create(&state("r"), "me", Duration::from_secs(60))
            .await
            .unwrap();

        raw(&store, "UPDATE iris_runs SET state = '{\"version\": \"x\"'");
        let err = store.load(&run).await.unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("run `r`"), "{err}");
        let err = store.acquire(&run, "me", Duration::ZERO).await.unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");

        raw(
            &store,
            &format!(
                "UPDATE iris_runs SET state = '{}', status = 'paused'",
                serde_json::to_string(&state("r")).unwrap()
            ),
        );
        let err = store.load(&run).await.unwrap_err();
        assert!(err.to_string().contains("unknown status `paused`"), "{err}");

        raw(&store, "UPDATE iris_runs SET status = 'waiting'");
        raw(
            &store,
            "INSERT INTO iris_decisions (run_id, call_id, decision) VALUES ('r', 'c', 'approve')",
        );
        let err = store.load(&run).await.unwrap_err();
        assert!(
            err.to_string().contains("the decision for call `c`"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_database_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(
            &path,
            "these are notes, not a database, and long enough to have a header",
        )
        .unwrap();
        let err = SqliteStore::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Backend(_)), "{err}");
        assert!(err.to_string().contains("notes.txt"), "{err}");
    }

    #[tokio::test]
    async fn two_handles_on_one_file_see_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let a = SqliteStore::open(dir.path().join("runs.db")).unwrap();
        let b = SqliteStore::open(dir.path().join("runs.db")).unwrap();
        a.create(&state("shared"), "a", Duration::from_secs(60))
            .await
            .unwrap();
        let err = b
            .acquire(&RunId::new("shared"), "b", Duration::from_secs(60))
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::Held { ref holder, .. } if holder == "a"),
            "{err}"
        );
        let err = b
            .create(&state("shared"), "b", Duration::from_secs(60))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Exists { .. }), "{err}");
    }
}
