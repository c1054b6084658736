//! Integration test areas.

mod cli_hash;
mod digest_vectors;
mod discovery;
mod examples;
mod git_fixture;
mod git_hostile;
mod guides;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod mcp_client;
mod prepare;
mod runner;
mod runtime;
mod safe_read;
mod schemas;
mod skills_ref_golden;
mod util;
