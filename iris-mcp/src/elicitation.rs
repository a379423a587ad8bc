//! A person asked on an upstream server's behalf. A server behind the
//! gateway may ask for input while one of its tools runs (`elicitation/
//! create`); the gateway's client passes the request on to the person
//! behind the call that is running: the serving side puts an [`Asker`] in
//! the call's context, the remote tool routes its server's requests to it
//! while its call is out, and the client answers through it. A request
//! with no call to route it to, or while several calls of that server are
//! out (it cannot say which it belongs to), is answered with an error
//! saying nobody can be asked: a person is never asked on behalf of
//! someone else's call, and never said to have declined what they were
//! not asked.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ElicitRequestParams, ElicitResult};

/// A future that lives on its own.
pub(crate) type Asked = std::pin::Pin<Box<dyn Future<Output = ElicitResult> + Send>>;

type Ask = dyn Fn(ElicitRequestParams) -> Asked + Send + Sync;

/// Most requests for input one call may put to its person: a server
/// cannot bury the person in forms.
const MAX_ASKS_PER_CALL: u32 = 8;

/// Puts a server's request for input to the person behind the call: one
/// at a time, at most [`MAX_ASKS_PER_CALL`].
#[derive(Clone)]
pub(crate) struct Asker {
    ask: Arc<Ask>,
    asked: Arc<tokio::sync::Mutex<u32>>,
}

impl Asker {
    pub(crate) fn new(ask: impl Fn(ElicitRequestParams) -> Asked + Send + Sync + 'static) -> Self {
        Self {
            ask: Arc::new(ask),
            asked: Arc::default(),
        }
    }

    async fn ask(&self, request: ElicitRequestParams) -> Result<ElicitResult, rmcp::ErrorData> {
        let mut asked = self.asked.lock().await;
        if *asked >= MAX_ASKS_PER_CALL {
            return Err(rmcp::ErrorData::invalid_request(
                format!(
                    "this call has asked its person {MAX_ASKS_PER_CALL} times already; no more is asked"
                ),
                None,
            ));
        }
        *asked += 1;
        Ok((self.ask)(request).await)
    }
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
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let asker = {
            let routes = self.lock();
            match routes.as_slice() {
                [(_, Some(asker))] => Some(asker.clone()),
                _ => None,
            }
        };
        if let Some(asker) = asker {
            return asker.ask(request).await;
        }
        tracing::debug!(
            "an MCP server asked for input, but not during a single call of its own whose caller can be asked"
        );
        Err(rmcp::ErrorData::invalid_request(
            "no person can be asked: the call this request belongs to has no client that can answer it (or several of this server's calls are out, and the request does not say whose it is)",
            None,
        ))
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
