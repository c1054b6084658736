//! The committed JSON Schemas under `schemas/` are exactly what the code generates, compile in
//! Ajv's default strict mode, and describe what the tools really take and send: the tool input
//! schemas follow the rules of the strict tool modes of model APIs, and real outputs and real
//! refusals of every tool validate against the published schemas (with the `jsonschema` crate,
//! an independent validator). Regenerate them with `cargo run -- schema --out schemas`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use skillfold::Catalogue;

use super::support::bin::{assert_stderr_has, skillfold, stderr, target_dir};

/// Every schema the code generates, as `skillfold schema --out DIR` writes them: (file name, text),
/// sorted by name.
fn generated() -> Vec<(String, String)> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = skillfold(&["schema", "--out", tmp.path().to_str().expect("UTF-8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    names_in(tmp.path())
        .into_iter()
        .map(|name| {
            let text = fs_err::read_to_string(tmp.path().join(&name)).expect("read");
            (name, text)
        })
        .collect()
}

#[test]
fn committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let generated = generated();
    assert!(generated.len() >= 9, "{generated:?}");
    for (name, want) in generated {
        let got = fs_err::read_to_string(dir.join(&name)).unwrap_or_default();
        assert!(
            got == want,
            "schemas/{name} is stale: run `cargo run -- schema --out schemas` and commit the result"
        );
    }
}

#[test]
fn descriptor_schema_describes_the_shape() {
    let text = generated()
        .into_iter()
        .find(|(name, _)| name == "skillfold.schema.json")
        .expect("the descriptor schema")
        .1;
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
    let mut unknown = json.clone();
    unknown["extra"] = 1.into();
    assert_invalid("skillfold.schema.json", &unknown);
    // `selection.max_skills`: 16 to 1,024, as `check` has it.
    for (max, valid) in [(64, true), (1024, true), (1025, false), (15, false)] {
        let mut raised = json.clone();
        raised["selection"] = serde_json::json!({ "max_skills": max });
        if valid {
            assert_valid("skillfold.schema.json", &raised);
        } else {
            assert_invalid("skillfold.schema.json", &raised);
        }
    }
}

#[test]
fn real_tool_inputs_outputs_errors_and_records_validate() {
    let skill = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/csv-profiler");
    let bundle = skillfold::Bundle::read_dir(&skill).expect("bundle");
    let pin = skillfold::Pin {
        name: bundle.name().clone(),
        version: "1.0".parse().unwrap(),
        hash: bundle.digest(),
    };
    let origin = skillfold::Origin {
        kind: skillfold::SourceKind::Local,
        location: "test".into(),
        url: None,
        commit: None,
        generation: None,
    };
    let snapshot =
        skillfold::Snapshot::new(bundle, pin, origin, skill.join("SKILL.md")).expect("verifies");
    let catalogue =
        skillfold::Catalogue::new(None, [std::sync::Arc::new(snapshot)]).expect("catalogue");
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
    assert_valid("tool-error.schema.json", &err.to_json());
    // The schema describes what is sent, `{"error": {...}}`, not the inner object alone.
    assert_invalid(
        "tool-error.schema.json",
        &serde_json::to_value(&err).unwrap(),
    );
    // The per-agent tool definition narrows `name` and still accepts a real input.
    let tool = &catalogue.tools()[0];
    let validator = jsonschema::validator_for(&tool.input_schema).expect("schema");
    assert!(validator.is_valid(&json!({"name": "csv-profiler", "reference": null})));
    assert!(!validator.is_valid(&json!({"name": "other", "reference": null})));
}

/// The keywords a tool input schema may use: those that OpenAI strict mode, Anthropic strict
/// tool use and Gemini's JSON Schema parameters all accept (no `default`, `format`, bounds,
/// `$schema` or `title`).
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
];

/// What keeps `schema` (at `at`) from being used unchanged by a strict tool mode.
fn strict_mode_problems(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        problems.push(format!("{at}: not an object"));
        return;
    };
    for key in obj.keys() {
        if !STRICT_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!(
                "{at}: `{key}` is not accepted by every strict mode"
            ));
        }
    }
    match obj.get("type") {
        Some(Value::String(_)) => {}
        Some(other) => problems.push(format!("{at}: `type` is {other}, not one type name")),
        None if obj.contains_key("anyOf") => {}
        None => problems.push(format!("{at}: no `type`")),
    }
    if obj.get("type") == Some(&json!("object")) {
        if obj.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!("{at}: not closed (`additionalProperties: false`)"));
        }
        let properties: BTreeSet<&str> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let required: BTreeSet<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if properties != required {
            problems.push(format!(
                "{at}: `required` is {required:?}, not every property {properties:?}"
            ));
        }
    }
    if let Some(properties) = obj.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            strict_mode_problems(property, &format!("{at}/properties/{name}"), problems);
        }
    }
    if let Some(items) = obj.get("items") {
        strict_mode_problems(items, &format!("{at}/items"), problems);
    }
    for (i, branch) in obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        strict_mode_problems(branch, &format!("{at}/anyOf/{i}"), problems);
    }
}

fn assert_strict_mode(name: &str, schema: &Value) {
    let mut problems = Vec::new();
    strict_mode_problems(schema, "#", &mut problems);
    assert!(problems.is_empty(), "{name}: {problems:#?}");
    assert_eq!(schema["type"], "object", "{name}");
}

#[test]
fn tool_input_schemas_follow_the_strict_mode_rules() {
    let lab = ToolLab::new();
    let tools = lab.catalogue().tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        ["load_skill", "skill_run_script", "skill_read_reference"]
    );
    for tool in &tools {
        assert_strict_mode(tool.name, &tool.input_schema);
    }
    for (name, text) in generated() {
        if name.ends_with(".input.schema.json") {
            let schema: Value = serde_json::from_str(&text).expect("JSON");
            assert_strict_mode(&name, &schema);
        }
    }
    // The check itself refuses what strict modes refuse.
    let mut problems = Vec::new();
    strict_mode_problems(
        &json!({"type": "object", "properties": {
            "a": {"type": ["string", "null"], "default": null},
            "b": {"type": "integer", "format": "uint32", "maximum": 3},
            "c": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        }, "required": ["a"]}),
        "#",
        &mut problems,
    );
    assert_eq!(problems.len(), 7, "{problems:#?}");
}

#[test]
fn an_omitted_nullable_input_reads_as_null_while_the_schema_requires_it() {
    let lab = ToolLab::new();
    let c = lab.catalogue();
    // Strict clients keep the schema that requires `reference`…
    assert_invalid("load_skill.input.schema.json", &json!({"name": "tools"}));
    for def in c.tools() {
        let props = def.input_schema["properties"].as_object().unwrap();
        let required: Vec<&str> = def.input_schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            required,
            props.keys().map(String::as_str).collect::<Vec<_>>()
        );
    }
    // …and a model that leaves it out gets what `null` gives: the body, with the same record.
    let omitted = c
        .call("load_skill", &json!({"name": "tools"}))
        .expect("an omitted reference reads as null");
    let explicit = c
        .call("load_skill", &json!({"name": "tools", "reference": null}))
        .expect("null");
    assert_eq!(omitted, explicit);
    assert_eq!(omitted.0["reference"], Value::Null);
    assert_eq!(omitted.1.reference, None);
    assert_valid("load_skill.output.schema.json", &omitted.0);
    // Omitting the name is still refused, and so is a reference of the wrong type.
    for input in [
        json!({"reference": null}),
        json!({"name": "tools", "reference": 1}),
    ] {
        let err = c.call("load_skill", &input).unwrap_err();
        assert_eq!(err.code, "validation_error", "{input}");
    }
    // Arguments are named: an array is not read by position.
    for input in [
        json!(["tools", null]),
        json!(["tools"]),
        json!("tools"),
        json!(null),
    ] {
        let err = c.call("load_skill", &input).unwrap_err();
        assert_eq!(err.code, "validation_error", "{input}");
        assert!(err.message.contains("not an object"), "{}", err.message);
    }
    // `args` is not nullable (`[]` means no arguments): leaving it out is still refused.
    let err = c
        .call(
            "skill_run_script",
            &json!({"skill": "tools", "script": "scripts/ok.py"}),
        )
        .unwrap_err();
    assert_eq!(err.code, "invalid_args");
    assert!(err.message.contains("`args`"), "{}", err.message);
    assert_invalid(
        "skill_run_script.input.schema.json",
        &json!({"skill": "tools", "script": "scripts/ok.py"}),
    );
}

#[test]
fn a_load_skill_refusal_quotes_at_most_256_characters_of_its_input() {
    let lab = ToolLab::new();
    let c = lab.catalogue();
    let long = "\u{1b}".to_owned() + &"x".repeat(1 << 20);
    for input in [
        json!({"name": long, "reference": null}),
        json!({"name": "tools", "reference": long}),
        json!({"name": "tools", "reference": format!("references/{long}")}),
        json!({"name": "tools", "reference": null, long.clone(): 1}),
        json!({"name": "tools", "reference": [long]}),
    ] {
        let err = c.call("load_skill", &input).unwrap_err();
        assert_eq!(err.code, "validation_error");
        assert!(err.message.len() < 1_000, "{} bytes", err.message.len());
        assert!(!err.message.contains('\u{1b}'), "{}", &err.message[..100]);
    }
}

#[test]
fn refusals_of_every_tool_match_the_published_error_schema() {
    let lab = ToolLab::new();
    let c = lab.catalogue().with_policy(|access| {
        if access.reference == Some("references/secret.md") {
            Err("this file is off limits".into())
        } else {
            Ok(())
        }
    });
    let run = |script: &str| json!({"skill": "tools", "script": script, "args": []});
    let cases = [
        ("no_such_tool", json!({}), "unknown_tool"),
        ("load_skill", json!(["tools", null]), "validation_error"),
        (
            "load_skill",
            json!({"name": "nope", "reference": null}),
            "validation_error",
        ),
        (
            "load_skill",
            json!({"name": "tools", "reference": "../x"}),
            "validation_error",
        ),
        (
            "load_skill",
            json!({"name": "tools", "reference": "references/secret.md"}),
            "policy_denied",
        ),
        (
            "skill_run_script",
            json!({"skill": "tools", "script": "scripts/ok.py"}),
            "invalid_args",
        ),
        ("skill_run_script", run("../x.py"), "invalid_path"),
        (
            "skill_run_script",
            json!({"skill": "nope", "script": "scripts/ok.py", "args": []}),
            "unknown_skill",
        ),
        ("skill_run_script", run("scripts/none.py"), "not_found"),
        (
            "skill_run_script",
            run("scripts/unapproved.py"),
            "not_approved",
        ),
        ("skill_run_script", run("scripts/fail.py"), "script_failed"),
        (
            "skill_read_reference",
            json!({"skill": "style"}),
            "invalid_args",
        ),
        (
            "skill_read_reference",
            json!({"skill": "nope", "path": "SKILL.md"}),
            "unknown_skill",
        ),
        (
            "skill_read_reference",
            json!({"skill": "style", "path": "notes.md"}),
            "invalid_path",
        ),
        (
            "skill_read_reference",
            json!({"skill": "style", "path": "references/missing.md"}),
            "not_found",
        ),
    ];
    let wire = validator("tool-error.schema.json");
    let generated =
        jsonschema::validator_for(&skillfold::ToolError::wire_schema()).expect("a valid schema");
    for (tool, input, code) in cases {
        let err = c.call(tool, &input).expect_err("refused");
        assert_eq!(err.code, code, "{tool} {input}: {err}");
        let sent = err.to_json();
        let errors: Vec<String> = wire.iter_errors(&sent).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool} {code}: {errors:?}\n{sent}");
        assert!(generated.is_valid(&sent));
        if code == "script_failed" {
            assert_eq!(sent["error"]["exit_code"], 3, "{sent}");
            assert!(sent["error"]["stderr"].as_str().unwrap().contains("boom"));
        }
    }
    // The schema is closed: an error object with an unknown field does not pass.
    let mut extra = c.call("no_such_tool", &json!({})).unwrap_err().to_json();
    extra["error"]["extra"] = json!(1);
    assert!(!wire.is_valid(&extra));
}

#[test]
fn successful_outputs_of_every_tool_match_their_output_schemas() {
    let lab = ToolLab::new();
    let c = lab.catalogue();
    let calls = [
        (
            "load_skill",
            json!({"name": "tools", "reference": null}),
            "load_skill.output.schema.json",
        ),
        (
            "load_skill",
            json!({"name": "tools", "reference": "references/secret.md"}),
            "load_skill.output.schema.json",
        ),
        (
            "skill_run_script",
            json!({"skill": "tools", "script": "scripts/ok.py", "args": ["a"]}),
            "skill_run_script.output.schema.json",
        ),
        (
            "skill_read_reference",
            json!({"skill": "style", "path": "references/tone.md"}),
            "skill_read_reference.output.schema.json",
        ),
    ];
    let tools = c.tools();
    for (tool, input, file) in calls {
        let (output, record) = c.call(tool, &input).expect("served");
        assert_valid(file, &output);
        assert_valid("record.schema.json", &serde_json::to_value(record).unwrap());
        let definition = tools.iter().find(|t| t.name == tool).expect("offered");
        let published: Value = serde_json::from_str(
            &fs_err::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("schemas")
                    .join(file),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            definition.output_schema, published,
            "{tool} advertises the published schema"
        );
        // Exact: a field more or less does not pass.
        let mut more = output.clone();
        more["extra"] = json!(1);
        assert_invalid(file, &more);
        let mut less = output;
        let fields = less.as_object_mut().unwrap();
        let first = fields.keys().next().cloned().unwrap();
        fields.remove(&first);
        assert_invalid(file, &less);
    }
}

/// A local skill `tools` (a reference, an approved helper that succeeds, one that fails, one not
/// approved) and a guides folder with a discovered skill `style`: every tool is offered.
struct ToolLab {
    _tmp: tempfile::TempDir,
    config: PathBuf,
}

impl ToolLab {
    fn new() -> ToolLab {
        let tmp = tempfile::tempdir().expect("tempdir");
        let write = |rel: &str, text: &str| {
            let path = tmp.path().join(rel);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        };
        write(
            "tools/SKILL.md",
            "---\nname: tools\ndescription: Helpers.\n---\n# Tools\n",
        );
        write("tools/references/secret.md", "# Secret\n");
        write(
            "tools/scripts/ok.py",
            "import sys\nprint('ok', *sys.argv[1:])\n",
        );
        write(
            "tools/scripts/fail.py",
            "import sys\nsys.stderr.write('boom\\n')\nsys.exit(3)\n",
        );
        write("tools/scripts/unapproved.py", "print(1)\n");
        write(
            "guides/style/SKILL.md",
            "---\nname: style\ndescription: House style.\n---\n# Style\n",
        );
        write("guides/style/references/tone.md", "# Tone\n");
        write("guides/style/notes.md", "not a reference\n");
        let dir = tmp.path().join("tools");
        let hash = skillfold::Bundle::read_dir(&dir).expect("valid").digest();
        let approve = |script: &str| {
            use sha2::Digest as _;
            let digest = sha2::Sha256::digest(fs_err::read(dir.join(script)).unwrap());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            format!("    - {{ skill: tools, script: {script}, sha256: {hex} }}\n")
        };
        let python = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3");
        let yaml = format!(
            "skills:\n  - local: {{ name: tools, version: '1', directory: tools, hash: {hash} }}\nguides: guides\nscripts:\n  python: {}\n  timeout_seconds: 10\n  allowlist:\n{}{}",
            String::from_utf8_lossy(&python.stdout).trim(),
            approve("scripts/ok.py"),
            approve("scripts/fail.py"),
        );
        let config = tmp.path().join("skillfold.yaml");
        fs_err::write(&config, yaml).unwrap();
        ToolLab { _tmp: tmp, config }
    }

    fn catalogue(&self) -> Catalogue {
        skillfold::Runtime::open(&self.config)
            .expect("open")
            .runtime
            .catalogue(None)
            .expect("catalogue")
    }
}

/// Ajv (pinned with every dependency in `tests/ajv/package-lock.json`) installed under the target
/// directory, with `tests/ajv/check.js` beside it; reinstalled when those files change. `None`
/// when node or npm is missing.
fn ajv() -> Option<PathBuf> {
    let has = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("node") || !has("npm") {
        return None;
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ajv");
    let files = ["package.json", "package-lock.json", "check.js"];
    let wanted: Vec<u8> = files
        .iter()
        .flat_map(|f| fs_err::read(source.join(f)).expect("tests/ajv"))
        .collect();
    let dir = target_dir().join("ajv-strict");
    let stamp = dir.join("skillfold-stamp");
    if fs_err::read(&stamp).ok().as_deref() == Some(wanted.as_slice())
        && dir.join("node_modules/ajv").is_dir()
    {
        return Some(dir);
    }
    if dir.exists() {
        fs_err::remove_dir_all(&dir).expect("remove the stale Ajv folder");
    }
    fs_err::create_dir_all(&dir).expect("mkdir");
    for f in files {
        fs_err::copy(source.join(f), dir.join(f)).expect("copy");
    }
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(&dir)
        .output()
        .expect("run npm ci");
    assert!(
        out.status.success(),
        "npm ci failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    fs_err::write(&stamp, &wanted).expect("write the stamp");
    Some(dir)
}

/// Ajv's report on `files`: per file name, the compile error and the strict-mode warnings.
fn ajv_report(dir: &Path, files: &[PathBuf]) -> Value {
    let out = Command::new("node")
        .arg(dir.join("check.js"))
        .args(files)
        .current_dir(dir)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "check.js failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

#[test]
fn committed_schemas_compile_in_ajv_default_strict_mode() {
    let Some(dir) = ajv() else {
        eprintln!("skipped: node and npm are needed to run Ajv; install them to run this check");
        return;
    };
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let files: Vec<PathBuf> = generated()
        .into_iter()
        .map(|(name, _)| schemas.join(name))
        .collect();
    let report = ajv_report(&dir, &files);
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            report[name],
            json!({"error": null, "warnings": []}),
            "Ajv (strict) on schemas/{name}"
        );
    }
    // Ajv does refuse what strict mode refuses: an integer width written as a `format`.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.json");
    fs_err::write(
        &bad,
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer", "format": "uint32"}"#,
    )
    .unwrap();
    let report = ajv_report(&dir, &[bad]);
    assert!(
        report["bad.json"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("uint32")),
        "{report}"
    );
}

/// The names of `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn schema_out_replaces_links_planted_at_its_names_and_never_writes_through_them() {
    use std::os::unix::fs::symlink;

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    fs_err::create_dir_all(&out).unwrap();
    let outside = tmp.path().join("outside");
    fs_err::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    fs_err::write(&victim, "precious\n").unwrap();
    // A link to a file outside DIR, and a dangling link whose target must not be created.
    symlink(&victim, out.join("skillfold.schema.json")).unwrap();
    symlink(outside.join("created"), out.join("record.schema.json")).unwrap();

    let o = skillfold(&["schema", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        fs_err::read_to_string(&victim).unwrap() == "precious\n",
        "the link's target outside DIR was written"
    );
    assert_eq!(names_in(&outside), ["victim"]);
    let generated = generated();
    let want: Vec<String> = generated.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(names_in(&out), want, "no temporary file is left behind");
    for (name, schema) in generated {
        let path = out.join(&name);
        assert!(
            fs_err::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_file(),
            "{name} is a regular file now"
        );
        assert_eq!(fs_err::read_to_string(&path).unwrap(), schema);
    }

    // DIR itself a link: refused, nothing written where it points.
    let linked = tmp.path().join("linked");
    symlink(&outside, &linked).unwrap();
    let o = skillfold(&["schema", "--out", linked.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_stderr_has(&o, "symbolic link");
    assert_eq!(names_in(&outside), ["victim"]);
}
