//! An artifact's address: the first 128 bits of an HMAC-SHA256 of its body
//! under the store's own secret key, so a handle says nothing a caller
//! could check a guessed body against (a plain content hash would confirm
//! a guess: "is alice's report this text?"). The key is made once per
//! store with random bytes: a file of the store's folder, readable by its
//! owner only, or an object beside the artifacts of an object store, so
//! every replica addresses alike. The same body saved twice in one store
//! still has one address.
//!
//! Artifacts saved before addresses were keyed (a plain SHA-256 address)
//! no longer open: accepting a plain address would let whoever can put a
//! file in the store pass off a body of their own without the key.

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

/// The store's secret, what its addresses are keyed with.
#[derive(Clone)]
pub(super) struct AddressKey([u8; KEY_LEN]);

/// Bytes of a store's key: SHA-256's block, the longest key HMAC uses
/// as is.
pub(super) const KEY_LEN: usize = 64;

/// Where a local store keeps its key, and the name of an object store's
/// key object: not an address (addresses are 32 hexadecimal digits), so no
/// handle opens it.
pub(super) const KEY_NAME: &str = ".address-key";

impl std::fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AddressKey(..)")
    }
}

impl AddressKey {
    /// A new random key.
    pub(super) fn random() -> std::io::Result<Self> {
        let mut key = [0_u8; KEY_LEN];
        getrandom::fill(&mut key).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Self(key))
    }

    /// The key in `bytes`, when they are one.
    pub(super) fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    pub(super) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// Hashes a body as it streams by.
    pub(super) fn hasher(&self) -> BodyHasher {
        BodyHasher {
            keyed: keyed(&self.0),
        }
    }

    /// The address of `body`.
    pub(super) fn address(&self, body: &[u8]) -> String {
        let mut hasher = self.hasher();
        hasher.update(body);
        hasher.address()
    }
}

fn keyed(key: &[u8; KEY_LEN]) -> Hmac<Sha256> {
    <Hmac<Sha256>>::new(&(*key).into())
}

/// A body's hashes, as it streams by.
pub(super) struct BodyHasher {
    keyed: Hmac<Sha256>,
}

impl BodyHasher {
    pub(super) fn update(&mut self, bytes: &[u8]) {
        self.keyed.update(bytes);
    }

    /// The address a body saved now gets.
    pub(super) fn address(self) -> String {
        super::id_of(&self.keyed.finalize().into_bytes())
    }

    /// Whether `id` is this body's address.
    pub(super) fn matches(self, id: &str) -> bool {
        self.address() == id
    }
}
