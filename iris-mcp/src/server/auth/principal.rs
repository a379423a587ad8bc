//! Who is calling: the subject of a checked token, with the scopes and
//! claims it carries. Everything a caller holds on the server is bound to
//! its principal's key (issuer and subject), never to a session or handle.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The caller behind a request, as its token says. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Principal(Arc<Held>);

#[derive(Debug)]
struct Held {
    key: PrincipalKey,
    issuer: String,
    subject: String,
    client: Option<String>,
    scopes: BTreeSet<String>,
    claims: Map<String, Value>,
}

/// What binds state to a principal: its issuer and subject together (two
/// issuers may both have a subject `alice`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct PrincipalKey(Arc<str>);

impl PrincipalKey {
    /// The key as text (for logs and run ids: it holds no secret).
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl Principal {
    /// Whether `other` is this very principal, from the same checked token
    /// (a token remembered hands out the same one): what was judged for
    /// one holds for the other, scopes and claims alike.
    pub(crate) fn is(&self, other: &Principal) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The principal a token's checked claims describe: `sub` (or, for a
    /// client acting for itself, `client_id`), scopes from `scope` (space
    /// separated) or `scp` (a list or a string).
    pub(crate) fn from_claims(issuer: &str, claims: Map<String, Value>) -> Option<Self> {
        let client = claims
            .get("client_id")
            .or_else(|| claims.get("azp"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let subject = claims
            .get("sub")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| client.clone())?;
        let scopes = scopes_of(&claims);
        let key = PrincipalKey(format!("{issuer}#{subject}").into());
        Some(Self(Arc::new(Held {
            key,
            issuer: issuer.to_owned(),
            subject,
            client,
            scopes,
            claims,
        })))
    }

    /// The issuer that vouched for it.
    #[must_use]
    pub fn issuer(&self) -> &str {
        &self.0.issuer
    }

    /// Its subject at that issuer.
    #[must_use]
    pub fn subject(&self) -> &str {
        &self.0.subject
    }

    /// The OAuth client it called through, when the token names one.
    #[must_use]
    pub fn client(&self) -> Option<&str> {
        self.0.client.as_deref()
    }

    /// The scopes it holds.
    #[must_use]
    pub fn scopes(&self) -> &BTreeSet<String> {
        &self.0.scopes
    }

    /// A claim of its token.
    #[must_use]
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.0.claims.get(name)
    }

    /// Whether its claim `name` equals `value`, or is a list holding it.
    #[must_use]
    pub fn claim_matches(&self, name: &str, value: &str) -> bool {
        match self.0.claims.get(name) {
            Some(Value::String(held)) => held == value,
            Some(Value::Array(held)) => held.iter().any(|v| v.as_str() == Some(value)),
            Some(Value::Bool(held)) => value.parse::<bool>().is_ok_and(|v| v == *held),
            Some(Value::Number(held)) => held.to_string() == value,
            _ => false,
        }
    }

    pub(crate) fn key(&self) -> &PrincipalKey {
        &self.0.key
    }
}

fn scopes_of(claims: &Map<String, Value>) -> BTreeSet<String> {
    let words = |text: &str| {
        text.split_ascii_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let mut scopes = BTreeSet::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(text)) => scopes.extend(words(text)),
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).flat_map(&words));
            }
            _ => {}
        }
    }
    scopes
}
