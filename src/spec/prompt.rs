//! `skills-ref to-prompt`: the `<available_skills>` block, exactly as skills-ref 0.1.1 writes
//! it: no indentation, every tag and value on its own line, `html.escape`d name and
//! description (stripped, not normalised), and the location — the absolute, symlink-resolved
//! skill directory joined with `SKILL.md` or `skill.md` — not escaped. No validation: invalid
//! names and unknown keys render; the first error aborts the whole block.

use std::path::Path;

use super::properties::{PropertiesError, read_properties};
use super::python;

/// The block for skill directories that are already absolute and resolved, in order (no
/// de-duplication).
pub fn to_prompt(dirs: &[&Path]) -> Result<String, PropertiesError> {
    if dirs.is_empty() {
        return Ok("<available_skills>\n</available_skills>".to_owned());
    }
    let mut lines: Vec<String> = vec!["<available_skills>".into()];
    for dir in dirs {
        let shown = dir.to_string_lossy();
        let props = read_properties(dir, &shown)?;
        let location = if shown.ends_with('/') {
            format!("{shown}{}", props.file_name)
        } else {
            format!("{shown}/{}", props.file_name)
        };
        lines.extend([
            "<skill>".into(),
            "<name>".into(),
            python::html_escape(&props.name),
            "</name>".into(),
            "<description>".into(),
            python::html_escape(&props.description),
            "</description>".into(),
            "<location>".into(),
            location,
            "</location>".into(),
            "</skill>".into(),
        ]);
    }
    lines.push("</available_skills>".into());
    Ok(lines.join("\n"))
}
