//! skillfold turns operator-reviewed pins into verified, immutable Agent Skills bundles and
//! serves them to LLM agents.
//!
//! # A tour of the crate
//!
//! Bundle bytes take one road into the program, and every module owns one stretch of it.
//!
//! **The bundle format** (DESIGN §2)
//! - [`limits`]: the bounds of the format (file sizes, counts, depth), in one table.
//! - [`bundle_path`]: the path grammar — relative POSIX paths that cannot leave the bundle.
//! - [`file_set`]: the in-memory file set and the builder that enforces paths and bounds as
//!   entries arrive; the only way bundle bytes enter.
//! - [`untrusted_fs`]: the one capped, no-follow file-system layer through which every file or
//!   directory that came from outside is opened, listed and read.
//! - [`safe_read`]: reading a directory into a file set without following links, with fd-relative
//!   opens, `fstat` checks and bounded reads.
//! - [`yaml`]: the one YAML reader, keeping the facts (anchors, tags, flow style) dialects need.
//! - [`frontmatter`]: `SKILL.md` in the bundle dialect — fences, bounds, strict YAML, `name`,
//!   `description`.
//! - [`skill_name`] and [`version`]: the identifiers of a pin; [`pin`]: `{name, version, hash}`
//!   and full commit ids.
//! - [`digest`]: the `chamvi-skill-bundle-v1` digest, its grammar in the module doc.
//! - [`bundle`]: a checked bundle (content rules + frontmatter + digest), or every problem.
//! - [`problem`]: problems with stable codes, paths, bounds and messages.
//! - [`code`]: stable error codes, one enum per area, each with its exit status.
//! - [`escape`]: the one escaping function for untrusted text in human-readable output.
//! - [`verify`]: a bundle against its pin (name, declared version, digest, changed files).
//!
//! **Preparation** (DESIGN §3)
//! - [`descriptor`]: `skillfold.yaml` — its shape, its JSON Schema, and the static checks that
//!   turn it into a plan.
//! - [`git`] (feature `git`): fetch one pinned commit with gix, walk its whole tree, take the
//!   approved bundles from the object database.
//! - [`corpus`]: the managed corpus — the guard, staged generations, the atomic `current` flip,
//!   manifests, rollback.
//! - [`redact`]: URLs with credentials removed, for every message.
//! - [`failpoint`]: crash injection for the promotion tests.
//!
//! **Runtime** (DESIGN §4)
//! - [`snapshot`]: verified bundles in memory, from a corpus, a local directory or a host's own
//!   source — every pin checked again.
//! - [`runtime`]: every source of a descriptor loaded; failures named, never replaced.
//! - [`catalogue`]: one agent's skills, its prompt block (rendered by [`spec::prompt`]) and its
//!   tools, with a policy hook.
//! - [`tools`]: the tools served to models (`load_skill`, `skill_run_script`,
//!   `skill_read_reference`), their schemas, errors and records.
//! - [`runner`]: the allowlisted script runner — approvals by SHA-256, the blocklist, isolated
//!   execution with limits.
//! - [`guides`]: discovered (unpinned) skill folders, scanned without following links.
//! - [`mcp`] (feature `mcp`): the MCP server over stdio — every catalogue tool, the agent's
//!   prompt as instructions — with [`mcp::skills_extension`] (SEP-2640: `skill://` resources,
//!   `skills/list`/`skills/get` with per-file digests) and [`mcp::reload`] (watch the descriptor,
//!   re-prepare, swap atomically, back off on failure).
//!
//! **Spec tooling** (DESIGN §5)
//! - [`spec`]: skills-ref 0.1.1 compatible `validate`, `read-properties`, `to-prompt` —
//!   [`spec::python`] (Python string semantics), [`spec::strict_yaml`] (the strictyaml dialect
//!   with ruamel's messages), [`spec::skill_file`] (reading `SKILL.md` without following links),
//!   [`spec::validate`], [`spec::properties`], [`spec::prompt`] — plus multi-source skill
//!   [`spec::discovery`] and [`spec::allowed_tools`] rules.
//!
//! **Surfaces**
//! - [`ops`]: the operations the CLI commands call.
//! - [`schemas`]: the JSON Schemas committed under `schemas/`.
//!
//! # Example
//!
//! ```no_run
//! let bundle = skillfold::bundle::Bundle::read_dir("examples/skills/csv-profiler".as_ref())?;
//! println!("{} {}", bundle.digest(), bundle.name());
//! # Ok::<(), skillfold::bundle::LoadError>(())
//! ```

pub mod bundle;
pub mod bundle_path;
pub mod catalogue;
pub mod code;
pub mod corpus;
pub mod descriptor;
pub mod digest;
pub mod escape;
pub mod failpoint;
pub mod file_set;
pub mod frontmatter;
#[doc(hidden)]
pub mod fuzz_entry;
#[cfg(feature = "git")]
pub mod git;
pub mod guides;
mod hex;
pub mod limits;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod ops;
mod parallel;
pub mod pin;
pub mod problem;
pub mod redact;
pub mod runner;
pub mod runtime;
pub mod safe_read;
pub mod schemas;
pub mod skill_name;
pub mod snapshot;
pub mod spec;
mod time;
pub mod tools;
pub mod untrusted_fs;
pub mod verify;
pub mod version;
pub mod yaml;
