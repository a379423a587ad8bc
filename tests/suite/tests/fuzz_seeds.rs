//! The fuzz targets' seeds and every saved reproducer (`fuzz/seeds`,
//! `fuzz/reproducers`), replayed on stable: each harness checks its
//! properties on each input, as the libFuzzer targets do on nightly.

use std::path::Path;

/// Runs `harness` on every saved input of `target`.
fn replay(target: &str, harness: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut replayed = 0;
    for kind in ["seeds", "reproducers"] {
        let Ok(entries) = std::fs::read_dir(root.join(kind).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let held = std::panic::catch_unwind(|| harness(&data));
            assert!(held.is_ok(), "`{}` breaks a property", path.display());
            replayed += 1;
        }
    }
    assert!(replayed >= 4, "`{target}` has only {replayed} saved inputs");
}

#[test]
fn tool_arguments() {
    replay("tool_arguments", iris::__fuzz::tool_arguments);
}

#[test]
fn schema_projections() {
    replay("schema_projections", iris::__fuzz::schema_projections);
}

#[test]
fn agent_files() {
    replay("agent_files", iris::__fuzz::agent_files);
}

#[test]
fn hook_answers() {
    replay("hook_answers", iris::__fuzz::hook_answers);
}

#[test]
fn mcp_streams() {
    replay("mcp_streams", iris::__fuzz::mcp_streams);
}
