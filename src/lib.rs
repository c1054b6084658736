//! skillfold turns operator-reviewed pins into verified, immutable Agent Skills bundles and
//! serves them to LLM agents.
//!
//! # A tour of the crate
//!
//! Bundle bytes take one road into the program, and every module owns one stretch of it:
//!
//! - [`limits`]: the bounds of the bundle format (file sizes, counts, depth), in one table.
//! - [`bundle_path`]: the path grammar — relative POSIX paths that cannot leave the bundle.
//! - [`file_set`]: the in-memory file set and the builder that enforces paths and bounds as
//!   entries arrive; the only way bundle bytes enter.
//! - [`safe_read`]: reading a directory into a file set without following links, with fd-relative
//!   opens, `fstat` checks and bounded reads.
//! - [`yaml`]: the one YAML reader, keeping the facts (anchors, tags, flow style) dialects need.
//! - [`frontmatter`]: `SKILL.md` in the bundle dialect — fences, bounds, strict YAML, `name`,
//!   `description`.
//! - [`skill_name`] and [`version`]: the identifiers of a pin.
//! - [`digest`]: the `chamvi-skill-bundle-v1` digest, its grammar in the module doc.
//! - [`bundle`]: a checked bundle (content rules + frontmatter + digest), or every problem.
//! - [`problem`]: problems with stable codes, paths, bounds and messages.
//! - [`ops`]: the operations the CLI commands call.
//! - [`spec`]: skills-ref 0.1.1 compatible spec tooling (`validate`, `read-properties`,
//!   `to-prompt`) — [`spec::python`] (Python string semantics), [`spec::strict_yaml`] (the
//!   strictyaml dialect with ruamel's messages), [`spec::skill_file`] (reading `SKILL.md`
//!   without following links), [`spec::validate`], [`spec::properties`], [`spec::prompt`] —
//!   plus multi-source skill [`spec::discovery`] and [`spec::allowed_tools`] rules.
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
pub mod descriptor;
pub mod digest;
pub mod file_set;
pub mod frontmatter;
#[cfg(feature = "git")]
pub mod git;
mod hex;
pub mod limits;
pub mod ops;
pub mod pin;
pub mod problem;
pub mod redact;
pub mod safe_read;
pub mod skill_name;
pub mod spec;
pub mod version;
pub mod yaml;
