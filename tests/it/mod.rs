//! Integration test areas.

mod cli_hash;
mod digest_vectors;
mod discovery;
mod safe_read;
mod skills_ref_golden;
mod util;
