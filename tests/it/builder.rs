//! The typed builder (`Runtime::builder`): the same catalogues as the descriptor it stands for,
//! the descriptor's checks (problems named by location), verification of every bundle (refused
//! ones returned with their reasons), a host's own sources verified like the rest and scoped to
//! an agent, and a policy hook on every catalogue.

use std::path::{Path, PathBuf};

use serde_json::json;
use skillfold::{Bundle, BundleSource, FileSetBuilder, GitCorpus, Pin, Problems, Runtime};

const COMMIT_MESSAGE: &str = "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e";
const CHANGELOG: &str = "e7393af7bb7c7bf3f4269983c78a83617e020853a8405cdabe465e464f64c0ce";
const CSV: &str = "f1c40afd786dd9e23190d4e875c2c62f193e1e6769d235644e17aa86083215e2";

fn skills() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills")
}

#[test]
fn the_builder_gives_the_catalogues_of_the_descriptor_it_stands_for() {
    let built = Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills().join("commit-message"),
            COMMIT_MESSAGE,
        )
        .agent("writer", |a| {
            a.local(
                "changelog-writer",
                "1.0",
                skills().join("changelog-writer"),
                CHANGELOG,
            )
        })
        .agent("analyst", |a| {
            a.local("csv-profiler", "1.0", skills().join("csv-profiler"), CSV)
        })
        .build()
        .expect("valid");
    assert!(built.refused.is_empty());

    let yaml = format!(
        "skills:\n  - local: {{ name: commit-message, version: 1.0.0, directory: {d}/commit-message, hash: {COMMIT_MESSAGE} }}\nagents:\n  writer:\n    skills:\n      - local: {{ name: changelog-writer, version: '1.0', directory: {d}/changelog-writer, hash: {CHANGELOG} }}\n  analyst:\n    skills:\n      - local: {{ name: csv-profiler, version: '1.0', directory: {d}/csv-profiler, hash: {CSV} }}\n",
        d = skills().display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("skillfold.yaml");
    fs_err::write(&config, yaml).expect("write");
    let from_yaml = Runtime::open(&config).expect("open").runtime;
    for agent in [None, Some("writer"), Some("analyst")] {
        let a = built.runtime.catalogue(agent).expect("catalogue");
        let b = from_yaml.catalogue(agent).expect("catalogue");
        assert_eq!(a.prompt(), b.prompt(), "{agent:?}");
        assert_eq!(
            serde_json::to_value(a.tools()).unwrap(),
            serde_json::to_value(b.tools()).unwrap()
        );
    }
    assert!(built.runtime.catalogue(Some("nobody")).is_err());
}

#[test]
fn the_builder_applies_the_descriptor_rules_and_refuses_what_does_not_verify() {
    let error = Runtime::builder()
        .local(
            "commit-message",
            "latest",
            skills().join("commit-message"),
            COMMIT_MESSAGE,
        )
        .git_corpus(
            GitCorpus::new("https://example.com/s.git", "main", "/tmp/corpus").approve(
                "pdf",
                "1.0",
                "not-a-hash",
            ),
        )
        .agent("bad name!", |a| a)
        .build()
        .expect_err("refused");
    let problems: Vec<String> = error.problems.iter().map(ToString::to_string).collect();
    let all = problems.join("\n");
    for expected in [
        "skills[0].local.version",
        "skills[1].git.revision",
        "skills[1].git.approved[0].hash",
        "agents.bad name!",
    ] {
        assert!(all.contains(expected), "{expected} in:\n{all}");
    }

    // A pin that does not match the bytes: refused with its reason, the rest served.
    let built = Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills().join("commit-message"),
            COMMIT_MESSAGE,
        )
        .local(
            "changelog-writer",
            "1.0",
            skills().join("changelog-writer"),
            CSV,
        )
        .build()
        .expect("valid configuration");
    assert_eq!(built.refused.len(), 1);
    assert_eq!(built.refused[0].name, "changelog-writer");
    assert_eq!(built.refused[0].code.as_str(), "digest_mismatch");
    let names: Vec<String> = built
        .runtime
        .catalogue(None)
        .unwrap()
        .skills()
        .map(|s| s.pin().name.to_string())
        .collect();
    assert_eq!(names, ["commit-message"]);
}

/// A host's own source: bundles held in memory, each with the pin the host approved.
struct InMemory {
    bundles: Vec<(&'static str, &'static str)>,
    /// Pin every bundle to the digest of this text instead of its own (a tampered bundle).
    pinned_to: Option<&'static str>,
}

impl BundleSource for InMemory {
    fn label(&self) -> String {
        "in-memory".to_owned()
    }

    fn bundles(&self) -> Vec<(Pin, skillfold::FileSet, Problems)> {
        self.bundles
            .iter()
            .map(|(name, description)| {
                let text =
                    |d: &str| format!("---\nname: {name}\ndescription: {d}\n---\n# {name}\n");
                let files = |d: &str| {
                    let mut builder = FileSetBuilder::new();
                    builder.insert("SKILL.md", text(d).into_bytes());
                    builder.finish()
                };
                let approved = files(self.pinned_to.unwrap_or(description));
                let digest = Bundle::check(approved.0, approved.1)
                    .expect("valid")
                    .digest();
                let pin = Pin {
                    name: skillfold::SkillName::parse(name).expect("name"),
                    version: skillfold::VersionLabel::parse("1").expect("v"),
                    hash: digest,
                };
                let (set, problems) = files(description);
                (pin, set, problems)
            })
            .collect()
    }
}

#[test]
fn a_hosts_own_sources_are_verified_and_scoped_and_the_policy_applies_everywhere() {
    let built = Runtime::builder()
        .local(
            "commit-message",
            "1.0.0",
            skills().join("commit-message"),
            COMMIT_MESSAGE,
        )
        .source(InMemory {
            bundles: vec![("house-style", "The house style.")],
            pinned_to: None,
        })
        .agent("writer", |a| {
            a.source(InMemory {
                bundles: vec![("press-kit", "The press kit.")],
                pinned_to: None,
            })
            .source(InMemory {
                bundles: vec![("tampered", "Edited after review.")],
                pinned_to: Some("What was reviewed."),
            })
        })
        .policy(|access| {
            if access.skill.name() == "house-style" && access.reference.is_none() {
                Err("house style is read by people only".to_owned())
            } else {
                Ok(())
            }
        })
        .build()
        .expect("valid");
    assert_eq!(built.refused.len(), 1, "{:?}", built.refused);
    assert_eq!(built.refused[0].name, "tampered");

    let names = |agent| -> Vec<String> {
        built
            .runtime
            .catalogue(agent)
            .unwrap()
            .skills()
            .map(|s| s.pin().name.to_string())
            .collect()
    };
    assert_eq!(names(None), ["commit-message", "house-style"]);
    assert_eq!(
        names(Some("writer")),
        ["commit-message", "house-style", "press-kit"]
    );

    let writer = built.runtime.catalogue(Some("writer")).unwrap();
    let (output, record) = writer
        .call(
            "load_skill",
            &json!({"name": "press-kit", "reference": null}),
        )
        .expect("served");
    assert!(output["content"].as_str().unwrap().contains("# press-kit"));
    assert_eq!(record.skill, "press-kit");
    let refused = writer
        .call(
            "load_skill",
            &json!({"name": "house-style", "reference": null}),
        )
        .expect_err("the policy refuses it");
    assert_eq!(refused.code.as_str(), "policy_denied");
}
