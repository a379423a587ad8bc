//! A real `OpenID` provider on loopback (oidc-provider, installed pinned by
//! `tests/oidc-provider/install.sh`) for the tests of authentication: the
//! gateway's own, and an upstream server's.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::peers;

/// The `OpenID` provider, stopped on drop.
pub(crate) struct Provider {
    child: std::process::Child,
    pub(crate) port: u16,
    keys: PathBuf,
}

impl Provider {
    /// Starts the provider on `port` (a free one when `None`) signing with
    /// the key named `key_id` (made on first use).
    pub(crate) fn start(keys: &Path, key_id: &str, port: Option<u16>) -> Self {
        Self::start_with_ttl(keys, key_id, port, 300)
    }

    /// As [`Provider::start`], its access tokens living `ttl` seconds.
    pub(crate) fn start_with_ttl(keys: &Path, key_id: &str, port: Option<u16>, ttl: u64) -> Self {
        let folder = peers::oidc_provider_folder();
        let port = port.unwrap_or_else(|| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        });
        let mut child = std::process::Command::new("node")
            .arg(folder.join("provider.mjs"))
            .current_dir(&folder)
            .env("PORT", port.to_string())
            .env("KEYS_DIR", keys)
            .env("KEY_ID", key_id)
            .env("TOKEN_TTL", ttl.to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node runs the OpenID provider");
        let mut ready = String::new();
        let mut said = std::io::BufReader::new(child.stdout.take().unwrap());
        said.read_line(&mut ready).unwrap();
        assert_eq!(ready.trim(), "ready", "the provider did not start");
        // Whatever it says later is read and dropped: a closed pipe would
        // end it at its next notice.
        std::thread::spawn(move || std::io::copy(&mut said, &mut std::io::sink()));
        Self {
            child,
            port,
            keys: keys.to_owned(),
        }
    }

    pub(crate) fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An access token for `client` with `scope`, made out to `resource`.
    pub(crate) async fn token(&self, client: &str, scope: &str, resource: &str) -> String {
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/token", self.issuer()))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[
                ("grant_type", "client_credentials"),
                ("scope", scope),
                ("resource", resource),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }

    /// How many introspection requests the provider has answered.
    pub(crate) async fn introspections(&self) -> u64 {
        let answer: Value = reqwest::get(format!("{}/test/introspections", self.issuer()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["count"].as_u64().unwrap()
    }

    /// A token signed with the provider's own key `key_id`, with `claims`
    /// as given (to make expired or misaddressed ones).
    pub(crate) fn sign(&self, key_id: &str, claims: &Value) -> String {
        let pem = std::fs::read(self.keys.join(format!("{key_id}.pem"))).unwrap();
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(&pem).unwrap();
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = Some(key_id.to_owned());
        // An access token's type (RFC 9068), as the provider's own are.
        header.typ = Some("at+jwt".to_owned());
        jsonwebtoken::encode(&header, claims, &key).unwrap()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
