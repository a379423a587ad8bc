//! Compile errors of the macros, pinned with trybuild.
//!
//! Compiler output changes between Rust releases, so the `.stderr` files
//! are checked on one pinned toolchain; on any other the cases are skipped.
//! Regenerate with `TRYBUILD=overwrite cargo test -p iris-ui-tests --test ui`
//! and read the diff.

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
        // Written straight to stderr, past the test harness's capture, so
        // the skip shows in every run's output instead of scrolling by.
        let banner = format!(
            "\n{line}\n!! UI TESTS SKIPPED: the compile-error cases are pinned to {PINNED_RUSTC}x,\n!! but this is {}.\n!! No macro diagnostic was checked. Run them on the pinned toolchain.\n{line}\n\n",
            version.trim(),
            line = "!".repeat(72)
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), banner.as_bytes());
        return;
    }
    // The passing cases run in `tests/pass.rs`: with failing cases only,
    // trybuild checks the dependencies instead of building them.
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/tool/fail/*.rs");
    cases.compile_fail("tests/ui/middleware/fail/*.rs");
    cases.compile_fail("tests/ui/hooks/fail/*.rs");
    cases.compile_fail("tests/ui/toolbox/fail/*.rs");
    cases.compile_fail("tests/ui/factory/fail/*.rs");
    cases.compile_fail("tests/ui/facade/fail/*.rs");
}
