//! Nothing to build: this package only holds benchmarks.
