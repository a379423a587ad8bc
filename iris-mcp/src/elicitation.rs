//! A caller asked on an upstream server's behalf. A server behind the
//! gateway may ask for input while one of its tools runs (`elicitation/
//! create`) or ask for its client's model (`sampling/createMessage`); the
//! gateway's client passes the request on to the caller behind the call
//! that is running: the serving side puts an [`Asker`] in the call's
//! context, the remote tool routes its server's requests to it while its
//! call is out, and the client answers through it. A request with no call
//! to route it to, or while several calls of that server are out (it
//! cannot say which it belongs to), is answered with an error saying
//! nobody can be asked: a caller is never asked on behalf of someone
//! else's call, and a person never said to have declined what they were
//! not asked.
#![allow(
    deprecated,
    reason = "sampling is part of the 2025 revisions this gateway relays (deprecated by SEP-2577 from 2026-07-28 on)"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};

/// A future that lives on its own.
pub(crate) type Asked = std::pin::Pin<Box<dyn Future<Output = ElicitResult> + Send>>;

/// A sampling answer that lives on its own.
pub(crate) type Sampled =
    std::pin::Pin<Box<dyn Future<Output = Result<CreateMessageResult, ErrorData>> + Send>>;

type Ask = dyn Fn(ElicitRequestParams) -> Asked + Send + Sync;

type Sample = dyn Fn(CreateMessageRequestParams) -> Sampled + Send + Sync;

/// Most requests one call may put to its caller (forms and samplings
/// together): a server cannot bury the person in forms, nor spend the
/// caller's model at will.
const MAX_ASKS_PER_CALL: u32 = 8;

/// Puts a server's requests during a call to the caller behind it: forms
/// to its person, samplings to its model, each when its client can take
/// them; one at a time, at most [`MAX_ASKS_PER_CALL`].
#[derive(Clone, Default)]
pub(crate) struct Asker {
    ask: Option<Arc<Ask>>,
    sample: Option<Arc<Sample>>,
    asked: Arc<tokio::sync::Mutex<u32>>,
}

impl Asker {
    /// Forms go to `ask`.
    #[must_use]
    pub(crate) fn eliciting(
        mut self,
        ask: impl Fn(ElicitRequestParams) -> Asked + Send + Sync + 'static,
    ) -> Self {
        self.ask = Some(Arc::new(ask));
        self
    }

    /// Samplings go to `sample`.
    #[must_use]
    pub(crate) fn sampling(
        mut self,
        sample: impl Fn(CreateMessageRequestParams) -> Sampled + Send + Sync + 'static,
    ) -> Self {
        self.sample = Some(Arc::new(sample));
        self
    }

    /// Whether anything can be put to the caller.
    pub(crate) fn asks_anything(&self) -> bool {
        self.ask.is_some() || self.sample.is_some()
    }

    /// Takes one of the call's places for a request, or says why not.
    async fn take_place(&self) -> Result<tokio::sync::MutexGuard<'_, u32>, ErrorData> {
        let mut asked = self.asked.lock().await;
        if *asked >= MAX_ASKS_PER_CALL {
            return Err(ErrorData::invalid_request(
                format!(
                    "this call has asked its caller {MAX_ASKS_PER_CALL} times already; no more is asked"
                ),
                None,
            ));
        }
        *asked += 1;
        Ok(asked)
    }

    async fn ask(&self, request: ElicitRequestParams) -> Result<ElicitResult, ErrorData> {
        let Some(ask) = &self.ask else {
            return Err(nobody("person"));
        };
        let _place = self.take_place().await?;
        Ok(ask(request).await)
    }

    async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sample) = &self.sample else {
            return Err(nobody("model"));
        };
        let _place = self.take_place().await?;
        sample(request).await
    }
}

/// The error a server meets when nobody behind the call can take its
/// request.
fn nobody(what: &str) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "no {what} can be asked: the call this request belongs to has no client that can answer it (or several of this server's calls are out, and the request does not say whose it is)"
        ),
        None,
    )
}

/// One server's calls that are out, each with its asker when its caller
/// can be asked.
#[derive(Default)]
pub(crate) struct Routes {
    next: AtomicU64,
    routes: Mutex<Vec<(u64, Option<Asker>)>>,
}

impl Routes {
    /// Counts a call out until the guard is dropped, routing the server's
    /// requests for input to its `asker` meanwhile (when it is the only
    /// call out).
    pub(crate) fn route(self: &Arc<Self>, asker: Option<Asker>) -> Route {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, asker));
        Route {
            routes: Arc::clone(self),
            id,
        }
    }

    /// The person's answer to `request`, when exactly one call of the
    /// server is out and its caller can be asked; otherwise an error that
    /// says nobody can be.
    pub(crate) async fn ask(
        &self,
        request: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        match self.only_asker() {
            Some(asker) => asker.ask(request).await,
            None => Err(nobody("person")),
        }
    }

    /// The caller's model's answer to `request` (sampling), on the same
    /// terms.
    pub(crate) async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        match self.only_asker() {
            Some(asker) => asker.sample(request).await,
            None => Err(nobody("model")),
        }
    }

    /// The asker of the one call out, when there is exactly one and its
    /// caller can be asked.
    fn only_asker(&self) -> Option<Asker> {
        let routes = self.lock();
        if let [(_, Some(asker))] = routes.as_slice() {
            return Some(asker.clone());
        }
        tracing::debug!(
            "an MCP server asked its client, but not during a single call of its own whose caller can be asked"
        );
        None
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Option<Asker>)>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("calls_out", &self.lock().len())
            .finish()
    }
}

/// A call's route for requests for input, removed when the call ends.
pub(crate) struct Route {
    routes: Arc<Routes>,
    id: u64,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.lock().retain(|(id, _)| *id != self.id);
    }
}
