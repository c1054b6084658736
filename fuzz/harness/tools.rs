//! The three tools on one catalogue ([`ToolHarness`]): in-memory bundles, a discovered-skills
//! folder and a policy hook, called with fuzzed JSON.

use std::path::Path;

use serde_json::Value;

use crate::descriptor::runner::{ApprovalSpec, RunnerConfig, ScriptPolicy};
use crate::format::bundle::Bundle;
use crate::format::bundle_path::BundlePath;
use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::pin::Pin;
use crate::format::problem::Problems;
use crate::format::version::VersionLabel;
use crate::runtime::catalogue::Catalogue;
use crate::runtime::snapshot::{self, BundleSource};
use crate::runtime::tools::{Access, ToolError, load_skill, read_reference, run_script};

use super::common::is_code;

/// In-memory bundles for [`ToolHarness`].
struct Fixtures;

/// `(path, content)` of each fixture bundle.
const FIXTURES: [&[(&str, &str)]; 2] = [
    &[
        (
            "SKILL.md",
            "---\nname: demo\ndescription: A fixture skill for fuzzing the tools.\nversion: 1.0.0\n---\n# Demo\n\nRead `references/guide.md`.\n",
        ),
        ("references/guide.md", "# Guide\n\nSteps.\n"),
        (
            "references/deny-me.md",
            "The policy hook refuses this one.\n",
        ),
        ("references/nested/deep.txt", "deep\n"),
        ("scripts/tool.py", "print('never runs here')\n"),
        ("scripts/other.py", "print('not approved')\n"),
    ],
    &[
        (
            "SKILL.md",
            "---\nname: second\ndescription: Another fixture skill.\n---\nBody of the second skill.\n",
        ),
        ("LICENSE", "MIT\n"),
    ],
];

fn fixture_files(files: &[(&str, &str)]) -> (FileSet, Problems) {
    let mut builder = FileSetBuilder::new();
    for (path, content) in files {
        builder.insert(path, content.as_bytes().to_vec());
    }
    builder.finish()
}

impl BundleSource for Fixtures {
    fn label(&self) -> String {
        "fuzz".to_owned()
    }

    fn bundles(&self) -> Vec<(Pin, FileSet, Problems)> {
        FIXTURES
            .iter()
            .map(|files| {
                let (set, problems) = fixture_files(files);
                let bundle = Bundle::check(set, problems).expect("a valid fixture bundle");
                let pin = Pin {
                    name: bundle.name().clone(),
                    version: VersionLabel::parse("1.0.0").expect("a version label"),
                    hash: bundle.digest(),
                };
                let (set, problems) = fixture_files(files);
                (pin, set, problems)
            })
            .collect()
    }
}

/// The discovered-skills folder: `guide-one/` with a few references, one of them a symbolic
/// link and one not UTF-8. Written once; existing files are left as they are.
const GUIDE_FILES: &[(&str, &[u8])] = &[
    (
        "guide-one/SKILL.md",
        b"---\nname: guide-one\ndescription: A discovered fixture skill.\n---\nRead references/notes.md.\n",
    ),
    ("guide-one/references/notes.md", b"# Notes\n"),
    ("guide-one/references/data.json", b"{\"a\": 1}\n"),
    ("guide-one/references/binary.txt", b"\xff\xfe not text\n"),
    ("guide-one/references/deny-me.md", b"refused by the policy\n"),
];

fn write_guides(root: &Path) -> std::io::Result<()> {
    for (path, content) in GUIDE_FILES {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        if !path.exists() {
            fs_err::write(&path, content)?;
        }
    }
    let link = root.join("guide-one/references/link.md");
    if fs_err::symlink_metadata(&link).is_err() {
        fs_err::os::unix::fs::symlink("notes.md", &link)?;
    }
    Ok(())
}

/// The tools of one catalogue: two pinned in-memory bundles (one with helpers, one approved by
/// its exact bytes), one discovered skill, and a policy hook. Helpers never run: in-memory
/// snapshots have no directory to run in, and the interpreter does not exist.
pub struct ToolHarness {
    catalogue: Catalogue,
}

/// The tools a fuzz input can call: the first byte picks one (modulo 4), the rest is JSON.
const TOOLS: [&str; 4] = [
    load_skill::NAME,
    run_script::NAME,
    read_reference::NAME,
    "no_such_tool",
];

impl ToolHarness {
    /// Builds the catalogue; the discovered-skills folder is written under `guides_root`.
    pub fn new(guides_root: &Path) -> ToolHarness {
        write_guides(guides_root).expect("write the discovered-skills fixture");
        let snapshots: Vec<_> = snapshot::load_custom(&Fixtures)
            .into_iter()
            .map(|loaded| loaded.expect("fixture bundles verify"))
            .collect();
        let demo = &FIXTURES[0];
        let tool_py = demo
            .iter()
            .find(|(p, _)| *p == "scripts/tool.py")
            .map(|(_, c)| crate::support::hex::sha256_hex(c.as_bytes()))
            .expect("the fixture helper");
        let policy = ScriptPolicy::from_specs(vec![ApprovalSpec {
            skill: "demo".to_owned(),
            script: "scripts/tool.py".to_owned(),
            sha256: tool_py,
        }]);
        let runner = RunnerConfig {
            python: "/nonexistent/skillfold-fuzz/python3".into(),
            ..RunnerConfig::with_policy(policy)
        };
        let discovery =
            crate::runtime::guides::discover(guides_root).expect("scan the fixture folder");
        let catalogue = Catalogue::new(Some("fuzz"), snapshots)
            .expect("a catalogue of two skills")
            .with_runner(runner)
            .with_guides(discovery)
            .with_policy(policy_hook);
        assert_eq!(catalogue.tools().len(), 3, "every tool is offered");
        ToolHarness { catalogue }
    }

    /// One call: the first byte picks the tool, the rest must be JSON. Returns the output, or
    /// the refusal's code; `None` when the input is not JSON.
    pub fn call(&self, data: &[u8]) -> Option<Result<Value, String>> {
        let (&selector, json) = data.split_first()?;
        let input = serde_json::from_slice::<Value>(json).ok()?;
        let tool = TOOLS[usize::from(selector) % TOOLS.len()];
        let result = self.catalogue.call(tool, &input);
        match &result {
            Ok((output, record)) => {
                assert_ne!(tool, run_script::NAME, "a helper ran: {output}");
                assert_eq!(record.tool, tool);
                let content = output["content"].as_str().expect("content is text");
                assert_eq!(record.bytes, content.len() as u64);
                assert_eq!(
                    record.sha256,
                    crate::support::hex::sha256_hex(content.as_bytes())
                );
                let skill = output.get("name").or_else(|| output.get("skill"));
                assert_eq!(skill.and_then(Value::as_str), Some(record.skill.as_str()));
                if tool == load_skill::NAME {
                    let served = self.catalogue.get(&record.skill).expect("a served skill");
                    assert_eq!(record.hash, Some(served.pin().hash.to_string()));
                    let references: Vec<&str> = output["references"]
                        .as_array()
                        .expect("references")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    assert_eq!(references, served.references());
                }
            }
            Err(error) => check_tool_error(error),
        }
        let again = self.catalogue.call(tool, &input);
        assert_eq!(again, result, "a repeated call answered differently");
        Some(
            result
                .map(|(output, _)| output)
                .map_err(|e| e.code.as_str().to_owned()),
        )
    }
}

fn check_tool_error(error: &ToolError) {
    assert!(
        is_code(error.code.as_str()),
        "bad tool error code `{}`",
        error.code
    );
    assert!(!error.message.is_empty());
    let wire = serde_json::to_string(&error.to_json()).expect("errors serialise");
    let back: Value = serde_json::from_str(&wire).expect("errors are JSON");
    assert_eq!(back["error"]["code"], error.code.as_str());
}

/// The policy sees only resolved calls: a known skill and, when a path is named, a checked
/// bundle path. It refuses every path holding `deny`.
fn policy_hook(access: &Access<'_>) -> Result<(), String> {
    assert!(matches!(
        access.skill.name(),
        "demo" | "second" | "guide-one"
    ));
    if let Some(path) = access.reference {
        assert!(BundlePath::parse(path).is_ok(), "unchecked path `{path:?}`");
        if path.contains("deny") {
            return Err(format!("`{path}` is refused by the fuzz policy"));
        }
    }
    Ok(())
}
