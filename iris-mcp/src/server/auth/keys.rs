//! An issuer's signing keys: found through its metadata, fetched, cached
//! for as long as the issuer's `Cache-Control` says and never longer than
//! the operator allows (a withdrawn key stops vouching within that), and
//! fetched again when a token names a key not seen yet (the issuer
//! rotated), at most once per cool-down so that tokens naming made-up keys
//! cannot make the server fetch on every request.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::{Mutex, RwLock};

use super::config::TokenIssuer;

/// Least time between two fetches that an unknown key id causes.
const REFETCH_COOL_DOWN: Duration = Duration::from_secs(2);

/// Longest the keys last fetched keep vouching while the issuer cannot be
/// reached: an outage does not shut every caller out at once, and a key
/// withdrawn meanwhile does not vouch for ever.
const MAX_STALE: Duration = Duration::from_secs(60 * 60);

/// Largest metadata or key set read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Most keys kept for one issuer.
const MAX_KEYS: usize = 64;

/// One usable key: what it verifies, and the algorithm it is bound to when
/// the issuer says.
pub(crate) struct Key {
    pub(crate) decoding: DecodingKey,
    pub(crate) algorithm: Option<Algorithm>,
}

#[derive(Default)]
struct Cached {
    by_id: HashMap<String, std::sync::Arc<Key>>,
    /// When the key set was last asked for (answered or not).
    fetched: Option<Instant>,
    /// Until when the keys are believed without asking again.
    fresh_until: Option<Instant>,
    /// When the issuer last answered with its keys.
    answered: Option<Instant>,
}

impl Cached {
    fn fresh(&self) -> bool {
        self.fresh_until.is_some_and(|until| Instant::now() < until)
    }
}

/// The keys of one issuer.
pub(crate) struct IssuerKeys {
    issuer: String,
    jwks_uri: Option<String>,
    /// The longest the keys are believed.
    longest: Duration,
    cached: RwLock<Cached>,
    /// Held while fetching, so concurrent misses fetch once.
    fetching: Mutex<()>,
}

impl IssuerKeys {
    pub(crate) fn new(issuer: &TokenIssuer) -> Self {
        Self {
            issuer: issuer.issuer.clone(),
            jwks_uri: issuer.jwks_uri.clone(),
            longest: Duration::from_secs(issuer.keys_refresh_seconds),
            cached: RwLock::new(Cached::default()),
            fetching: Mutex::new(()),
        }
    }

    /// Whether `key` is still what the issuer publishes as `kid` (as last
    /// fetched, and that fetch fresh): a token remembered as checked stays
    /// good only while the very key that verified it does. Every fetch
    /// makes new keys, so a remembered token is checked again after each
    /// (a key replaced under the same id ends its tokens).
    pub(crate) async fn still_publishes(&self, kid: &str, key: &std::sync::Arc<Key>) -> bool {
        let cached = self.cached.read().await;
        cached.fresh()
            && cached
                .by_id
                .get(kid)
                .is_some_and(|published| std::sync::Arc::ptr_eq(published, key))
    }

    /// The key named `kid`, fetching the key set when it is stale or does
    /// not hold it yet (within the cool-down).
    pub(crate) async fn key(
        &self,
        http: &reqwest::Client,
        kid: &str,
    ) -> Result<std::sync::Arc<Key>, String> {
        {
            let cached = self.cached.read().await;
            if cached.fresh()
                && let Some(key) = cached.by_id.get(kid)
            {
                return Ok(std::sync::Arc::clone(key));
            }
        }
        let _fetching = self.fetching.lock().await;
        {
            // Another request may have fetched meanwhile.
            let cached = self.cached.read().await;
            if cached.fresh()
                && let Some(key) = cached.by_id.get(kid)
            {
                return Ok(std::sync::Arc::clone(key));
            }
            // A stale set is always fetched again; a fresh one that lacks
            // the key, at most once per cool-down.
            if cached.fresh()
                && cached
                    .fetched
                    .is_some_and(|at| at.elapsed() < REFETCH_COOL_DOWN)
            {
                return Err(format!(
                    "the token is signed with key `{}`, which {} does not publish",
                    iris_runtime::__wings::shorten(kid),
                    self.issuer
                ));
            }
        }
        let fetched = self.fetch(http).await;
        let mut cached = self.cached.write().await;
        let now = Instant::now();
        cached.fetched = Some(now);
        match fetched {
            Ok((keys, max_age)) => {
                cached.by_id = keys;
                cached.answered = Some(now);
                let believed = max_age
                    .unwrap_or(self.longest)
                    .clamp(REFETCH_COOL_DOWN, self.longest.max(REFETCH_COOL_DOWN));
                cached.fresh_until = Some(now + believed);
            }
            Err(error) => {
                // Keys fetched before stay usable while the issuer cannot
                // be reached (asked again after the cool-down), for at most
                // `MAX_STALE` since it last answered.
                cached.fresh_until = Some(now + REFETCH_COOL_DOWN);
                if cached
                    .answered
                    .is_none_or(|answered| answered.elapsed() > MAX_STALE)
                {
                    cached.by_id.clear();
                }
                tracing::warn!(issuer = %self.issuer, %error, "the issuer's signing keys could not be fetched");
                if let Some(key) = cached.by_id.get(kid) {
                    return Ok(std::sync::Arc::clone(key));
                }
                return Err(format!(
                    "the signing keys of {} could not be fetched, so the token cannot be checked",
                    self.issuer
                ));
            }
        }
        cached.by_id.get(kid).cloned().ok_or_else(|| {
            format!(
                "the token is signed with key `{}`, which {} does not publish",
                iris_runtime::__wings::shorten(kid),
                self.issuer
            )
        })
    }

    /// The published keys, and how long the issuer says they may be
    /// believed (`Cache-Control: max-age`; `no-cache` and `no-store` say
    /// not at all).
    async fn fetch(&self, http: &reqwest::Client) -> Result<(KeysById, Option<Duration>), String> {
        let jwks_uri = match &self.jwks_uri {
            Some(uri) => uri.clone(),
            None => self.discover(http).await?,
        };
        let response = http
            .get(&jwks_uri)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{jwks_uri} could not be reached: {e}"))?;
        let max_age = response
            .headers()
            .get_all(reqwest::header::CACHE_CONTROL)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(max_age);
        let set: JwkSet = read_json(&jwks_uri, response).await?;
        let mut keys = HashMap::new();
        for jwk in set.keys.iter().take(MAX_KEYS) {
            let Some(kid) = jwk.common.key_id.clone() else {
                continue;
            };
            if matches!(&jwk.common.public_key_use, Some(used) if *used != PublicKeyUse::Signature)
            {
                continue;
            }
            let Ok(decoding) = DecodingKey::from_jwk(jwk) else {
                tracing::debug!(issuer = %self.issuer, kid, "a published key of an unsupported kind was skipped");
                continue;
            };
            let algorithm = jwk.common.key_algorithm.and_then(signing_algorithm);
            keys.insert(
                kid,
                std::sync::Arc::new(Key {
                    decoding,
                    algorithm,
                }),
            );
        }
        Ok((keys, max_age))
    }

    /// The key set's address from the issuer's `OpenID` or OAuth metadata,
    /// whose `issuer` must be the one configured.
    async fn discover(&self, http: &reqwest::Client) -> Result<String, String> {
        #[derive(serde::Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        let base = self.issuer.trim_end_matches('/');
        let mut last = String::new();
        for well_known in [
            "/.well-known/openid-configuration",
            "/.well-known/oauth-authorization-server",
        ] {
            match get_json::<Metadata>(http, &format!("{base}{well_known}")).await {
                Ok(metadata) if metadata.issuer != self.issuer => {
                    return Err(format!(
                        "the metadata at {base}{well_known} names issuer `{}`, not `{}`",
                        metadata.issuer, self.issuer
                    ));
                }
                Ok(Metadata {
                    jwks_uri: Some(uri),
                    ..
                }) => return Ok(uri),
                Ok(_) => last = format!("{base}{well_known} names no jwks_uri"),
                Err(error) => last = error,
            }
        }
        Err(format!(
            "no key set was found for {}: {last}; set `jwks_uri`",
            self.issuer
        ))
    }
}

type KeysById = HashMap<String, std::sync::Arc<Key>>;

/// How long a `Cache-Control` value lets a response be believed, when it
/// says: `max-age=N`, or nothing for `no-cache` and `no-store`.
fn max_age(cache_control: &str) -> Option<Duration> {
    cache_control.split(',').find_map(|directive| {
        let directive = directive.trim();
        if directive.eq_ignore_ascii_case("no-cache") || directive.eq_ignore_ascii_case("no-store")
        {
            return Some(Duration::ZERO);
        }
        let (name, value) = directive.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("max-age") {
            return None;
        }
        value
            .trim()
            .trim_matches('"')
            .parse()
            .ok()
            .map(Duration::from_secs)
    })
}

/// The signature algorithm a published key is bound to (encryption
/// algorithms bind nothing here).
fn signing_algorithm(algorithm: KeyAlgorithm) -> Option<Algorithm> {
    Some(match algorithm {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        KeyAlgorithm::HS256 => Algorithm::HS256,
        KeyAlgorithm::HS384 => Algorithm::HS384,
        KeyAlgorithm::HS512 => Algorithm::HS512,
        _ => return None,
    })
}

/// A JSON document from `url`, bounded in size.
pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
) -> Result<T, String> {
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("{url} could not be reached: {e}"))?;
    read_json(url, response).await
}

/// A response's JSON body, bounded in size.
pub(crate) async fn read_json<T: serde::de::DeserializeOwned>(
    url: &str,
    mut response: reqwest::Response,
) -> Result<T, String> {
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url} could not be read: {e}"))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url} sent more than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} sent no usable JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control_says_how_long_keys_are_believed() {
        let secs = |value: &str| max_age(value).map(|d| d.as_secs());
        assert_eq!(secs("public, max-age=120"), Some(120));
        assert_eq!(secs("MAX-AGE = \"60\", must-revalidate"), Some(60));
        assert_eq!(secs("no-cache"), Some(0));
        assert_eq!(secs("private, no-store"), Some(0));
        assert_eq!(secs("public"), None);
        assert_eq!(secs("max-age=forever"), None);
        assert_eq!(secs("max-age=-5"), None);
    }
}
