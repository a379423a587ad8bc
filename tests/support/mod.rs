//! Tools shared by the integration tests.

pub(crate) mod tools;
