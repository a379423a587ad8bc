//! An upstream server's requests for input that come in its call's own
//! result (revision 2026-07-28, SEP-2322: an `InputRequiredResult` instead
//! of the tool's result; the answers go back with the call, sent again).
//!
//! The remote tool answers what it can itself: a `roots/list` gets the
//! served workspace, when there is one. The rest goes to the caller behind
//! the call, and only when the server's configuration lets it ask
//! (`relay_input`):
//! - a caller with a session is asked at once through its
//!   [`Asker`](crate::elicitation::Asker), and the call goes on with the
//!   answers, round after round;
//! - a caller with no session (2026-07-28 itself) is handed the requests
//!   through its [`Handover`]. The gateway answers the caller's call with
//!   them, under the server's own keys, and seals what the next round
//!   needs into its own `requestState`. The caller's next call brings the
//!   answers, and the upstream's state goes back to it as it was.
//!
//! Nothing waits in between, on the gateway or the upstream.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Most requests one round may carry.
pub(crate) const MAX_REQUESTS_PER_ROUND: usize = 8;

/// Most rounds one call may take while its caller is asked in its session.
pub(crate) const MAX_ROUNDS: usize = 8;

/// Longest key of a request.
const MAX_KEY_BYTES: usize = 256;

/// Longest `requestState` an upstream may hand over (it travels inside the
/// gateway's own, to the caller and back).
const MAX_STATE_BYTES: usize = 64 * 1024;

/// What a round needs from the round before: the upstream's state as it
/// gave it, the keys put to the caller (only their answers go back), the
/// keys the served workspace answers (answered again then, so that the
/// state, which the caller can read, holds no folder of the host's), and
/// the other answers given here (the agent's model's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pending {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) keys: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) roots: Vec<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub(crate) local: Map<String, Value>,
    /// The call that waits for the answer, when the server asked with a
    /// request of its own while the call ran (the 2025 revisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parked: Option<String>,
}

impl Pending {
    /// What goes back to the upstream with the caller's `responses`: its
    /// state, the caller's answers to the keys it was asked (nothing
    /// else), and the answers given here.
    pub(crate) fn answered(
        &self,
        mut responses: InputResponses,
    ) -> (InputResponses, Option<String>) {
        responses.retain(|key, _| self.keys.contains(key));
        for (key, answer) in &self.local {
            responses.insert(key.clone(), answer.clone());
        }
        (responses, self.state.clone())
    }
}

/// The requests handed to a caller with no session, and what its answer
/// must come back with.
#[derive(Debug, Clone)]
pub(crate) struct Relayed {
    pub(crate) requests: InputRequests,
    pub(crate) pending: Pending,
}

/// A caller with no session, between its call's rounds: the answers it
/// sent for the upstream, and the upstream's requests of this round.
#[derive(Clone, Default)]
pub(crate) struct Handover {
    /// What the caller said it can answer.
    can: ClientCapabilities,
    /// Who the caller is, for its share of parked calls.
    owner: Option<String>,
    answered: Option<(InputResponses, Option<String>)>,
    /// The parked call the answers are for.
    parked: Option<String>,
    /// The keys the served workspace answers.
    roots: Vec<String>,
    asked: Arc<Mutex<Option<Relayed>>>,
    /// Where what is answered on the caller's behalf is audited.
    audit: Option<Arc<crate::elicitation::Audit>>,
}

impl std::fmt::Debug for Handover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handover")
            .field("owner", &self.owner)
            .field("parked", &self.parked)
            .finish_non_exhaustive()
    }
}

impl Handover {
    /// A first round of a caller that can answer what `can` says: nothing
    /// to send the upstream yet.
    pub(crate) fn first(can: ClientCapabilities, owner: Option<String>) -> Self {
        Self {
            can,
            owner,
            ..Self::default()
        }
    }

    /// A round that carries the caller's `responses` to what `pending`
    /// says was asked.
    pub(crate) fn answering(
        can: ClientCapabilities,
        owner: Option<String>,
        pending: &Pending,
        responses: InputResponses,
    ) -> Self {
        Self {
            can,
            owner,
            answered: Some(pending.answered(responses)),
            parked: pending.parked.clone(),
            roots: pending.roots.clone(),
            asked: Arc::default(),
            audit: None,
        }
    }

    /// Audits what is answered on the caller's behalf through `audit`.
    #[must_use]
    pub(crate) fn auditing(mut self, audit: Arc<crate::elicitation::Audit>) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Where what is answered on the caller's behalf is audited.
    pub(crate) fn audit(&self) -> Option<&Arc<crate::elicitation::Audit>> {
        self.audit.as_ref()
    }

    /// Who the caller is, when it is known.
    pub(crate) fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// The keys the served workspace answers, this round again.
    pub(crate) fn roots(&self) -> &[String] {
        &self.roots
    }

    /// The parked call the caller's answers are for.
    pub(crate) fn parked(&self) -> Option<&str> {
        self.parked.as_deref()
    }

    /// What the caller said it can answer.
    pub(crate) fn can(&self) -> &ClientCapabilities {
        &self.can
    }

    /// The answers and the state to send the upstream with the call.
    pub(crate) fn answers(&self) -> Option<&(InputResponses, Option<String>)> {
        self.answered.as_ref()
    }

    pub(crate) fn hand_over(&self, relayed: Relayed) {
        *self.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(relayed);
    }

    /// The requests the upstream put to the caller this round, if any.
    pub(crate) fn take(&self) -> Option<Relayed> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// The requests of one round, split: those answered here (`roots/list`,
/// when `roots` answers it), and those for the caller.
#[derive(Debug)]
pub(crate) struct Split {
    /// The keys of `local` the served workspace answers.
    pub(crate) roots: Vec<String>,
    pub(crate) local: Map<String, Value>,
    pub(crate) for_caller: InputRequests,
    pub(crate) state: Option<String>,
}

/// Checks a round's requests and splits them. `roots` is the answer to
/// `roots/list` when it is given here (the served workspace, or no roots
/// when the caller cannot be asked); `None` puts it to the caller.
pub(crate) fn split(asked: InputRequiredResult, roots: Option<&Value>) -> Result<Split, String> {
    let requests = asked.input_requests.unwrap_or_default();
    if requests.is_empty() && asked.request_state.is_none() {
        return Err("answered that it needs input, naming no request and no state".to_owned());
    }
    if requests.len() > MAX_REQUESTS_PER_ROUND {
        return Err(format!(
            "asked {} things at once; at most {MAX_REQUESTS_PER_ROUND} are relayed",
            requests.len()
        ));
    }
    if let Some(key) = requests
        .keys()
        .find(|key| key.is_empty() || key.len() > MAX_KEY_BYTES)
    {
        return Err(format!(
            "named a request with a key of {} bytes; keys of 1 to {MAX_KEY_BYTES} bytes are relayed",
            key.len()
        ));
    }
    if asked
        .request_state
        .as_ref()
        .is_some_and(|state| state.len() > MAX_STATE_BYTES)
    {
        return Err(format!(
            "gave a requestState of more than {MAX_STATE_BYTES} bytes, which is not relayed"
        ));
    }
    let mut local = Map::new();
    let mut roots_keys = Vec::new();
    let mut for_caller = InputRequests::new();
    for (key, request) in requests {
        match (request, roots) {
            (InputRequest::ListRoots(_), Some(roots)) => {
                roots_keys.push(key.clone());
                local.insert(key, roots.clone());
            }
            (request, _) => {
                for_caller.insert(key, request);
            }
        }
    }
    Ok(Split {
        roots: roots_keys,
        local,
        for_caller,
        state: asked.request_state,
    })
}

/// Whether a caller that says it can answer `can` can answer `request`: a
/// form needs elicitation (a URL to open, its URL mode; an empty
/// elicitation capability is forms only), a sampling needs sampling, and
/// roots need roots.
pub(crate) fn can_answer(can: &ClientCapabilities, request: &InputRequest) -> bool {
    match request {
        InputRequest::Elicitation(asked) => can.elicitation.as_ref().is_some_and(|elicits| {
            !matches!(
                asked.params,
                rmcp::model::ElicitRequestParams::UrlElicitationParams { .. }
            ) || elicits.url.is_some()
        }),
        InputRequest::CreateMessage(_) => can.sampling.is_some(),
        InputRequest::ListRoots(_) => can.roots.is_some(),
        _ => false,
    }
}

/// What a request asks for, as its method names it.
pub(crate) fn method(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::Elicitation(_) => "elicitation/create",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "an unknown request",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use serde_json::json;

    fn asked(value: Value) -> InputRequiredResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_the_keys_asked_go_back_with_the_answers_given_here() {
        let pending = Pending {
            state: Some("s".to_owned()),
            keys: vec!["name".to_owned()],
            local: Map::from_iter([("roots".to_owned(), json!({"roots": []}))]),
            roots: Vec::new(),
            parked: None,
        };
        let mut responses = InputResponses::new();
        responses.insert("name".to_owned(), json!({"action": "accept"}));
        responses.insert(
            "roots".to_owned(),
            json!({"roots": [{"uri": "file:///etc"}]}),
        );
        responses.insert("extra".to_owned(), json!(1));
        let (sent, state) = pending.answered(responses);
        assert_eq!(state.as_deref(), Some("s"));
        assert_eq!(sent.len(), 2);
        assert_eq!(
            sent["roots"],
            json!({"roots": []}),
            "the caller cannot override"
        );
    }

    #[test]
    fn hostile_rounds_are_refused_with_what_was_wrong() {
        let empty = InputRequiredResult::new(Some(InputRequests::new()), None);
        assert!(split(empty, None).unwrap_err().contains("no request"));
        let many: Map<String, Value> = (0..9)
            .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
            .collect();
        let flood = asked(json!({"resultType": "input_required", "inputRequests": many}));
        assert!(split(flood, None).unwrap_err().contains("at most 8"));
        let long = "k".repeat(257);
        let key = asked(
            json!({"resultType": "input_required", "inputRequests": {long: {"method": "roots/list"}}}),
        );
        assert!(split(key, None).unwrap_err().contains("257 bytes"));
        let state =
            asked(json!({"resultType": "input_required", "requestState": "s".repeat(65 * 1024)}));
        assert!(split(state, None).unwrap_err().contains("requestState"));
    }

    #[test]
    fn a_url_to_open_goes_only_to_a_caller_that_opens_urls() {
        let url: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": {
            "mode": "url", "message": "Sign in", "url": "https://example.com/login", "elicitationId": "e1"
        }}))
        .unwrap();
        let form: InputRequest =
            serde_json::from_value(json!({"method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}
            }}))
            .unwrap();
        let forms_only: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}})).unwrap();
        let urls: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}})).unwrap();
        assert!(can_answer(&forms_only, &form));
        assert!(!can_answer(&forms_only, &url));
        assert!(can_answer(&urls, &url));
        assert!(!can_answer(&ClientCapabilities::default(), &form));
    }

    #[test]
    fn roots_are_answered_here_when_there_is_an_answer() {
        let round = json!({"resultType": "input_required", "inputRequests": {
            "r": {"method": "roots/list"},
            "n": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}
        }, "requestState": "x"});
        let roots = json!({"roots": [{"uri": "file:///srv/work/"}]});
        let here = split(asked(round.clone()), Some(&roots)).unwrap();
        assert_eq!(here.local["r"], roots);
        assert_eq!(here.for_caller.keys().collect::<Vec<_>>(), ["n"]);
        let there = split(asked(round), None).unwrap();
        assert!(there.local.is_empty());
        assert_eq!(there.for_caller.len(), 2);
        assert_eq!(there.state.as_deref(), Some("x"));
    }
}
