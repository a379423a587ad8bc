//! Where a command's output goes: data on stdout, diagnostics on stderr;
//! in JSON mode each shape carries a format version, and a failure is one
//! JSON line on stderr.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the command line's output is what it prints"
)]

use std::io::Write;

use serde_json::{Value, json};

use crate::exit::Exit;

/// The version of every JSON shape the commands print.
pub const FORMAT: u32 = 1;

/// The name the command line was started as, for the commands its hints
/// spell out: `iris`, or a host's own binary that mounts it.
static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Takes the program's name from the first argument it was started with
/// (its file name, without a folder or `.exe`); the first call holds.
pub(crate) fn name_program(first: &std::ffi::OsStr) {
    let name = std::path::Path::new(first)
        .file_stem()
        .and_then(|stem| stem.to_str())
        .filter(|stem| !stem.is_empty())
        .unwrap_or("iris");
    let _ = PROGRAM.set(name.to_owned());
}

/// The name the command line was started as (`iris` unless it was told).
pub(crate) fn program() -> &'static str {
    PROGRAM.get().map_or("iris", String::as_str)
}

/// How a command prints.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Out {
    pub(crate) json: bool,
}

#[allow(
    clippy::unused_self,
    reason = "every command prints through its `Out`, text or JSON alike, so that none forgets which"
)]
impl Out {
    /// Prints `text` on stdout. A reader that went away (`iris list |
    /// head`) is not an error: the rest of the output is not wanted.
    pub(crate) fn line(self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
    }

    /// Prints `value` on stdout with the format version, as one line.
    pub(crate) fn json(self, mut value: Value) {
        if let Value::Object(map) = &mut value {
            map.insert("format".to_owned(), json!(FORMAT));
        }
        self.line(&value.to_string());
    }

    /// Prints a note on stderr (not in JSON mode).
    pub(crate) fn note(self, text: &str) {
        if !self.json {
            eprintln!("{text}");
        }
    }

    /// Reports a failure on stderr (one JSON line in JSON mode) and gives
    /// its exit.
    pub(crate) fn fail(self, exit: Exit, message: &str) -> Exit {
        if self.json {
            let line =
                json!({"format": FORMAT, "error": {"code": exit.name(), "message": message}});
            eprintln!("{line}");
        } else {
            eprintln!("{}: {message}", program());
        }
        exit
    }
}
