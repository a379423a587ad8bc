//! Tools shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses part of these tools")]

pub(crate) mod tools;
