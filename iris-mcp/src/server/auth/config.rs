//! What an operator writes to let callers in: the issuers whose tokens are
//! trusted, the audience those tokens must name (this server's public URI),
//! the rules that grant tools, the per-principal limits and the audit log.
//! Read from an agent file's `auth:` section or built in code; checked
//! whole before the server starts ([`GatewayAuth::check`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use iris_core::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

/// Who may call the gateway, and what each caller may do. Every request
/// carries a bearer token in its `Authorization` header; a token is
/// trusted when one of [`GatewayAuth::issuers`] signed it for
/// [`GatewayAuth::audience`]. A tool is listed and callable only when a
/// rule grants it: anything no rule grants is refused.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GatewayAuth {
    /// This server's public canonical URI, as clients reach it (for
    /// example `https://tools.example.com/mcp`). Tokens must carry it as
    /// their audience (`aud`), and the protected resource metadata names
    /// it as the `resource`. It cannot be left out or switched off.
    #[schemars(regex(pattern = r"^https?://[^\s/#?]+[^\s#]*$"))]
    pub audience: String,
    /// The authorization servers whose tokens are trusted.
    #[schemars(length(min = 1))]
    pub issuers: Vec<TokenIssuer>,
    /// What each caller may call; a tool no rule grants is neither listed
    /// nor callable.
    #[serde(default)]
    pub rules: Vec<AccessRule>,
    /// The scopes the metadata advertises and a 401 asks for; by default
    /// every scope a rule names.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Bounds on what one principal may hold at once.
    #[serde(default)]
    pub limits: PrincipalLimits,
    /// Where every authorization decision is written, one JSON line each.
    #[serde(default)]
    pub audit: Option<AuditConfig>,
}

/// An authorization server whose tokens are trusted.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenIssuer {
    /// Its issuer identifier, exactly as tokens carry it in `iss`.
    #[schemars(regex(pattern = r"^https?://[^\s/#?]+\S*$"))]
    pub issuer: String,
    /// Where its signing keys are published; found through its `OpenID` or
    /// OAuth metadata when left out.
    #[serde(default)]
    #[schemars(regex(pattern = r"^https?://[^\s/#?]+\S*$"))]
    pub jwks_uri: Option<String>,
    /// The signature algorithms accepted (default `RS256`, `ES256`).
    /// `none` and the shared-secret `HS*` algorithms are never accepted.
    #[serde(default = "default_algorithms")]
    #[schemars(schema_with = "algorithms_schema")]
    pub algorithms: Vec<String>,
    /// Opaque (non-JWT) tokens of this issuer are checked here (RFC 7662).
    #[serde(default)]
    pub introspection: Option<Introspection>,
    /// Whether this issuer's access tokens are typed plain `JWT` (or not
    /// typed) rather than `at+jwt` (RFC 9068), as some providers mint
    /// them. Off: a JWT must be typed `at+jwt`. Either way a token typed
    /// as another kind (an ID token, `id_token+jwt`, a logout token) is
    /// never an access token.
    #[serde(default)]
    pub plain_jwt: bool,
    /// The longest this issuer's published keys are believed before they
    /// are fetched again, in seconds: a key the issuer withdraws stops
    /// vouching for tokens at most this long after (sooner when the
    /// issuer's own `Cache-Control: max-age` says so). Between 2 and 600.
    #[serde(default = "default_keys_refresh_seconds")]
    #[schemars(range(min = 2, max = 600))]
    pub keys_refresh_seconds: u64,
}

impl TokenIssuer {
    /// An issuer whose keys are found through its metadata, signing with
    /// `RS256` or `ES256`, whose JWT access tokens are typed `at+jwt`.
    #[must_use]
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            jwks_uri: None,
            algorithms: default_algorithms(),
            introspection: None,
            plain_jwt: false,
            keys_refresh_seconds: DEFAULT_KEYS_REFRESH_SECONDS,
        }
    }

    /// Fetches this issuer's keys again at least every `seconds` (2 to
    /// 600; default 300).
    #[must_use]
    pub fn refresh_keys_every(mut self, seconds: u64) -> Self {
        self.keys_refresh_seconds = seconds;
        self
    }

    /// Accepts this issuer's JWT access tokens typed plain `JWT` (or not
    /// typed), as some providers mint them.
    #[must_use]
    pub fn with_plain_jwt(mut self) -> Self {
        self.plain_jwt = true;
        self
    }
}

/// The signature algorithms a gateway accepts, as the schema lists them.
const ACCEPTED_ALGORITHMS: &[&str] = &[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

fn algorithms_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "items": {"enum": ACCEPTED_ALGORITHMS},
        "default": ["RS256", "ES256"]
    })
}

fn default_algorithms() -> Vec<String> {
    vec!["RS256".to_owned(), "ES256".to_owned()]
}

/// A token introspection endpoint (RFC 7662) and this server's credentials
/// there.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Introspection {
    /// The endpoint's URL.
    #[schemars(regex(pattern = r"^https?://[^\s/#?]+\S*$"))]
    pub endpoint: String,
    /// This server's client id at the issuer.
    pub client_id: String,
    /// Its secret; `${VAR}` reads an environment variable.
    pub client_secret: String,
    /// How long an active answer is believed before the issuer is asked
    /// again (never past the token's `exp`): a revoked token is refused at
    /// most this long after. 0 asks on every request; at most 300.
    #[serde(default = "default_remember_seconds")]
    #[schemars(range(max = 300))]
    pub remember_seconds: u64,
    /// What this issuer's opaque tokens start with (many issuers prefix
    /// them, such as `kc_`): only those are sent to this endpoint. A token
    /// is shown to no issuer but the one that minted it, so when more than
    /// one issuer introspects, each names its prefix (and no prefix may
    /// start another's); a lone issuer may leave it out and is asked about
    /// every opaque token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub token_prefix: Option<String>,
}

/// The longest an introspection answer may be believed.
const MAX_INTROSPECTION_REMEMBER_SECONDS: u64 = 300;

fn default_remember_seconds() -> u64 {
    Introspection::DEFAULT_REMEMBER_SECONDS
}

impl Introspection {
    /// Seconds an introspection answer is believed by default.
    pub const DEFAULT_REMEMBER_SECONDS: u64 = 30;

    /// The endpoint at `endpoint`, asked with this server's `client_id`
    /// and `client_secret`, active answers believed for
    /// [`DEFAULT_REMEMBER_SECONDS`](Self::DEFAULT_REMEMBER_SECONDS).
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Self {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            remember_seconds: Self::DEFAULT_REMEMBER_SECONDS,
            token_prefix: None,
        }
    }

    /// Sends only tokens starting with `prefix` to this endpoint.
    #[must_use]
    pub fn for_tokens_starting(mut self, prefix: impl Into<String>) -> Self {
        self.token_prefix = Some(prefix.into());
        self
    }

    /// Believes an active answer for `seconds` (0: ask every time).
    #[must_use]
    pub fn remember_for(mut self, seconds: u64) -> Self {
        self.remember_seconds = seconds;
        self
    }
}

/// Grants tools to the callers that hold every scope and claim it names.
/// A rule selects tools by name, by capability or by the MCP server they
/// come from (any of the three, at least one).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [
    {"required": ["tools"], "properties": {"tools": {"minItems": 1}}},
    {"required": ["capabilities"], "properties": {"capabilities": {"minItems": 1}}},
    {"required": ["servers"], "properties": {"servers": {"minItems": 1}}}
]))]
pub struct AccessRule {
    /// Scopes the token must hold, all of them.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Claims the token must carry: each equal to the value, or (a list
    /// claim such as `groups`) containing it.
    #[serde(default)]
    pub claims: BTreeMap<String, String>,
    /// Tools granted by name; `*` grants every tool.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Tools granted by capability: those that have every one listed.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub capabilities: Vec<Capability>,
    /// Tools granted by the MCP server they come from (its configured
    /// name).
    #[serde(default)]
    pub servers: Vec<String>,
}

/// What one principal (an issuer's subject) may hold at once. Every cap is
/// per principal, so no caller can fill another's.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PrincipalLimits {
    /// MCP sessions open at once.
    #[schemars(range(min = 1))]
    pub sessions: usize,
    /// Calls waiting for a person's approval or answer at once.
    #[schemars(range(min = 1))]
    pub pending_approvals: usize,
    /// Requests handled at once.
    #[schemars(range(min = 1))]
    pub concurrent_requests: usize,
    /// Requests per minute, with bursts of up to a tenth of it.
    #[schemars(range(min = 1))]
    pub requests_per_minute: u32,
}

impl Default for PrincipalLimits {
    fn default() -> Self {
        Self {
            sessions: 16,
            pending_approvals: 4,
            concurrent_requests: 32,
            requests_per_minute: 1_200,
        }
    }
}

/// The audit log: one JSON line per authorization decision, rotated when
/// it grows past a size.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The file written; rotated files get `.1`, `.2`, … appended.
    pub path: PathBuf,
    /// Bytes past which the file is rotated (default 10 MiB).
    #[serde(default = "default_audit_bytes")]
    #[schemars(range(min = 1))]
    pub max_bytes: u64,
    /// Rotated files kept (default 5); older ones are removed.
    #[serde(default = "default_audit_files")]
    #[schemars(range(min = 1))]
    pub keep: usize,
    /// Whether a call's arguments are written too (off: they may hold
    /// what the log's readers should not see).
    #[serde(default)]
    pub arguments: bool,
}

impl AuditConfig {
    /// A log at `path` with the default bounds, arguments left out.
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            max_bytes: default_audit_bytes(),
            keep: default_audit_files(),
            arguments: false,
        }
    }
}

fn default_audit_bytes() -> u64 {
    10 * 1024 * 1024
}

fn default_audit_files() -> usize {
    5
}

/// Algorithms a gateway never accepts, whatever the configuration says:
/// an unsigned token, and shared secrets (an issuer's public key used as
/// an HMAC secret is the classic forgery).
const REFUSED_ALGORITHMS: &[&str] = &["none", "HS256", "HS384", "HS512"];

/// Seconds an issuer's keys are believed by default before they are
/// fetched again (a withdrawn key stops vouching at most this long after).
pub(crate) const DEFAULT_KEYS_REFRESH_SECONDS: u64 = 300;

/// The range of `keys_refresh_seconds`: never more often than an unknown
/// key may cause a fetch, never longer than a withdrawn key may be kept.
pub(crate) const KEYS_REFRESH_SECONDS: std::ops::RangeInclusive<u64> = 2..=600;

fn default_keys_refresh_seconds() -> u64 {
    DEFAULT_KEYS_REFRESH_SECONDS
}

impl GatewayAuth {
    /// Trusts `issuers`' tokens made out to `audience` (this server's public
    /// URI); grants nothing until rules are added.
    #[must_use]
    pub fn new(audience: impl Into<String>, issuers: Vec<TokenIssuer>) -> Self {
        Self {
            audience: audience.into(),
            issuers,
            rules: Vec::new(),
            scopes_supported: None,
            limits: PrincipalLimits::default(),
            audit: None,
        }
    }

    /// Adds a rule.
    #[must_use]
    pub fn rule(mut self, rule: AccessRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Sets the per-principal limits.
    #[must_use]
    pub fn limits(mut self, limits: PrincipalLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Writes every decision to `audit`.
    #[must_use]
    pub fn audit(mut self, audit: AuditConfig) -> Self {
        self.audit = Some(audit);
        self
    }

    /// The scopes the metadata advertises: as configured, or every scope a
    /// rule names, sorted.
    #[must_use]
    pub fn advertised_scopes(&self) -> Vec<String> {
        if let Some(scopes) = &self.scopes_supported {
            return scopes.clone();
        }
        let all: BTreeSet<&String> = self.rules.iter().flat_map(|r| &r.scopes).collect();
        all.into_iter().cloned().collect()
    }

    /// Every problem in the configuration at once, each saying what to
    /// change; empty when it can serve.
    #[must_use]
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        match url_of(&self.audience) {
            Some(url) if url.fragment().is_none() => {}
            Some(_) => problems.push(format!(
                "auth.audience `{}` has a fragment; give the server's URI without one",
                self.audience
            )),
            None => problems.push(format!(
                "auth.audience `{}` is not an absolute http(s) URI; give the URI clients reach the server at, such as https://tools.example.com/mcp",
                self.audience
            )),
        }
        if self.issuers.is_empty() {
            problems.push(
                "auth.issuers is empty; name the authorization server whose tokens are trusted"
                    .to_owned(),
            );
        }
        for (i, issuer) in self.issuers.iter().enumerate() {
            check_issuer(i, issuer, &mut problems);
        }
        check_introspection_routes(&self.issuers, &mut problems);
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.tools.is_empty() && rule.capabilities.is_empty() && rule.servers.is_empty() {
                problems.push(format!(
                    "auth.rules[{i}] grants no tool; name `tools` (`*` for all), `capabilities` or `servers`"
                ));
            }
        }
        let limits = &self.limits;
        for (name, value) in [
            ("sessions", limits.sessions),
            ("pending_approvals", limits.pending_approvals),
            ("concurrent_requests", limits.concurrent_requests),
            ("requests_per_minute", limits.requests_per_minute as usize),
        ] {
            if value == 0 {
                problems.push(format!(
                    "auth.limits.{name} is 0, which refuses every caller; give at least 1"
                ));
            }
        }
        if let Some(audit) = &self.audit
            && (audit.max_bytes == 0 || audit.keep == 0)
        {
            problems.push(
                "auth.audit: `max_bytes` and `keep` must be at least 1 (the log is bounded, never off)"
                    .to_owned(),
            );
        }
        problems
    }
}

fn check_issuer(i: usize, issuer: &TokenIssuer, problems: &mut Vec<String>) {
    if url_of(&issuer.issuer).is_none() {
        problems.push(format!(
            "auth.issuers[{i}].issuer `{}` is not an absolute http(s) URI",
            issuer.issuer
        ));
    }
    if let Some(jwks) = &issuer.jwks_uri
        && url_of(jwks).is_none()
    {
        problems.push(format!(
            "auth.issuers[{i}].jwks_uri `{jwks}` is not an absolute http(s) URI"
        ));
    }
    if issuer.algorithms.is_empty() {
        problems.push(format!(
            "auth.issuers[{i}].algorithms is empty; leave it out for RS256 and ES256"
        ));
    }
    for algorithm in &issuer.algorithms {
        if REFUSED_ALGORITHMS
            .iter()
            .any(|refused| refused.eq_ignore_ascii_case(algorithm))
        {
            problems.push(format!(
                "auth.issuers[{i}].algorithms: `{algorithm}` is never accepted (unsigned or shared-secret tokens can be forged); use RS256, PS256, ES256, ES384 or EdDSA"
            ));
        } else if algorithm.parse::<jsonwebtoken::Algorithm>().is_err() {
            problems.push(format!(
                "auth.issuers[{i}].algorithms: `{algorithm}` is not a signature algorithm; use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or EdDSA"
            ));
        }
    }
    if !KEYS_REFRESH_SECONDS.contains(&issuer.keys_refresh_seconds) {
        problems.push(format!(
            "auth.issuers[{i}].keys_refresh_seconds: {} is outside {}..={}: a withdrawn signing key would vouch for tokens that long, or the keys would be fetched on every request",
            issuer.keys_refresh_seconds,
            KEYS_REFRESH_SECONDS.start(),
            KEYS_REFRESH_SECONDS.end()
        ));
    }
    if let Some(introspection) = &issuer.introspection {
        if url_of(&introspection.endpoint).is_none() {
            problems.push(format!(
                "auth.issuers[{i}].introspection.endpoint `{}` is not an absolute http(s) URI",
                introspection.endpoint
            ));
        }
        if introspection.remember_seconds > MAX_INTROSPECTION_REMEMBER_SECONDS {
            problems.push(format!(
                "auth.issuers[{i}].introspection.remember_seconds: {} is longer than {MAX_INTROSPECTION_REMEMBER_SECONDS}, which would keep a revoked token working that long",
                introspection.remember_seconds
            ));
        }
    }
}

/// Refuses introspecting issuers whose tokens cannot be told apart: with
/// more than one, each names the prefix of its tokens, and no prefix starts
/// another's (a token must go to one issuer only, never to each in turn).
fn check_introspection_routes(issuers: &[TokenIssuer], problems: &mut Vec<String>) {
    let introspecting: Vec<(usize, Option<&str>)> = issuers
        .iter()
        .enumerate()
        .filter_map(|(i, issuer)| {
            let introspection = issuer.introspection.as_ref()?;
            Some((i, introspection.token_prefix.as_deref()))
        })
        .collect();
    for &(i, prefix) in &introspecting {
        if prefix == Some("") {
            problems.push(format!(
                "auth.issuers[{i}].introspection.token_prefix is empty; name what the issuer's tokens start with, or leave it out"
            ));
        }
    }
    if introspecting.len() < 2 {
        return;
    }
    for &(i, prefix) in &introspecting {
        let Some(prefix) = prefix.filter(|p| !p.is_empty()) else {
            problems.push(format!(
                "auth.issuers[{i}].introspection.token_prefix is missing: {} issuers introspect tokens, and a token is shown only to the issuer that minted it; name what this issuer's tokens start with",
                introspecting.len()
            ));
            continue;
        };
        for &(j, other) in &introspecting {
            if j > i
                && let Some(other) = other.filter(|o| !o.is_empty())
                && (other.starts_with(prefix) || prefix.starts_with(other))
            {
                problems.push(format!(
                    "auth.issuers[{i}] and auth.issuers[{j}] introspect tokens starting `{prefix}` and `{other}`, which one token could both start with; give prefixes neither of which starts the other"
                ));
            }
        }
    }
}

/// `text` as an absolute http(s) URL.
pub(crate) fn url_of(text: &str) -> Option<reqwest::Url> {
    let url = reqwest::Url::parse(text).ok()?;
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then_some(url)
}
