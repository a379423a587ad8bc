//! Calls of a server of the 2025 revisions whose caller has no session.
//!
//! Such a server asks for input with a request of its own while its call
//! runs (`elicitation/create`, `sampling/createMessage`). A caller of the
//! 2026-07-28 revision has no session to be asked in: its call must end,
//! with the request, before it can answer. So the call is parked: it goes
//! on in a task of its own, holding the server's request open, and the
//! caller is handed the request (under the key `elicitation` or
//! `sampling`). The state the gateway seals around the hand-over names the
//! parked call; the caller's next call brings the answer, which goes to
//! the server's request, and waits for what the server says next: its
//! result, or another request.
//!
//! A parked call is found only by the id in a state sealed for that very
//! caller, tool and arguments, and only once. It waits at most as long as
//! that state lives (ten minutes); then it is
//! given up on: the server's request is answered as cancelled (a form) or
//! refused (a sampling), and a call still waiting then is cancelled. At most
//! [`MAX_PARKED_PER_OWNER`] calls of one caller and [`MAX_PARKED`] calls of
//! one server wait at once; past that, the server is told nobody can be
//! asked. Parked calls live in this process: after a restart, an answer to
//! one is refused with a message that says so.

#![allow(
    deprecated,
    reason = "sampling is part of the 2025 revisions whose requests are parked (deprecated by SEP-2577 from 2026-07-28 on)"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult,
    ElicitationAction, InputRequest, ServerResult,
};
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::elicitation::Asker;

/// Most parked calls one caller may have at once.
pub(super) const MAX_PARKED_PER_OWNER: usize = 8;

/// Most parked calls of one server at once.
pub(super) const MAX_PARKED: usize = 256;

/// The key a form is handed over under.
pub(super) const FORM_KEY: &str = "elicitation";

/// The key a sampling is handed over under.
pub(super) const SAMPLING_KEY: &str = "sampling";

/// A request the server sent while the call runs, and where its answer
/// goes (the caller's answer as JSON; `Null` when it gave none).
pub(super) struct Asked {
    pub(super) request: InputRequest,
    pub(super) answer: oneshot::Sender<Value>,
}

impl Asked {
    /// The key the request is handed over under.
    pub(super) fn key(&self) -> &'static str {
        match self.request {
            InputRequest::CreateMessage(_) => SAMPLING_KEY,
            _ => FORM_KEY,
        }
    }
}

/// A call in flight on a task of its own, given up on when dropped: its
/// task is aborted, which drops the request and tells the server the call
/// is cancelled.
pub(super) struct InFlight(JoinHandle<Result<ServerResult, ServiceError>>);

impl InFlight {
    /// Runs `call` on a task of its own.
    pub(super) fn spawn(
        call: impl Future<Output = Result<ServerResult, ServiceError>> + Send + 'static,
    ) -> Self {
        Self(tokio::spawn(call))
    }
}

impl Future for InFlight {
    type Output = Result<Result<ServerResult, ServiceError>, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A call waiting for its caller's answer.
pub(super) struct Parked {
    pub(super) call: InFlight,
    /// The server's open request.
    pub(super) answer: oneshot::Sender<Value>,
    /// The server's next requests during the call.
    pub(super) asks: mpsc::UnboundedReceiver<Asked>,
    owner: Option<String>,
    until: Instant,
}

/// One server's parked calls, by id.
#[derive(Default)]
pub(super) struct ParkedCalls(Arc<Mutex<HashMap<String, Parked>>>);

impl std::fmt::Debug for ParkedCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkedCalls")
            .field("parked", &self.lock().len())
            .finish()
    }
}

impl ParkedCalls {
    /// Parks `call` (waiting on `asked`) for `owner`: its id, or why it
    /// cannot wait (then the server's request is refused and the call
    /// given up on).
    pub(super) fn park(
        &self,
        call: InFlight,
        asked: Asked,
        asks: mpsc::UnboundedReceiver<Asked>,
        owner: Option<&str>,
    ) -> Result<String, String> {
        let mut parked = self.lock();
        sweep(&mut parked);
        // A caller that is not known (no gateway in front, `--no-auth`)
        // has no share of its own: only the server's limit holds.
        let owners = owner.map_or(0, |owner| {
            parked
                .values()
                .filter(|p| p.owner.as_deref() == Some(owner))
                .count()
        });
        let full = if owners >= MAX_PARKED_PER_OWNER {
            Some(format!(
                "{MAX_PARKED_PER_OWNER} calls of this caller wait for its answers already"
            ))
        } else if parked.len() >= MAX_PARKED {
            Some(format!(
                "{MAX_PARKED} calls of this server wait for answers already"
            ))
        } else {
            None
        };
        let id = match full {
            Some(why) => Err(why),
            None => new_id(),
        };
        let Ok(id) = id else {
            return id;
        };
        // Given up on when its time is over, whether or not more calls
        // come to sweep it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (parked, id) = (Arc::downgrade(&self.0), id.clone());
            runtime.spawn(async move {
                tokio::time::sleep(crate::server::rounds::ROUND_TTL).await;
                if let Some(parked) = parked.upgrade() {
                    parked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                }
            });
        }
        parked.insert(
            id.clone(),
            Parked {
                call,
                answer: asked.answer,
                asks,
                owner: owner.map(str::to_owned),
                until: Instant::now() + crate::server::rounds::ROUND_TTL,
            },
        );
        Ok(id)
    }

    /// The parked call `id` of `owner`, taken (each is answered once),
    /// while it has not expired.
    pub(super) fn take(&self, id: &str, owner: Option<&str>) -> Option<Parked> {
        let mut parked = self.lock();
        sweep(&mut parked);
        if parked.get(id)?.owner.as_deref() != owner {
            return None;
        }
        parked.remove(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Gives up on the calls that waited too long: the server is told each
/// is cancelled.
fn sweep(parked: &mut HashMap<String, Parked>) {
    let now = Instant::now();
    parked.retain(|_, p| now < p.until);
}

/// 128 random bits, as hex.
fn new_id() -> Result<String, String> {
    let mut id = [0_u8; 16];
    getrandom::fill(&mut id).map_err(|e| format!("no id could be made: {e}"))?;
    Ok(iris_runtime::__wings::hex(&id))
}

/// An asker that puts the server's requests into `asks`, for a caller
/// that can answer what `can` says: the answer comes back through the
/// request's channel, in the caller's next call. A sampling the caller
/// cannot answer goes to `model` (the agent's, when the operator allows
/// it) instead.
pub(super) fn parking(
    asks: &mpsc::UnboundedSender<Asked>,
    can: &ClientCapabilities,
    model: Option<&crate::sampling::SamplingModel>,
    audit: Option<&std::sync::Arc<crate::elicitation::Audit>>,
) -> Asker {
    let opens_urls = can
        .elicitation
        .as_ref()
        .is_some_and(|elicits| elicits.url.is_some());
    let mut asker = Asker::default().opening_urls(opens_urls);
    if let Some(audit) = audit {
        asker = asker.auditing(std::sync::Arc::clone(audit));
    }
    if let Some(model) = model.filter(|_| can.sampling.is_none()) {
        let (model, audit) = (model.clone(), audit.cloned());
        asker = asker.sampling(move |params| {
            let (model, audit) = (model.clone(), audit.clone());
            Box::pin(async move {
                let started = Instant::now();
                let answer = model.sample(&params).await;
                crate::elicitation::audit_sampled(audit.as_deref(), started, answer.is_ok());
                answer
            })
        });
    }
    if can.elicitation.is_some() {
        let asks = asks.clone();
        asker = asker.eliciting(move |params| {
            let (answer, answered) = oneshot::channel();
            let sent = asks.send(Asked {
                request: InputRequest::Elicitation(ElicitRequest::new(params)),
                answer,
            });
            Box::pin(async move {
                let cancel = ElicitResult::new(ElicitationAction::Cancel);
                if sent.is_err() {
                    return cancel;
                }
                match tokio::time::timeout(crate::server::rounds::ROUND_TTL, answered).await {
                    Ok(Ok(value)) => serde_json::from_value(value).unwrap_or_else(|error| {
                        tracing::debug!(%error, "a caller's answer to a form is not one; read as cancelled");
                        cancel
                    }),
                    // Not answered in time, or given up on.
                    _ => cancel,
                }
            })
        });
    }
    if can.sampling.is_some() {
        let asks = asks.clone();
        asker = asker.sampling(move |params| {
            let (answer, answered) = oneshot::channel();
            let sent = asks.send(Asked {
                request: InputRequest::CreateMessage(CreateMessageRequest::new(params)),
                answer,
            });
            Box::pin(async move {
                let nobody = || ErrorData::invalid_request("the caller did not answer", None);
                if sent.is_err() {
                    return Err(nobody());
                }
                let value = tokio::time::timeout(crate::server::rounds::ROUND_TTL, answered)
                    .await
                    .map_err(|_| nobody())?
                    .map_err(|_| nobody())?;
                serde_json::from_value::<CreateMessageResult>(value).map_err(|error| {
                    ErrorData::invalid_params(
                        format!("the caller's answer is not a sampling result: {error}"),
                        None,
                    )
                })
            })
        });
    }
    asker
}
