//! Integration test areas.

mod builder;
mod cli_hash;
mod content_rules;
#[cfg(feature = "git")]
mod corpus_folders;
mod descriptor_bounds;
#[cfg(feature = "git")]
mod doc_output;
mod doc_paths;
mod error_codes;
mod examples;
#[cfg(feature = "git")]
mod git_answers;
mod git_hostile;
#[cfg(feature = "git")]
mod git_partial;
mod guides;
#[cfg(feature = "git")]
mod hints;
mod hostile_output;
#[cfg(feature = "http")]
mod http_raw;
#[cfg(all(feature = "oci", feature = "git"))]
mod image_signatures;
#[cfg(feature = "git")]
mod import;
mod install;
#[cfg(feature = "mcp")]
mod limits;
#[cfg(feature = "git")]
mod links;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod mcp_client;
#[cfg(feature = "mcp")]
mod mcp_framing;
#[cfg(all(feature = "http", feature = "git"))]
mod names_per_agent;
#[cfg(feature = "oci")]
mod oci_source;
#[cfg(all(feature = "oci", feature = "git"))]
mod oci_track;
#[cfg(feature = "git")]
mod outdated;
#[cfg(feature = "git")]
mod pin;
mod prepare;
mod public_errors;
mod push;
#[cfg(feature = "oci")]
mod push_sign;
#[cfg(feature = "git")]
mod review_path;
#[cfg(all(feature = "oci", feature = "git"))]
mod review_path_oci;
mod runner;
mod runtime;
mod sarif;
mod sbom;
#[cfg(feature = "git")]
mod scan;
mod schemas;
#[cfg(feature = "mcp")]
mod selection_bound;
#[cfg(feature = "http")]
mod serve_http;
#[cfg(feature = "http")]
mod serve_http_answers;
#[cfg(feature = "http")]
mod serve_http_capacity;
#[cfg(feature = "http")]
mod serve_http_direct;
#[cfg(feature = "http")]
mod serve_http_rpc;
#[cfg(feature = "http")]
mod serve_oauth;
mod shared_fetch;
mod signatures;
// sigstore-js and sigstore-python keyless fixtures (npm_installed lives in mcp_client).
mod skills_ref_golden;
mod spec_bounds;
mod special_inputs;
#[cfg(feature = "git")]
mod static_binary;
mod support;
#[cfg(feature = "http")]
mod token;
#[cfg(feature = "http")]
mod trace_context;
#[cfg(feature = "git")]
mod update;
