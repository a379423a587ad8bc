//! Hooks that are external commands.

use std::fmt;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use super::answer::wire;
use super::{AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, HookFailure, HookInput, RunHook};

/// Runs a program for each event: the event as JSON on stdin, one JSON
/// object answered on stdout, stderr kept as diagnostics.
///
/// The program is started from its argv, never through a shell, in a
/// process group of its own. It may write at most [`MAX_STDOUT_BYTES`] to
/// stdout and [`MAX_STDERR_BYTES`] to stderr; past either, or past its
/// deadline, it is killed and the hook counts as failed. Whenever the hook
/// ends (answered, failed, or its call dropped), its process group is
/// killed, and on Linux so is every process carrying its `IRIS_HOOK_RUN`
/// mark in the environment: children that left the group with `setsid`
/// included. Elsewhere, and for a child that clears its environment, only
/// the process group is reached.
#[derive(Clone)]
pub struct CommandHook {
    argv: Vec<String>,
    timeout: Duration,
    env: Vec<(String, String)>,
    cwd: Option<std::path::PathBuf>,
}

/// The variables' values stay out: they are often secrets.
impl fmt::Debug for CommandHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<&str> = self.env.iter().map(|(key, _)| key.as_str()).collect();
        f.debug_struct("CommandHook")
            .field("argv", &self.argv)
            .field("timeout", &self.timeout)
            .field("env", &env)
            .field("cwd", &self.cwd)
            .finish()
    }
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
            env: Vec::new(),
            cwd: None,
        })
    }

    /// Sets an environment variable for the command (the rest of the
    /// host's environment is inherited).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs the command in `dir` instead of the host's working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets the deadline.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs the command for one event: what it wrote to stdout.
    async fn exchange(&self, input: &HookInput) -> Result<Vec<u8>, HookFailure> {
        // The input is plain data (strings, numbers, JSON values): it
        // always serializes.
        let payload = serde_json::to_vec(input).map_err(|err| {
            HookFailure::Io(std::io::Error::other(format!(
                "the hook input could not be serialized: {err}"
            )))
        })?;
        let token = crate::temp_name::temp_name("hook");
        let mut command = Command::new(&self.argv[0]);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
            .args(&self.argv[1..])
            // Inherited by everything the hook starts, even what leaves its
            // process group, so all of it can be found and killed.
            .env(HOOK_TOKEN_VAR, &token)
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
        // From here on, however this future ends (answered, failed, timed
        // out, or dropped by the caller), the hook and every process it
        // started are killed.
        let reaper = Reaper {
            pid: child.id(),
            token,
        };
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let exchange = async {
            let feed = async {
                if let Some(mut stdin) = stdin {
                    // A hook may exit without reading its input; that is its choice.
                    match stdin.write_all(&payload).await {
                        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
                            return Err(HookFailure::Io(err));
                        }
                        _ => {}
                    }
                }
                Ok(())
            };
            let streams = async {
                tokio::try_join!(
                    feed,
                    read_capped(stdout, MAX_STDOUT_BYTES, "stdout"),
                    read_capped(stderr, MAX_STDERR_BYTES, "stderr"),
                )
            };
            tokio::pin!(streams);
            let status = tokio::select! {
                read = &mut streams => {
                    let ((), out, err) = read?;
                    let status = child.wait().await.map_err(HookFailure::Io)?;
                    return Ok::<_, HookFailure>((out, err, status));
                }
                status = child.wait() => status.map_err(HookFailure::Io)?,
            };
            // The hook exited, but something it started still holds its
            // pipes open: what was written by now counts, then those
            // processes are killed, which closes the pipes.
            let read = if let Ok(read) = tokio::time::timeout(PIPE_GRACE, &mut streams).await {
                read
            } else {
                reaper.kill();
                streams.await
            };
            let ((), out, err) = read?;
            Ok((out, err, status))
        };
        let Ok(output) = tokio::time::timeout(self.timeout, exchange).await else {
            return Err(HookFailure::Timeout(self.timeout));
        };
        let (stdout, stderr, status) = output?;
        let stderr = tail(&stderr);
        if !stderr.trim().is_empty() {
            tracing::debug!(hook = %self.argv[0], stderr = %stderr.trim(), "hook diagnostics");
        }
        if !status.success() {
            return Err(HookFailure::Exit {
                status: status.to_string(),
                stderr,
            });
        }
        Ok(stdout)
    }
}

/// The environment variable that marks a hook's processes.
const HOOK_TOKEN_VAR: &str = "IRIS_HOOK_RUN";

/// Most bytes of stdout a hook may write: its answer is one small object.
pub const MAX_STDOUT_BYTES: usize = 64 * 1024;

/// Most bytes of stderr a hook may write; its last part is kept as the
/// diagnostic of a failure.
pub const MAX_STDERR_BYTES: usize = 64 * 1024;

/// How long the pipes may stay open after the hook exited, held by
/// processes it started, before those are killed.
const PIPE_GRACE: Duration = Duration::from_millis(100);

/// Characters of stderr kept in a failure's message.
const STDERR_TAIL_CHARS: usize = 2_000;

/// Reads `stream` to its end, failing the moment it passes `limit` bytes.
async fn read_capped(
    stream: Option<impl tokio::io::AsyncRead + Unpin>,
    limit: usize,
    name: &'static str,
) -> Result<Vec<u8>, HookFailure> {
    use tokio::io::AsyncReadExt as _;
    let Some(mut stream) = stream else {
        return Ok(Vec::new());
    };
    let mut kept = Vec::new();
    // On the heap: two of these live in the hook's future at once.
    let mut buf = vec![0_u8; 8192];
    loop {
        let n = stream.read(&mut buf).await.map_err(HookFailure::Io)?;
        if n == 0 {
            return Ok(kept);
        }
        if kept.len() + n > limit {
            return Err(HookFailure::OutputTooLarge {
                stream: name,
                limit,
            });
        }
        kept.extend_from_slice(&buf[..n]);
    }
}

/// The last part of a hook's stderr, as text.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let count = text.chars().count();
    if count <= STDERR_TAIL_CHARS {
        return text.into_owned();
    }
    let kept: String = text.chars().skip(count - STDERR_TAIL_CHARS).collect();
    format!("...{kept}")
}

/// Kills a hook's process group and every process that carries its token
/// when dropped.
struct Reaper {
    pid: Option<u32>,
    token: String,
}

impl Reaper {
    fn kill(&self) {
        kill_group(self.pid);
        kill_marked(&self.token);
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills the hook's process group, so children it started die with it.
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Err(err) = killpg(Pid::from_raw(pid), Signal::SIGKILL) {
            tracing::trace!(pid, %err, "hook process group already gone");
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Kills every process whose environment carries the hook's token: the
/// descendants that left its process group (`setsid`, double forks). Looked
/// for until none is left, in case one was starting another meanwhile.
#[cfg(target_os = "linux")]
fn kill_marked(token: &str) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let mark = format!("{HOOK_TOKEN_VAR}={token}\0");
    let us = std::process::id();
    for _ in 0..4 {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut killed = 0;
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if u32::try_from(pid).ok() == Some(us) {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ.windows(mark.len()).any(|w| w == mark.as_bytes())
                && kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok()
            {
                killed += 1;
            }
        }
        if killed == 0 {
            return;
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn kill_marked(_token: &str) {}

impl BeforeHook for CommandHook {
    async fn before(&self, input: &HookInput) -> Result<BeforeAnswer, HookFailure> {
        wire::before(&self.exchange(input).await?)
    }
}

impl AfterHook for CommandHook {
    async fn after(&self, input: &HookInput) -> Result<AfterAnswer, HookFailure> {
        wire::after(&self.exchange(input).await?)
    }
}

impl RunHook for CommandHook {
    async fn on_run(&self, input: &HookInput) -> Result<(), HookFailure> {
        wire::run(&self.exchange(input).await?)
    }
}
