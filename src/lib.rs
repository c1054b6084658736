//! skillfold turns operator-reviewed pins into verified, immutable Agent Skills bundles and
//! serves them to LLM agents. This crate is the library behind the `skillfold` command; hosts use
//! it to embed verified skills in their agents.
//!
//! # The API for hosts
//!
//! Everything a host needs is at the crate root (and the common part in [`prelude`]):
//!
//! - [`Runtime`]: verified skills, loaded from a descriptor file ([`Runtime::open`]) or built in
//!   code ([`Runtime::builder`] → [`RuntimeBuilder`], [`AgentBuilder`], [`GitCorpus`]); the
//!   result is a [`Built`] (the runtime and the bundles it refused, [`LoadFailure`]) or an
//!   [`OpenError`] / [`BuildError`] listing every rule the configuration breaks.
//! - [`Catalogue`]: one agent's skills — the prompt block, the tool definitions
//!   ([`ToolDefinition`], in a model API's shape with [`ToolFormat`]), and tool calls
//!   ([`Catalogue::call`], [`Catalogue::call_async`]) returning the output and a [`Record`] of
//!   exactly what was served, or a [`ToolError`] with a stable [`ToolCode`].
//! - [`Access`] and [`Subject`]: what a policy hook is asked before a call is served.
//! - A host's own bundles: [`BundleSource`], built from a [`FileSet`] and verified like every
//!   other source. [`Bundle`], [`BundleDigest`] and [`Pin`] check and name a bundle's bytes (what
//!   `skillfold hash` prints); [`ApprovalSpec`] approves a helper script by SHA-256.
//! - [`codes`]: the registry of every error code — each area's enum, its codes and their exit
//!   classes ([`ErrorCode`], [`codes::ExitClass`]), and [`codes::Coded`], which every error
//!   implements. [`Origin`] and [`SourceKind`] say where a served bundle came from.
//!
//! ```
//! use skillfold::prelude::*;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let skills = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
//! let built = Runtime::builder()
//!     .local("commit-message", "1.0.0", skills.join("commit-message"),
//!            "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
//!     .build()?;
//! let catalogue = built.runtime.catalogue(None)?;
//! let tools = ToolFormat::Anthropic.tools(&catalogue.tools());
//! let (output, record) =
//!     catalogue.call("load_skill", &serde_json::json!({"name": "commit-message", "reference": null}))?;
//! assert_eq!(record.skill, "commit-message");
//! # let _ = (tools, output);
//! # Ok(())
//! # }
//! ```
//!
//! The guides in `docs/` (hosts, Python, the MCP server, the descriptor, the format) explain the
//! behaviour behind each call.
//!
//! # The implementation
//!
//! The modules below the root are the implementation the `skillfold` command, the tests and the
//! fuzz targets are built from. They are hidden from this documentation and are not part of the
//! API: they change without notice. Bundle bytes take one road through them, and imports run one
//! way: `format` (the bundle format: bounds, paths, the safe reader, the digest, problems and
//! codes) ← `descriptor` (the operator's `skillfold.yaml` and its checks) ← `prepare` (fetching a
//! pinned commit, the managed corpus, verification against pins) ← `runtime` (snapshots,
//! catalogues, tools, the script runner) ← `mcp` (the MCP server, stdio and HTTP) and `ops` (the
//! commands) ← the binary. `spec` (the skills-ref compatible tooling) stands beside them and uses
//! only `format`. Read them with `cargo doc --document-private-items` or in the source, where each
//! module opens with a paragraph on what it owns.

// Without `internals`, what only the tests, benchmarks and fuzz targets use is unused here.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

// The implementation modules: crate-private, or public (and hidden from the docs) with the
// `internals` feature, which the integration tests, benchmarks and fuzz targets enable. (Written
// out rather than generated: a macro-expanded module cannot `#[macro_export]` `error_codes!`.)
mod cli;
pub mod codes;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod corpus;
#[cfg(not(feature = "internals"))]
pub(crate) mod corpus;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod descriptor;
#[cfg(not(feature = "internals"))]
pub(crate) mod descriptor;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod distribution;
#[cfg(not(feature = "internals"))]
pub(crate) mod distribution;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod format;
#[cfg(not(feature = "internals"))]
pub(crate) mod format;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod fuzz_entry;
#[cfg(not(feature = "internals"))]
pub(crate) mod fuzz_entry;
#[cfg(feature = "mcp")]
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod mcp;
#[cfg(feature = "mcp")]
#[cfg(not(feature = "internals"))]
pub(crate) mod mcp;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod ops;
#[cfg(not(feature = "internals"))]
pub(crate) mod ops;
pub mod prelude;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod runtime;
#[cfg(not(feature = "internals"))]
pub(crate) mod runtime;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod skills_ref;
#[cfg(not(feature = "internals"))]
pub(crate) mod skills_ref;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod source;
#[cfg(not(feature = "internals"))]
pub(crate) mod source;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod support;
#[cfg(not(feature = "internals"))]
pub(crate) mod support;
#[cfg(test)]
mod testing;

/// Runs the `skillfold` command line on this process's arguments (the binary's `main`).
#[doc(hidden)]
pub fn run_cli() -> std::process::ExitCode {
    cli::main()
}

pub use descriptor::LoadError as DescriptorError;
pub use descriptor::code::DescriptorCode;
pub use descriptor::kind::SourceKind;
pub use descriptor::plan::DescriptorProblem;
pub use descriptor::runner::policy::ApprovalSpec;
pub use format::bundle::Bundle;
pub use format::bundle::{InvalidBundle, LoadError as BundleError};
pub use format::digest::BundleDigest;
pub use format::file_set::{FileSet, FileSetBuilder};
pub use format::pin::Pin;
pub use format::problem::Problems;
pub use format::problem::{Problem, ProblemCode};
pub use format::skill_name::SkillName;
pub use format::version::VersionLabel;
pub use runtime::Runtime;
pub use runtime::builder::{AgentBuilder, BuildError, Built, GitCorpus, OpenError, RuntimeBuilder};
pub use runtime::catalogue::{Catalogue, CatalogueError};
pub use runtime::code::RuntimeCode;
pub use runtime::snapshot::{BundleSource, LoadFailure, Snapshot};
pub use runtime::snapshot::{Origin, StoredFile};
pub use runtime::tools::ToolAnnotations;
pub use runtime::tools::export::ToolFormat;
pub use runtime::tools::{Access, Record, Subject, ToolCode, ToolDefinition, ToolError};
pub use support::error_code::ErrorCode;
