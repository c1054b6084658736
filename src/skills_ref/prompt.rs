//! `skills-ref to-prompt`: the `<available_skills>` block, exactly as skills-ref 0.1.1 writes
//! it: no indentation, every tag and value on its own line, `html.escape`d name and
//! description (stripped, not normalised), and the location — the absolute, symlink-resolved
//! skill directory joined with `SKILL.md` or `skill.md` — not escaped. No validation: invalid
//! names and unknown keys render; the first error aborts the whole block.

use std::path::Path;

use super::properties::{PropertiesError, read_properties};
use super::python;

/// One skill of the block.
#[derive(Debug, Clone)]
pub struct PromptEntry<'a> {
    /// The skill name (escaped when rendered).
    pub name: &'a str,
    /// Its description (escaped when rendered).
    pub description: &'a str,
    /// The path of its `SKILL.md` (as is).
    pub location: std::borrow::Cow<'a, str>,
}

/// The block for `entries`, in order, without a trailing newline. The runtime's catalogue
/// prompt uses it too, so both print exactly the same format.
pub fn render(entries: &[PromptEntry<'_>]) -> String {
    let mut lines: Vec<String> = vec!["<available_skills>".into()];
    for e in entries {
        lines.extend([
            "<skill>".into(),
            "<name>".into(),
            python::html_escape(e.name),
            "</name>".into(),
            "<description>".into(),
            python::html_escape(e.description),
            "</description>".into(),
            "<location>".into(),
            e.location.to_string(),
            "</location>".into(),
            "</skill>".into(),
        ]);
    }
    lines.push("</available_skills>".into());
    lines.join("\n")
}

/// The block for skill directories that are already absolute and resolved, in order (no
/// de-duplication).
pub fn to_prompt(dirs: &[&Path]) -> Result<String, PropertiesError> {
    let mut props = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let shown = dir.to_string_lossy();
        let p = read_properties(dir, &shown)?;
        let location = if shown.ends_with('/') {
            format!("{shown}{}", p.file_name)
        } else {
            format!("{shown}/{}", p.file_name)
        };
        props.push((p, location));
    }
    let entries: Vec<PromptEntry<'_>> = props
        .iter()
        .map(|(p, location)| PromptEntry {
            name: &p.name,
            description: &p.description,
            location: location.as_str().into(),
        })
        .collect();
    Ok(render(&entries))
}
