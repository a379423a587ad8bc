//! The gateway's door, before any MCP message is handled: the protected
//! resource metadata (RFC 9728), the bearer token on every request (401
//! with a challenge that points at the metadata), a step-up 403 naming
//! every scope a call needs, per-principal limits (requests per minute,
//! requests at once, sessions, calls waiting for a person), and sessions
//! bound to the principal that opened them.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use hyper::StatusCode;
use hyper::header::{HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use iris_runtime::SharedRegistry;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::audit::{AuditEntry, AuditLog, millis};
use super::config::{GatewayAuth, url_of};
use super::principal::{Principal, PrincipalKey};
use super::rules::{Grant, judge};
use super::verify::{Rejected, Verifier};

/// The well-known prefix of protected resource metadata (RFC 9728).
const METADATA_PREFIX: &str = "/.well-known/oauth-protected-resource";

/// A refusal at the door: the status, the challenge (for 401 and 403), and
/// the text the caller reads.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) challenge: Option<String>,
    pub(crate) message: String,
    pub(crate) retry_after: Option<u64>,
}

/// A request let in: its principal, and its place among the principal's
/// requests in flight (released when the request ends).
pub(crate) struct Admitted {
    pub(crate) principal: Principal,
    pub(crate) _place: OwnedSemaphorePermit,
}

/// The door of one server.
pub(crate) struct Gate {
    pub(crate) auth: GatewayAuth,
    verifier: Verifier,
    registry: SharedRegistry,
    metadata: Vec<u8>,
    metadata_url: String,
    metadata_path: String,
    scope_hint: String,
    rate: DefaultKeyedRateLimiter<PrincipalKey>,
    in_flight: Mutex<HashMap<PrincipalKey, Arc<Semaphore>>>,
    /// Each open MCP session's principal.
    sessions: Mutex<HashMap<String, PrincipalKey>>,
    /// Calls of each principal waiting for a person.
    waiting: Mutex<HashMap<PrincipalKey, usize>>,
    pub(crate) audit: Option<AuditLog>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("audience", &self.auth.audience)
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// The door `auth` describes, for a server named `name`.
    ///
    /// # Errors
    /// Every problem of the configuration, or an audit log that cannot be
    /// opened.
    pub(crate) fn new(
        auth: GatewayAuth,
        name: &str,
        registry: SharedRegistry,
    ) -> Result<Self, String> {
        let problems = auth.check();
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let audience = url_of(&auth.audience)
            .ok_or_else(|| format!("auth.audience `{}` is not a URI", auth.audience))?;
        let resource_path = audience.path().trim_end_matches('/');
        let metadata_path = format!("{METADATA_PREFIX}{resource_path}");
        let mut origin = audience.clone();
        origin.set_path(&metadata_path);
        origin.set_query(None);
        let metadata_url = origin.to_string();
        let scopes = auth.advertised_scopes();
        let metadata = serde_json::to_vec(&serde_json::json!({
            "resource": auth.audience,
            "authorization_servers": auth.issuers.iter().map(|i| &i.issuer).collect::<Vec<_>>(),
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        }))
        .map_err(|e| format!("the resource metadata could not be written: {e}"))?;
        let per_minute =
            NonZeroU32::new(auth.limits.requests_per_minute).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new((auth.limits.requests_per_minute / 10).max(1))
            .unwrap_or(NonZeroU32::MIN);
        let rate = RateLimiter::keyed(Quota::per_minute(per_minute).allow_burst(burst));
        let audit = auth.audit.clone().map(AuditLog::open).transpose()?;
        Ok(Self {
            verifier: Verifier::new(&auth)?,
            scope_hint: scopes.join(" "),
            auth,
            registry,
            metadata,
            metadata_url,
            metadata_path,
            rate,
            in_flight: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            audit,
        })
    }

    /// The metadata document, when `path` asks for it (at the path the
    /// audience's path gives, or at the bare well-known path).
    pub(crate) fn metadata_for(&self, path: &str) -> Option<&[u8]> {
        (path == self.metadata_path || path == METADATA_PREFIX).then_some(&self.metadata)
    }

    /// Lets a request in, or says why not: a bearer token from the
    /// `Authorization` header only, checked; the principal's rate and
    /// requests at once; a session only by the principal that opened it.
    pub(crate) async fn admit(
        &self,
        parts: &hyper::http::request::Parts,
    ) -> Result<Admitted, Refusal> {
        let started = Instant::now();
        if parts
            .uri
            .query()
            .is_some_and(|q| q.split('&').any(|pair| pair.starts_with("access_token=")))
        {
            return Err(self.refused_401(
                Some("invalid_request"),
                "a token in the URL is never accepted (URLs are logged and cached); send it in the Authorization header as `Bearer <token>`",
                started,
            ));
        }
        let Some(token) = bearer(&parts.headers) else {
            return Err(self.refused_401(
                None,
                "this server needs a bearer token in the Authorization header; get one from the authorization server the metadata names",
                started,
            ));
        };
        let principal = match self.verifier.verify(token).await {
            Ok(principal) => principal,
            Err(Rejected(why)) => {
                return Err(self.refused_401(Some("invalid_token"), &why, started));
            }
        };
        let key = principal.key().clone();
        if let Some(session) = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            let owner = self.lock_sessions().get(session).cloned();
            if owner.is_some_and(|owner| owner != key) {
                // Told as a session that does not exist: another
                // principal's session is not even confirmed.
                self.log_refusal(Some(&principal), "foreign_session", "404", started);
                return Err(Refusal {
                    status: StatusCode::NOT_FOUND,
                    challenge: None,
                    message: "no such session; start one with `initialize`".to_owned(),
                    retry_after: None,
                });
            }
        }
        if self.rate.len() > MAX_TRACKED_PRINCIPALS {
            // Principals whose buckets are full again hold no state.
            self.rate.retain_recent();
        }
        if let Err(not_until) = self.rate.check_key(&key) {
            let wait = not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ));
            self.log_refusal(Some(&principal), "limited", "429", started);
            return Err(Refusal {
                status: StatusCode::TOO_MANY_REQUESTS,
                challenge: None,
                message: format!(
                    "more than {} requests a minute; wait and try again",
                    self.auth.limits.requests_per_minute
                ),
                retry_after: Some(wait.as_secs().max(1)),
            });
        }
        let places =
            {
                let mut in_flight = self
                    .in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if in_flight.len() > MAX_TRACKED_PRINCIPALS {
                    // Principals with nothing in flight hold no state.
                    let limit = self.auth.limits.concurrent_requests;
                    in_flight.retain(|_, s| s.available_permits() < limit);
                }
                Arc::clone(in_flight.entry(key).or_insert_with(|| {
                    Arc::new(Semaphore::new(self.auth.limits.concurrent_requests))
                }))
            };
        let Ok(place) = places.try_acquire_owned() else {
            self.log_refusal(Some(&principal), "limited", "429", started);
            return Err(Refusal {
                status: StatusCode::TOO_MANY_REQUESTS,
                challenge: None,
                message: format!(
                    "{} of your requests are being handled already; wait for one to end",
                    self.auth.limits.concurrent_requests
                ),
                retry_after: Some(1),
            });
        };
        Ok(Admitted {
            principal,
            _place: place,
        })
    }

    /// The 403 for a `tools/call` of `tool` that a rule would grant with
    /// more scopes (every scope that rule needs, at once); `None` lets the
    /// call on (granted, or hidden: then it is answered as unknown).
    pub(crate) fn step_up(&self, principal: &Principal, tool: &str) -> Option<Refusal> {
        let registry = self.registry.peek();
        let definition = registry.resolve(tool)?.definition_dyn();
        let Grant::NeedsScopes(scopes) = judge(&self.auth.rules, principal, definition) else {
            return None;
        };
        let scope = scopes.join(" ");
        self.log(&AuditEntry {
            principal: Some(principal.key().as_str()),
            client: principal.client(),
            method: Some("tools/call"),
            tool: Some(tool),
            rule_decision: "needs_scopes",
            rule: None,
            policy_decision: None,
            outcome: "403",
            duration_ms: 0,
            arguments: None,
        });
        Some(Refusal {
            status: StatusCode::FORBIDDEN,
            challenge: Some(format!(
                "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}\", error_description=\"`{}` needs the scopes {scope}\"",
                self.metadata_url,
                iris_runtime::__wings::shorten(tool),
            )),
            message: format!(
                "`{}` needs the scopes `{scope}`; ask the authorization server for a token with them",
                iris_runtime::__wings::shorten(tool)
            ),
            retry_after: None,
        })
    }

    /// The verdict on `definition` for `principal`.
    pub(crate) fn grant(
        &self,
        principal: &Principal,
        definition: &iris_core::ToolDefinition,
    ) -> Grant {
        judge(&self.auth.rules, principal, definition)
    }

    /// Whether `principal` may open one more session (its open sessions,
    /// counted among those `alive` still holds).
    pub(crate) fn may_open_session(
        &self,
        principal: &Principal,
        alive: impl Fn(&str) -> bool,
    ) -> bool {
        let mut sessions = self.lock_sessions();
        sessions.retain(|id, _| alive(id));
        let open = sessions.values().filter(|k| *k == principal.key()).count();
        open < self.auth.limits.sessions
    }

    /// Binds session `id` to `principal`.
    pub(crate) fn bind_session(&self, id: &str, principal: &Principal) {
        self.lock_sessions()
            .insert(id.to_owned(), principal.key().clone());
    }

    /// Forgets session `id`.
    pub(crate) fn forget_session(&self, id: &str) {
        self.lock_sessions().remove(id);
    }

    /// Takes one of `principal`'s places for a call waiting on a person;
    /// `None` when all are taken.
    pub(crate) fn start_waiting(self: &Arc<Self>, principal: &Principal) -> Option<WaitingPlace> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let count = waiting.entry(principal.key().clone()).or_insert(0);
        if *count >= self.auth.limits.pending_approvals {
            return None;
        }
        *count += 1;
        Some(WaitingPlace {
            gate: Arc::clone(self),
            key: principal.key().clone(),
        })
    }

    /// Writes `entry` to the audit log, when there is one.
    pub(crate) fn log(&self, entry: &AuditEntry<'_>) {
        if let Some(audit) = &self.audit {
            audit.write(entry);
        }
    }

    fn log_refusal(
        &self,
        principal: Option<&Principal>,
        decision: &str,
        outcome: &str,
        started: Instant,
    ) {
        self.log(&AuditEntry {
            principal: principal.map(|p| p.key().as_str()),
            client: principal.and_then(Principal::client),
            method: None,
            tool: None,
            rule_decision: decision,
            rule: None,
            policy_decision: None,
            outcome,
            duration_ms: millis(started.elapsed()),
            arguments: None,
        });
    }

    fn refused_401(&self, error: Option<&str>, why: &str, started: Instant) -> Refusal {
        self.log_refusal(None, "unauthenticated", "401", started);
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.scope_hint.is_empty() {
            let _ = write!(challenge, ", scope=\"{}\"", self.scope_hint);
        }
        if let Some(error) = error {
            let description: String = why.chars().filter(|c| *c != '"' && *c != '\\').collect();
            let _ = write!(
                challenge,
                ", error=\"{error}\", error_description=\"{description}\""
            );
        }
        Refusal {
            status: StatusCode::UNAUTHORIZED,
            challenge: Some(challenge),
            message: why.to_owned(),
            retry_after: None,
        }
    }

    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, PrincipalKey>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One of a principal's places for calls waiting on a person, given back
/// when dropped.
pub(crate) struct WaitingPlace {
    gate: Arc<Gate>,
    key: PrincipalKey,
}

impl Drop for WaitingPlace {
    fn drop(&mut self) {
        let mut waiting = self
            .gate
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = waiting.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                waiting.remove(&self.key);
            }
        }
    }
}

/// Principals tracked for requests in flight before idle ones are dropped.
const MAX_TRACKED_PRINCIPALS: usize = 4_096;

/// The header that names a request's session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The bearer token of the `Authorization` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(hyper::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl Refusal {
    /// The refusal as an HTTP response's status, headers and body.
    pub(crate) fn headers(&self) -> Vec<(hyper::header::HeaderName, HeaderValue)> {
        let mut headers = Vec::new();
        if let Some(challenge) = &self.challenge
            && let Ok(value) = HeaderValue::from_str(challenge)
        {
            headers.push((WWW_AUTHENTICATE, value));
        }
        if let Some(seconds) = self.retry_after {
            headers.push((hyper::header::RETRY_AFTER, HeaderValue::from(seconds)));
        }
        headers
    }
}
