//! Hooks that are external commands.

use std::process::Stdio;
use std::time::Duration;

use iris_core::BoxFuture;
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use super::{HookAnswer, HookFailure, HookHandler, HookInput};

/// Runs a program for each event: the event as JSON on stdin, one JSON
/// object answered on stdout, stderr kept as diagnostics.
///
/// The program is started from its argv, never through a shell, in a
/// process group of its own; past the deadline the whole group (the command
/// and anything it started) is killed and the hook counts as failed.
#[derive(Debug, Clone)]
pub struct CommandHook {
    argv: Vec<String>,
    timeout: Duration,
}

impl CommandHook {
    /// The default deadline.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// A hook running `argv[0]` with the remaining arguments.
    ///
    /// # Errors
    /// [`crate::RuntimeError::EmptyCommand`] for an empty argv.
    pub fn new<I, S>(name: &str, argv: I) -> Result<Self, crate::RuntimeError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let argv: Vec<String> = argv.into_iter().map(Into::into).collect();
        if argv.is_empty() {
            return Err(crate::RuntimeError::EmptyCommand {
                hook: name.to_owned(),
            });
        }
        Ok(Self {
            argv,
            timeout: Self::DEFAULT_TIMEOUT,
        })
    }

    /// Sets the deadline.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn run(&self, input: &HookInput) -> Result<HookAnswer, HookFailure> {
        let payload =
            serde_json::to_vec(input).map_err(|source| HookFailure::Malformed { source })?;
        let mut command = Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|source| HookFailure::Spawn {
            program: self.argv[0].clone(),
            source,
        })?;
        let pid = child.id();
        let exchange = async {
            if let Some(mut stdin) = child.stdin.take() {
                // A hook may exit without reading its input; that is its choice.
                match stdin.write_all(&payload).await {
                    Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
                        return Err(HookFailure::Io(err));
                    }
                    _ => {}
                }
            }
            child.wait_with_output().await.map_err(HookFailure::Io)
        };
        let Ok(output) = tokio::time::timeout(self.timeout, exchange).await else {
            kill_group(pid);
            return Err(HookFailure::Timeout(self.timeout));
        };
        let output = output?;
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if !stderr.trim().is_empty() {
            tracing::debug!(hook = %self.argv[0], stderr = %stderr.trim(), "hook diagnostics");
        }
        if !output.status.success() {
            return Err(HookFailure::Exit {
                status: output.status.to_string(),
                stderr,
            });
        }
        serde_json::from_slice(&output.stdout).map_err(|source| HookFailure::Malformed { source })
    }
}

/// Kills the hook's process group, so children it started die with it.
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Err(err) = killpg(Pid::from_raw(pid), Signal::SIGKILL) {
            tracing::debug!(pid, %err, "hook process group already gone");
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

impl HookHandler for CommandHook {
    fn handle<'a>(
        &'a self,
        input: &'a HookInput,
    ) -> BoxFuture<'a, Result<HookAnswer, HookFailure>> {
        Box::pin(self.run(input))
    }
}
