//! Seals on the states runs hand out, for hosts that keep states where
//! someone else could edit them (a browser, a shared queue, a database
//! other services write to).
//!
//! The process that paused a run knows the state it handed out; another
//! process does not, and without a seal it can only check that a state is
//! consistent in itself. With a [`StateKey`] shared by every process that
//! resumes runs, each state carries an HMAC-SHA256 of everything in it,
//! and a resume anywhere refuses a state whose seal does not verify: an
//! edited history, disclosure list, finished result or waiting call, or a
//! state sealed with another key or none.

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

    /// The MAC of `state`, which carries no seal.
    fn mac(&self, state: &RunState) -> Hmac<Sha256> {
        let mut mac = self.keyed.clone();
        // Writing a state's JSON into the MAC cannot fail: every part is
        // JSON, and the writer takes every byte.
        let _ = serde_json::to_writer(Absorb(&mut mac), state);
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
