//! The committed JSON Schemas under `schemas/` are exactly what the code generates.
//! Regenerate them with `cargo run -- schema --out schemas`.

use std::path::Path;

#[test]
fn committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for (name, schema) in skillfold::schemas::all() {
        let want = skillfold::schemas::render(&schema);
        let got = fs_err::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            got == want,
            "schemas/{name} is stale: run `cargo run -- schema --out schemas` and commit the result"
        );
    }
}

#[test]
fn descriptor_schema_describes_the_shape() {
    let schema = skillfold::descriptor::json_schema();
    let text = schema.to_string();
    for needle in [
        "revision",
        "approved",
        "^([0-9a-f]{40}|[0-9a-f]{64})$",
        "additionalProperties",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from the descriptor schema"
        );
    }
}

/// An independent validator for the committed schema `name`.
fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(name);
    let text = fs_err::read_to_string(path).expect("schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("json");
    jsonschema::validator_for(&schema).expect("a valid schema")
}

fn assert_valid(name: &str, instance: &serde_json::Value) {
    let errors: Vec<String> = validator(name)
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{instance}");
}

fn assert_invalid(name: &str, instance: &serde_json::Value) {
    assert!(
        !validator(name).is_valid(instance),
        "{name} accepted {instance}"
    );
}

#[test]
fn the_example_descriptor_validates_against_its_schema() {
    let text = fs_err::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skillfold.yaml"),
    )
    .expect("read");
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).expect("yaml");
    let json = serde_json::to_value(yaml).expect("json");
    assert_valid("skillfold.schema.json", &json);
    let mut bad = json.clone();
    bad["skills"][0]["git"]["revision"] = "main".into();
    assert_invalid("skillfold.schema.json", &bad);
    let mut unknown = json;
    unknown["extra"] = 1.into();
    assert_invalid("skillfold.schema.json", &unknown);
}

#[test]
fn real_tool_inputs_outputs_errors_and_records_validate() {
    use serde_json::json;
    let skill = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/csv-profiler");
    let bundle = skillfold::bundle::Bundle::read_dir(&skill).expect("bundle");
    let pin = skillfold::pin::Pin {
        name: bundle.name().clone(),
        version: "1.0".parse().unwrap(),
        hash: bundle.digest(),
    };
    let origin = skillfold::snapshot::Origin {
        kind: "local",
        location: "test".into(),
        url: None,
        commit: None,
        generation: None,
    };
    let snapshot = skillfold::snapshot::Snapshot::new(bundle, pin, origin, skill.join("SKILL.md"))
        .expect("verifies");
    let catalogue = skillfold::catalogue::Catalogue::new(None, [std::sync::Arc::new(snapshot)])
        .expect("catalogue");
    for input in [
        json!({"name": "csv-profiler", "reference": null}),
        json!({"name": "csv-profiler", "reference": "assets/example.csv"}),
    ] {
        assert_valid("load_skill.input.schema.json", &input);
        let (output, record) = catalogue.call("load_skill", &input).expect("served");
        assert_valid("load_skill.output.schema.json", &output);
        assert_valid("record.schema.json", &serde_json::to_value(record).unwrap());
    }
    assert_invalid(
        "load_skill.input.schema.json",
        &json!({"name": "x", "reference": null, "more": 1}),
    );
    assert_invalid("load_skill.input.schema.json", &json!({"name": "x"}));
    let err = catalogue
        .call(
            "load_skill",
            &json!({"name": "csv-profiler", "reference": "../x"}),
        )
        .unwrap_err();
    assert_valid(
        "tool-error.schema.json",
        &serde_json::to_value(&err).unwrap(),
    );
    // The per-agent tool definition narrows `name` and still accepts a real input.
    let tool = &catalogue.tools()[0];
    let validator = jsonschema::validator_for(&tool.input_schema).expect("schema");
    assert!(validator.is_valid(&json!({"name": "csv-profiler", "reference": null})));
    assert!(!validator.is_valid(&json!({"name": "other", "reference": null})));
}
