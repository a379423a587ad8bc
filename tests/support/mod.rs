//! Tools shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses part of these tools")]

pub(crate) mod hooks;
pub(crate) mod tools;

/// Whether process `pid` is gone (or only a zombie waiting to be reaped),
/// for tests that check that hooks leave nothing running.
#[cfg(target_os = "linux")]
pub(crate) fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}
