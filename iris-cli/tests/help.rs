//! The help of `iris` and of each command, as the binary prints it: a
//! snapshot each, so a change to what users read is reviewed.
#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use std::process::Command;

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_iris"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_help_of_iris_fits_a_screen() {
    let top = help(&["--help"]);
    assert!(top.lines().count() <= 24, "{top}");
    insta::assert_snapshot!("iris", top);
}

#[test]
fn each_command_has_its_help() {
    for command in [
        "list",
        "schema",
        "search",
        "call",
        "serve",
        "run",
        "check",
        "lint",
        "eval",
        "lock",
        "diff",
        "doctor",
        "completions",
    ] {
        insta::assert_snapshot!(command, help(&[command, "--help"]));
    }
}
