//! The bundle format (DESIGN §2): everything that decides whether a directory of bytes is a valid
//! bundle and what its digest is. It may use only [`crate::support`]; every layer above builds on
//! it (`scripts/check-layers` checks).
//!
//! - [`limits`]: the bounds of the format (file sizes, counts, depth), in one table.
//! - [`bundle_path`]: the path grammar — relative POSIX paths that cannot leave the bundle;
//!   [`root_path`]: the folder of a repository that holds the bundles (hidden names allowed).
//! - [`untrusted_fs`]: the one capped, no-follow file-system layer every reader of outside files
//!   uses; [`safe_read`]: a bundle directory read through it into a file set.
//! - [`file_set`]: the in-memory file set and the builder that enforces paths and bounds as
//!   entries arrive; the only way bundle bytes enter.
//! - [`yaml`]: the YAML reader of the bundle dialect and of `update --write`'s edits, keeping
//!   the facts (anchors, tags, flow style) a dialect needs (skills-ref's strictyaml dialect has
//!   its own reader, [`crate::skills_ref`]'s `strict_yaml`).
//! - [`frontmatter`]: `SKILL.md` in the bundle dialect — fences, bounds, strict YAML, `name`,
//!   `description`.
//! - [`skill_name`] and [`version`]: the identifiers of a pin; [`pin`]: `{name, version, hash}`
//!   and full commit ids.
//! - [`digest`]: the `chamvi-skill-bundle-v1` digest, its grammar in the module doc.
//! - [`bundle`]: a checked bundle (text rules + frontmatter + digest), or every problem;
//!   [`content`]: the content rules it applies (hidden characters, HTML comments), with the
//!   source's content policy.
//! - [`hint`]: the one table from an error code to its hint (the option that would accept the
//!   refusal, or the command that repairs it, and its page).
//! - [`sarif`]: problems and other findings as a SARIF 2.1.0 log, for CI.
//! - [`problem`]: problems with stable codes, paths, bounds and messages; [`code`]: the codes
//!   of reading a bundle directory and of checking a bundle against its pin (declared with
//!   [`crate::support::error_code::error_codes!`], the machinery of
//!   [`crate::support::error_code`]).

pub mod bundle;
pub mod bundle_path;
pub mod code;
pub mod content;
pub mod digest;
pub mod file_set;
pub mod frontmatter;
pub mod hint;
pub mod limits;
pub mod pin;
pub mod problem;
pub mod root_path;
pub mod safe_read;
pub mod sarif;
pub mod skill_name;
pub mod untrusted_fs;
pub mod version;
pub mod yaml;
