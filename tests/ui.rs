//! Compile errors of the macros, pinned with trybuild.
//!
//! Compiler output changes between Rust releases, so the `.stderr` files
//! are checked on one pinned toolchain; on any other the cases are skipped.
//! Regenerate with `TRYBUILD=overwrite cargo test --test ui` and read the diff.

/// The toolchain the `.stderr` files were written with.
const PINNED_RUSTC: &str = "rustc 1.95.";

#[test]
fn ui() {
    let version =
        std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .arg("--version")
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_default();
    if !version.starts_with(PINNED_RUSTC) {
        eprintln!("skipping UI tests: they are pinned to {PINNED_RUSTC}x, this is {version}");
        return;
    }
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/tool/pass/*.rs");
    cases.compile_fail("tests/ui/tool/fail/*.rs");
    cases.pass("tests/ui/middleware/pass/*.rs");
    cases.compile_fail("tests/ui/middleware/fail/*.rs");
}
