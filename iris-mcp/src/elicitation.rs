//! A caller asked on an upstream server's behalf. A server behind the
//! gateway may ask for input while one of its tools runs (`elicitation/
//! create`) or ask for its client's model (`sampling/createMessage`); the
//! gateway's client passes the request on to the caller behind the call
//! that is running: the serving side puts an [`Asker`] in the call's
//! context, the remote tool routes its server's requests to it while its
//! call is out, and the client answers through it. Over HTTP a request
//! comes on the response stream of the call it belongs to, which says
//! whose it is; over stdio it says nothing, so it goes to the only call of
//! that server out. A request with no call to route it to (or, over stdio,
//! while several calls of that server are out) is answered with an error
//! saying nobody can be asked: a caller is never asked on behalf of someone
//! else's call, and a person never said to have declined what they were
//! not asked.
#![allow(
    deprecated,
    reason = "sampling is part of the 2025 revisions this gateway relays (deprecated by SEP-2577 from 2026-07-28 on)"
)]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, RequestId,
};
use tokio_util::sync::CancellationToken;

/// A future that lives on its own.
pub(crate) type Asked = std::pin::Pin<Box<dyn Future<Output = ElicitResult> + Send>>;

/// A sampling answer that lives on its own.
pub(crate) type Sampled =
    std::pin::Pin<Box<dyn Future<Output = Result<CreateMessageResult, ErrorData>> + Send>>;

type Ask = dyn Fn(ElicitRequestParams) -> Asked + Send + Sync;

type Sample = dyn Fn(CreateMessageRequestParams) -> Sampled + Send + Sync;

/// Writes an audit line: the method, the outcome, since when.
pub(crate) type Audit = dyn Fn(&str, &str, Instant) + Send + Sync;

/// Writes the audit line of a sampling the agent's model answered (or could
/// not), begun at `started`, when there is an audit.
pub(crate) fn audit_sampled(audit: Option<&Audit>, started: std::time::Instant, answered: bool) {
    if let Some(audit) = audit {
        let outcome = if answered { "model" } else { "model_error" };
        audit("sampling/createMessage", outcome, started);
    }
}

/// Most requests one call may put to its caller (forms and samplings
/// together): a server cannot bury the person in forms, nor spend the
/// caller's model at will.
pub(crate) const MAX_ASKS_PER_CALL: u32 = 8;

/// How long a call given up on (cancelled, or past its timeout) still
/// counts as out: its server may not have stopped, and a request it sends
/// meanwhile must not reach whoever calls next.
const ABANDONED_FOR: Duration = Duration::from_secs(5 * 60);

/// Puts a server's requests during a call to the caller behind it: forms
/// to its person, samplings to its model, each when its client can take
/// them; one at a time (another meanwhile is refused, never queued), at
/// most [`MAX_ASKS_PER_CALL`], and none once the call has ended (one
/// still open is cancelled then).
#[derive(Clone, Default)]
pub(crate) struct Asker {
    ask: Option<Arc<Ask>>,
    /// Whether the caller opens URLs (URL-mode elicitation), not only
    /// fills forms.
    opens_urls: bool,
    sample: Option<Arc<Sample>>,
    audit: Option<Arc<Audit>>,
    asked: Arc<AtomicU32>,
    busy: Arc<AtomicBool>,
    ended: CancellationToken,
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

    /// Counts the call's requests in `asked`, shared with the other askers
    /// of the same call (a call of several rounds has one a round).
    #[must_use]
    pub(crate) fn counting_in(mut self, asked: Arc<AtomicU32>) -> Self {
        self.asked = asked;
        self
    }

    /// Says whether the caller opens URLs it is asked to (URL-mode
    /// elicitation); a caller that only fills forms is never sent one.
    #[must_use]
    pub(crate) fn opening_urls(mut self, opens: bool) -> Self {
        self.opens_urls = opens;
        self
    }

    /// Audits what is answered on the caller's behalf (by the agent's
    /// model) through `audit`.
    #[must_use]
    pub(crate) fn auditing(mut self, audit: Arc<Audit>) -> Self {
        self.audit = Some(audit);
        self
    }

    /// What the caller can be asked: forms, samplings.
    pub(crate) fn can(&self) -> rmcp::model::ClientCapabilities {
        let mut can = rmcp::model::ClientCapabilities::default();
        if self.ask.is_some() {
            let mut elicits = rmcp::model::ElicitationCapability::default();
            if self.opens_urls {
                elicits.url = Some(rmcp::model::UrlElicitationCapability::default());
            }
            can.elicitation = Some(elicits);
        }
        if self.sample.is_some() {
            can.sampling = Some(rmcp::model::SamplingCapability::default());
        }
        can
    }

    /// Takes the call's one place for a request, or says why not: at once,
    /// so that nothing waits for it.
    fn take_place(&self) -> Result<Place<'_>, ErrorData> {
        if self.ended.is_cancelled() {
            return Err(nobody("caller"));
        }
        if self
            .asked
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_ASKS_PER_CALL).then_some(n + 1)
            })
            .is_err()
        {
            return Err(ErrorData::invalid_request(
                format!(
                    "this call has asked its caller {MAX_ASKS_PER_CALL} times already; no more is asked"
                ),
                None,
            ));
        }
        if self.busy.swap(true, Ordering::SeqCst) {
            return Err(ErrorData::invalid_request(
                "this call's caller is answering another request; send one at a time",
                None,
            ));
        }
        Ok(Place(&self.busy))
    }

    /// The person's answer to a form, or why nobody can be asked.
    pub(crate) async fn ask(
        &self,
        request: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(ask) = &self.ask else {
            return Err(nobody("person"));
        };
        if matches!(request, ElicitRequestParams::UrlElicitationParams { .. }) && !self.opens_urls {
            return Err(ErrorData::invalid_request(
                "the caller did not say it opens URLs (URL-mode elicitation); it can be asked forms only",
                None,
            ));
        }
        let _place = self.take_place()?;
        tokio::select! {
            answer = ask(request) => Ok(answer),
            () = self.ended.cancelled() => Ok(ElicitResult::new(ElicitationAction::Cancel)),
        }
    }

    /// The caller's model's answer, or, when the caller cannot sample, the
    /// answer of `fallback` (the agent's model, when the operator allows
    /// it), counted among the call's requests; or why nobody can answer.
    pub(crate) async fn sample_or(
        &self,
        request: CreateMessageRequestParams,
        fallback: Option<&crate::sampling::SamplingModel>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(fallback) = fallback.filter(|_| self.sample.is_none()) else {
            return self.sample(request).await;
        };
        let _place = self.take_place()?;
        let started = Instant::now();
        let answer = tokio::select! {
            answer = fallback.sample(&request) => answer,
            () = self.ended.cancelled() => Err(nobody("caller")),
        };
        audit_sampled(self.audit.as_deref(), started, answer.is_ok());
        answer
    }

    /// `fallback`'s answer (the server may not ask the caller), counted
    /// among the call's requests; or why nobody can answer.
    pub(crate) async fn sample_with(
        &self,
        request: CreateMessageRequestParams,
        fallback: Option<&crate::sampling::SamplingModel>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(fallback) = fallback else {
            return Err(nobody("model"));
        };
        let model_only = Self {
            sample: None,
            ..self.clone()
        };
        model_only.sample_or(request, Some(fallback)).await
    }

    /// The caller's model's answer, or why it cannot be asked.
    pub(crate) async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sample) = &self.sample else {
            return Err(nobody("model"));
        };
        let _place = self.take_place()?;
        tokio::select! {
            answer = sample(request) => answer,
            () = self.ended.cancelled() => Err(nobody("caller")),
        }
    }
}

/// The call's place for a request, given back when it is answered.
struct Place<'a>(&'a AtomicBool);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The error a server meets when nobody behind the call can take its
/// request.
fn nobody(what: &str) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "no {what} can be asked: the call this request belongs to has no client that can answer it, has ended, or is not the only call of this server out (the request does not say whose it is)"
        ),
        None,
    )
}

/// A call of one server that counts as out: its asker when its caller can
/// be asked, the requests it sent (by session and id: ids start again with
/// each session), or, given up on, until when it still counts.
struct Out {
    id: u64,
    asker: Option<Asker>,
    sent: Vec<(u64, RequestId)>,
    abandoned_until: Option<Instant>,
}

/// Where a server's request came from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin<'a> {
    /// The response stream of the request `id` of the session `session`
    /// (over HTTP): the call that sent it.
    Stream { session: u64, id: &'a RequestId },
    /// A stream tied to no request of Iris's (over HTTP): no call.
    Unassociated,
    /// A transport that does not say (stdio): the only call out, if one.
    Unknown,
}

/// One server's calls that are out.
#[derive(Default)]
pub(crate) struct Routes {
    next: AtomicU64,
    sessions: AtomicU64,
    calls: Mutex<Vec<Out>>,
}

impl Routes {
    /// A number for a new session with the server, that the ids of its
    /// requests are told apart by.
    pub(crate) fn next_session(&self) -> u64 {
        self.sessions.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts a call out until the guard is dropped, routing the server's
    /// requests to its `asker` meanwhile (when it is the only call out).
    /// A guard dropped before [`Route::answered`] leaves the call counted
    /// as out for [`ABANDONED_FOR`], with nobody to ask.
    pub(crate) fn route(self: &Arc<Self>, asker: Option<Asker>) -> Route {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push(Out {
            id,
            asker,
            sent: Vec::new(),
            abandoned_until: None,
        });
        Route {
            routes: Arc::clone(self),
            id,
            answered: false,
        }
    }

    /// The person's answer to `request`, when the call it belongs to can
    /// be told: the call whose request it came with (`origin`, the response
    /// stream of an HTTP request), or else the only call of the server out;
    /// and when that call's caller can be asked. Otherwise an error that
    /// says nobody can be.
    pub(crate) async fn ask(
        &self,
        request: ElicitRequestParams,
        origin: Origin<'_>,
    ) -> Result<ElicitResult, ErrorData> {
        match self.asker_of(origin) {
            Some(asker) => asker.ask(request).await,
            None => Err(nobody("person")),
        }
    }

    /// The caller's model's answer to `request` (sampling), on the same
    /// terms, or `fallback`'s when the caller cannot sample.
    pub(crate) async fn sample(
        &self,
        request: CreateMessageRequestParams,
        origin: Origin<'_>,
        fallback: Option<&crate::sampling::SamplingModel>,
        ask_caller: bool,
    ) -> Result<CreateMessageResult, ErrorData> {
        match self.asker_of(origin) {
            Some(asker) if ask_caller => asker.sample_or(request, fallback).await,
            Some(asker) => asker.sample_with(request, fallback).await,
            None => Err(nobody("model")),
        }
    }

    /// The asker of the call out that sent `origin` (none when that call
    /// was given up on, or is not out), or, with no origin, of the one
    /// call out, when there is exactly one; and only when its caller can
    /// be asked.
    fn asker_of(&self, origin: Origin<'_>) -> Option<Asker> {
        let mut routes = self.lock();
        let now = Instant::now();
        routes.retain(|out| out.abandoned_until.is_none_or(|until| now < until));
        match origin {
            Origin::Stream { session, id } => {
                let out = routes
                    .iter()
                    .find(|out| out.sent.iter().any(|(s, sent)| *s == session && sent == id));
                if out.is_none() {
                    tracing::debug!(
                        "an MCP server asked its client on the stream of a request that is not out"
                    );
                }
                return out.and_then(|out| out.asker.clone());
            }
            Origin::Unassociated => {
                tracing::debug!("an MCP server asked its client on a stream of no call");
                return None;
            }
            Origin::Unknown => {}
        }
        if let [
            Out {
                asker: Some(asker), ..
            },
        ] = routes.as_slice()
        {
            return Some(asker.clone());
        }
        tracing::debug!(
            "an MCP server asked its client, but not during a single call of its own whose caller can be asked"
        );
        None
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Out>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("calls_out", &self.lock().len())
            .finish()
    }
}

/// A call's route, ended when dropped: its asker asks no more (a request
/// still open is cancelled), and a call given up on before its answer
/// still counts as out for a while.
pub(crate) struct Route {
    routes: Arc<Routes>,
    id: u64,
    answered: bool,
}

impl Route {
    /// The call sent the request `id` (a call of several rounds sends one
    /// a round): the server's requests on its stream are this call's.
    pub(crate) fn sent(&self, session: u64, id: RequestId) {
        let mut routes = self.routes.lock();
        if let Some(out) = routes.iter_mut().find(|out| out.id == self.id) {
            out.sent.push((session, id));
        }
    }

    /// The server answered the call: it is no longer out once dropped.
    pub(crate) fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        let mut routes = self.routes.lock();
        let Some(at) = routes.iter().position(|out| out.id == self.id) else {
            return;
        };
        if let Some(asker) = routes[at].asker.take() {
            asker.ended.cancel();
        }
        if self.answered {
            routes.remove(at);
        } else {
            routes[at].abandoned_until = Some(Instant::now() + ABANDONED_FOR);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    fn filled() -> Asked {
        Box::pin(async { ElicitResult::new(ElicitationAction::Accept) })
    }

    fn open_url() -> ElicitRequestParams {
        serde_json::from_value(serde_json::json!({
            "mode": "url", "message": "Sign in", "url": "https://example.com/login", "elicitationId": "e1"
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_url_to_open_reaches_only_a_caller_that_opens_urls() {
        let forms_only = Asker::default().eliciting(|_| filled());
        let refused = forms_only.ask(open_url()).await.unwrap_err();
        assert!(refused.message.contains("opens URLs"), "{refused:?}");
        assert!(
            forms_only
                .can()
                .elicitation
                .is_some_and(|e| e.url.is_none())
        );
        let opens = Asker::default().eliciting(|_| filled()).opening_urls(true);
        assert_eq!(
            opens.ask(open_url()).await.unwrap().action,
            ElicitationAction::Accept
        );
    }
}
