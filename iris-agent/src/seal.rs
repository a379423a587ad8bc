//! Seals on the states runs hand out: a state leaves the process (a file,
//! a browser, a queue) and comes back maybe edited.
//!
//! The process that paused a run knows the state it handed out; another
//! process does not, and without a seal it can only check that a state is
//! consistent in itself. Every state a runner without a store hands out
//! carries an HMAC-SHA256 of everything in it, and a resume refuses a
//! state whose seal does not verify: an edited history, step count,
//! disclosure or skill list, finished result or waiting call, or a state
//! sealed with another key or none. The key is the host's own
//! ([`StateKey::host`], made once) unless the runner is given one
//! ([`AgentRunner::with_state_key`](crate::AgentRunner::with_state_key),
//! the same for every machine that resumes the runs); a host that keeps
//! states where nobody else writes may say so by name
//! ([`AgentRunner::trust_unsealed_states`](crate::AgentRunner::trust_unsealed_states)).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::state::RunState;

/// The fewest bytes of secret a key may have: the length of the MAC.
const MIN_SECRET_BYTES: usize = 32;

/// The secret that seals and verifies states. Give every process that
/// resumes the same runs the same key, and keep it out of the states'
/// reach (an environment variable, a secret store).
#[derive(Clone)]
pub struct StateKey {
    /// HMAC-SHA256 keyed with the secret, cloned for each state.
    keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

/// Why a [`StateKey`] could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateKeyError {
    /// The secret is shorter than a MAC.
    #[error(
        "a state key needs at least {MIN_SECRET_BYTES} bytes of secret and this one has {len}; generate one, for example with `openssl rand -hex 32`"
    )]
    TooShort {
        /// The secret's length in bytes.
        len: usize,
    },
    /// The host's key file could not be read or made.
    #[error(
        "the host's state key `{path}` could not be {doing} ({source}); give the runner a key (`with_state_key`), or point `{HOST_KEY_FILE_VAR}` at a file it may keep"
    )]
    HostKey {
        /// The key file.
        path: std::path::PathBuf,
        /// What was being done: `read` or `made`.
        doing: &'static str,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The environment variable is not set, or not text.
    #[error(
        "the state key variable `{name}` is not set (or is not UTF-8); set it to a secret of at least {MIN_SECRET_BYTES} bytes, the same in every process that resumes these runs"
    )]
    Missing {
        /// The variable.
        name: String,
    },
}

impl StateKey {
    /// A key from `secret`, at least 32 bytes.
    ///
    /// # Errors
    /// [`StateKeyError::TooShort`] for a shorter secret.
    pub fn new(secret: impl AsRef<[u8]>) -> Result<Self, StateKeyError> {
        let secret = secret.as_ref();
        let len = secret.len();
        if len < MIN_SECRET_BYTES {
            return Err(StateKeyError::TooShort { len });
        }
        let keyed = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
            .map_err(|_| StateKeyError::TooShort { len })?;
        Ok(Self { keyed })
    }

    /// A key from the environment variable `name` (its bytes are the
    /// secret).
    ///
    /// # Errors
    /// [`StateKeyError::Missing`] when it is not set,
    /// [`StateKeyError::TooShort`] when it holds fewer than 32 bytes.
    pub fn from_env(name: &str) -> Result<Self, StateKeyError> {
        let secret = std::env::var(name).map_err(|_| StateKeyError::Missing {
            name: name.to_owned(),
        })?;
        Self::new(secret)
    }

    /// The host's own key: the secret in the file `IRIS_STATE_KEY_FILE`
    /// names, else `$XDG_STATE_HOME/iris/state.key` (by default
    /// `~/.local/state/iris/state.key`), made there the first time (64
    /// random hexadecimal digits, readable and writable by its owner only,
    /// in a folder only its owner may enter). Every process of the same
    /// user on this machine seals with it alike; runs resumed on other
    /// machines need a key given to each ([`StateKey::from_env`]).
    ///
    /// # Errors
    /// [`StateKeyError::HostKey`] when the file cannot be read or made, or
    /// is not a regular file only its owner may read;
    /// [`StateKeyError::TooShort`] when it holds fewer than 32 bytes.
    pub fn host() -> Result<Self, StateKeyError> {
        let path = host_key_path();
        let failed = |doing, source| StateKeyError::HostKey {
            path: path.clone(),
            doing,
            source,
        };
        match read_key_file(&path) {
            Ok(secret) => return Self::new(secret.trim()),
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(failed("read", err));
            }
            Err(_) => {}
        }
        match make_key_file(&path) {
            Ok(secret) => Self::new(secret),
            // Another process made it first: its key is the host's.
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let secret = read_key_file(&path).map_err(|err| failed("read", err))?;
                Self::new(secret.trim())
            }
            Err(err) => Err(failed("made", err)),
        }
    }

    /// A key of random bytes, for this process alone.
    fn ephemeral() -> Result<Self, StateKeyError> {
        let mut secret = [0_u8; MIN_SECRET_BYTES];
        getrandom::fill(&mut secret).map_err(|err| StateKeyError::HostKey {
            path: std::path::PathBuf::new(),
            doing: "made",
            source: std::io::Error::other(err.to_string()),
        })?;
        Self::new(secret)
    }

    /// The MAC of `state`, which carries no seal.
    fn mac(&self, state: &RunState) -> Hmac<Sha256> {
        let mut mac = self.keyed.clone();
        absorb_json(&mut mac, state);
        mac
    }

    /// Seals `state` as it stands.
    pub(crate) fn seal(&self, state: &mut RunState) {
        state.seal = None;
        let tag = self.mac(state).finalize().into_bytes();
        state.seal = Some(iris_runtime::__wings::hex(&tag));
    }

    /// Whether `seal`, taken off `state`, is this key's seal of what the
    /// state holds; why not otherwise.
    pub(crate) fn verify(&self, state: &RunState, seal: Option<&str>) -> Result<(), &'static str> {
        let Some(seal) = seal else {
            return Err(
                "it carries no seal, and this runner resumes only states sealed with its key",
            );
        };
        let Some(tag) = unhex(seal) else {
            return Err("its seal is not a seal");
        };
        // Compared in constant time.
        self.mac(state)
            .verify_slice(&tag)
            .map_err(|_| "its seal does not verify: it was edited, or sealed with another key")
    }
}

/// The variable naming the file of the host's state key.
const HOST_KEY_FILE_VAR: &str = "IRIS_STATE_KEY_FILE";

/// The host's key, read or made once per process; when neither works (no
/// home folder, a read-only one) a key of this process alone, said once:
/// its states then resume only here.
pub(crate) fn host_key() -> Option<&'static StateKey> {
    static HOST: std::sync::OnceLock<Option<StateKey>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| match StateKey::host() {
        Ok(key) => Some(key),
        Err(error) => {
            tracing::warn!(%error, "states are sealed with a key of this process alone, and resume only here");
            StateKey::ephemeral().ok()
        }
    })
    .as_ref()
}

fn host_key_path() -> std::path::PathBuf {
    if let Some(file) = std::env::var_os(HOST_KEY_FILE_VAR).filter(|f| !f.is_empty()) {
        return file.into();
    }
    let state_home = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|home| std::path::Path::new(&home).join(".local/state"))
        })
        .unwrap_or_else(std::env::temp_dir);
    state_home.join("iris").join("state.key")
}

/// The secret in the key file at `path`: a regular file (never a link)
/// that only its owner may read.
fn read_key_file(path: &std::path::Path) -> std::io::Result<String> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "it is not a regular file (a link, a folder or a device)",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(std::io::Error::other(
                "others may read it; make it readable by its owner only (chmod 600)",
            ));
        }
    }
    std::fs::read_to_string(path)
}

/// Makes the key file at `path` with a fresh secret, refusing to replace
/// one (`AlreadyExists` when another process made it first).
fn make_key_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Write as _;
    if let Some(folder) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        builder.create(folder)?;
    }
    let mut random = [0_u8; MIN_SECRET_BYTES + 8];
    getrandom::fill(&mut random).map_err(|err| std::io::Error::other(err.to_string()))?;
    let secret = iris_runtime::__wings::hex(&random[..MIN_SECRET_BYTES]);
    // Written whole under a name of its own, then linked into place, which
    // never replaces a file: a reader never sees half a key.
    let mut draft = path.as_os_str().to_owned();
    draft.push(format!(
        ".{}",
        iris_runtime::__wings::hex(&random[MIN_SECRET_BYTES..])
    ));
    let draft = std::path::PathBuf::from(draft);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = options.open(&draft).and_then(|mut file| {
        file.write_all(secret.as_bytes())?;
        file.sync_all()
    });
    let linked = written.and_then(|()| std::fs::hard_link(&draft, path));
    let _ = std::fs::remove_file(&draft);
    linked.map(|()| secret)
}

/// Feeds `state`'s JSON into `digest` in blocks (JSON is written a few
/// bytes at a time, and a digest takes a block at once far quicker).
/// Writing a state's JSON cannot fail: every part is JSON, and the digest
/// takes every byte.
pub(crate) fn absorb_json<D: sha2::digest::Update>(digest: &mut D, state: &RunState) {
    use std::io::Write as _;
    let mut blocks = std::io::BufWriter::with_capacity(8 * 1024, Absorb(digest));
    let _ = serde_json::to_writer(&mut blocks, state);
    let _ = blocks.flush();
}

/// Feeds what is written into a hash or MAC, so a state's JSON is hashed
/// without being held whole.
pub(crate) struct Absorb<'a, D>(pub(crate) &'a mut D);

impl<D: sha2::digest::Update> std::io::Write for Absorb<'_, D> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            let high = char::from(pair[0]).to_digit(16)?;
            let low = char::from(pair[1]).to_digit(16)?;
            u8::try_from(high * 16 + low).ok()
        })
        .collect()
}
