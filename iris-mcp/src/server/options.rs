//! What serving is configured with: the tools served, limits, timeouts,
//! origins, authentication, and their defaults.

use std::path::PathBuf;

use super::auth::GatewayAuth;
use std::time::Duration;

/// Which tools a served registry lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServedTools {
    /// Every tool, deferred ones included.
    #[default]
    All,
    /// The eager tools and `tool_search`; deferred tools are found through
    /// it, as a model in Iris finds them.
    EagerAndSearch,
}

/// How an executor is served.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The name the server gives in `initialize`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Which tools are listed.
    pub tools: ServedTools,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// The workspace calls run in (the file tools' root).
    pub workspace: PathBuf,
    /// Instructions for the client's model, when given.
    pub instructions: Option<String>,
    /// Most connections served at once over HTTP; a client that would open
    /// one more is refused until one ends (a session ends on `DELETE`, or
    /// after five minutes without a request).
    pub max_sessions: usize,
    /// Most HTTP connections open at once; one more is closed at once. A
    /// client that opens connections and sends nothing (or its request a
    /// byte at a time) is cut off after a deadline, so it cannot hold them.
    pub max_connections: usize,
    /// Longest a client may take to send a request's body over HTTP; past
    /// it the request is refused with 408.
    pub request_timeout: Duration,
    /// Longest a client may take to send a request's head over HTTP (at
    /// most `request_timeout`); past it the connection is closed.
    pub header_timeout: Duration,
    /// Most connections one address may hold before any of its requests
    /// was let in (by the gate's token check, or read whole without one):
    /// a flood of half-sent requests from one address holds no more. When
    /// every place is held, the oldest connection still waiting for its
    /// first whole request gives its place to a newcomer. Behind a reverse
    /// proxy every connection comes from the proxy's address: raise it to
    /// `max_connections` there (the proxy should bound slow clients).
    pub max_anonymous_per_address: usize,
    /// Browser origins whose pages may call the server, as
    /// `scheme://host:port` (`:*` for any port). A request with an `Origin`
    /// header not listed is refused (DNS-rebinding protection); a request
    /// without one (not from a browser) is served. Loopback pages unless
    /// set.
    pub allowed_origins: Vec<String>,
    /// How long a call waits for the person behind the client to answer
    /// its approval (through elicitation); past it the call is refused. A
    /// question waits as long, and then ends as `expired`.
    pub approval_timeout: Duration,
    /// Whether a client that can elicit (a person is behind it) is offered
    /// `ask_question`: the model's questions put to the person as a form.
    /// Run control: no hook, middleware or permission policy sees them;
    /// behind [`auth`](Self::auth) the rules say who may ask, as for any
    /// tool (it only reads). A client without elicitation is never offered
    /// it. Off unless set, and never when the registry has a tool of that
    /// name.
    pub questions: bool,
    /// Agent Skills the client's model may activate: their catalog is the
    /// `activate_skill` tool (run control, like `ask_question`: no hook,
    /// middleware or policy sees it; behind [`auth`](Self::auth) the rules
    /// say who may use it, as for any tool that only reads), each session
    /// keeps its own active skills, and each skill's files are resources
    /// (`skill://<name>/<path>`, read-only, to whom `activate_skill` is
    /// granted). None unless set, and never when the registry has a tool of
    /// that name.
    pub skills: Option<iris_skills::Skills>,
    /// Who may call over HTTP and what each caller may do (an OAuth 2.1
    /// resource server; see [`GatewayAuth`]). Without it, an HTTP server
    /// binds only to a loopback address unless
    /// [`ServeOptions::unauthenticated`] says otherwise. Not used over
    /// standard input and output, where the caller is the process that
    /// started the server.
    pub auth: Option<GatewayAuth>,
    /// Serve HTTP without authentication on an address other hosts can
    /// reach: anyone who reaches the port may call every tool. Off unless
    /// set, and a warning is logged at every start when set.
    pub unauthenticated: bool,
    /// Files and folders the served file tools never read or write,
    /// wherever they lie, with what each is (for the caller): what the
    /// agent is made of (`iris::agent::Agent::own_files`), the server's
    /// own configuration and secrets. The workspace's `.iris/` and every
    /// served skill's folder are hidden without being listed.
    pub hidden: Vec<(PathBuf, String)>,
}

impl ServeOptions {
    /// Tools per `tools/list` page unless the options say otherwise.
    pub const DEFAULT_PAGE_SIZE: usize = 100;

    /// Connections (MCP sessions) served at once unless the options say
    /// otherwise.
    pub const DEFAULT_MAX_SESSIONS: usize = 1_000;

    /// Most HTTP connections served at once unless configured.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;

    /// How long a client may take to send a request's head, and its body,
    /// unless configured.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

    /// How long a client may take to send a request's head unless
    /// configured.
    const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

    /// Most connections one address holds before it is let in, unless
    /// configured.
    const DEFAULT_MAX_ANONYMOUS_PER_ADDRESS: usize = 64;

    /// How long a call waits for a person's answer unless configured.
    pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

    /// The origins of pages on this machine, served unless configured
    /// (see [`allowed_origins`](Self::allowed_origins)).
    pub const LOOPBACK_ORIGINS: &[&str] = &[
        "http://localhost:*",
        "https://localhost:*",
        "http://127.0.0.1:*",
        "https://127.0.0.1:*",
        "http://[::1]:*",
        "https://[::1]:*",
    ];
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            name: "iris".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            tools: ServedTools::All,
            page_size: Self::DEFAULT_PAGE_SIZE,
            workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            instructions: None,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            max_anonymous_per_address: Self::DEFAULT_MAX_ANONYMOUS_PER_ADDRESS,
            approval_timeout: Self::DEFAULT_APPROVAL_TIMEOUT,
            questions: false,
            skills: None,
            auth: None,
            unauthenticated: false,
            hidden: Vec::new(),
            allowed_origins: Self::LOOPBACK_ORIGINS
                .iter()
                .map(|o| (*o).to_owned())
                .collect(),
        }
    }
}
