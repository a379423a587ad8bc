//! Hooks that are external commands.

use std::time::Duration;

use crate::process::{ProcessError, Program};

use super::answer::wire;
use super::{AfterAnswer, AfterHook, BeforeAnswer, BeforeHook, HookFailure, HookInput, RunHook};

/// Runs a program for each event: the event as JSON on stdin, one JSON
/// object answered on stdout, stderr kept as diagnostics.
///
/// The program is started from its argv, never through a shell, in a
/// process group of its own. It may write at most [`MAX_HOOK_STDOUT_BYTES`] to
/// stdout and [`MAX_HOOK_STDERR_BYTES`] to stderr; past either, or past its
/// deadline, it is killed and the hook counts as failed. Whenever the hook
/// ends (answered, failed, or its call dropped), its process group is
/// killed, and on Linux so is every process carrying its `IRIS_HOOK_RUN`
/// mark in the environment: children that left the group with `setsid`
/// included. Elsewhere, and for a child that clears its environment, only
/// the process group is reached.
#[derive(Clone, Debug)]
pub struct CommandHook {
    program: Program,
}

impl CommandHook {
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
        let mut program = Program::new(argv, HOOK_TOKEN_VAR).ok_or_else(|| {
            crate::RuntimeError::EmptyCommand {
                hook: name.to_owned(),
            }
        })?;
        // The registration's deadline replaces this one when the executor
        // is built: a command hook has one deadline, its registration's.
        program.timeout(super::DEFAULT_HOOK_TIMEOUT);
        program.limits(MAX_HOOK_STDOUT_BYTES, MAX_HOOK_STDERR_BYTES);
        Ok(Self { program })
    }

    /// Sets an environment variable for the command (the rest of the
    /// host's environment is inherited).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.program.env(key.into(), value.into());
        self
    }

    /// Runs the command in `dir` instead of the host's working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.program.current_dir(dir.into());
        self
    }

    /// Kills the command at `deadline`: its registration's
    /// ([`HookRegistration::timeout`](super::HookRegistration::timeout)).
    pub(super) fn set_deadline(&mut self, deadline: Duration) {
        self.program.timeout(deadline);
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
        let finished = self
            .program
            .exchange(&payload)
            .await
            .map_err(|err| match err {
                ProcessError::Timeout(after) => HookFailure::Timeout(after),
                ProcessError::Spawn { program, source } => HookFailure::Spawn { program, source },
                ProcessError::Io(err) => HookFailure::Io(err),
                ProcessError::OutputTooLarge { stream, limit } => {
                    HookFailure::OutputTooLarge { stream, limit }
                }
            })?;
        if !finished.status.success() {
            return Err(HookFailure::Exit {
                status: finished.status.to_string(),
                stderr: finished.stderr,
            });
        }
        Ok(finished.stdout)
    }
}

/// The environment variable that marks a hook's processes.
const HOOK_TOKEN_VAR: &str = "IRIS_HOOK_RUN";

/// Most bytes of stdout a hook may write: its answer is one small object.
pub const MAX_HOOK_STDOUT_BYTES: usize = 64 * 1024;

/// Most bytes of stderr a hook may write; its last part is kept as the
/// diagnostic of a failure.
pub const MAX_HOOK_STDERR_BYTES: usize = 64 * 1024;

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

impl super::handler::ErasedHook<super::ModelBeforeAnswer> for CommandHook {
    fn answer<'a>(
        &'a self,
        input: &'a HookInput,
    ) -> super::handler::Answering<'a, super::ModelBeforeAnswer> {
        super::handler::Answering::Later(Box::pin(async move {
            wire::model_before(&self.exchange(input).await?)
        }))
    }
}

impl super::handler::ErasedHook<super::ModelAfterAnswer> for CommandHook {
    fn answer<'a>(
        &'a self,
        input: &'a HookInput,
    ) -> super::handler::Answering<'a, super::ModelAfterAnswer> {
        super::handler::Answering::Later(Box::pin(async move {
            wire::model_after(&self.exchange(input).await?)
        }))
    }
}
