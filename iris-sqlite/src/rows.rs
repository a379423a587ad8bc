//! Rows of the store's tables, read and written: the one place that knows
//! how a run is laid out in the file.

use iris_agent::RunState;
use iris_agent::store::{Lease, RunStatus, StoreError, StoredRun};
use iris_core::RunId;
use iris_runtime::Reply;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

/// The tables, made when a file is opened.
pub(crate) const SCHEMA: &str = "
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
CREATE TABLE IF NOT EXISTS iris_children (
    run_id   TEXT NOT NULL,
    child_id TEXT NOT NULL,
    state    TEXT NOT NULL,
    PRIMARY KEY (run_id, child_id)
);
CREATE TABLE IF NOT EXISTS iris_decisions (
    run_id   TEXT NOT NULL,
    call_id  TEXT NOT NULL,
    decision TEXT NOT NULL,
    PRIMARY KEY (run_id, call_id)
);
";

#[expect(
    clippy::needless_pass_by_value,
    reason = "the shape `map_err` hands over"
)]
pub(crate) fn db(err: rusqlite::Error) -> StoreError {
    StoreError::Backend(err.to_string())
}

/// `value` as the JSON text the store keeps; `what` names it in an error.
pub(crate) fn json_of<T: serde::Serialize>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Backend(format!("{what} could not be written: {e}")))
}

/// What was written as JSON for `run`, read back; `what` names it in an
/// error.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    run: &RunId,
    what: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        run_id: run.clone(),
        detail: format!("{what}: {e}"),
    })
}

/// Runs `f` in a write transaction (taken at once, so two processes never
/// both read before writing) and commits what it did.
pub(crate) fn write<T>(
    connection: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let value = f(&tx)?;
    tx.commit().map_err(db)?;
    Ok(value)
}

pub(crate) fn i64_of(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub(crate) fn u64_of(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A run's row, as read.
pub(crate) struct Row {
    status: String,
    pub(crate) version: i64,
    pub(crate) lease_holder: Option<String>,
    lease_until: Option<i64>,
    state: String,
}

impl Row {
    pub(crate) fn lease(&self) -> Option<Lease> {
        Some(Lease {
            holder: self.lease_holder.clone()?,
            until_ms: u64_of(self.lease_until?),
        })
    }

    pub(crate) fn status(&self, run: &RunId) -> Result<RunStatus, StoreError> {
        RunStatus::parse(&self.status).ok_or_else(|| StoreError::Corrupt {
            run_id: run.clone(),
            detail: format!("unknown status `{}`", self.status),
        })
    }

    pub(crate) fn state(&self, run: &RunId) -> Result<RunState, StoreError> {
        from_json(&self.state, run, "its state")
    }
}

pub(crate) fn read_row(connection: &Connection, run: &RunId) -> Result<Option<Row>, StoreError> {
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

/// `run`'s row, or [`StoreError::NotFound`].
pub(crate) fn existing_row(connection: &Connection, run: &RunId) -> Result<Row, StoreError> {
    read_row(connection, run)?.ok_or_else(|| StoreError::NotFound {
        run_id: run.clone(),
    })
}

fn read_decisions(
    connection: &Connection,
    run: &RunId,
) -> Result<Vec<(String, Reply)>, StoreError> {
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
        let decision = from_json(&text, run, &format!("the reply to `{call_id}`"))?;
        decisions.push((call_id, decision));
    }
    Ok(decisions)
}

/// The run `row` is, with its decisions.
pub(crate) fn stored(
    connection: &Connection,
    run: &RunId,
    row: &Row,
) -> Result<StoredRun, StoreError> {
    Ok(StoredRun {
        state: row.state(run)?,
        status: row.status(run)?,
        version: u64_of(row.version),
        lease: row.lease(),
        decisions: read_decisions(connection, run)?,
    })
}

/// Deletes every row of `run` in `tables`.
pub(crate) fn delete_rows(
    tx: &Transaction<'_>,
    run: &RunId,
    tables: &[&str],
) -> Result<(), StoreError> {
    for table in tables {
        tx.execute(
            &format!("DELETE FROM {table} WHERE run_id = ?1"),
            params![run.as_str()],
        )
        .map_err(db)?;
    }
    Ok(())
}
