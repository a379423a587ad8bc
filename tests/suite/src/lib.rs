//! Nothing to build: this package only holds tests (see `tests/`).
