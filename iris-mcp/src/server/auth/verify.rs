//! A bearer token checked: a JWT against its issuer's published keys (the
//! algorithm pinned per issuer, `iss`, `exp`, `nbf` and `aud` always
//! checked), or an opaque token through the issuer's introspection
//! endpoint. The token itself is never logged and never leaves this module
//! but to the issuer that made it.
//!
//! A JWT once checked is remembered (by its SHA-256, never as text) until
//! it expires, while the key that signed it is still published: a client
//! sends the same token with every request, and checking an RSA signature
//! in pure Rust costs about 240 us, remembering it about 1 us. A key the
//! issuer withdraws ends its tokens as soon as the gateway fetches the
//! issuer's keys again. An opaque token's active introspection answer is
//! remembered the same way, for the issuer's `remember_seconds` (30 by
//! default, never past its `exp`), so that a client's every request is not
//! a round trip to the issuer; a revoked token is refused at most that
//! long after. An inactive answer is remembered too, for
//! [`REFUSED_FOR_SECONDS`]: junk sent again costs the issuer nothing.
//!
//! An opaque token its issuer once called active is vouched for until it
//! expires: from an address whose junk tokens keep failing (a proxy or a
//! NAT that a flooder shares with honest callers), it is still asked
//! about, so a caller already let in is not shut out by a neighbour. Only
//! tokens never seen active wait there.

use std::time::Duration;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::config::{GatewayAuth, TokenIssuer};
use super::keys::{IssuerKeys, read_json};
use super::principal::Principal;

/// Seconds of clock difference tolerated on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 30;

/// Longest wait for an issuer's keys or introspection answer.
const ISSUER_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a token was not accepted (said to the caller in the 401, so it
/// names what is wrong, never what the server holds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejected(pub(crate) String);

struct Trusted {
    config: TokenIssuer,
    algorithms: Vec<Algorithm>,
    keys: IssuerKeys,
}

/// Most checked tokens remembered at once (and, apart, most refused ones).
const MAX_REMEMBERED: usize = 10_000;

/// Most introspection requests out at once, from every caller together:
/// junk from many addresses (a routed IPv6 prefix has thousands of /64s)
/// cannot turn into a flood at the issuer.
const MAX_QUESTIONS_AT_ONCE: usize = 16;

/// Seconds an opaque token its issuer called inactive is refused without
/// asking again (an inactive token does not become active).
const REFUSED_FOR_SECONDS: u64 = 60;

/// How long an opaque token its issuer called active, and that names no
/// expiry, is vouched for.
const VOUCHED_WITHOUT_EXPIRY_SECONDS: u64 = 24 * 60 * 60;

/// Why a token was not checked, when it was not refused.
#[derive(Debug)]
pub(crate) enum Unchecked {
    /// The token is not accepted.
    Rejected(Rejected),
    /// An opaque token the issuer would have to be asked about, from a
    /// caller who may not make the server ask now.
    NotAsked,
    /// An opaque token the issuer would have to be asked about while the
    /// most questions at once are out already (a flood from many
    /// addresses).
    Busy,
}

impl From<Rejected> for Unchecked {
    fn from(rejected: Rejected) -> Self {
        Self::Rejected(rejected)
    }
}

/// A token checked before: who it vouches for, until when, and (a JWT)
/// the key that must still be published.
struct Remembered {
    principal: Principal,
    /// The issuer's place, the key's id and the key itself (as fetched),
    /// for a JWT.
    key: Option<(usize, String, std::sync::Arc<super::keys::Key>)>,
    /// The last second (since the epoch) it is believed, leeway included.
    believed_until: u64,
}

/// A JWT checked whole: its principal, its issuer's place, the key that
/// verified it (its id and the key as fetched), and its expiry.
type Checked = (
    Principal,
    usize,
    (String, std::sync::Arc<super::keys::Key>),
    u64,
);

/// Checks tokens for one audience against the configured issuers.
pub(crate) struct Verifier {
    audience: String,
    issuers: Vec<Trusted>,
    http: reqwest::Client,
    remembered: Mutex<HashMap<[u8; 32], Remembered>>,
    /// Opaque tokens the issuer called inactive, until when (seconds since
    /// the epoch).
    refused: Mutex<HashMap<[u8; 32], u64>>,
    /// Opaque tokens the issuer called active, until they expire (seconds
    /// since the epoch): asked about again even from an address that may
    /// not make the server ask.
    vouched: Mutex<HashMap<[u8; 32], u64>>,
    /// Places for introspection requests out at once.
    asking: tokio::sync::Semaphore,
}

impl Verifier {
    pub(crate) fn new(auth: &GatewayAuth) -> Result<Self, String> {
        iris_core::tls::install_default_provider();
        let http = reqwest::Client::builder()
            .timeout(ISSUER_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("no HTTP client for the issuers could be built: {e}"))?;
        let issuers = auth
            .issuers
            .iter()
            .map(|issuer| Trusted {
                algorithms: issuer
                    .algorithms
                    .iter()
                    .filter_map(|a| a.parse().ok())
                    .filter(|a| {
                        !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
                    })
                    .collect(),
                keys: IssuerKeys::new(issuer),
                config: issuer.clone(),
            })
            .collect();
        Ok(Self {
            audience: auth.audience.clone(),
            issuers,
            http,
            remembered: Mutex::new(HashMap::new()),
            refused: Mutex::new(HashMap::new()),
            vouched: Mutex::new(HashMap::new()),
            asking: tokio::sync::Semaphore::new(MAX_QUESTIONS_AT_ONCE),
        })
    }

    /// The principal `token` vouches for. An opaque token not remembered
    /// is asked of its issuer only when `may_ask` or the issuer vouched
    /// for it before (a JWT is checked here,
    /// against keys already fetched or fetched at most once per cool-down).
    pub(crate) async fn verify(&self, token: &str, may_ask: bool) -> Result<Principal, Unchecked> {
        if token.split('.').count() == 3 {
            Ok(self.verify_jwt(token).await?)
        } else {
            self.introspect(token, may_ask).await
        }
    }

    /// The principal a token checked before vouches for, while it is
    /// believed (and, a JWT, its key still published).
    async fn recalled(&self, digest: &[u8; 32]) -> Option<Principal> {
        let now = jsonwebtoken::get_current_timestamp();
        let (principal, key) = {
            let remembered = self
                .remembered
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            remembered
                .get(digest)
                .filter(|r| now <= r.believed_until)
                .map(|r| (r.principal.clone(), r.key.clone()))?
        };
        match key {
            Some((issuer, kid, key))
                if !self.issuers[issuer].keys.still_publishes(&kid, &key).await =>
            {
                None
            }
            _ => Some(principal),
        }
    }

    /// Whether the issuer called this token inactive lately.
    fn refused_lately(&self, digest: &[u8; 32]) -> bool {
        let now = jsonwebtoken::get_current_timestamp();
        self.refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(digest)
            .is_some_and(|until| now <= *until)
    }

    /// Whether the issuer called this token active before, and it has
    /// not expired since.
    fn vouched_for(&self, digest: &[u8; 32]) -> bool {
        let now = jsonwebtoken::get_current_timestamp();
        self.vouched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(digest)
            .is_some_and(|until| now <= *until)
    }

    fn vouch(&self, digest: [u8; 32], until: u64) {
        let now = jsonwebtoken::get_current_timestamp();
        let mut vouched = self.vouched.lock().unwrap_or_else(PoisonError::into_inner);
        if vouched.len() >= MAX_REMEMBERED {
            vouched.retain(|_, until| now <= *until);
        }
        if vouched.len() < MAX_REMEMBERED {
            vouched.insert(digest, until);
        }
    }

    fn remember_refused(&self, digest: [u8; 32]) {
        self.vouched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&digest);
        let now = jsonwebtoken::get_current_timestamp();
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        if refused.len() >= MAX_REMEMBERED {
            refused.retain(|_, until| now <= *until);
        }
        if refused.len() < MAX_REMEMBERED {
            refused.insert(digest, now + REFUSED_FOR_SECONDS);
        }
    }

    fn remember(&self, digest: [u8; 32], entry: Remembered) {
        let now = jsonwebtoken::get_current_timestamp();
        let mut remembered = self
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if remembered.len() >= MAX_REMEMBERED {
            remembered.retain(|_, r| now <= r.believed_until);
        }
        if remembered.len() < MAX_REMEMBERED {
            remembered.insert(digest, entry);
        }
    }

    async fn verify_jwt(&self, token: &str) -> Result<Principal, Rejected> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(principal) = self.recalled(&digest).await {
            return Ok(principal);
        }
        let (principal, issuer, (kid, key), until) = self.check_jwt(token).await?;
        self.remember(
            digest,
            Remembered {
                principal: principal.clone(),
                key: Some((issuer, kid, key)),
                believed_until: until + LEEWAY_SECONDS,
            },
        );
        Ok(principal)
    }

    /// Checks a JWT whole: the principal, the issuer's place, the key id
    /// and the expiry.
    async fn check_jwt(&self, token: &str) -> Result<Checked, Rejected> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Rejected("the token's header could not be read, or it names an algorithm this server never accepts (such as `none`)".to_owned())
        })?;
        // Which issuer is read before the signature is checked, only to
        // pick the keys; the checked claims must say the same.
        let unverified = jsonwebtoken::dangerous::insecure_decode::<Map<String, Value>>(token)
            .map_err(|_| Rejected("the token's claims could not be read".to_owned()))?;
        let issuer_name = unverified
            .claims
            .get("iss")
            .and_then(Value::as_str)
            .ok_or_else(|| Rejected("the token names no issuer (`iss`)".to_owned()))?;
        let (place, trusted) = self
            .issuers
            .iter()
            .enumerate()
            .find(|(_, t)| t.config.issuer == issuer_name)
            .ok_or_else(|| {
                Rejected(format!(
                    "tokens of issuer `{}` are not trusted here",
                    iris_runtime::__wings::shorten(issuer_name)
                ))
            })?;
        check_type(header.typ.as_deref(), &trusted.config)?;
        if !trusted.algorithms.contains(&header.alg) {
            return Err(Rejected(format!(
                "the token is signed with {:?}, which this server does not accept from {}",
                header.alg, trusted.config.issuer
            )));
        }
        let kid = header
            .kid
            .as_deref()
            .ok_or_else(|| Rejected("the token names no signing key (`kid`)".to_owned()))?;
        let key = trusted.keys.key(&self.http, kid).await.map_err(Rejected)?;
        if key.algorithm.is_some_and(|bound| bound != header.alg) {
            return Err(Rejected(format!(
                "key `{kid}` is published for another algorithm than the token's {:?}",
                header.alg
            )));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&trusted.config.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECONDS;
        let checked = jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
            .map_err(|e| Rejected(why_refused(&e, &self.audience)))?;
        let until = checked
            .claims
            .get("exp")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let principal =
            Principal::from_claims(&trusted.config.issuer, checked.claims).ok_or_else(|| {
                Rejected("the token names no subject (`sub` or `client_id`)".to_owned())
            })?;
        Ok((principal, place, (kid.to_owned(), key), until))
    }

    /// An opaque token, asked of the one issuer whose tokens it looks like
    /// (its `token_prefix`, or the only issuer that introspects), or
    /// recalled from an answer still believed. It is never shown to
    /// another issuer.
    async fn introspect(&self, token: &str, may_ask: bool) -> Result<Principal, Unchecked> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(principal) = self.recalled(&digest).await {
            return Ok(principal);
        }
        if self.refused_lately(&digest) {
            return Err(Rejected("the token is not active at its issuer".to_owned()).into());
        }
        if !may_ask && !self.vouched_for(&digest) {
            return Err(Unchecked::NotAsked);
        }
        let Ok(_asking) = self.asking.try_acquire() else {
            return Err(Unchecked::Busy);
        };
        let minter = self.issuers.iter().find_map(|trusted| {
            let endpoint = trusted.config.introspection.as_ref()?;
            let claims = endpoint
                .token_prefix
                .as_deref()
                .is_none_or(|prefix| token.starts_with(prefix));
            claims.then_some((trusted, endpoint))
        });
        let Some((trusted, endpoint)) = minter else {
            let introspects = self
                .issuers
                .iter()
                .any(|t| t.config.introspection.is_some());
            return Err(Rejected(if introspects {
                "the token is not a JWT, and starts like no trusted issuer's tokens".to_owned()
            } else {
                "the token is not a JWT, and no trusted issuer has an introspection endpoint configured"
                    .to_owned()
            })
            .into());
        };
        let secret = expand_env(&endpoint.client_secret);
        let response = self
            .http
            .post(&endpoint.endpoint)
            .basic_auth(&endpoint.client_id, Some(secret))
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await;
        let answer = match response {
            Ok(response) => read_json(&endpoint.endpoint, response).await,
            Err(error) => Err(error.to_string()),
        };
        let answer: Map<String, Value> = answer.map_err(|error| {
            tracing::warn!(issuer = %trusted.config.issuer, %error, "token introspection failed");
            Rejected("the token's issuer could not be asked about it".to_owned())
        })?;
        if answer.get("active").and_then(Value::as_bool) != Some(true) {
            self.remember_refused(digest);
            return Err(Rejected("the token is not active at its issuer".to_owned()).into());
        }
        let now = jsonwebtoken::get_current_timestamp();
        let believed_until = answer
            .get("exp")
            .and_then(Value::as_u64)
            .map_or(u64::MAX, |exp| exp + LEEWAY_SECONDS)
            .min(now + endpoint.remember_seconds);
        let vouched_until = answer
            .get("exp")
            .and_then(Value::as_u64)
            .map_or(now + VOUCHED_WITHOUT_EXPIRY_SECONDS, |exp| {
                exp + LEEWAY_SECONDS
            });
        let principal = self.accept_introspected(trusted, answer)?;
        self.vouch(digest, vouched_until);
        if endpoint.remember_seconds > 0 {
            self.remember(
                digest,
                Remembered {
                    principal: principal.clone(),
                    key: None,
                    believed_until,
                },
            );
        }
        Ok(principal)
    }

    fn accept_introspected(
        &self,
        trusted: &Trusted,
        answer: Map<String, Value>,
    ) -> Result<Principal, Rejected> {
        if let Some(iss) = answer.get("iss").and_then(Value::as_str)
            && iss != trusted.config.issuer
        {
            return Err(Rejected(
                "the introspected token names another issuer".to_owned(),
            ));
        }
        let audience_ok = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == self.audience,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&self.audience)),
            _ => false,
        };
        if !audience_ok {
            return Err(Rejected(format!(
                "the token was not issued for this server (its audience is not {})",
                self.audience
            )));
        }
        let now = jsonwebtoken::get_current_timestamp();
        if answer
            .get("exp")
            .and_then(Value::as_u64)
            .is_some_and(|exp| exp + LEEWAY_SECONDS < now)
        {
            return Err(Rejected("the token has expired".to_owned()));
        }
        Principal::from_claims(&trusted.config.issuer, answer)
            .ok_or_else(|| Rejected("the token names no subject (`sub` or `client_id`)".to_owned()))
    }
}

/// What the caller is told about a token the checks refused.
fn why_refused(error: &jsonwebtoken::errors::Error, audience: &str) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)".to_owned(),
        ErrorKind::InvalidAudience => {
            format!("the token was not issued for this server (its audience is not {audience})")
        }
        ErrorKind::InvalidIssuer => "the token's issuer is not the one that signed it".to_owned(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key".to_owned(),
        _ => "the token could not be checked".to_owned(),
    }
}

/// `${VAR}` as the environment variable's value; anything else as written.
fn expand_env(value: &str) -> String {
    value
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .map_or_else(
            || value.to_owned(),
            |name| std::env::var(name).unwrap_or_default(),
        )
}

/// Refuses a JWT not typed as an access token (RFC 9068 `at+jwt`; plain
/// `JWT` or no type from an issuer configured to mint those): an ID token
/// or a logout token of a trusted issuer is signed with the same keys, and
/// is never a key to this server.
fn check_type(typ: Option<&str>, issuer: &TokenIssuer) -> Result<(), Rejected> {
    let typ = typ.map(|t| t.trim().to_ascii_lowercase());
    let typ = typ
        .as_deref()
        .map(|t| t.strip_prefix("application/").unwrap_or(t));
    match typ {
        Some("at+jwt") => Ok(()),
        None | Some("jwt") if issuer.plain_jwt => Ok(()),
        None | Some("jwt") => Err(Rejected(format!(
            "the token is typed `{}`, and {} mints access tokens typed `at+jwt` (RFC 9068); if it mints plain JWTs, set `plain_jwt` for it",
            typ.unwrap_or("(none)"),
            issuer.issuer
        ))),
        Some(other) => Err(Rejected(format!(
            "the token is typed `{}`, which is not an access token",
            iris_runtime::__wings::shorten(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_access_tokens_are_keys_and_plain_jwts_where_the_issuer_mints_them() {
        let typed = TokenIssuer::new("https://idp.test");
        let plain = TokenIssuer::new("https://idp.test").with_plain_jwt();
        for typ in ["at+jwt", "AT+JWT", "application/at+jwt"] {
            assert!(check_type(Some(typ), &typed).is_ok(), "{typ}");
            assert!(check_type(Some(typ), &plain).is_ok(), "{typ}");
        }
        for typ in [Some("JWT"), None] {
            assert!(check_type(typ, &typed).is_err(), "{typ:?}");
            assert!(check_type(typ, &plain).is_ok(), "{typ:?}");
        }
        for typ in ["id_token+jwt", "logout+jwt", "secevent+jwt", "dpop+jwt"] {
            let refused = check_type(Some(typ), &plain).expect_err(typ);
            assert!(refused.0.contains("not an access token"), "{}", refused.0);
        }
    }
}
