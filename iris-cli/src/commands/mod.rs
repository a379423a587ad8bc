//! The commands, one module each.

pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod eval;
pub(crate) mod lint;
pub(crate) mod list;
pub(crate) mod lock;
pub(crate) mod login;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod search;
pub(crate) mod serve;
