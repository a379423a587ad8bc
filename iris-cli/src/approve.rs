//! Approvals asked on the terminal: the waiting call shown on stderr, the
//! answer read from stdin, when both are a terminal.
#![allow(clippy::print_stderr, reason = "the question is asked on the terminal")]

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use iris_runtime::{ApprovalDecision, ApprovalRequest};

/// How waiting calls are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decide {
    /// Ask on the terminal when there is one; otherwise stop (exit 4).
    Ask,
    /// Approve every waiting call.
    Approve,
    /// Deny every waiting call.
    Deny,
}

/// Whether a person can be asked: stdin and stderr are a terminal.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// The decision for `request`, or `None` when no one can be asked (or the
/// terminal closed).
pub(crate) fn decide(request: &ApprovalRequest, how: Decide) -> Option<ApprovalDecision> {
    match how {
        Decide::Approve => Some(ApprovalDecision::approve(request)),
        Decide::Deny => Some(ApprovalDecision::deny("denied on the command line")),
        Decide::Ask if interactive() => ask(request),
        Decide::Ask => None,
    }
}

fn ask(request: &ApprovalRequest) -> Option<ApprovalDecision> {
    let why = request
        .reason
        .clone()
        .unwrap_or_else(|| format!("the policy asks before `{}`", request.tool));
    eprintln!(
        "\n`{}` wants to run with {}",
        request.tool, request.arguments
    );
    eprintln!("  ({why})");
    loop {
        eprint!("approve? [y]es / [n]o: ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(ApprovalDecision::approve(request)),
            "n" | "no" => {
                return Some(ApprovalDecision::deny(
                    "denied by the person at the terminal",
                ));
            }
            _ => eprintln!("answer y or n"),
        }
    }
}

impl Decide {
    /// How `--approve` and `--deny` decide waiting calls.
    pub(crate) fn from_flags(sub: &clap::ArgMatches) -> Self {
        if sub.get_flag("approve") {
            Self::Approve
        } else if sub.get_flag("deny") {
            Self::Deny
        } else {
            Self::Ask
        }
    }
}
