//! The integration tests, one binary so it links once; one module per area under `tests/it/`.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a test may report what it measured or why it skipped"
)]

mod it;
