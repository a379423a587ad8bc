//! The token cache `iris login` fills: one JSON file only its owner can
//! read, holding each sign-in by the issuer that made its tokens and the
//! server (resource) they are for, so a token is never offered to another
//! authorization server's resource.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The cache file's format version.
const FORMAT: u32 = 1;

/// Why the token cache could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenCacheError {
    /// No folder for it is known on this system.
    #[error(
        "no folder for the token cache is known here: set {} to a file path",
        TokenCache::PATH_VAR
    )]
    NoFolder,
    /// Others than its owner may read it.
    #[error(
        "the token cache {path} can be read by others (mode {mode:o}): `chmod 600` it, or delete it and sign in again"
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// It could not be read or written.
    #[error("the token cache {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// It is not a token cache this version reads.
    #[error(
        "the token cache {path} is not one this version reads ({reason}): delete it and sign in again"
    )]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The token cache file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCache {
    path: PathBuf,
}

/// What the file holds: sign-ins by issuer, then by resource.
#[derive(Serialize, Deserialize, Default)]
struct CacheFile {
    format: u32,
    issuers: BTreeMap<String, BTreeMap<String, StoredCredentials>>,
}

impl TokenCache {
    /// The environment variable naming the token cache file.
    pub const PATH_VAR: &str = "IRIS_TOKEN_CACHE";

    /// The cache at `path`.
    #[must_use]
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The cache a sign-in uses when its configuration names none:
    /// `$IRIS_TOKEN_CACHE`, else `iris/tokens.json` in the user's state
    /// folder (or local data folder where there is no state folder).
    ///
    /// # Errors
    /// [`TokenCacheError::NoFolder`] when neither is known.
    pub fn default_location() -> Result<Self, TokenCacheError> {
        if let Some(path) = std::env::var_os(Self::PATH_VAR).filter(|p| !p.is_empty()) {
            return Ok(Self::at(path));
        }
        dirs::state_dir()
            .or_else(dirs::data_local_dir)
            .map(|folder| Self::at(folder.join("iris").join("tokens.json")))
            .ok_or(TokenCacheError::NoFolder)
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sign-in made at `issuer` for `resource`, if one is cached.
    ///
    /// # Errors
    /// When the file cannot be read, or others may read it.
    pub fn load(
        &self,
        issuer: &str,
        resource: &str,
    ) -> Result<Option<StoredCredentials>, TokenCacheError> {
        Ok(self
            .read()?
            .issuers
            .get(issuer)
            .and_then(|by_resource| by_resource.get(resource))
            .cloned())
    }

    /// Keeps (or, with `None`, forgets) the sign-in at `issuer` for
    /// `resource`, leaving every other one as it was. Returns whether one
    /// was there before.
    ///
    /// # Errors
    /// When the file cannot be read or written.
    pub fn store(
        &self,
        issuer: &str,
        resource: &str,
        credentials: Option<StoredCredentials>,
    ) -> Result<bool, TokenCacheError> {
        let mut file = self.read()?;
        let by_resource = file.issuers.entry(issuer.to_owned()).or_default();
        let had = match credentials {
            Some(credentials) => by_resource
                .insert(resource.to_owned(), credentials)
                .is_some(),
            None => by_resource.remove(resource).is_some(),
        };
        if by_resource.is_empty() {
            file.issuers.remove(issuer);
        }
        file.format = FORMAT;
        self.write(&file)?;
        Ok(had)
    }

    fn read(&self) -> Result<CacheFile, TokenCacheError> {
        let io = |source| TokenCacheError::Io {
            path: self.path.clone(),
            source,
        };
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CacheFile::default()),
            Err(e) => return Err(io(e)),
        };
        refuse_exposed(&self.path)?;
        let file: CacheFile =
            serde_json::from_slice(&text).map_err(|e| TokenCacheError::Unreadable {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
        if file.format != FORMAT {
            return Err(TokenCacheError::Unreadable {
                path: self.path.clone(),
                reason: format!("format {}, this version reads {FORMAT}", file.format),
            });
        }
        Ok(file)
    }

    /// Writes the whole file beside itself and renames it into place, so a
    /// crash leaves the old cache or the new one, never half of one; the
    /// file is created readable by its owner only, in a folder only its
    /// owner can list.
    fn write(&self, file: &CacheFile) -> Result<(), TokenCacheError> {
        let io = |source| TokenCacheError::Io {
            path: self.path.clone(),
            source,
        };
        let text = serde_json::to_vec_pretty(file).map_err(|e| io(std::io::Error::other(e)))?;
        let folder = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        create_private_folder(folder).map_err(io)?;
        let mut temp = self.path.clone().into_os_string();
        temp.push(format!(".{}.tmp", std::process::id()));
        let temp = PathBuf::from(temp);
        let written = (|| {
            let mut out = private_file(&temp)?;
            out.write_all(&text)?;
            out.sync_all()?;
            std::fs::rename(&temp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written.map_err(io)
    }
}

#[cfg(unix)]
fn refuse_exposed(path: &Path) -> Result<(), TokenCacheError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|source| TokenCacheError::Io {
            path: path.to_owned(),
            source,
        })?
        .permissions()
        .mode()
        & 0o777;
    // Any bit for the group or others: the file is not its owner's alone.
    #[allow(
        clippy::verbose_bit_mask,
        reason = "permission bits read best as a mask"
    )]
    let private = mode & 0o077 == 0;
    if private {
        Ok(())
    } else {
        Err(TokenCacheError::Exposed {
            path: path.to_owned(),
            mode,
        })
    }
}

#[cfg(not(unix))]
fn refuse_exposed(_path: &Path) -> Result<(), TokenCacheError> {
    Ok(())
}

#[cfg(unix)]
fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
}

#[cfg(not(unix))]
fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)
}

fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)
}

/// One sign-in in the cache, as rmcp's authorization manager stores and
/// refreshes it.
pub(super) struct CachedSignIn {
    pub(super) cache: TokenCache,
    pub(super) issuer: String,
    pub(super) resource: String,
}

impl CachedSignIn {
    fn failed(error: &TokenCacheError) -> AuthError {
        AuthError::CredentialStoreError(error.to_string())
    }
}

#[async_trait::async_trait]
impl CredentialStore for CachedSignIn {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.cache
            .load(&self.issuer, &self.resource)
            .map_err(|e| Self::failed(&e))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.cache
            .store(&self.issuer, &self.resource, Some(credentials))
            .map(drop)
            .map_err(|e| Self::failed(&e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.cache
            .store(&self.issuer, &self.resource, None)
            .map(drop)
            .map_err(|e| Self::failed(&e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.to_owned(), None, vec!["tools:read".to_owned()], None)
    }

    #[test]
    fn sign_ins_are_kept_apart_by_issuer_and_resource() {
        let folder = tempfile::tempdir().unwrap();
        let cache = TokenCache::at(folder.path().join("nested").join("tokens.json"));
        assert!(cache.load("https://a", "https://r").unwrap().is_none());
        assert!(
            !cache
                .store("https://a", "https://r", Some(credentials("one")))
                .unwrap()
        );
        cache
            .store("https://b", "https://r", Some(credentials("two")))
            .unwrap();
        assert_eq!(
            cache
                .load("https://a", "https://r")
                .unwrap()
                .unwrap()
                .client_id,
            "one"
        );
        assert_eq!(
            cache
                .load("https://b", "https://r")
                .unwrap()
                .unwrap()
                .client_id,
            "two"
        );
        assert!(cache.load("https://a", "https://other").unwrap().is_none());
        assert!(cache.store("https://a", "https://r", None).unwrap());
        assert!(cache.load("https://a", "https://r").unwrap().is_none());
        assert_eq!(
            cache
                .load("https://b", "https://r")
                .unwrap()
                .unwrap()
                .client_id,
            "two"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(cache.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(cache.path().parent().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_others_can_read_is_refused_saying_how_to_fix_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = tempfile::tempdir().unwrap();
        let cache = TokenCache::at(folder.path().join("tokens.json"));
        cache
            .store("https://a", "https://r", Some(credentials("one")))
            .unwrap();
        std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = cache
            .load("https://a", "https://r")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("chmod 600"), "{refused}");
    }

    #[test]
    fn a_damaged_cache_says_to_sign_in_again() {
        let folder = tempfile::tempdir().unwrap();
        let cache = TokenCache::at(folder.path().join("tokens.json"));
        cache
            .store("https://a", "https://r", Some(credentials("one")))
            .unwrap();
        std::fs::write(cache.path(), b"{ not json").unwrap();
        let refused = cache
            .load("https://a", "https://r")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("sign in again"), "{refused}");
    }
}
