//! The portable form of the JSON Schemas `schemars` generates: integer widths as bounds instead
//! of `format` values, `nullable` as `anyOf`, so that a validator in its strict mode (Ajv's
//! default) takes every committed schema as it is.

use serde_json::{Map, Value};

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
