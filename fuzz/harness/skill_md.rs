//! `SKILL.md` in both dialects: the bundle dialect's frontmatter check and the skills-ref
//! reader (decoding, fences, strict YAML, `validate_metadata`, the JSON printer).

use serde_json::Value;

use crate::format::bundle::Bundle;
use crate::format::file_set::FileSetBuilder;
use crate::format::limits;
use crate::format::problem::{ProblemCode, Problems};
use crate::skills_ref::strict_yaml::{self, Value as YamlValue};
use crate::skills_ref::{properties, skill_file, validate};

use super::common::{assert_refusal_explained, is_code, matches_name_pattern};

/// `SKILL.md` bytes in the bundle dialect: [`crate::format::frontmatter::check`], then the same bytes as
/// a one-file bundle, which must be accepted exactly when the file is text and the frontmatter
/// passed.
pub fn frontmatter(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(layout) = crate::format::frontmatter::layout(&text) {
        assert!(text.starts_with("---\n") || text.starts_with("---\r\n"));
        assert!(layout.frontmatter.start <= layout.frontmatter.end);
        assert!(layout.frontmatter.end < layout.body.start);
        assert_eq!(layout.body.end, text.len());
        assert!(text[layout.frontmatter.end..].starts_with("---"));
    }
    let mut problems = Problems::new();
    let checked = crate::format::frontmatter::check(&text, &limits::CHAMVI, &mut problems);
    match &checked {
        Some((fm, layout)) => {
            assert!(!problems.has_errors(), "accepted with errors: {problems:?}");
            assert_eq!(
                Ok(layout),
                crate::format::frontmatter::layout(&text).as_ref()
            );
            assert!(layout.frontmatter.len() as u64 <= limits::MAX_FRONTMATTER_BYTES);
            assert!(layout.body.len() as u64 <= limits::MAX_BODY_BYTES);
            let name = fm.name.as_str();
            assert!(matches_name_pattern(name), "accepted name `{name:?}`");
            let d = &fm.description;
            assert_eq!(d.trim(), d, "description not trimmed");
            assert!(!d.is_empty(), "blank description accepted");
            assert!(d.chars().count() <= limits::MAX_DESCRIPTION_CHARS);
            assert!(!d.chars().any(char::is_control), "control char in {d:?}");
            assert!(fm.ignored_fields.windows(2).all(|w| w[0] < w[1]));
            assert!(
                !fm.ignored_fields
                    .iter()
                    .any(|f| f == "name" || f == "description")
            );
        }
        None => assert_refusal_explained(&problems),
    }
    let mut builder = FileSetBuilder::new();
    builder.insert(limits::SKILL_MD, data.to_vec());
    let (files, problems) = builder.finish();
    let is_text = std::str::from_utf8(data).is_ok() && !data.contains(&0);
    match Bundle::check(files, problems) {
        Ok(bundle) => {
            assert!(
                is_text && checked.is_some(),
                "the bundle check accepted more"
            );
            let (fm, layout) = checked.as_ref().expect("checked above");
            assert_eq!(bundle.name(), &fm.name);
            assert_eq!(bundle.description(), fm.description);
            assert_eq!(bundle.body(), &text[layout.body.clone()]);
        }
        Err(invalid) => {
            // The content rules (hidden characters, comments) refuse text the frontmatter
            // reader accepts: a refusal for them alone is no disagreement.
            let content_only = invalid.problems.as_slice().iter().all(|p| {
                matches!(
                    p.code,
                    ProblemCode::HiddenCharacter | ProblemCode::HiddenComment
                )
            });
            assert!(
                !is_text || checked.is_none() || content_only,
                "the bundle check refused more"
            );
            assert_refusal_explained(&invalid.problems);
        }
    }
}

/// `SKILL.md` bytes in the skills-ref dialect: decoding, the fences, the strict YAML loader,
/// `validate_metadata`, the `read-properties` JSON printer and the `allowed-tools` rules.
pub fn skills_ref(data: &[u8]) {
    let text = match skill_file::decode(data) {
        Ok(text) => text,
        Err((byte, offset)) => {
            assert_eq!(data[offset], byte);
            assert!(std::str::from_utf8(&data[..offset]).is_ok());
            assert!(std::str::from_utf8(data).is_err());
            return;
        }
    };
    assert!(!text.contains('\r'), "universal newlines left a CR");
    let map = match skill_file::frontmatter(&text) {
        Ok(yaml) => {
            assert!(text.get(3..).is_some_and(|rest| rest.starts_with(yaml)));
            match skill_file::parse(&text) {
                Ok(map) => map,
                Err(e) => return assert!(!e.to_string().is_empty() && is_code(e.code().as_str())),
            }
        }
        Err(e) => {
            assert!(is_code(e.code().as_str()));
            // Not a `SKILL.md`: still a YAML stream for the loader.
            if let Ok(value) = strict_yaml::load(&text) {
                check_yaml_value(&value);
            }
            return;
        }
    };
    let whole = YamlValue::Map(map);
    check_yaml_value(&whole);
    let YamlValue::Map(map) = whole else {
        unreachable!()
    };
    let dir = match skill_file::get(&map, "name") {
        Some(YamlValue::Str(name)) => name.clone(),
        _ => "skill".to_owned(),
    };
    let errors = validate::validate_metadata(&map, &dir);
    assert!(errors.iter().all(|e| !e.is_empty()));
    if errors.is_empty() {
        for key in ["name", "description"] {
            assert!(
                matches!(skill_file::get(&map, key), Some(YamlValue::Str(s)) if !s.trim().is_empty()),
                "valid without a `{key}`"
            );
        }
        assert!(
            map.iter()
                .all(|(k, _)| validate::ALLOWED_FIELDS.contains(&k.as_str()))
        );
    }
}

/// A loaded value: no duplicate keys anywhere, and the JSON printer writes ASCII JSON that reads
/// back to the same strings.
fn check_yaml_value(value: &YamlValue) {
    no_duplicate_keys(value, 0);
    let mut out = String::new();
    properties::write_json(value, 0, &mut out);
    assert!(out.is_ascii(), "ensure_ascii output is not ASCII: {out}");
    let parsed: Value = serde_json::from_str(&out).expect("the printer writes JSON");
    assert!(same_json(value, &parsed), "{out} does not read back");
}

fn no_duplicate_keys(value: &YamlValue, depth: usize) {
    assert!(
        depth <= 1_000,
        "nesting deeper than the input could express"
    );
    match value {
        YamlValue::Str(_) | YamlValue::Tagged(_) => {}
        YamlValue::List(items) => items.iter().for_each(|v| no_duplicate_keys(v, depth + 1)),
        YamlValue::Map(entries) => {
            let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            keys.sort_unstable();
            assert!(keys.windows(2).all(|w| w[0] != w[1]), "duplicate key");
            entries
                .iter()
                .for_each(|(_, v)| no_duplicate_keys(v, depth + 1));
        }
    }
}

fn same_json(value: &YamlValue, json: &Value) -> bool {
    match (value, json) {
        (YamlValue::Str(s) | YamlValue::Tagged(s), Value::String(j)) => s == j,
        (YamlValue::List(items), Value::Array(js)) => {
            items.len() == js.len() && items.iter().zip(js).all(|(v, j)| same_json(v, j))
        }
        // Keys are unique (checked above), so the JSON object has one entry per key.
        (YamlValue::Map(entries), Value::Object(js)) => {
            entries.len() == js.len()
                && entries
                    .iter()
                    .all(|(k, v)| js.get(k).is_some_and(|j| same_json(v, j)))
        }
        _ => false,
    }
}
