//! An S3-compatible server of the test's own (moto, pinned, installed on
//! first use by `tests/s3-server/install.sh`) on a free loopback port,
//! stopped on drop.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a server that does not start fails the test loudly"
)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iris::artifacts::object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;

fn folder() -> PathBuf {
    crate::installed::S3_SERVER.folder()
}

pub(crate) struct S3Server {
    child: Child,
    endpoint: String,
}

impl S3Server {
    pub(crate) async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(folder().join(".venv/bin/moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "the S3 server did not listen in 60 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    /// A new bucket, as an object store.
    pub(crate) async fn bucket(&self, name: &str) -> Arc<dyn ObjectStore> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let created = reqwest::Client::new()
            .put(format!("{}/{name}", self.endpoint))
            .send()
            .await
            .unwrap();
        assert!(
            created.status().is_success(),
            "creating bucket {name}: {}",
            created.status()
        );
        Arc::new(
            AmazonS3Builder::new()
                .with_endpoint(&self.endpoint)
                .with_allow_http(true)
                .with_bucket_name(name)
                .with_region("us-east-1")
                .with_access_key_id("test")
                .with_secret_access_key("test")
                .build()
                .unwrap(),
        )
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
