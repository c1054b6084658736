//! `skills-ref validate`: every rule skills-ref 0.1.1 checks, in its order, with its messages.
//!
//! After the file checks of [`super::skill_file`] (one error each, then stop), the frontmatter
//! mapping is checked as `validate_metadata` does: unknown keys (listed sorted by code point),
//! `name` (stripped with Python's whitespace, NFKC-normalised, at most 64 code points, equal
//! to its lowercase, no leading, trailing or doubled hyphen, only `isalnum` characters and
//! hyphens, equal to the NFKC-normalised directory name), `description` (non-blank, at most
//! 1,024 code points *unstripped*) and `compatibility` (a string of at most 500 code points).
//! Every applicable message is collected.

use std::path::Path;

use super::python;
use super::skill_file::{self, SkillMdError};
use super::strict_yaml::Value;

/// The frontmatter keys skills-ref allows.
pub const ALLOWED_FIELDS: [&str; 6] = [
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// Longest name, in code points after NFKC.
pub const MAX_NAME_LENGTH: usize = 64;
/// Longest description, in code points.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;
/// Longest compatibility note, in code points.
pub const MAX_COMPATIBILITY_LENGTH: usize = 500;

/// Validates the skill directory at `dir` (spelled as `str(pathlib.Path(arg))`). Returns every
/// error message, in skills-ref's order; empty when the skill is valid.
pub fn validate(dir: &Path) -> Vec<String> {
    let fd = match skill_file::open_dir(dir) {
        Ok(fd) => fd,
        Err(e) => return vec![e.to_string()],
    };
    let md = match skill_file::read(&fd) {
        Ok(Some(md)) => md,
        Ok(None) => return vec![SkillMdError::Missing.to_string()],
        Err(e) => return vec![e.to_string()],
    };
    match skill_file::parse(&md.text) {
        Ok(map) => validate_metadata(&map, &dir_name(dir)),
        Err(e) => vec![e.to_string()],
    }
}

/// `Path(dir).name` as Python spells it (`..` stays `..`, `.` has the empty name).
pub fn dir_name(dir: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let path = python::pure_path(dir.as_os_str().as_bytes());
    String::from_utf8_lossy(path.name()).into_owned()
}

/// skills-ref's `validate_metadata` on a parsed frontmatter mapping.
pub fn validate_metadata(map: &[(String, Value)], dir_name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let mut extra: Vec<&str> = map
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !ALLOWED_FIELDS.contains(k))
        .collect();
    if !extra.is_empty() {
        extra.sort_unstable();
        extra.dedup();
        errors.push(format!(
            "Unexpected fields in frontmatter: {}. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.",
            extra.join(", ")
        ));
    }
    match skill_file::get(map, "name") {
        None => errors.push("Missing required field in frontmatter: name".to_owned()),
        Some(name) => validate_name(name, dir_name, &mut errors),
    }
    match skill_file::get(map, "description") {
        None => errors.push("Missing required field in frontmatter: description".to_owned()),
        Some(Value::Str(d)) if !python::strip(d).is_empty() => {
            let n = python::len(d);
            if n > MAX_DESCRIPTION_LENGTH {
                errors.push(format!(
                    "Description exceeds {MAX_DESCRIPTION_LENGTH} character limit ({n} chars)"
                ));
            }
        }
        Some(_) => errors.push("Field 'description' must be a non-empty string".to_owned()),
    }
    match skill_file::get(map, "compatibility") {
        None => {}
        Some(Value::Str(c)) => {
            let n = python::len(c);
            if n > MAX_COMPATIBILITY_LENGTH {
                errors.push(format!(
                    "Compatibility exceeds {MAX_COMPATIBILITY_LENGTH} character limit ({n} chars)"
                ));
            }
        }
        Some(_) => errors.push("Field 'compatibility' must be a string".to_owned()),
    }
    errors
}

fn validate_name(value: &Value, dir_name: &str, errors: &mut Vec<String>) {
    let Value::Str(raw) = value else {
        errors.push("Field 'name' must be a non-empty string".to_owned());
        return;
    };
    let stripped = python::strip(raw);
    if stripped.is_empty() {
        errors.push("Field 'name' must be a non-empty string".to_owned());
        return;
    }
    let name = python::nfkc(stripped);
    let n = python::len(&name);
    if n > MAX_NAME_LENGTH {
        errors.push(format!(
            "Skill name '{name}' exceeds {MAX_NAME_LENGTH} character limit ({n} chars)"
        ));
    }
    if name != python::lower(&name) {
        errors.push(format!("Skill name '{name}' must be lowercase"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("Skill name cannot start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        errors.push("Skill name cannot contain consecutive hyphens".to_owned());
    }
    if !name.chars().all(|c| python::is_alnum(c) || c == '-') {
        errors.push(format!(
            "Skill name '{name}' contains invalid characters. Only letters, digits, and hyphens are allowed."
        ));
    }
    if python::nfkc(dir_name) != name {
        errors.push(format!(
            "Directory name '{dir_name}' must match skill name '{name}'"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::Str((*v).to_owned())))
            .collect()
    }

    #[test]
    fn name_rules_in_order() {
        let m = map(&[("name", "-Bad--Name-"), ("description", "d")]);
        assert_eq!(
            validate_metadata(&m, "bad"),
            [
                "Skill name '-Bad--Name-' must be lowercase",
                "Skill name cannot start or end with a hyphen",
                "Skill name cannot contain consecutive hyphens",
                "Directory name 'bad' must match skill name '-Bad--Name-'",
            ]
        );
    }

    #[test]
    fn nfkc_on_both_sides() {
        let m = map(&[("name", "ﬁle-tools"), ("description", "d")]);
        assert!(validate_metadata(&m, "file-tools").is_empty());
        let m = map(&[("name", "कौशल"), ("description", "d")]);
        assert_eq!(
            validate_metadata(&m, "कौशल").len(),
            1,
            "U+094C is not alphanumeric"
        );
    }

    #[test]
    fn unknown_keys_sorted_by_code_point() {
        let m = map(&[
            ("zeta", ""),
            ("Alpha", ""),
            ("name", "x"),
            ("description", "d"),
        ]);
        assert!(
            validate_metadata(&m, "x")[0]
                .starts_with("Unexpected fields in frontmatter: Alpha, zeta.")
        );
    }
}
