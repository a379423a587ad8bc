//! Iris macros.
