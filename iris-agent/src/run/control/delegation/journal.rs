//! Where a child's steps are kept on a root that outlives its process: its
//! calls claimed under the root's run on a store, its whole loop in the
//! root's journal on an engine.

use std::sync::Arc;

use iris_core::{BoxFuture, RunId, ToolResult};
use iris_runtime::journal::CallJournal;

use crate::engine::{Ask, Engine};
use crate::{RunState, RunStatus};

/// A child's call journal on its root's store: a call of child run
/// `root/c3` named `w1` is claimed as `c3/w1` of run `root`, the path
/// written from escaped segments ([`CallPath`](iris_core::CallPath)) as the
/// root's own calls are, so that no call at any depth shares another's key.
pub(super) struct UnderRoot {
    /// The store's journal, taking keys as they are.
    pub(super) inner: Arc<dyn CallJournal>,
    pub(super) root: RunId,
}

impl UnderRoot {
    fn key(&self, run: &RunId, call_id: &str) -> String {
        let below = run
            .as_str()
            .strip_prefix(self.root.as_str())
            .and_then(|rest| rest.strip_prefix('/'));
        iris_core::CallPath::join(below, call_id)
    }
}

impl CallJournal for UnderRoot {
    fn claim<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
    ) -> BoxFuture<'a, Result<iris_runtime::journal::Claimed, iris_runtime::journal::JournalError>>
    {
        Box::pin(async move { self.inner.claim(&self.root, &self.key(run, call_id)).await })
    }

    fn record<'a>(
        &'a self,
        run: &'a RunId,
        call_id: &'a str,
        result: &'a ToolResult,
    ) -> BoxFuture<'a, Result<(), iris_runtime::journal::JournalError>> {
        Box::pin(async move {
            self.inner
                .record(&self.root, &self.key(run, call_id), result)
                .await
        })
    }

    fn by_step(&self) -> bool {
        self.inner.by_step()
    }

    fn claim_step<'a>(
        &'a self,
        run: &'a RunId,
        call_ids: &'a [&'a str],
    ) -> BoxFuture<
        'a,
        Result<Vec<iris_runtime::journal::Claimed>, iris_runtime::journal::JournalError>,
    > {
        Box::pin(async move {
            let keys: Vec<String> = call_ids.iter().map(|id| self.key(run, id)).collect();
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            self.inner.claim_step(&self.root, &keys).await
        })
    }

    fn record_step<'a>(
        &'a self,
        run: &'a RunId,
        results: &'a [(String, ToolResult)],
    ) -> BoxFuture<'a, Result<(), iris_runtime::journal::JournalError>> {
        Box::pin(async move {
            let keyed: Vec<(String, ToolResult)> = results
                .iter()
                .map(|(id, result)| (self.key(run, id), result.clone()))
                .collect();
            self.inner.record_step(&self.root, &keyed).await
        })
    }
}

/// A child's loop on its root's engine: its model answers, claims and
/// readings are kept in the root's journal, in the order they happen (a
/// replay walks the same order); its state is kept inside the root's.
pub(super) struct Nested(pub(super) Arc<dyn Engine>);

impl Engine for Nested {
    fn answer<'a>(
        &'a self,
        step: u32,
        ask: Ask<'a>,
    ) -> iris_core::BoxFuture<'a, Result<iris_model::ModelResponse, iris_model::ModelError>> {
        self.0.answer(step, ask)
    }

    fn calls(&self) -> Arc<dyn CallJournal> {
        self.0.calls()
    }

    fn now_ms(&self) -> iris_core::BoxFuture<'_, Result<u64, iris_runtime::journal::JournalError>> {
        self.0.now_ms()
    }

    fn disclosed(
        &self,
        step: u32,
        disclosed: Vec<iris_core::ToolName>,
    ) -> iris_core::BoxFuture<
        '_,
        Result<Vec<iris_core::ToolName>, iris_runtime::journal::JournalError>,
    > {
        self.0.disclosed(step, disclosed)
    }

    fn judged(
        &self,
        step: u32,
        judged: serde_json::Value,
    ) -> iris_core::BoxFuture<'_, Result<serde_json::Value, iris_runtime::journal::JournalError>>
    {
        self.0.judged(step, judged)
    }

    fn save<'a>(
        &'a self,
        _state: &'a RunState,
        _status: RunStatus,
    ) -> iris_core::BoxFuture<'a, Result<(), iris_runtime::journal::JournalError>> {
        Box::pin(async { Ok(()) })
    }
}
