//! Iris.
