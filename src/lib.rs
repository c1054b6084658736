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
//! - [`Access`] and [`Subject`]: what a policy hook is asked before a call is served (a pinned
//!   [`Snapshot`] or a discovered, unpinned [`Guide`]).
//! - A host's own bundles: [`BundleSource`], built from a [`FileSet`] and verified like every
//!   other source. [`Bundle`], [`BundleDigest`] and [`Pin`] check and name a bundle's bytes (what
//!   `skillfold hash` prints); [`ApprovalSpec`] approves a helper script by SHA-256.
//! - [`MAX_DESCRIPTOR_BYTES`] and [`MAX_DESCRIPTOR_NESTING`]: the bounds [`Runtime::open`] holds a
//!   descriptor file to, for a host that writes or receives descriptors.
//! - [`codes`]: the registry of every error code — each area's enum, its codes and their exit
//!   classes ([`ErrorCode`], [`codes::ExitClass`]), and [`codes::Coded`], which every error
//!   implements. [`Origin`] and [`SourceKind`] say where a served bundle came from.
//! - Every type a public item takes or returns is exported here too (the error of each parser —
//!   [`SkillNameError`], [`VersionError`], [`DigestParseError`], [`PathRefusal`],
//!   [`LimitsError`] — and of each read — [`BundleReadError`], [`VerifyError`],
//!   [`FileReadError`]); the lint `unnameable_types` keeps it so.
//!
//! ```
//! use skillfold::prelude::*;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
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
//! The modules below the root are the implementation the `skillfold` command and the unit tests
//! are built from. They are hidden from this documentation and are not part of the API: they
//! change without notice. Each is one layer, listed here bottom to top; a module imports only
//! from its own layer and the layers below it:
//!
//! - `support`: small shared helpers that know nothing of bundles (escaping untrusted text, hex,
//!   times, the worker pool, the error-code machinery, portable JSON Schemas, failpoints, a
//!   confined child process: the script runner's and the scanners').
//! - `format`: the bundle format — bounds, paths, the safe reader, file sets, frontmatter, the
//!   digest, pins, problems and their codes.
//! - `trust`: signatures and keys — commit signatures (SSH, OpenPGP), image signatures (cosign
//!   keys, Sigstore certificates, transparency logs, bundles), the verdicts, signing an image.
//! - `descriptor`: the operator's `skillfold.yaml`, its static checks and the plan they produce.
//! - `source`: where bundles come from — Git, OCI pulls and signature material, TLS.
//! - `corpus`: the managed corpus on disk — store, generations, guard, manifest, pin check.
//! - `distribution`: `push`'s OCI image layouts and registry uploads.
//! - `skills_ref`: the skills-ref compatible tooling (`validate`, `read-properties`,
//!   `to-prompt`) and its strict YAML dialect.
//! - `runtime`: snapshots, catalogues, tools, the script runner, the builder.
//! - `ops`: one module per command (and `scan`, the scanner `pin --scan` runs).
//! - `mcp`: the MCP server, over stdio and HTTP (feature `mcp`).
//! - `codes`: the registry of every error code, the one module of the list a host may use
//!   (`skillfold::codes`).
//! - `cli`: the command line — parses arguments, calls `ops`, prints; the binary calls it
//!   through [`run_cli`].
//!
//! Beside the layers: [`prelude`] (the host API, for a glob import) and `testing` (fixtures
//! shared by unit tests, compiled only under `cfg(test)`).
//! `scripts/check-layers` (run first by `scripts/test`, so by CI) lists each module's imports and
//! fails on one that runs up the layers, or on files that import each other (a circle). Read the modules with `cargo doc
//! --document-private-items` or in the source, where each opens with a paragraph on what it owns
//! and which layers it may use.

// The implementation modules, in layer order (see the tour above): private, whatever the features.
// What a host may use is re-exported below; nothing else is reachable from outside the crate.
mod cli;
pub mod codes;
mod corpus;
mod descriptor;
mod distribution;
mod format;
// The bodies of the fuzz targets, kept under `fuzz/`: compiled for the targets (cargo-fuzz sets
// `cfg(fuzzing)`) and for the unit test that replays their committed inputs, never for a host.
#[cfg(any(fuzzing, test))]
#[path = "../fuzz/harness.rs"]
#[doc(hidden)]
pub mod fuzz_entry;
#[cfg(feature = "mcp")]
mod mcp;
mod ops;
pub mod prelude;
mod runtime;
mod skills_ref;
mod source;
mod support;
#[cfg(test)]
mod testing;
mod trust;

// Every `skillfold::…` path the documentation names, compiled as a host's code would be
// (tests/it/doc_paths.rs keeps the list equal to what the pages name, within the API rule).
#[cfg(doctest)]
#[doc = include_str!("../tests/data/doc-paths.md")]
struct DocPaths;

/// Runs the `skillfold` command line on this process's arguments (the binary's `main`).
#[doc(hidden)]
pub fn run_cli() -> std::process::ExitCode {
    cli::main()
}

pub use corpus::pin_check::{DigestMismatch, VerifyError};
pub use descriptor::DescriptorError;
pub use descriptor::code::DescriptorCode;
pub use descriptor::kind::SourceKind;
pub use descriptor::plan::DescriptorProblem;
pub use descriptor::runner::policy::ApprovalSpec;
pub use descriptor::syntax::SyntaxError;
pub use descriptor::{MAX_DESCRIPTOR_BYTES, MAX_DESCRIPTOR_NESTING};
pub use format::bundle::Bundle;
pub use format::bundle::{BundleError, InvalidBundle};
pub use format::bundle_path::{BundlePath, PathRefusal};
pub use format::content::{CommentRule, ContentPolicy, Finding, HiddenRule};
pub use format::digest::{BundleDigest, DigestParseError};
pub use format::file_set::{FileSet, FileSetBuilder};
pub use format::limits::{Limits, LimitsError};
pub use format::pin::Pin;
pub use format::problem::Problems;
pub use format::problem::{Problem, ProblemCode, ProblemSeverity};
pub use format::safe_read::BundleReadError;
pub use format::skill_name::{SkillName, SkillNameError};
pub use format::version::{VersionError, VersionLabel, VersionRule};
pub use runtime::Runtime;
pub use runtime::builder::{AgentBuilder, BuildError, Built, GitCorpus, OpenError, RuntimeBuilder};
pub use runtime::catalogue::{Catalogue, CatalogueError};
pub use runtime::code::RuntimeCode;
pub use runtime::guides::{Guide, GuideKind};
pub use runtime::snapshot::{BundleSource, FileReadError, LoadFailure, Snapshot};
pub use runtime::snapshot::{Origin, StoredFile};
pub use runtime::tools::ToolAnnotations;
pub use runtime::tools::export::ToolFormat;
pub use runtime::tools::{Access, Record, Subject, ToolCode, ToolDefinition, ToolError};
pub use support::error_code::ErrorCode;
