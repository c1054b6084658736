//! Integration test areas.

mod cli_hash;
mod digest_vectors;
mod safe_read;
mod util;
