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

use super::audit::{AuditEntry, AuditLog, address_in, millis};
use super::config::{GatewayAuth, url_of};
use super::principal::{Principal, PrincipalKey};
use super::rules::{Grant, judge};
use super::strangers::Strangers;
use super::verify::{Rejected, Unchecked, Verifier};

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
    /// Sessions alive per principal key, counted from when the MCP service
    /// made each (a session whose opener hung up is still its opener's).
    held_sessions: Mutex<HashMap<Arc<str>, usize>>,
    /// Calls of each principal waiting for a person.
    waiting: Mutex<HashMap<PrincipalKey, usize>>,
    /// Callers with no valid token: their failed checks and refusals.
    strangers: Strangers,
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
            held_sessions: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            strangers: Strangers::new(),
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
        let address = address_in(&parts.extensions);
        if parts
            .uri
            .query()
            .is_some_and(|q| q.split('&').any(|pair| pair.starts_with("access_token=")))
        {
            return Err(self.refused_401(
                Some("invalid_request"),
                "a token in the URL is never accepted (URLs are logged and cached); send it in the Authorization header as `Bearer <token>`",
                address,
                started,
            ));
        }
        let Some(token) = bearer(&parts.headers) else {
            return Err(self.refused_401(
                None,
                "this server needs a bearer token in the Authorization header; get one from the authorization server the metadata names",
                address,
                started,
            ));
        };
        let principal = self.check_token(token, address, started).await?;
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
                self.log_refusal(Some(&principal), address, "foreign_session", "404", started);
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
            self.log_refusal(Some(&principal), address, "limited", "429", started);
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
            self.log_refusal(Some(&principal), address, "limited", "429", started);
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

    /// The principal `token` vouches for, or the refusal: an opaque token
    /// is asked of its issuer only while `address` may make the server ask.
    async fn check_token(
        &self,
        token: &str,
        address: Option<std::net::IpAddr>,
        started: Instant,
    ) -> Result<Principal, Refusal> {
        let may_ask = self.strangers.may_ask_issuer(address);
        match self.verifier.verify(token, may_ask.is_ok()).await {
            Ok(principal) => Ok(principal),
            Err(Unchecked::Rejected(Rejected(why))) => {
                // Only opaque tokens can cost an issuer a question: junk
                // JWTs (checked here) never bar an address others share.
                if token.split('.').count() != 3 {
                    self.strangers.failed(address);
                }
                Err(self.refused_401(Some("invalid_token"), &why, address, started))
            }
            Err(Unchecked::NotAsked) => {
                self.log_refusal(None, address, "limited", "429", started);
                Err(Refusal {
                    status: StatusCode::TOO_MANY_REQUESTS,
                    challenge: None,
                    message: "too many tokens that were not valid came from this address lately; opaque tokens not seen before are not checked with their issuer for now (tokens already let in still are): wait and try again".to_owned(),
                    retry_after: may_ask.err(),
                })
            }
            Err(Unchecked::Busy) => {
                self.log_refusal(None, address, "limited", "429", started);
                Err(Refusal {
                    status: StatusCode::TOO_MANY_REQUESTS,
                    challenge: None,
                    message: "the token's issuer is being asked about many tokens at once; try again in a moment".to_owned(),
                    retry_after: Some(1),
                })
            }
        }
    }

    /// The 403 for a `tools/call` of `tool` that a rule would grant with
    /// more scopes (every scope that rule needs, at once); `None` lets the
    /// call on (granted, or hidden: then it is answered as unknown).
    pub(crate) fn step_up(
        &self,
        principal: &Principal,
        address: Option<std::net::IpAddr>,
        tool: &str,
    ) -> Option<Refusal> {
        let registry = self.registry.peek();
        let definition = registry.resolve(tool)?.definition_dyn();
        let Grant::NeedsScopes(scopes) = judge(&self.auth.rules, principal, definition) else {
            return None;
        };
        let scope = scopes.join(" ");
        self.log(&AuditEntry {
            method: Some("tools/call"),
            tool: Some(tool),
            rule_decision: "needs_scopes",
            outcome: "403",
            ..AuditEntry::by(Some(principal), address)
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

    /// Whether the principal keyed `key` may hold one more session, or
    /// why not: past its own limit, or, on a server at least half full of
    /// its `capacity` (`live` sessions now), past its share (the capacity
    /// over the principals holding sessions, and one more who may come),
    /// so that many callers cannot shut a newcomer out and no one caller
    /// takes more than its share. With `take`, the session is counted at
    /// once, under the same lock (concurrent opens cannot all pass), until
    /// [`Gate::session_closed`].
    pub(crate) fn session_verdict(
        &self,
        key: &str,
        capacity: usize,
        live: usize,
        take: bool,
    ) -> Result<(), String> {
        let mut held = self
            .held_sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let open = held.get(key).copied().unwrap_or(0);
        if open >= self.auth.limits.sessions {
            return Err(format!(
                "this caller holds its maximum of {} MCP sessions; end one (DELETE its session) first",
                self.auth.limits.sessions
            ));
        }
        if live * 2 >= capacity {
            let holders = held.len() + usize::from(open == 0);
            let share = (capacity / (holders + 1)).max(1);
            if open >= share {
                return Err(format!(
                    "the server is crowded and this caller holds its share of {share} MCP sessions; end one (DELETE its session) first"
                ));
            }
        }
        if take {
            *held.entry(Arc::from(key)).or_insert(0) += 1;
        }
        Ok(())
    }

    /// A session of the principal keyed `key` ended.
    pub(crate) fn session_closed(&self, key: &str) {
        let mut held = self
            .held_sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(key);
            }
        }
    }

    /// Binds session `id` to `principal`.
    pub(crate) fn bind_session(
        &self,
        id: &str,
        principal: &Principal,
        alive: impl Fn(&str) -> bool,
    ) {
        let mut sessions = self.lock_sessions();
        sessions.retain(|id, _| alive(id));
        sessions.insert(id.to_owned(), principal.key().clone());
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

    /// Writes `entry` to the audit log, when there is one (after the
    /// summary of anonymous refusals, when one is due).
    pub(crate) fn log(&self, entry: &AuditEntry<'_>) {
        if let Some(audit) = &self.audit {
            self.strangers.summarise(audit, false);
            audit.write(entry);
        }
    }

    /// Audits a refusal at the door (no valid token, a limit, another's
    /// session) or of the MCP service (a `Host` or `Origin` not served:
    /// 403): up to a few a minute one by one, the rest counted and
    /// summarised, so that refusals, which cost a caller nothing to
    /// provoke, never push a decision out of the log.
    pub(crate) fn log_refusal(
        &self,
        principal: Option<&Principal>,
        address: Option<std::net::IpAddr>,
        decision: &str,
        outcome: &str,
        started: Instant,
    ) {
        if let Some(audit) = &self.audit
            && !self.strangers.audit_in_full(address, audit)
        {
            return;
        }
        self.log(&AuditEntry {
            rule_decision: decision,
            outcome,
            duration_ms: millis(started.elapsed()),
            ..AuditEntry::by(principal, address)
        });
    }

    fn refused_401(
        &self,
        error: Option<&str>,
        why: &str,
        address: Option<std::net::IpAddr>,
        started: Instant,
    ) -> Refusal {
        self.log_refusal(None, address, "unauthenticated", "401", started);
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

impl Drop for Gate {
    /// The anonymous refusals counted since the last summary are not lost
    /// when the server stops.
    fn drop(&mut self) {
        if let Some(audit) = &self.audit {
            self.strangers.summarise(audit, true);
        }
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
