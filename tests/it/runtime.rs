//! The runtime end to end: verified snapshots, per-agent catalogues, the `load_skill` tool with
//! every refusal, records, the policy hook, and `skillfold verify` / `prompt` / `load`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use skillfold::{Catalogue, CatalogueError, Runtime};

use super::support::bin::{assert_stderr_has, stderr, stdout};
use super::support::git::Repo;
use super::support::world::{World, hold_corpus_guard, local_entry, sha256};

/// The `SKILL.md` of the local bundle `name`.
fn local_skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill & <friends>.\n---\n# {name}\n\nBody of {name}.\n"
    )
}

/// A descriptor with default `alpha` (with references), and agent extras `beta` (for `ops`) and
/// `gamma` (for `qa`).
fn agents_world() -> World {
    let world = World::new();
    let ha = world.bundle(
        "alpha",
        &local_skill_md("alpha"),
        &[
            ("references/guide.md", "# Guide\n"),
            ("references/deep/er.md", "deeper\n"),
            ("LICENSE", "MIT\n"),
        ],
    );
    let hb = world.bundle("beta", &local_skill_md("beta"), &[]);
    let hg = world.bundle("gamma", &local_skill_md("gamma"), &[]);
    let entry = |name: &str, hash: &str| {
        local_entry(
            name,
            "'1.0.0'",
            &world.path(name).display().to_string(),
            hash,
        )
    };
    world.descriptor(&format!(
        "skills:\n{}agents:\n  ops:\n    skills:\n  {}  qa:\n    skills:\n  {}  empty: {{}}\n",
        entry("alpha", &ha),
        entry("beta", &hb),
        entry("gamma", &hg),
    ));
    world
}

fn load(c: &Catalogue, name: &str, reference: Value) -> Result<Value, skillfold::ToolError> {
    c.call("load_skill", &json!({"name": name, "reference": reference}))
        .map(|(v, _)| v)
}

#[test]
fn body_and_references_are_served_with_their_record() {
    let w = agents_world();
    let c = w.catalogue(None);
    let (body, record) = c
        .call("load_skill", &json!({"name": "alpha", "reference": null}))
        .expect("body");
    assert_eq!(body["content"], "# alpha\n\nBody of alpha.\n");
    assert_eq!(body["reference"], Value::Null);
    assert_eq!(
        body["references"],
        json!(["LICENSE", "references/deep/er.md", "references/guide.md"])
    );
    assert_eq!(body["version"], "1.0.0");
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "version",
            "hash",
            "reference",
            "content",
            "references"
        ]
    );
    assert_eq!(record.bytes, 24);
    assert_eq!(record.sha256, sha256(b"# alpha\n\nBody of alpha.\n"));
    assert_eq!(record.origin.kind, "local");
    assert_eq!(record.reference, None);

    let (file, record) = c
        .call(
            "load_skill",
            &json!({"name": "alpha", "reference": "references/guide.md"}),
        )
        .expect("reference");
    assert_eq!(file["content"], "# Guide\n");
    assert_eq!(file["reference"], "references/guide.md");
    assert_eq!(file["references"], body["references"]);
    assert_eq!(record.reference.as_deref(), Some("references/guide.md"));
    assert_eq!(record.sha256, sha256(b"# Guide\n"));
    // A missing `reference` reads as `null`: the body (the schema still requires it).
    assert_eq!(
        c.call("load_skill", &json!({"name": "alpha"}))
            .expect("an omitted reference reads as null")
            .0,
        body
    );
}

#[test]
fn every_malformed_or_unknown_reference_is_refused_with_the_valid_ones() {
    let w = agents_world();
    let c = w.catalogue(None);
    for bad in [
        "/etc/passwd",
        "references\\guide.md",
        "references/guide.md\0",
        "references//guide.md",
        "./references/guide.md",
        "references/./guide.md",
        "../alpha/LICENSE",
        "references/../LICENSE",
        "SKILL.md",
        "references/missing.md",
        "REFERENCES/GUIDE.MD",
        "",
        "references/",
    ] {
        let err = load(&c, "alpha", json!(bad)).expect_err(bad);
        assert_eq!(err.code, "validation_error", "{bad:?}");
        assert_eq!(
            err.valid,
            ["LICENSE", "references/deep/er.md", "references/guide.md"],
            "{bad:?}"
        );
    }
}

#[test]
fn unknown_skill_tool_and_extra_fields_are_refused() {
    let w = agents_world();
    let c = w.catalogue(None);
    let err = load(&c, "nope", Value::Null).expect_err("unknown");
    assert_eq!(err.code, "validation_error");
    assert_eq!(err.valid, ["alpha"]);
    let err = c.call("delete_everything", &json!({})).expect_err("tool");
    assert_eq!(err.code, "unknown_tool");
    assert_eq!(err.valid, ["load_skill"]);
    for input in [
        json!({"name": "alpha", "reference": null, "extra": 1}),
        json!({"reference": null}),
        json!({"name": 7}),
        json!("alpha"),
    ] {
        let err = c.call("load_skill", &input).expect_err("shape");
        assert_eq!(err.code, "validation_error", "{input}");
    }
}

#[test]
fn another_agents_extras_are_never_visible() {
    let w = agents_world();
    let ops = w.catalogue(Some("ops"));
    let names: Vec<String> = ops.skills().map(|s| s.pin().name.to_string()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    let err = load(&ops, "gamma", Value::Null).expect_err("gamma belongs to qa");
    assert_eq!(err.valid, ["alpha", "beta"]);
    let prompt = ops.prompt().expect("prompt");
    assert!(
        prompt.contains("<name>\nbeta\n</name>") && !prompt.contains("gamma"),
        "{prompt}"
    );
    assert_eq!(
        ops.tools()[0].input_schema["properties"]["name"]["enum"],
        json!(["alpha", "beta"])
    );
    assert!(matches!(
        w.runtime().catalogue(Some("nobody")),
        Err(CatalogueError::UnknownAgent(_))
    ));
    // The agents a host can ask for: those the descriptor names, sorted.
    assert_eq!(
        w.runtime().agents().collect::<Vec<_>>(),
        ["empty", "ops", "qa"]
    );
}

#[test]
fn prompt_block_is_in_to_prompt_format_and_escaped() {
    let w = agents_world();
    let prompt = w.catalogue(None).prompt().expect("prompt");
    let location = w.tmp.path().join("alpha/SKILL.md");
    let want = format!(
        "<available_skills>\n<skill>\n<name>\nalpha\n</name>\n<description>\nThe alpha skill &amp; &lt;friends&gt;.\n</description>\n<location>\n{}\n</location>\n</skill>\n</available_skills>\n\n",
        location.display()
    );
    assert!(prompt.starts_with(&want), "{prompt}");
    assert!(
        prompt.contains("`load_skill`") && prompt.contains("not authority"),
        "{prompt}"
    );
}

#[test]
fn an_agent_without_skills_gets_no_prompt_and_no_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(&config, "agents:\n  lonely: {}\n").unwrap();
    let c = Runtime::open(&config)
        .unwrap()
        .runtime
        .catalogue(Some("lonely"))
        .unwrap();
    assert_eq!(c.prompt(), None);
    assert!(c.tools().is_empty());
    assert_eq!(
        c.call("load_skill", &json!({"name": "x", "reference": null}))
            .unwrap_err()
            .code,
        "unknown_tool"
    );
}

#[test]
fn tool_definition_is_strict_mode_valid() {
    let w = agents_world();
    let tool = &w.catalogue(None).tools()[0];
    assert_eq!(tool.name, "load_skill");
    let schema = &tool.input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort();
    assert_eq!(
        required,
        ["name", "reference"],
        "strict mode wants every property required"
    );
    assert_eq!(
        schema["properties"]["reference"]["anyOf"],
        json!([{"type": "string"}, {"type": "null"}])
    );
    assert!(schema.get("$schema").is_none());
}

#[test]
fn policy_hook_sees_the_resolution_and_can_refuse() {
    let w = agents_world();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    let c = w.catalogue(None).with_policy(move |access| {
        seen2.lock().unwrap().push((
            access.skill.name().to_owned(),
            access.reference.map(str::to_owned),
        ));
        if access.reference == Some("LICENSE") {
            Err("licenses are off limits here".into())
        } else {
            Ok(())
        }
    });
    assert!(load(&c, "alpha", json!("references/guide.md")).is_ok());
    let err = load(&c, "alpha", json!("LICENSE")).expect_err("refused");
    assert_eq!(err.code, "policy_denied");
    assert_eq!(err.message, "licenses are off limits here");
    // Refused for bad input: never reaches the hook.
    assert!(load(&c, "alpha", json!("../x")).is_err());
    assert!(load(&c, "nope", Value::Null).is_err());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("alpha".to_owned(), Some("references/guide.md".to_owned())),
            ("alpha".to_owned(), Some("LICENSE".to_owned()))
        ]
    );
}

#[test]
fn repeated_and_concurrent_calls_return_identical_bytes_and_disk_edits_do_not_matter() {
    let w = agents_world();
    let c = Arc::new(w.catalogue(None));
    let first = load(&c, "alpha", json!("references/guide.md")).unwrap();
    // Edit the bundle on disk after loading: what is served does not change.
    fs_err::write(
        w.tmp.path().join("alpha/references/guide.md"),
        "# tampered\n",
    )
    .unwrap();
    let calls = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..200 {
                    assert_eq!(
                        load(&c, "alpha", json!("references/guide.md")).unwrap(),
                        first
                    );
                    calls.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(calls.load(Ordering::Relaxed), 800);
}

#[test]
fn a_bundle_edited_on_disk_is_not_loaded_and_verify_names_it() {
    let w = agents_world();
    fs_err::write(
        w.tmp.path().join("alpha/references/guide.md"),
        "# tampered\n",
    )
    .unwrap();
    let runtime = w.runtime();
    let failures: Vec<String> = runtime
        .failures()
        .map(|f| format!("{} {}", f.name, f.code))
        .collect();
    assert_eq!(failures, ["alpha digest_mismatch"]);
    let c = runtime.catalogue(Some("ops")).unwrap();
    assert_eq!(load(&c, "alpha", Value::Null).unwrap_err().valid, ["beta"]);
    let out = w.cli(&["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "alpha");
    assert_stderr_has(&out, "[digest_mismatch]");
    let load = w.cli(&["load", "alpha"]);
    assert_eq!(load.status.code(), Some(2));
    assert_stderr_has(&load, "warning:");
    assert_stderr_has(&load, "not served");
}

/// The snapshots a host's own source loads to, through the builder a host uses; every bundle of
/// `source` must verify.
fn load_custom(
    source: impl skillfold::BundleSource + Send + 'static,
) -> Vec<Arc<skillfold::Snapshot>> {
    let built = Runtime::builder().source(source).build().expect("build");
    let refused: Vec<String> = built.refused.iter().map(ToString::to_string).collect();
    assert!(refused.is_empty(), "{refused:?}");
    built.runtime.snapshots().cloned().collect()
}

#[test]
fn seventeen_names_for_one_agent_and_conflicting_content_are_refused() {
    use skillfold::{BundleSource, FileSetBuilder, Pin};

    struct InMemory(Vec<(String, String)>);
    impl BundleSource for InMemory {
        fn label(&self) -> String {
            "in-memory".into()
        }
        fn bundles(&self) -> Vec<(Pin, skillfold::FileSet, skillfold::Problems)> {
            self.0
                .iter()
                .map(|(name, body)| {
                    let mut b = FileSetBuilder::new();
                    b.insert(
                        "SKILL.md",
                        format!("---\nname: {name}\ndescription: d\n---\n{body}").into_bytes(),
                    );
                    let (files, problems) = b.finish();
                    let digest = skillfold::BundleDigest::of(&files);
                    let pin = Pin {
                        name: name.parse().unwrap(),
                        version: "1".parse().unwrap(),
                        hash: digest,
                    };
                    (pin, files, problems)
                })
                .collect()
        }
    }
    let many: Vec<(String, String)> = (0..17).map(|i| (format!("s{i}"), "x".into())).collect();
    let snaps = load_custom(InMemory(many.clone()));
    assert_eq!(snaps.len(), 17);
    assert!(Catalogue::new(Some("a"), snaps[..16].iter().cloned()).is_ok());
    let err = Catalogue::new(Some("a"), snaps.iter().cloned()).unwrap_err();
    assert_eq!(err.code(), "too_many_skills");
    // The same snapshot twice deduplicates; the same name with other bytes conflicts.
    let twice = Catalogue::new(None, [snaps[0].clone(), snaps[0].clone()]).unwrap();
    assert_eq!(twice.skills().count(), 1);
    assert_eq!(snaps[0].pin().name.to_string(), "s0");
    let other = load_custom(InMemory(vec![("s0".into(), "different".into())])).remove(0);
    let err = Catalogue::new(None, [snaps[0].clone(), other]).unwrap_err();
    assert_eq!(err.code(), "conflicting_skills");
}

#[test]
fn a_custom_source_goes_through_the_same_verification() {
    use skillfold::{BundleSource, FileSetBuilder, Pin};

    struct Bad;
    impl BundleSource for Bad {
        fn label(&self) -> String {
            "embedded".into()
        }
        fn bundles(&self) -> Vec<(Pin, skillfold::FileSet, skillfold::Problems)> {
            let mut b = FileSetBuilder::new();
            b.insert("SKILL.md", b"---\nname: x\ndescription: d\n---\n".to_vec());
            b.insert(".secret", b"k".to_vec());
            let (files, problems) = b.finish();
            let pin = Pin {
                name: "x".parse().unwrap(),
                version: "1".parse().unwrap(),
                hash: "0".repeat(64).parse().unwrap(),
            };
            vec![(pin, files, problems)]
        }
    }
    let built = Runtime::builder().source(Bad).build().expect("build");
    assert_eq!(built.runtime.snapshots().count(), 0);
    let failure = built.refused.into_iter().next().expect("refused");
    assert_eq!(failure.code, "invalid_bundle");
    assert!(
        failure.details.iter().any(|d| d.contains("hidden_path")),
        "{:?}",
        failure.details
    );
}

// --- a prepared corpus ---------------------------------------------------------------------------

fn prepared_corpus() -> (Repo, tempfile::TempDir, PathBuf) {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    let commit = repo.commit("alpha");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skillfold.yaml");
    fs_err::write(
        &config,
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      approved:\n        - {{ name: alpha, version: '1', hash: {} }}\n",
            repo.file_url(),
            repo.digest("alpha")
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["prepare", "-c", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (repo, dir, config)
}

fn run(config: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(args)
        .env("SKILLFOLD_CONFIG", config)
        .output()
        .unwrap()
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn prepared_corpus_serves_prompt_and_load_and_verifies() {
    let (_repo, dir, config) = prepared_corpus();
    let out = run(&config, &["verify", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let prompt = run(&config, &["prompt"]);
    assert!(
        stdout(&prompt).contains(&format!(
            "{}/corpus/current/alpha/SKILL.md",
            dir.path().display()
        )),
        "{}",
        stdout(&prompt)
    );
    let load = run(&config, &["load", "alpha", "references/guide.md"]);
    assert_eq!(load.status.code(), Some(0), "{}", stderr(&load));
    let v: Value = serde_json::from_slice(&load.stdout).unwrap();
    assert_eq!(v["content"], "# Guide for alpha\n");
}

#[test]
fn corpus_file_edited_after_preparation_is_named_by_verify_and_refused_by_load() {
    let (_repo, dir, config) = prepared_corpus();
    let file = dir.path().join("corpus/current/alpha/references/guide.md");
    make_writable(&file);
    fs_err::write(&file, "# edited\n").unwrap();
    let out = run(&config, &["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("references/guide.md (changed)") && err.contains("[digest_mismatch]"),
        "{err}"
    );
    // Only the edited file is named: the others still match their records.
    assert!(!err.contains("SKILL.md ("), "{err}");
    let load = run(&config, &["load", "alpha"]);
    assert_eq!(load.status.code(), Some(2));
}

#[test]
fn a_file_added_to_a_published_bundle_is_named_as_added_by_verify() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_repo, dir, config) = prepared_corpus();
    let references = dir.path().join("corpus/current/alpha/references");
    fs_err::set_permissions(&references, std::fs::Permissions::from_mode(0o755)).unwrap();
    fs_err::write(references.join("extra.md"), "# planted\n").unwrap();
    let out = run(&config, &["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("references/extra.md (added)"), "{err}");
    assert!(!err.contains("guide.md ("), "{err}");
}

#[test]
fn corpus_file_replaced_by_a_symlink_is_refused() {
    let (_repo, dir, config) = prepared_corpus();
    let file = dir.path().join("corpus/current/alpha/references/guide.md");
    let outside = dir.path().join("outside.md");
    fs_err::write(&outside, "# Guide for alpha\n").unwrap();
    fs_err::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    let out = run(&config, &["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[symlink]");
    assert_stderr_has(&out, "references/guide.md");
}

#[test]
fn verify_exits_1_while_a_preparation_holds_the_guard() {
    let (_repo, dir, config) = prepared_corpus();
    let guard = hold_corpus_guard(&dir.path().join("corpus"));
    let out = run(&config, &["verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "being prepared");
    drop(guard);
    assert_eq!(run(&config, &["verify"]).status.code(), Some(0));
}

#[test]
fn unprepared_corpus_fails_verify() {
    let (_repo, dir, config) = prepared_corpus();
    fs_err::remove_file(dir.path().join("corpus/current")).unwrap();
    let out = run(&config, &["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[not_prepared]");
}
