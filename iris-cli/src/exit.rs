//! The exit codes, one per way a command can end, so that scripts and CI
//! can tell them apart.

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// It did what was asked (`0`).
    Ok,
    /// The tool ran and returned an error (`1`).
    ToolError,
    /// The command line was wrong (`2`).
    Usage,
    /// The permission policy or a hook refused the call, or a hook refused
    /// `iris run`'s task, a request or an answer (`3`).
    Denied,
    /// The call waits for a person's approval (`4`).
    Waiting,
    /// The agent file has problems (`5`).
    Invalid,
    /// The catalog or the model could not be reached: a server that did
    /// not start, a file that could not be read, a model endpoint that did
    /// not answer or refused the request (`6`).
    Unreachable,
    /// `iris lint` found errors, or warnings under `--strict` (`7`).
    LintFailed,
    /// `iris eval` measured a regression against its baseline (`8`).
    Regression,
    /// `iris diff` found a breaking change (`9`).
    Breaking,
    /// `iris run` stopped before the model finished: it took its
    /// `max_steps`, or its answer was cut off by `max_tokens` (`10`).
    Incomplete,
    /// The run was cancelled with Ctrl-C (`130`).
    Cancelled,
    /// Iris itself failed (`70`).
    Internal,
}

impl Exit {
    /// The process exit code.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Self::Ok => 0,
            Self::ToolError => 1,
            Self::Usage => 2,
            Self::Denied => 3,
            Self::Waiting => 4,
            Self::Invalid => 5,
            Self::Unreachable => 6,
            Self::LintFailed => 7,
            Self::Regression => 8,
            Self::Breaking => 9,
            Self::Incomplete => 10,
            Self::Cancelled => 130,
            Self::Internal => 70,
        }
    }

    /// The name in JSON error lines.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::Usage => "usage",
            Self::Denied => "denied",
            Self::Waiting => "waiting",
            Self::Invalid => "invalid",
            Self::Unreachable => "unreachable",
            Self::LintFailed => "lint_failed",
            Self::Regression => "regression",
            Self::Breaking => "breaking",
            Self::Incomplete => "incomplete",
            Self::Cancelled => "cancelled",
            Self::Internal => "internal",
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
