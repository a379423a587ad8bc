//! A real model server of the test's own: llama.cpp's `llama-server`
//! (pinned, built once by `tests/llama-server/install.sh`) serving
//! SmolLM2-135M-Instruct on a free loopback port, with the tests' chat
//! template (`tests/llama-server/tool-calls.jinja`), greedy sampling and no
//! prompt cache, so a prompt is answered the same way every time. Stopped
//! on drop.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[path = "../../../tests/support/installed.rs"]
mod installed;

/// One real-model test at a time: two servers on two cores would each
/// generate at a fraction of the speed.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub(crate) struct LlamaServer {
    child: Child,
    /// `http://127.0.0.1:PORT/v1`.
    pub(crate) base_url: String,
    _turn: MutexGuard<'static, ()>,
}

impl LlamaServer {
    pub(crate) fn start() -> Self {
        let turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let folder: PathBuf = installed::LLAMA_SERVER.folder();
        let binary = folder.join("llama-server");
        assert!(
            binary.exists() && folder.join("model.gguf").exists(),
            "{} or the model is missing (its build cache was removed?): run `bash tests/llama-server/install.sh`",
            binary.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&binary)
            .current_dir(&folder)
            .args([
                "-m",
                "model.gguf",
                "--jinja",
                "--chat-template-file",
                "tool-calls.jinja",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--no-cache-prompt",
                "--no-webui",
                "--ctx-size",
                "4096",
                "--temp",
                "0",
                "--threads",
                "2",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self {
            child,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            _turn: turn,
        };
        wait_until_ready(port);
        server
    }
}

/// Waits for `/props` to answer, and checks that the template lets the
/// model call tools (llama-server drops tools without a word for a template
/// that cannot show them).
fn wait_until_ready(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(props) = get(port, "/props") {
            let props: serde_json::Value = serde_json::from_str(&props).unwrap();
            assert_eq!(
                props["chat_template_caps"]["supports_tool_calls"], true,
                "llama-server says the tests' template cannot call tools: {props}"
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not answer /props within 120 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body of a 200 answer to `GET path`, or `None` (not listening yet,
/// or still loading the model: 503).
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_owned())
}
