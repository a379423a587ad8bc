//! `iris completions SHELL`: a completion script for a shell, from the
//! command set itself.

use clap::{Arg, Command};

use crate::exit::Exit;
use crate::output::Out;

pub(crate) fn run(shell: clap_complete::Shell, out: Out) -> Exit {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut crate::command(), "iris", &mut script);
    out.line(String::from_utf8_lossy(&script).trim_end());
    Exit::Ok
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("completions")
        .about("Print a completion script for a shell")
        .arg(
            Arg::new("shell")
                .required(true)
                .value_name("SHELL")
                .value_parser(clap::value_parser!(clap_complete::Shell))
                .help("bash, zsh, fish, elvish or powershell"),
        )
}
