//! The integration tests, one binary so it links once; one module per area under `tests/it/`.

mod it;
