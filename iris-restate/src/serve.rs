//! Serving an endpoint to Restate over HTTP/2, with each connection's
//! `TCP_NODELAY` set.
//!
//! Restate and an endpoint trade small messages in bursts: a state write,
//! then a `run`'s result that the invocation waits on. With Nagle's
//! algorithm on, the second of two small writes waits until the first is
//! acknowledged, and a delayed acknowledgement puts that off by up to
//! 40 ms. Measured on loopback (`cargo bench -p iris-benches --bench
//! durable`), a step of four writes took 93 ms through the SDK's own server
//! and 2.9 ms here, with the same journal.

use std::future::Future;
use std::time::Duration;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;

/// How long connections get to finish once `shutdown` completed.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves `endpoint` to Restate on `listener` until `shutdown` completes,
/// then lets open connections finish (for ten seconds at most).
///
/// Use it instead of the SDK's `HttpServer`, which leaves Nagle's
/// algorithm on: Restate and an endpoint trade small messages in bursts (a
/// state write, then a `run`'s result the invocation waits on), and the
/// second of two small writes then waits for the first to be acknowledged,
/// which a delayed acknowledgement puts off by up to 40 ms. Measured on
/// loopback, a step of four writes took 93 ms through `HttpServer` and
/// 2.9 ms through this.
///
/// ```no_run
/// # async fn run(runner: iris_agent::AgentRunner) -> std::io::Result<()> {
/// use iris_restate::{AgentWorkflow, restate_sdk};
///
/// let workflow = AgentWorkflow::new(runner, "/srv/workspace");
/// let endpoint = restate_sdk::endpoint::Endpoint::builder().bind(workflow).build();
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:9080").await?;
/// iris_restate::serve(endpoint, listener, std::future::pending()).await;
/// # Ok(())
/// # }
/// ```
pub async fn serve(endpoint: Endpoint, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    let endpoint = HyperEndpoint::new(endpoint);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, remote)) => {
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::warn!(%remote, %error, "could not turn off Nagle's algorithm; journal entries may wait up to 40 ms");
                    }
                    let connection = http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), endpoint.clone());
                    let connection = graceful.watch(connection);
                    tokio::spawn(async move {
                        if let Err(error) = connection.await {
                            tracing::warn!(%remote, error = ?error, "a connection from Restate failed");
                        }
                    });
                }
                // Out of file descriptors, or a connection reset before it
                // was accepted: a pause keeps a persistent failure from
                // spinning.
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN) => {
            tracing::warn!("connections from Restate were still open {DRAIN:?} after shutdown");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use restate_sdk::endpoint::Endpoint;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// The server answers on the listener, and returns once `shutdown`
    /// completes and its connections closed.
    #[tokio::test]
    async fn serves_until_shut_down() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(super::serve(Endpoint::builder().build(), listener, async {
            let _ = stopped.await;
        }));
        // An HTTP/2 server answers a client preface with its SETTINGS frame.
        let mut client = tokio::net::TcpStream::connect(address).await.unwrap();
        client
            .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
            .await
            .unwrap();
        let mut frame = [0u8; 9];
        client.read_exact(&mut frame).await.unwrap();
        assert_eq!(frame[3], 0x04, "a SETTINGS frame");
        drop(client);
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("the server returns after shutdown")
            .unwrap();
    }
}
