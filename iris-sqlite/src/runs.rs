//! The run store's operations on the file: each one transaction.

use std::time::Duration;

use iris_agent::RunState;
use iris_agent::store::{
    Claimed, Lease, RunStatus, RunStore, StoreError, StoredRun, check_reply, check_writer,
    held_by_other, lease_end, now_ms, replies_kept,
};
use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::Reply;
use rusqlite::{OptionalExtension, params};

use crate::SqliteStore;
use crate::retention::forget_expired;
use crate::rows::{
    db, delete_rows, existing_row, from_json, i64_of, json_of, read_row, stored, u64_of, write,
};

impl RunStore for SqliteStore {
    fn create<'a>(
        &'a self,
        state: &'a RunState,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let json = json_of(state, "a run state");
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
            // One read transaction: the run and its decisions as of one moment.
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
            write(connection, |tx| {
                let row = existing_row(tx, &run)?;
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
                let mut taken = stored(tx, &run, &row)?;
                taken.version += 1;
                taken.lease = Some(Lease {
                    holder,
                    until_ms: until,
                });
                Ok(taken)
            })
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
        let json = json_of(state, "a run state");
        let run = state.run_id.clone();
        let holder = holder.to_owned();
        // Only a waiting state is compared with the one it replaces.
        let waiting = (status == RunStatus::Waiting).then(|| state.clone());
        self.blocking(move |connection| {
            let json = json?;
            write(connection, |tx| {
                let row = existing_row(tx, &run)?;
                let version = u64_of(row.version);
                check_writer(&run, version, row.lease_holder.as_deref(), &holder, Some(expected))?;
                // A run written back waiting keeps the replies recorded for
                // the items that still wait as they did.
                let kept: Option<Vec<String>> = match &waiting {
                    Some(after) => Some(replies_kept(&row.state(&run)?, after)),
                    None => None,
                };
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
                // The state holds the step's results now; a new pause waits
                // for new decisions.
                delete_rows(tx, &run, &["iris_calls", "iris_children"])?;
                if let Some(kept) = kept {
                    forget_replies_but(tx, &run, &kept)?;
                }
                Ok(version + 1)
            })
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
            write(connection, |tx| {
                check_holder(tx, &run, &holder)?;
                let earlier: Option<Option<String>> = tx
                    .query_row(
                        "SELECT result FROM iris_calls WHERE run_id = ?1 AND call_id = ?2",
                        params![run.as_str(), call_id],
                        |row| row.get(0),
                    )
                    .optional()
                    .map_err(db)?;
                Ok(match earlier {
                    Some(Some(text)) => Claimed::Ran(from_json(
                        &text,
                        &run,
                        &format!("the result of call `{call_id}`"),
                    )?),
                    Some(None) => Claimed::Unfinished,
                    None => {
                        tx.execute(
                            "INSERT INTO iris_calls (run_id, call_id) VALUES (?1, ?2)",
                            params![run.as_str(), call_id],
                        )
                        .map_err(db)?;
                        Claimed::New
                    }
                })
            })
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
        let result = json_of(result, "a result");
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

    fn keeps_children(&self) -> bool {
        true
    }

    fn keep_child<'a>(
        &'a self,
        run: &'a RunId,
        state: &'a RunState,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let run = run.clone();
        let child = state.run_id.clone();
        let json = json_of(state, "a child's state");
        let holder = holder.to_owned();
        self.blocking(move |connection| {
            let json = json?;
            write(connection, |tx| {
                check_holder(tx, &run, &holder)?;
                tx.execute(
                    "INSERT INTO iris_children (run_id, child_id, state) VALUES (?1, ?2, ?3)
                     ON CONFLICT (run_id, child_id) DO UPDATE SET state = excluded.state",
                    params![run.as_str(), child.as_str(), json],
                )
                .map_err(db)?;
                Ok(())
            })
        })
    }

    fn kept_child<'a>(
        &'a self,
        run: &'a RunId,
        child: &'a RunId,
    ) -> BoxFuture<'a, Result<Option<RunState>, StoreError>> {
        let run = run.clone();
        let child = child.clone();
        self.blocking(move |connection| {
            let text: Option<String> = connection
                .query_row(
                    "SELECT state FROM iris_children WHERE run_id = ?1 AND child_id = ?2",
                    params![run.as_str(), child.as_str()],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)?;
            text.map(|text| from_json(&text, &run, &format!("the state of child `{child}`")))
                .transpose()
        })
    }

    fn decide<'a>(
        &'a self,
        run: &'a RunId,
        item_id: &'a str,
        reply: &'a Reply,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let run = run.clone();
        let item_id = item_id.to_owned();
        let reply = reply.clone();
        self.blocking(move |connection| {
            let text = json_of(&reply, "a reply")?;
            write(connection, |tx| {
                let row = existing_row(tx, &run)?;
                check_reply(&run, &row.state(&run)?, row.status(&run)?, &item_id, &reply)?;
                tx.execute(
                    "INSERT INTO iris_decisions (run_id, call_id, decision) VALUES (?1, ?2, ?3)
                     ON CONFLICT (run_id, call_id) DO UPDATE SET decision = excluded.decision",
                    params![run.as_str(), item_id, text],
                )
                .map_err(db)?;
                Ok(())
            })
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
            write(connection, |tx| {
                delete_rows(
                    tx,
                    &run,
                    &["iris_decisions", "iris_calls", "iris_children", "iris_runs"],
                )
            })
        })
    }
}

/// Refuses unless `holder` holds `run`'s lease: a call's claim and a
/// child's state are written only by the process driving the run.
fn check_holder(
    tx: &rusqlite::Transaction<'_>,
    run: &RunId,
    holder: &str,
) -> Result<(), StoreError> {
    let row = existing_row(tx, run)?;
    check_writer(
        run,
        u64_of(row.version),
        row.lease_holder.as_deref(),
        holder,
        None,
    )
}

/// Deletes the replies recorded for `run` but those for the items `kept`.
fn forget_replies_but(
    tx: &rusqlite::Transaction<'_>,
    run: &RunId,
    kept: &[String],
) -> Result<(), StoreError> {
    let recorded: Vec<String> = {
        let mut statement = tx
            .prepare("SELECT call_id FROM iris_decisions WHERE run_id = ?1")
            .map_err(db)?;
        let rows = statement
            .query_map(params![run.as_str()], |row| row.get::<_, String>(0))
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)?
    };
    for id in recorded.iter().filter(|id| !kept.contains(id)) {
        tx.execute(
            "DELETE FROM iris_decisions WHERE run_id = ?1 AND call_id = ?2",
            params![run.as_str(), id],
        )
        .map_err(db)?;
    }
    Ok(())
}
