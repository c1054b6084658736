//! Spec tooling compatible with skills-ref 0.1.1 (the reference `agentskills` CLI), and the
//! pieces of the Agent Skills specification a client needs (DESIGN §5).
//!
//! - [`python`]: the Python string semantics skills-ref's output depends on.
//! - [`strict_yaml`]: the strictyaml dialect of the frontmatter, with ruamel's error messages.
//! - [`skill_file`]: finding and reading `SKILL.md` without following links; whole-line fences.
//! - [`validate`], [`properties`], [`prompt`]: the three commands' library halves.
//!
//! Where skills-ref crashes or does something unsafe, skillfold deliberately differs;
//! `docs/spec.md` lists every such deviation. This folder may use only [`crate::support`] (the
//! escaping function) and [`crate::format`] (the file-system layer, names and bounds); it has its
//! own dialect, YAML reader and rules. The runtime renders its prompt block with [`prompt`].

pub mod code;
pub mod prompt;
pub mod properties;
pub mod python;
pub mod skill_file;
pub mod strict_yaml;
pub mod validate;
