//! skillfold turns operator-reviewed pins into verified, immutable Agent Skills bundles and
//! serves them to LLM agents.
//!
//! # A tour of the crate
//!
//! Bundle bytes take one road into the program; each folder owns one stretch of it, and imports
//! run one way: [`format`](mod@format) ← [`descriptor`] ← [`prepare`] ← [`runtime`] ← [`mcp`]/[`ops`] ← the
//! binary. [`spec`] stands beside them and uses only [`format`](mod@format).
//!
//! - [`format`](mod@format) — **the bundle format** (DESIGN §2), depending on nothing else in the crate: the
//!   bounds, the path grammar, the one capped no-follow file-system layer, file sets, the YAML
//!   reader and the bundle dialect of `SKILL.md`, names, versions and pins, the
//!   `chamvi-skill-bundle-v1` digest, problems with stable codes, checked bundles, and the one
//!   escaping function for untrusted text.
//! - [`descriptor`] — **the operator's `skillfold.yaml`**, read by both stages: its shape and
//!   JSON Schema, the static checks that turn it into a plan, URL redaction, and the script
//!   runner's configuration (approvals, blocklist, limits) that the plan carries.
//! - [`prepare`] — **preparation** (DESIGN §3): fetching one pinned commit with gix and walking
//!   its tree ([`prepare::git`], feature `git`), the managed corpus (guard, staged generations,
//!   the atomic `current` flip, manifests, rollback), and verifying a bundle against its pin.
//! - [`runtime`] — **serving** (DESIGN §4): verified snapshots, every source of a descriptor
//!   loaded, per-agent catalogues with their prompt block, the tools served to models, the
//!   isolated script runner, and discovered (unpinned) skills.
//! - [`mcp`] (feature `mcp`) — the MCP server over stdio, with the SEP-2640 Skills extension and
//!   hot reload.
//! - [`spec`] — the skills-ref 0.1.1 compatible tooling (`validate`, `read-properties`,
//!   `to-prompt`) with its own strict YAML dialect, plus multi-source discovery and
//!   `allowed-tools` rules.
//! - [`ops`] — the operations the CLI commands call, one module per command.
//!
//! # Example
//!
//! ```no_run
//! let bundle = skillfold::Bundle::read_dir("examples/skills/csv-profiler".as_ref())?;
//! println!("{} {}", bundle.digest(), bundle.name());
//! # Ok::<(), skillfold::format::bundle::LoadError>(())
//! ```

pub mod descriptor;
pub mod format;
#[doc(hidden)]
pub mod fuzz_entry;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod ops;
mod parallel;
pub mod prepare;
pub mod runtime;
pub mod spec;
mod time;

pub use descriptor::Plan;
pub use format::bundle::Bundle;
pub use format::digest::BundleDigest;
pub use format::pin::Pin;
pub use runtime::Runtime;
pub use runtime::catalogue::Catalogue;
pub use runtime::snapshot::Snapshot;
