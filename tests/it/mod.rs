//! Integration test areas.

mod cli_hash;
mod digest_vectors;
mod discovery;
mod examples;
mod format_contracts;
mod git_fixture;
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
mod spec_bounds;
mod util;
