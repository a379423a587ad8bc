//! External programs run for one exchange: input on stdin, output read back
//! within bounds and a deadline, and nothing left running afterwards. Command
//! hooks and command tools run their programs through this.
//!
//! A program is started from its argv, never through a shell, in a process
//! group of its own. Past its output bounds or its deadline it is killed.
//! Whenever the exchange ends (answered, failed, or its future dropped), its
//! process group is killed, and on Linux so is every process carrying its
//! mark in the environment (`mark_var`): children that left the group with
//! `setsid` included. Elsewhere, and for a child that clears its
//! environment, only the process group is reached.

use std::fmt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

/// A program and how to run it.
#[derive(Clone)]
pub struct Program {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    timeout: Duration,
    stdout_limit: usize,
    stderr_limit: usize,
    mark_var: &'static str,
}

/// The variables' values stay out: they are often secrets.
impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<&str> = self.env.iter().map(|(key, _)| key.as_str()).collect();
        f.debug_struct("Program")
            .field("argv", &self.argv)
            .field("timeout", &self.timeout)
            .field("env", &env)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// What a program left when it exited.
#[derive(Debug)]
pub struct Finished {
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// The last part of what it wrote to stderr, as text.
    pub stderr: String,
    /// How it exited.
    pub status: ExitStatus,
}

/// Why an exchange with a program failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// It ran past its deadline.
    #[error("did not finish within {0:?}")]
    Timeout(Duration),
    /// It could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Reading or writing its pipes failed.
    #[error("talking to the program failed: {0}")]
    Io(#[source] std::io::Error),
    /// It wrote more than it may to one of its streams.
    #[error("wrote more than {limit} bytes to {stream}, so it was killed")]
    OutputTooLarge {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
}

impl Program {
    /// `argv[0]` with the remaining arguments, its processes marked by the
    /// environment variable `mark_var` (so a kill finds them); 30 seconds
    /// and 64 KiB per stream unless set. `None` for an empty argv.
    #[must_use]
    pub fn new(argv: Vec<String>, mark_var: &'static str) -> Option<Self> {
        if argv.is_empty() {
            return None;
        }
        Some(Self {
            argv,
            env: Vec::new(),
            cwd: None,
            timeout: Duration::from_secs(30),
            stdout_limit: 64 * 1024,
            stderr_limit: 64 * 1024,
            mark_var,
        })
    }

    /// The program's name.
    #[must_use]
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }

    /// Sets an environment variable (the rest of the host's environment
    /// is inherited).
    pub fn env(&mut self, key: String, value: String) {
        self.env.push((key, value));
    }

    /// Runs the program in `dir` instead of the host's working directory.
    pub fn current_dir(&mut self, dir: PathBuf) {
        self.cwd = Some(dir);
    }

    /// Sets the deadline of one exchange.
    pub fn timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Sets the most bytes the program may write to stdout and to stderr.
    pub fn limits(&mut self, stdout: usize, stderr: usize) {
        self.stdout_limit = stdout;
        self.stderr_limit = stderr;
    }

    /// Runs the program once with `input` on its stdin.
    ///
    /// # Errors
    /// [`ProcessError`] when it could not start, passed a bound or its
    /// deadline, or its pipes failed; an unsuccessful exit is the caller's
    /// to judge, from [`Finished::status`].
    pub async fn exchange(&self, input: &[u8]) -> Result<Finished, ProcessError> {
        let token = crate::temp_file::temp_name("run");
        let mut command = Command::new(self.program());
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
            .args(self.argv.iter().skip(1))
            // Inherited by everything the program starts, even what leaves
            // its process group, so all of it can be found and killed.
            .env(self.mark_var, &token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
            program: self.program().to_owned(),
            source,
        })?;
        // From here on, however this future ends (answered, failed, timed
        // out, or dropped by the caller), the program and every process it
        // started are killed.
        let reaper = Reaper {
            pid: child.id(),
            mark: format!("{}={token}\0", self.mark_var),
        };
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let exchange = async {
            let feed = async {
                if let Some(mut stdin) = stdin {
                    // A program may exit without reading its input; that is its choice.
                    match stdin.write_all(input).await {
                        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
                            return Err(ProcessError::Io(err));
                        }
                        _ => {}
                    }
                }
                Ok(())
            };
            let streams = async {
                tokio::try_join!(
                    feed,
                    read_capped(stdout, self.stdout_limit, "stdout"),
                    read_capped(stderr, self.stderr_limit, "stderr"),
                )
            };
            tokio::pin!(streams);
            let status = tokio::select! {
                read = &mut streams => {
                    let ((), out, err) = read?;
                    let status = child.wait().await.map_err(ProcessError::Io)?;
                    return Ok::<_, ProcessError>((out, err, status));
                }
                status = child.wait() => status.map_err(ProcessError::Io)?,
            };
            // The program exited, but something it started still holds its
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
            return Err(ProcessError::Timeout(self.timeout));
        };
        let (stdout, stderr, status) = output?;
        let stderr = tail(&stderr);
        if !stderr.trim().is_empty() {
            tracing::debug!(program = %self.program(), stderr = %stderr.trim(), "program diagnostics");
        }
        Ok(Finished {
            stdout,
            stderr,
            status,
        })
    }
}

/// How long the pipes may stay open after the program exited, held by
/// processes it started, before those are killed.
const PIPE_GRACE: Duration = Duration::from_millis(100);

/// Characters of stderr kept.
const STDERR_TAIL_CHARS: usize = 2_000;

/// Reads `stream` to its end, failing the moment it passes `limit` bytes.
async fn read_capped(
    stream: Option<impl tokio::io::AsyncRead + Unpin>,
    limit: usize,
    name: &'static str,
) -> Result<Vec<u8>, ProcessError> {
    use tokio::io::AsyncReadExt as _;
    let Some(mut stream) = stream else {
        return Ok(Vec::new());
    };
    let mut kept = Vec::new();
    // On the heap: two of these live in the exchange's future at once.
    let mut buf = vec![0_u8; 8192];
    loop {
        let n = stream.read(&mut buf).await.map_err(ProcessError::Io)?;
        if n == 0 {
            return Ok(kept);
        }
        if kept.len() + n > limit {
            return Err(ProcessError::OutputTooLarge {
                stream: name,
                limit,
            });
        }
        kept.extend_from_slice(&buf[..n]);
    }
}

/// The last part of a program's stderr, as text.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let count = text.chars().count();
    if count <= STDERR_TAIL_CHARS {
        return text.into_owned();
    }
    let kept: String = text.chars().skip(count - STDERR_TAIL_CHARS).collect();
    format!("...{kept}")
}

/// Kills a program's process group and every process that carries its
/// mark when dropped.
struct Reaper {
    pid: Option<u32>,
    /// `VAR=token\0`, as it appears in a marked process's environment.
    mark: String,
}

impl Reaper {
    fn kill(&self) {
        kill_group(self.pid);
        kill_marked(&self.mark);
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills the program's process group, so children it started die with it.
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Err(err) = killpg(Pid::from_raw(pid), Signal::SIGKILL) {
            tracing::trace!(pid, %err, "process group already gone");
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Kills every process whose environment carries `mark`: the descendants
/// that left the program's process group (`setsid`, double forks). Looked
/// for until none is left, in case one was starting another meanwhile.
#[cfg(target_os = "linux")]
fn kill_marked(mark: &str) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
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
fn kill_marked(_mark: &str) {}
