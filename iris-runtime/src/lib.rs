//! The Iris runtime.
