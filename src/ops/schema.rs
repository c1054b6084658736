//! The JSON Schemas skillfold publishes — the descriptor, each tool's input and output, the
//! refusal a tool returns and the host record — generated with `schemars` from the Rust types that
//! read and write the documents, and committed under `schemas/` so editors and other tools can use
//! them. A test fails when the committed files are stale; `skillfold schema --out schemas`
//! rewrites them.
//!
//! Every schema is made portable by [`make_portable`], so that a validator in its strict mode
//! (Ajv's default) takes it as it is: `schemars` writes integer widths as `format` values
//! (`uint32`, `int32`, `uint64`, …) that JSON Schema does not define, and nullable values as
//! `"type": [T, "null"]`, which strict validators and the strict tool modes of model APIs refuse or
//! warn about. The widths become `minimum`/`maximum`; a nullable value becomes
//! `anyOf: [{T…}, {"type": "null"}]`. The tool input schemas follow the stricter rules of
//! [`crate::runtime::tools`] on top of this.
//!
//! [`write_all`] writes them into a directory without following a link anywhere below it: the
//! directory is opened once, never through a link ([`untrusted_fs::open_root`]); each schema is
//! written to a new temporary file created beneath that open directory (`O_CREAT | O_EXCL |
//! O_NOFOLLOW`: never an existing file, never through a link) and renamed over its name, so a
//! link planted at a schema's name is replaced, its target never written.

use std::ffi::CString;
use std::io::Write as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use serde_json::{Map, Value};

use crate::format::untrusted_fs;

use crate::runtime::tools::{Record, ToolError, load_skill, read_reference, run_script};

/// Every published schema: its file name under `schemas/` and its content.
pub fn all() -> Vec<(&'static str, Value)> {
    let mut descriptor = crate::descriptor::json_schema();
    make_portable(&mut descriptor);
    vec![
        ("skillfold.schema.json", descriptor),
        ("load_skill.input.schema.json", load_skill::input_schema()),
        ("load_skill.output.schema.json", load_skill::output_schema()),
        (
            "skill_run_script.input.schema.json",
            run_script::input_schema(),
        ),
        (
            "skill_run_script.output.schema.json",
            run_script::output_schema(),
        ),
        (
            "skill_read_reference.input.schema.json",
            read_reference::input_schema(),
        ),
        (
            "skill_read_reference.output.schema.json",
            read_reference::output_schema(),
        ),
        ("tool-error.schema.json", ToolError::wire_schema()),
        (
            "record.schema.json",
            crate::runtime::tools::output_schema(
                crate::runtime::tools::serialized_schema::<Record>(),
            ),
        ),
    ]
}

/// A schema as written to disk: pretty JSON with a final newline.
pub fn render(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes every schema of [`all`] into `dir` (created when missing), beneath it without
/// following links (see the module doc); returns the paths written, in order. The first failure
/// stops the writing and names the file.
pub fn write_all(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    fs_err::create_dir_all(dir)?;
    let root = untrusted_fs::open_root(dir).map_err(|e| {
        let message = format!("`{}`: {e}", dir.display());
        std::io::Error::new(std::io::Error::from(e).kind(), message)
    })?;
    let mut written = Vec::new();
    for (name, schema) in all() {
        let path = dir.join(name);
        write_beneath(&root, name, render(&schema).as_bytes()).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display()))
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Writes `bytes` as the file `name` (one component) of the open directory `dir`: a new
/// temporary file beside it, then a rename over `name`. The temporary file is removed when any
/// step fails.
fn write_beneath(dir: &OwnedFd, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target = untrusted_fs::component(name).map_err(std::io::Error::from)?;
    let (temp_name, file) = create_temp(dir, name)?;
    let result = (|| {
        let mut file = std::fs::File::from(file);
        file.write_all(bytes)?;
        file.sync_all()?;
        rustix::fs::renameat(dir, temp_name.as_c_str(), dir, &*target)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp_name.as_c_str(), AtFlags::empty());
    }
    result
}

/// A new file `.NAME.PID.N.tmp` in `dir`, created exclusively, never through a link.
fn create_temp(dir: &OwnedFd, name: &str) -> std::io::Result<(CString, OwnedFd)> {
    const FLAGS: OFlags = OFlags::WRONLY
        .union(OFlags::CREATE)
        .union(OFlags::EXCL)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let temp = CString::new(format!(".{name}.{pid}.{attempt}.tmp"))
            .map_err(|_| std::io::Error::from(Errno::INVAL))?;
        match rustix::fs::openat(
            dir.as_fd(),
            temp.as_c_str(),
            FLAGS,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => return Ok((temp, fd)),
            // Left by a run that was killed, or planted: never reused, never followed.
            Err(Errno::EXIST) if attempt < 100 => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Rewrites `schema` and every subschema in it into the portable subset described in the module
/// doc: integer `format` widths become bounds, `"type": [T, "null"]` becomes an `anyOf`.
pub fn make_portable(schema: &mut Value) {
    visit_schemas(schema, &mut |map| {
        integer_bounds(map);
        nullable_as_any_of(map);
    });
}

/// Calls `f` on `schema` and on every subschema below it (properties, items, definitions,
/// combinators), after `f` has rewritten the parent, so subschemas `f` creates are visited too.
/// Values that are not schemas (`enum`, `const`, `default`, `examples`) are never visited.
pub fn visit_schemas(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Value::Object(map) = schema else {
        return;
    };
    f(map);
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(children) = value {
                    children.values_mut().for_each(|s| visit_schemas(s, f));
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = value {
                    children.iter_mut().for_each(|s| visit_schemas(s, f));
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                visit_schemas(value, f);
            }
            _ => {}
        }
    }
}

/// The range of each integer width `schemars` writes as a `format` (`None`: no bound that a JSON
/// number can state exactly on that side).
fn integer_range(format: &str) -> Option<(Option<i64>, Option<i64>)> {
    Some(match format {
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "int64" | "int128" | "int" => (None, None),
        "uint64" | "uint128" | "uint" => (Some(0), None),
        _ => return None,
    })
}

/// Replaces an integer width `format` by the `minimum`/`maximum` it implies, keeping a tighter
/// bound already present; drops the float widths (`float`, `double`), which say nothing a JSON
/// number does not.
fn integer_bounds(map: &mut Map<String, Value>) {
    let Some(format) = map.get("format").and_then(Value::as_str) else {
        return;
    };
    if matches!(format, "float" | "double") {
        map.remove("format");
        return;
    }
    let Some((min, max)) = integer_range(format) else {
        return;
    };
    map.remove("format");
    if let Some(min) = min {
        let tighter = map
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| m >= min as f64);
        if !tighter {
            map.insert("minimum".into(), min.into());
        }
    }
    if let Some(max) = max {
        let tighter = map
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| m <= max as f64);
        if !tighter {
            map.insert("maximum".into(), max.into());
        }
    }
}

/// Keywords that describe a value rather than constrain it: they stay on the outer schema when a
/// type list is split into an `anyOf`.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// `"type": [T, "null"]` (or any list of types) becomes `anyOf` with one branch per type: each
/// non-null branch carries the constraints (`items`, `minimum`, `pattern`, …), the null branch is
/// `{"type": "null"}`, and the annotations stay outside.
fn nullable_as_any_of(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let types = types.clone();
    map.remove("type");
    let constraints: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    map.retain(|k, _| ANNOTATIONS.contains(&k.as_str()));
    let branches = types
        .into_iter()
        .map(|t| {
            let mut branch = Map::new();
            let is_null = t == "null";
            branch.insert("type".into(), t);
            if !is_null {
                branch.extend(constraints.clone());
            }
            Value::Object(branch)
        })
        .collect();
    map.insert("anyOf".into(), Value::Array(branches));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integer_widths_become_bounds_and_keep_tighter_ones() {
        let mut schema = json!({"properties": {
            "a": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 30},
            "b": {"type": "integer", "format": "int32"},
            "c": {"type": "integer", "format": "uint64", "minimum": 0},
            "d": {"type": "number", "format": "double"},
        }});
        make_portable(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {
                "a": {"type": "integer", "minimum": 1, "maximum": 30},
                "b": {"type": "integer", "minimum": -2147483648_i64, "maximum": 2147483647},
                "c": {"type": "integer", "minimum": 0},
                "d": {"type": "number"},
            }})
        );
    }

    #[test]
    fn a_type_list_becomes_any_of_with_the_constraints_inside() {
        let mut schema = json!({"$defs": {"x": {
            "description": "d",
            "type": ["integer", "null"],
            "format": "uint32",
            "minimum": 1,
        }}});
        make_portable(&mut schema);
        assert_eq!(
            schema,
            json!({"$defs": {"x": {
                "description": "d",
                "anyOf": [
                    {"type": "integer", "minimum": 1, "maximum": 4294967295_u64},
                    {"type": "null"},
                ],
            }}})
        );
    }

    #[test]
    fn values_that_are_not_schemas_are_left_alone() {
        let mut schema = json!({"enum": [{"type": ["a", "null"]}], "default": {"format": "int32"}});
        let before = schema.clone();
        make_portable(&mut schema);
        assert_eq!(schema, before);
    }
}
