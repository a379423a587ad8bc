//! Runs forgotten once their retention has passed.

use std::time::Duration;

use iris_agent::store::{Retention, StoreError};
use rusqlite::{Connection, params};

use crate::rows::{db, i64_of, write};

/// The runs past their retention at `?1` (finished) and `?2` (any).
const EXPIRED: &str = "SELECT run_id FROM iris_runs WHERE updated_ms <= ?2 OR (status = 'finished' AND updated_ms <= ?1)";

/// Forgets the runs `retention` says have expired at `now`, with their
/// claims and decisions.
pub(crate) fn forget_expired(
    connection: &mut Connection,
    retention: &Retention,
    now: u64,
) -> Result<(), StoreError> {
    let before =
        |d: Duration| i64_of(now.saturating_sub(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
    let limits = (before(retention.finished), before(retention.idle));
    let forgotten = write(connection, |tx| {
        for table in ["iris_calls", "iris_children", "iris_decisions", "iris_runs"] {
            let forgotten = tx
                .execute(
                    &format!("DELETE FROM {table} WHERE run_id IN ({EXPIRED})"),
                    params![limits.0, limits.1],
                )
                .map_err(db)?;
            if table == "iris_runs" {
                return Ok(forgotten);
            }
        }
        Ok(0)
    })?;
    if forgotten > 0 {
        tracing::debug!(forgotten, "expired runs forgotten");
    }
    Ok(())
}
