//! Asking the person behind a stateless client (protocol 2026-07-28, no
//! session to send a request on): the call answers with an input request
//! (an elicitation form) and a sealed `requestState`, and the client calls
//! again with the person's answer and that state echoed. Nothing waits on
//! the server between the two rounds; the state carries what the second
//! round needs, sealed with an HMAC under a key of this process, bound to
//! the principal, the tool and a digest of its arguments, expiring after a
//! short while, and honoured once.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::upstream_input::Pending;

/// How long an input request may wait for its second round.
pub(crate) const ROUND_TTL: Duration = Duration::from_secs(10 * 60);

/// Most honoured states remembered (each until it expires).
const MAX_REMEMBERED: usize = 100_000;

/// Most honoured states of one principal remembered at once: one caller
/// answering fast cannot fill the memory that every caller's answers need.
const MAX_REMEMBERED_PER_PRINCIPAL: usize = 10_000;

/// The states honoured, until each expires, and how many are each
/// principal's.
#[derive(Default)]
struct Honoured {
    at: HashMap<String, (Instant, String)>,
    per_principal: HashMap<String, usize>,
}

impl Honoured {
    /// Forgets the states that have expired.
    fn sweep(&mut self) {
        let per_principal = &mut self.per_principal;
        self.at.retain(|_, (at, who)| {
            let keep = at.elapsed() < ROUND_TTL;
            if !keep && let Some(count) = per_principal.get_mut(who) {
                *count = count.saturating_sub(1);
            }
            keep
        });
        self.per_principal.retain(|_, count| *count > 0);
    }

    /// Marks `nonce` honoured for `who`, within `per_principal` of theirs;
    /// or says why not.
    fn honour(&mut self, nonce: String, who: &str, per_principal: usize) -> Result<(), String> {
        if self.at.contains_key(&nonce) {
            return Err("this requestState was used already; each answer counts once, so call again without it to be asked again".to_owned());
        }
        let full = |h: &Self| {
            h.at.len() >= MAX_REMEMBERED
                || h.per_principal.get(who).copied().unwrap_or(0) >= per_principal
        };
        if full(self) {
            self.sweep();
        }
        if self.per_principal.get(who).copied().unwrap_or(0) >= per_principal {
            return Err(
                "this caller has too many answers being checked at once; call again later"
                    .to_owned(),
            );
        }
        if self.at.len() >= MAX_REMEMBERED {
            return Err("too many answers are being checked at once; call again later".to_owned());
        }
        self.at.insert(nonce, (Instant::now(), who.to_owned()));
        *self.per_principal.entry(who.to_owned()).or_insert(0) += 1;
        Ok(())
    }
}

/// What an input request asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Asking {
    /// A person's approval of the call.
    Approval,
    /// The model's questions (`ask_question`).
    Questions,
    /// An upstream server's requests, relayed under its own keys.
    Upstream,
}

/// What a sealed state holds: what it asks, a nonce that makes it single
/// use, and, for an upstream's requests, what the next round sends it.
#[derive(Serialize, Deserialize)]
struct Sealed {
    asking: Asking,
    nonce: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    upstream: Option<Pending>,
}

/// A state the client sent back, opened: what it asked, and, for an
/// upstream's requests, what goes back to the upstream.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) asking: Asking,
    pub(crate) upstream: Option<Pending>,
}

/// The server's sealing key and the states already honoured.
pub(crate) struct Rounds {
    codec: RequestStateCodec,
    honoured: Mutex<Honoured>,
    /// Most honoured states of one principal remembered at once.
    per_principal: usize,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds").finish_non_exhaustive()
    }
}

impl Rounds {
    /// Rounds sealed under a fresh random key (so a state outlives neither
    /// the process nor a restart).
    pub(crate) fn new() -> Result<Self, String> {
        let mut key = [0_u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("no random key could be made: {e}"))?;
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(|e| e.to_string())?;
        Ok(Self {
            codec,
            honoured: Mutex::new(Honoured::default()),
            per_principal: MAX_REMEMBERED_PER_PRINCIPAL,
        })
    }

    /// A sealed state for asking `asking` about `tool` with `arguments` on
    /// behalf of `principal`.
    pub(crate) fn seal(
        &self,
        asking: Asking,
        principal: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, String> {
        self.seal_with(asking, None, principal, tool, arguments)
    }

    /// A sealed state for an upstream's requests during the call of `tool`
    /// with `arguments`, carrying `pending` to the next round.
    pub(crate) fn seal_upstream(
        &self,
        pending: Pending,
        principal: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, String> {
        self.seal_with(Asking::Upstream, Some(pending), principal, tool, arguments)
    }

    fn seal_with(
        &self,
        asking: Asking,
        upstream: Option<Pending>,
        principal: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, String> {
        let mut nonce = [0_u8; 16];
        getrandom::fill(&mut nonce).map_err(|e| format!("no nonce could be made: {e}"))?;
        let sealed = Sealed {
            asking,
            nonce: iris_runtime::__wings::hex(&nonce),
            upstream,
        };
        let bound = bound_to(principal, tool, arguments);
        self.codec
            .seal_json_with(
                &sealed,
                &SealOptions::new().associated_data(&bound).ttl(ROUND_TTL),
            )
            .map_err(|e| e.to_string())
    }

    /// [`Self::open_any`], for a state that asked `asking`.
    #[cfg(test)]
    fn open(
        &self,
        state: &str,
        asking: Asking,
        principal: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), String> {
        let opened = self.open_any(state, principal, tool, arguments)?;
        if opened.asking != asking {
            return Err("the requestState sent back answers another kind of question; call again without it".to_owned());
        }
        Ok(())
    }

    /// Checks that `state` was sealed here for this very call (the same
    /// principal, tool and arguments), has not expired and was not
    /// honoured before; then marks it honoured and says what it asked.
    pub(crate) fn open_any(
        &self,
        state: &str,
        principal: Option<&str>,
        tool: &str,
        arguments: &Value,
    ) -> Result<Opened, String> {
        let bound = bound_to(principal, tool, arguments);
        let sealed: Sealed = self.codec.open_json_with(state, &bound).map_err(|e| {
            format!("the requestState sent back is not one this server gave for this call ({e}); call again without it")
        })?;
        self.honoured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .honour(
                sealed.nonce,
                principal.unwrap_or("anonymous"),
                self.per_principal,
            )?;
        Ok(Opened {
            asking: sealed.asking,
            upstream: sealed.upstream,
        })
    }
}

/// What a state is bound to: the principal, the tool and the canonical
/// digest of its arguments.
fn bound_to(principal: Option<&str>, tool: &str, arguments: &Value) -> Vec<u8> {
    format!(
        "iris/mcp/input-request|{}|{tool}|{}",
        principal.unwrap_or("anonymous"),
        iris_runtime::arguments_hash(arguments)
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use serde_json::json;

    #[test]
    fn one_caller_answering_fast_leaves_room_for_the_others() {
        let mut rounds = Rounds::new().unwrap();
        rounds.per_principal = 3;
        let args = json!({});
        let answer = |rounds: &Rounds, who: &str| {
            let state = rounds
                .seal(Asking::Questions, Some(who), "ask_question", &args)
                .unwrap();
            rounds.open_any(&state, Some(who), "ask_question", &args)
        };
        for _ in 0..3 {
            answer(&rounds, "idp#mallory").unwrap();
        }
        let refused = answer(&rounds, "idp#mallory").unwrap_err();
        assert!(refused.contains("this caller has too many"), "{refused}");
        answer(&rounds, "idp#alice").unwrap();
    }

    #[test]
    fn a_state_opens_once_for_its_own_principal_tool_and_arguments() {
        let rounds = Rounds::new().unwrap();
        let args = json!({"path": "a.txt", "text": "hi"});
        let state = rounds
            .seal(Asking::Approval, Some("idp#alice"), "write", &args)
            .unwrap();
        // Another principal, another tool, other arguments: refused, and the
        // state stays good for its own call.
        assert!(
            rounds
                .open(&state, Asking::Approval, Some("idp#bob"), "write", &args)
                .is_err()
        );
        assert!(
            rounds
                .open(&state, Asking::Approval, Some("idp#alice"), "delete", &args)
                .is_err()
        );
        let other = json!({"path": "b.txt", "text": "hi"});
        assert!(
            rounds
                .open(&state, Asking::Approval, Some("idp#alice"), "write", &other)
                .is_err()
        );
        // Key order does not matter; the canonical digest binds.
        let reordered = json!({"text": "hi", "path": "a.txt"});
        rounds
            .open(
                &state,
                Asking::Approval,
                Some("idp#alice"),
                "write",
                &reordered,
            )
            .unwrap();
        let again = rounds.open(&state, Asking::Approval, Some("idp#alice"), "write", &args);
        assert!(again.unwrap_err().contains("used already"));
        // Opened as another kind: refused (and used up, as anything that
        // opened).
        let questions = rounds
            .seal(Asking::Questions, Some("idp#alice"), "write", &args)
            .unwrap();
        assert!(
            rounds
                .open(
                    &questions,
                    Asking::Approval,
                    Some("idp#alice"),
                    "write",
                    &args
                )
                .unwrap_err()
                .contains("another kind")
        );
        let forged = format!("{state}x");
        assert!(
            rounds
                .open(&forged, Asking::Approval, Some("idp#alice"), "write", &args)
                .is_err()
        );
    }
}
