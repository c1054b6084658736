//! `skills-ref read-properties`: the frontmatter properties, and their JSON exactly as
//! `json.dumps(props.to_dict(), indent=2)` (ensure_ascii) prints it.
//!
//! Only presence and type of `name` and `description` are checked (both "missing" checks come
//! before either type check). `license`, `compatibility` and `allowed-tools` are printed as
//! strictyaml produced them (string, list or mapping) whenever the key exists; `metadata` only
//! when it is non-empty, with the values of a mapping turned into strings the way Python's
//! `str()` does (nested values become Python reprs).

use std::path::Path;

use super::code::SpecCode;
use super::python;
use super::skill_file::{self, DirError, SkillMdError};
use super::strict_yaml::Value;

/// Why properties could not be read; [`std::fmt::Display`] is skills-ref's message (or ours,
/// with a code, where skillfold deliberately differs).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PropertiesError {
    /// No `SKILL.md`/`skill.md` (or the path is not a directory).
    #[error("SKILL.md not found in {0}")]
    NotFound(String),
    /// The skill directory could not be opened (a symbolic link, an I/O error).
    #[error("{0}")]
    Dir(DirError),
    /// Reading or parsing `SKILL.md` failed.
    #[error("{0}")]
    SkillMd(SkillMdError),
    /// A required key is absent.
    #[error("Missing required field in frontmatter: {0}")]
    MissingField(&'static str),
    /// `name` or `description` is not a non-blank string.
    #[error("Field '{0}' must be a non-empty string")]
    NotString(&'static str),
    /// A value skills-ref cannot print (it crashes in `json.dumps`).
    #[error(
        "`{0}` holds a plain `=` or `<<`, which skills-ref cannot print as JSON [value_unsupported]"
    )]
    Unprintable(&'static str),
}

impl PropertiesError {
    /// Stable error code.
    pub fn code(&self) -> SpecCode {
        match self {
            PropertiesError::NotFound(_) => SpecCode::MissingSkillMd,
            PropertiesError::Dir(e) => e.code(),
            PropertiesError::SkillMd(e) => e.code(),
            PropertiesError::MissingField(_) => SpecCode::FieldMissing,
            PropertiesError::NotString(_) => SpecCode::FieldNotString,
            PropertiesError::Unprintable(_) => SpecCode::ValueUnsupported,
        }
    }
}

/// A skill's properties, as skills-ref's `SkillProperties`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Properties {
    /// `name`, stripped (not normalised).
    pub name: String,
    /// `description`, stripped.
    pub description: String,
    /// `license` as written, when the key exists.
    pub license: Option<Value>,
    /// `compatibility` as written, when the key exists.
    pub compatibility: Option<Value>,
    /// `allowed-tools` as written, when the key exists.
    pub allowed_tools: Option<Value>,
    /// `metadata` (a mapping's values made strings), when the key exists.
    pub metadata: Option<Value>,
    /// Which spelling of `SKILL.md` was read.
    pub file_name: &'static str,
}

/// Reads the properties of the skill at `dir`; `shown` is how errors spell the directory.
pub fn read_properties(dir: &Path, shown: &str) -> Result<Properties, PropertiesError> {
    let fd = match skill_file::open_dir(dir) {
        Ok(fd) => fd,
        Err(DirError::NotFound(_) | DirError::NotADirectory(_)) => {
            return Err(PropertiesError::NotFound(shown.to_owned()));
        }
        Err(e) => return Err(PropertiesError::Dir(e)),
    };
    let md = skill_file::read(&fd)
        .map_err(PropertiesError::SkillMd)?
        .ok_or_else(|| PropertiesError::NotFound(shown.to_owned()))?;
    let map = skill_file::parse(&md.text).map_err(PropertiesError::SkillMd)?;
    let (Some(name), Some(description)) = (
        skill_file::get(&map, "name"),
        skill_file::get(&map, "description"),
    ) else {
        let missing = if skill_file::get(&map, "name").is_none() {
            "name"
        } else {
            "description"
        };
        return Err(PropertiesError::MissingField(missing));
    };
    let non_blank = |v: &Value, field| match v {
        Value::Str(s) if !python::strip(s).is_empty() => Ok(python::strip(s).to_owned()),
        _ => Err(PropertiesError::NotString(field)),
    };
    let name = non_blank(name, "name")?;
    let description = non_blank(description, "description")?;
    let metadata = skill_file::get(&map, "metadata").map(|m| match m {
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), Value::Str(py_str(v))))
                .collect(),
        ),
        other => other.clone(),
    });
    Ok(Properties {
        name,
        description,
        license: skill_file::get(&map, "license").cloned(),
        compatibility: skill_file::get(&map, "compatibility").cloned(),
        allowed_tools: skill_file::get(&map, "allowed-tools").cloned(),
        metadata,
        file_name: md.name,
    })
}

/// Python's `str(v)` of a loaded value. A nested `=`/`<<` would print an object address in
/// Python; it is spelled as its text here (read-properties refuses it before printing).
fn py_str(v: &Value) -> String {
    match v {
        Value::Str(s) | Value::Tagged(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::Str(s) | Value::Tagged(s) => python::repr(s),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(entries) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", python::repr(k), py_repr(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

fn has_nested_tagged(v: &Value) -> bool {
    match v {
        Value::Str(_) => false,
        Value::Tagged(_) => true,
        Value::List(items) => items.iter().any(has_nested_tagged),
        Value::Map(entries) => entries.iter().any(|(_, v)| has_nested_tagged(v)),
    }
}

impl Properties {
    /// `json.dumps(props.to_dict(), indent=2)`.
    pub fn to_json(&self) -> Result<String, PropertiesError> {
        let mut fields: Vec<(&str, Value)> = vec![
            ("name", Value::Str(self.name.clone())),
            ("description", Value::Str(self.description.clone())),
        ];
        for (key, value) in [
            ("license", &self.license),
            ("compatibility", &self.compatibility),
            ("allowed-tools", &self.allowed_tools),
        ] {
            if let Some(v) = value {
                fields.push((key, v.clone()));
            }
        }
        if let Some(m) = &self.metadata {
            let truthy = match m {
                Value::Str(s) => !s.is_empty(),
                Value::List(items) => !items.is_empty(),
                Value::Map(entries) => !entries.is_empty(),
                Value::Tagged(_) => true,
            };
            if truthy {
                fields.push(("metadata", m.clone()));
            }
        }
        for (key, value) in &fields {
            if has_nested_tagged(value) {
                let key: &'static str = match *key {
                    "license" => "license",
                    "compatibility" => "compatibility",
                    "allowed-tools" => "allowed-tools",
                    _ => "metadata",
                };
                return Err(PropertiesError::Unprintable(key));
            }
        }
        let object = Value::Map(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect());
        let mut out = String::new();
        write_json(&object, 0, &mut out);
        Ok(out)
    }
}

/// `json.dumps(v, indent=2, ensure_ascii=True)`.
pub fn write_json(v: &Value, level: usize, out: &mut String) {
    let pad = |out: &mut String, level: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(2 * level));
    };
    match v {
        Value::Str(s) | Value::Tagged(s) => python::json_string(s, out),
        Value::List(items) if items.is_empty() => out.push_str("[]"),
        Value::Map(entries) if entries.is_empty() => out.push_str("{}"),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, level + 1);
                write_json(item, level + 1, out);
            }
            pad(out, level);
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, level + 1);
                python::json_string(k, out);
                out.push_str(": ");
                write_json(item, level + 1, out);
            }
            pad(out, level);
            out.push('}');
        }
    }
}

crate::support::error_code::coded_by_code!(PropertiesError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_like_python() {
        let v = Value::Map(vec![
            (
                "a".into(),
                Value::List(vec![Value::Str("x".into()), Value::Str("é".into())]),
            ),
            ("b".into(), Value::Map(vec![])),
        ]);
        let mut out = String::new();
        write_json(&v, 0, &mut out);
        assert_eq!(
            out,
            "{\n  \"a\": [\n    \"x\",\n    \"\\u00e9\"\n  ],\n  \"b\": {}\n}"
        );
    }

    #[test]
    fn nested_metadata_becomes_python_repr() {
        let v = Value::List(vec![Value::Str("x".into()), Value::Str("it's".into())]);
        assert_eq!(py_str(&v), "['x', \"it's\"]");
        let m = Value::Map(vec![("a".into(), Value::Str("b".into()))]);
        assert_eq!(py_str(&m), "{'a': 'b'}");
    }
}
