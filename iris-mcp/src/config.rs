//! How one MCP server is reached and how its tools join the registry,
//! deserializable so an agent file can hold a list of them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::McpError;
use iris_runtime::config::Seconds;

/// One MCP server: how to reach it and how its tools are offered.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The server's name: in errors, in each tool's origin, and the default
    /// prefix of its tools' model-facing names.
    pub name: String,
    /// How the server is reached.
    pub transport: McpTransport,
    /// Model-facing names are `prefix__wire_name`; the name when not given.
    /// Empty: the server's own names, as they are (a gateway fronting one
    /// server; a name taken twice is refused when the tools are
    /// registered).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Believe the server's annotations (`readOnlyHint`, `idempotentHint`,
    /// `openWorldHint`). Off by default: they are hints from a server that
    /// may not be trusted, and every tool is then `write` + `network`.
    #[serde(default)]
    pub trust_annotations: bool,
    /// Let the server ask its caller while its tools run, for input (form
    /// elicitation) or for a model (sampling): served by `iris serve`, a
    /// request goes to the caller behind the call, through the caller's
    /// own client; with nobody to ask, the server is told so. Off by
    /// default: a server that cannot ask does without, rather than meet a
    /// person who is not there.
    #[serde(default)]
    pub relay_input: bool,
    /// Let the agent's model answer the server's requests for a model
    /// (sampling) when the caller behind the call cannot sample (an
    /// agent's run, a client without sampling): text only, at most the
    /// model's `max_tokens`, each answer counted among the call's requests
    /// and audited. Off by default: every answer is spent on the
    /// operator's model. The host gives the model
    /// ([`McpServerConfig::with_sampling_model`]; the assembly gives the
    /// agent's own).
    #[serde(default)]
    pub sample_with_model: bool,
    /// The model that answers then, set by the host, never by the agent
    /// file.
    #[serde(skip)]
    #[schemars(skip)]
    pub sampling_model: Option<crate::sampling::SamplingModel>,
    /// The folders the server is told are its roots when it asks
    /// (`roots/list`), such as the workspace `iris serve` serves: set by the
    /// host ([`McpServerConfig::with_roots`], or the assembly for a server
    /// that may ask its caller), never by the agent file. None by default:
    /// the server is then told Iris has no roots to give.
    #[serde(skip)]
    #[schemars(skip)]
    pub roots: Vec<PathBuf>,
    /// Whether the tools are offered up front or found through
    /// `tool_search`.
    #[serde(default)]
    pub exposure: McpExposure,
    /// Only these tools (wire names), when given.
    #[serde(default)]
    pub include: Option<Vec<String>>,
    /// Never these tools (wire names).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// How long one call may take (default 60 s).
    #[serde(default)]
    pub timeout: Option<Seconds>,
    /// How long the server may take to start and answer `initialize`
    /// (default 30 s).
    #[serde(default)]
    pub startup_timeout: Option<Seconds>,
}

/// How an MCP server is reached.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum McpTransport {
    /// A child process speaking MCP on its standard input and output.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment variables set for it (beside the inherited ones).
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// Its working directory.
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    /// A server reached over streamable HTTP.
    Http {
        /// The MCP endpoint, such as `https://example.com/mcp`.
        url: String,
        /// Headers sent with every request. A value may name environment
        /// variables as `${NAME}` (for secrets kept out of the file).
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Credentials of this gateway's own at the server's authorization
        /// server (OAuth client credentials): a token is fetched before the
        /// first request and again when it expires. Never the token a
        /// caller of the gateway presented, which is never forwarded.
        #[serde(default)]
        oauth: Option<UpstreamOAuth>,
        /// A person's sign-in at the server's authorization server (the
        /// OAuth authorization-code flow with PKCE), done once with `iris
        /// login <server>`; the tokens are kept in a cache file only its
        /// owner can read and refreshed when they expire. Not together
        /// with `oauth`.
        #[serde(default)]
        login: Option<UpstreamLogin>,
    },
}

/// How a person signs in to an MCP server's authorization server with
/// `iris login`: the authorization-code flow with PKCE, the browser sent
/// back to a loopback address of this machine.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamLogin {
    /// The client id registered there for this tool; without one the
    /// client registers itself (when the authorization server allows
    /// dynamic registration).
    #[serde(default)]
    pub client_id: Option<String>,
    /// The client's secret, for a confidential client; `${NAME}` reads an
    /// environment variable.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The scopes asked for (default: those the server's metadata names).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The loopback port the browser is sent back to (default: any free
    /// one, which native clients may use under RFC 8252).
    #[serde(default)]
    pub callback_port: Option<u16>,
    /// The token cache file (default: `$IRIS_TOKEN_CACHE`, else
    /// `iris/tokens.json` in the user's state or local data folder).
    #[serde(default)]
    pub token_cache: Option<PathBuf>,
}

/// This client's credentials at an MCP server's authorization server (the
/// one the server's protected resource metadata names): the OAuth client
/// credentials grant, the secret sent in the request body.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamOAuth {
    /// This client's id there.
    pub client_id: String,
    /// Its secret; `${NAME}` reads an environment variable.
    pub client_secret: String,
    /// The scopes asked for.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The resource the token is for (default: the server's URL).
    #[serde(default)]
    pub resource: Option<String>,
}

/// Whether a server's tools are offered up front.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpExposure {
    /// Every tool is offered with each request.
    Eager,
    /// Tools are found through `tool_search`.
    Deferred,
    /// Deferred when the server lists more than 20 tools, eager otherwise.
    #[default]
    Auto,
}

impl McpExposure {
    /// Above this many tools, `exposure: auto` defers a server's tools
    /// behind `tool_search`.
    pub const AUTO_DEFER_ABOVE: usize = 20;
}

impl McpServerConfig {
    /// A call waits this long for its answer unless the server's `timeout`
    /// says otherwise.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
    /// A server must finish `initialize` within this unless its
    /// `startup_timeout` says otherwise.
    pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

    /// A server started as `command args...` over stdio, with every other
    /// setting at its default.
    pub fn stdio<I, S>(name: impl Into<String>, command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::new(
            name,
            McpTransport::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A server at `url` over streamable HTTP, with every other setting at
    /// its default.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            name,
            McpTransport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
                oauth: None,
                login: None,
            },
        )
    }

    fn new(name: impl Into<String>, transport: McpTransport) -> Self {
        Self {
            name: name.into(),
            transport,
            prefix: None,
            trust_annotations: false,
            relay_input: false,
            sample_with_model: false,
            sampling_model: None,
            roots: Vec::new(),
            exposure: McpExposure::Auto,
            include: None,
            exclude: Vec::new(),
            timeout: None,
            startup_timeout: None,
        }
    }

    /// Lets the server ask for input while its tools run (see
    /// [`McpServerConfig::relay_input`]).
    #[must_use]
    pub fn with_relayed_input(mut self) -> Self {
        self.relay_input = true;
        self
    }

    /// Lets `model` answer the server's requests for a model when the
    /// caller behind the call cannot sample (see
    /// [`McpServerConfig::sample_with_model`]).
    #[must_use]
    pub fn with_sampling_model(mut self, model: crate::sampling::SamplingModel) -> Self {
        self.sample_with_model = true;
        self.sampling_model = Some(model);
        self
    }

    /// The model that answers the server's samplings, when the operator
    /// allows it and gave one.
    pub(crate) fn sampler(&self) -> Option<&crate::sampling::SamplingModel> {
        self.sampling_model
            .as_ref()
            .filter(|_| self.sample_with_model)
    }

    /// Tells the server that `folders` are its roots when it asks
    /// (`roots/list`), as `file://` URIs.
    #[must_use]
    pub fn with_roots(mut self, folders: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        self.roots = folders.into_iter().map(Into::into).collect();
        self
    }

    /// Authenticates to the server (over HTTP) with OAuth client
    /// credentials; ignored for a server started as a process.
    #[must_use]
    pub fn with_oauth(mut self, credentials: UpstreamOAuth) -> Self {
        if let McpTransport::Http { oauth, .. } = &mut self.transport {
            *oauth = Some(credentials);
        }
        self
    }

    /// Signs in to the server (over HTTP) as a person, with the tokens
    /// `iris login` cached; ignored for a server started as a process.
    #[must_use]
    pub fn with_login(mut self, sign_in: UpstreamLogin) -> Self {
        if let McpTransport::Http { login, .. } = &mut self.transport {
            *login = Some(sign_in);
        }
        self
    }

    /// The prefix of the tools' model-facing names.
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Believes (or not) the server's annotations.
    #[must_use]
    pub fn with_trusted_annotations(mut self, trust: bool) -> Self {
        self.trust_annotations = trust;
        self
    }

    /// How the tools are offered.
    #[must_use]
    pub fn with_exposure(mut self, exposure: McpExposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// How long one call may take.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Seconds(timeout));
        self
    }

    /// How long the server may take to start.
    #[must_use]
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = Some(Seconds(timeout));
        self
    }

    /// The prefix in use: the configured one, or the name.
    #[must_use]
    pub fn prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or(&self.name)
    }

    /// The per-call timeout in use.
    #[must_use]
    pub fn call_timeout(&self) -> Duration {
        self.timeout.map_or(Self::DEFAULT_CALL_TIMEOUT, |t| t.0)
    }

    /// The startup timeout in use.
    #[must_use]
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout
            .map_or(Self::DEFAULT_STARTUP_TIMEOUT, |t| t.0)
    }

    /// Whether the tool with this wire name is wanted.
    #[must_use]
    pub fn wants(&self, wire_name: &str) -> bool {
        self.include
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == wire_name))
            && !self.exclude.iter().any(|n| n == wire_name)
    }
}

/// `value` with each `${NAME}` replaced by that environment variable.
///
/// # Errors
/// [`McpError::Config`] naming a variable that is not set, or a `${` left
/// open.
pub(super) fn expand_env(server: &str, value: &str) -> Result<String, McpError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| McpError::Config {
            server: server.to_owned(),
            message: format!("a header value opens `${{` without closing it: `{value}`"),
            source: None,
        })?;
        let name = &after[..end];
        let expanded = std::env::var(name).map_err(|error| McpError::Config {
            server: server.to_owned(),
            message: format!(
                "environment variable `{name}` named by a header is not set; set it or remove the header"
            ),
            source: Some(Box::new(error)),
        })?;
        out.push_str(&expanded);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The configured headers, environment variables expanded, values marked
/// sensitive.
pub(crate) fn custom_headers(
    server: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<
    std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    McpError,
> {
    use reqwest::header::{HeaderName, HeaderValue};
    let config_error =
        |message: String, error: Box<dyn std::error::Error + Send + Sync>| McpError::Config {
            server: server.to_owned(),
            message,
            source: Some(error),
        };
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        let value = expand_env(server, value)?;
        let header = HeaderName::try_from(name.as_str()).map_err(|error| {
            config_error(
                format!("`{name}` is not a valid header name"),
                Box::new(error),
            )
        })?;
        let mut value = HeaderValue::try_from(value).map_err(|error| {
            config_error(
                format!("the value of header `{name}` is not valid in a header"),
                Box::new(error),
            )
        })?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    Ok(custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_reads_from_yaml_like_json_with_defaults() {
        let config: McpServerConfig = serde_json::from_value(serde_json::json!({
            "name": "everything",
            "transport": {"type": "stdio", "command": "npx", "args": ["-y", "server"]},
            "timeout": "5s",
            "exclude": ["longRunningOperation"],
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.prefix(), "everything");
        assert_eq!(config.exposure, McpExposure::Auto);
        assert_eq!(config.call_timeout(), Duration::from_secs(5));
        assert_eq!(
            config.startup_timeout(),
            McpServerConfig::DEFAULT_STARTUP_TIMEOUT
        );
        assert!(config.wants("echo"));
        assert!(!config.wants("longRunningOperation"));
    }

    #[test]
    fn header_values_name_environment_variables() {
        assert_eq!(
            expand_env("s", "Bearer ${PATH}").ok(),
            std::env::var("PATH").ok().map(|p| format!("Bearer {p}"))
        );
        let missing = expand_env("s", "${IRIS_SURELY_UNSET_VARIABLE}").unwrap_err();
        assert!(missing.to_string().contains("IRIS_SURELY_UNSET_VARIABLE"));
        assert!(expand_env("s", "${OPEN").is_err());
    }
}
