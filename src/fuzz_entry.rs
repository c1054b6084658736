//! The bodies of the fuzz targets under `fuzz/`, shared with the stable test that replays their
//! committed seeds and crash reproducers (`tests/it/fuzz_seeds.rs`). Not part of the API.
//!
//! Each function takes the raw bytes a fuzzer produced, feeds them to one parser through its
//! public entry point, and asserts the invariants that are cheap to state: nothing panics, a
//! refusal always says why, an accepted value satisfies the rule that accepted it, and what
//! round-trips does so exactly. A failed assertion is a finding, exactly like a crash.
//!
//! - [`frontmatter`]: `SKILL.md` in the bundle dialect, cross-checked with [`Bundle::check`].
//! - [`skills_ref`]: `SKILL.md` in the skills-ref dialect (decoding, fences, strict YAML,
//!   `validate_metadata`, the JSON printer, `allowed-tools`).
//! - [`bundle_path()`]: the path grammar.
//! - [`descriptor`]: `skillfold.yaml` parsed, re-serialised and checked.
//! - [`ToolHarness`]: the three tools on a catalogue built once from in-memory bundles and a
//!   small discovered-skills folder.
//! - [`bundle`]: a whole bundle from an in-memory file set, its check and its digest.
//! - [`mcp_framing`] (feature `mcp`): one line from an MCP client, judged by the stdio framing.
//! - [`oci_layer`]: an image layer's tar, read by the strict reader of `oci:` sources.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::descriptor::runner::{ApprovalSpec, RunnerConfig, ScriptPolicy};
use crate::format::bundle::Bundle;
use crate::format::bundle_path::{self, BundlePath};
use crate::format::digest::{self, BundleDigest};
use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits;
use crate::format::pin::Pin;
use crate::format::problem::{ProblemCode, Problems};
use crate::format::version::VersionLabel;
use crate::runtime::catalogue::Catalogue;
use crate::runtime::snapshot::{self, BundleSource};
use crate::runtime::tools::{Access, ToolError, load_skill, read_reference, run_script};
use crate::spec::strict_yaml::{self, Value as YamlValue};
use crate::spec::{allowed_tools, properties, skill_file, validate};

/// Whether `name` matches `^[a-z][a-z0-9-]{0,63}$`, written out independently of
/// [`crate::format::skill_name`] so the two can disagree.
fn matches_name_pattern(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// Whether a stable code is snake_case ASCII.
fn is_code(code: &str) -> bool {
    !code.is_empty()
        && !code.starts_with('_')
        && !code.ends_with('_')
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn assert_refusal_explained(problems: &Problems) {
    assert!(problems.has_errors(), "refused without an error problem");
    for p in problems.as_slice() {
        assert!(is_code(p.code.as_str()), "bad problem code {:?}", p.code);
        assert!(
            !p.message.is_empty(),
            "problem {} without a message",
            p.code
        );
    }
}

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
            assert!(
                !is_text || checked.is_none(),
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
    if let Some(YamlValue::Str(tools)) = skill_file::get(&map, "allowed-tools") {
        check_allowed_tools(tools);
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

/// Parsed rules print back to a value that parses to the same rules.
fn check_allowed_tools(value: &str) {
    match allowed_tools::parse(value) {
        Ok(rules) => {
            let printed: Vec<String> = rules.iter().map(ToString::to_string).collect();
            let again = allowed_tools::parse(&printed.join(" "));
            assert_eq!(again.as_ref(), Ok(&rules), "`{value}` does not round-trip");
            for rule in &rules {
                assert!(!rule.tool.is_empty());
                assert!(!rule.tool.contains(['(', ')']));
                assert!(!rule.tool.chars().any(|c| c.is_ascii_whitespace()));
                if let Some(p) = &rule.pattern {
                    assert!(!p.is_empty() && p != "!" && !p.contains(['(', ')']));
                }
            }
        }
        Err(e) => assert!(is_code(e.code().as_str())),
    }
}

/// A bundle path: an accepted path displays as itself, re-parses to itself and rebuilds from its
/// segments; a refused one names a rule one of its segments (or its leading `/`) breaks.
pub fn bundle_path(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match BundlePath::parse(&text) {
        Ok(path) => {
            let shown = path.to_string();
            assert_eq!(shown, text);
            assert_eq!(path.as_str(), text);
            assert_eq!(BundlePath::parse(&shown).as_ref(), Ok(&path));
            let segments: Vec<&str> = text.split('/').collect();
            assert_eq!(path.depth(), segments.len());
            assert_eq!(Some(&path.file_name()), segments.last());
            assert!(!text.contains('\\') && !text.chars().any(char::is_control));
            let mut rebuilt = BundlePath::top(segments[0]).expect("a checked segment");
            for segment in &segments[1..] {
                rebuilt = rebuilt.join(segment).expect("a checked segment");
            }
            assert_eq!(rebuilt, path);
            for segment in segments {
                assert!(!matches!(segment, "" | "." | ".."));
                assert!(!segment.starts_with('.'));
            }
        }
        Err(refusal) => {
            let broken = text.starts_with('/')
                || text
                    .split('/')
                    .any(|s| bundle_path::check_segment(s).is_err_and(|r| r.code == refusal.code));
            assert!(broken, "`{text:?}` refused for no rule: {refusal:?}");
            assert!(matches!(
                refusal.code,
                ProblemCode::PathEscapes
                    | ProblemCode::HiddenPath
                    | ProblemCode::BackslashInPath
                    | ProblemCode::ControlCharInPath
            ));
        }
    }
}

/// Descriptor text: parsed, written back as YAML and parsed again to the same descriptor, and
/// checked statically (relative directories resolved against a fixed base, no file system access).
pub fn descriptor(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(parsed) = crate::descriptor::parse(&text) else {
        return;
    };
    let written = serde_yaml::to_string(&parsed).expect("a parsed descriptor serialises");
    let again = crate::descriptor::parse(&written)
        .unwrap_or_else(|e| panic!("written descriptor does not parse: {e}\n{written}"));
    assert_eq!(again, parsed, "descriptor does not round-trip:\n{written}");
    let base = Path::new("/fuzz/base");
    let first = crate::descriptor::check(&parsed, base);
    match &first {
        Ok(plan) => {
            for source in &plan.sources {
                for pin in source.pins() {
                    assert!(matches_name_pattern(pin.name.as_str()));
                }
            }
        }
        Err(problems) => {
            assert!(!problems.is_empty(), "refused without a problem");
            for p in problems {
                assert!(is_code(p.code.as_str()), "bad descriptor code `{}`", p.code);
                assert!(!p.message.is_empty());
            }
        }
    }
    let second = crate::descriptor::check(&again, base);
    assert_eq!(
        first.as_ref().err(),
        second.as_ref().err(),
        "the check is not deterministic"
    );
}

/// Entries of an in-memory file set: alternating path and content, separated by the byte `0xFF`
/// (never part of UTF-8), so content can still hold any other byte, NUL and invalid UTF-8
/// included. A trailing path without content gets empty content.
pub fn file_entries(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut parts = data.split(|&b| b == 0xFF);
    let mut entries = Vec::new();
    while let Some(path) = parts.next() {
        let content = parts.next().unwrap_or_default();
        entries.push((String::from_utf8_lossy(path).into_owned(), content.to_vec()));
    }
    entries
}

/// Encodes entries in the format [`file_entries`] reads (for writing seeds).
pub fn encode_entries<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (path, content)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(0xFF);
        }
        out.extend_from_slice(path.as_bytes());
        out.push(0xFF);
        out.extend_from_slice(content);
    }
    out
}

fn build(entries: &[(String, Vec<u8>)]) -> (FileSet, Problems) {
    let mut builder = FileSetBuilder::new();
    for (path, content) in entries {
        builder.insert(path, content.clone());
    }
    builder.finish()
}

/// The digest grammar of [`crate::format::digest`], written out again as the oracle.
fn oracle_digest(files: &FileSet) -> [u8; 32] {
    let mut sorted: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (p.as_str(), c)).collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    hasher.update(digest::DOMAIN);
    for (path, content) in sorted {
        hasher.update(format!("{}:{path}{}:", path.len(), content.len()));
        hasher.update(content);
    }
    hasher.finalize().into()
}

/// A whole bundle from an in-memory file set (see [`file_entries`]): the builder's bounds, the
/// bundle check, and a digest that is stable, order-independent and equal to the grammar's.
pub fn bundle(data: &[u8]) {
    let entries = file_entries(data);
    let (files, problems) = build(&entries);
    assert!(files.len() <= limits::MAX_FILES);
    for (path, content) in files.iter() {
        assert_eq!(BundlePath::parse(path.as_str()).as_ref(), Ok(path));
        assert!(content.len() as u64 <= limits::CHAMVI.max_file_bytes(path.as_str()));
    }
    if !problems.has_errors() {
        assert!(files.total_bytes() <= limits::MAX_TOTAL_BYTES);
        assert!(!files.is_partial());
    }
    let digest = BundleDigest::of(&files);
    assert_eq!(digest.as_bytes(), &oracle_digest(&files));
    assert_eq!(digest.to_string().parse::<BundleDigest>(), Ok(digest));
    let (files_again, problems_again) = build(&entries);
    assert_eq!(BundleDigest::of(&files_again), digest, "digest not stable");
    assert_eq!(problems_again, problems);
    if problems.as_slice().is_empty() {
        // Nothing refused, so the order entries arrive in cannot matter.
        let reversed: Vec<_> = entries.iter().rev().cloned().collect();
        let (files_rev, problems_rev) = build(&reversed);
        assert!(problems_rev.as_slice().is_empty(), "{problems_rev:?}");
        assert_eq!(
            BundleDigest::of(&files_rev),
            digest,
            "digest depends on order"
        );
    }
    match Bundle::check(files, problems) {
        Ok(bundle) => {
            assert_eq!(bundle.digest(), digest);
            assert!(matches_name_pattern(bundle.name().as_str()));
            assert!(bundle.warnings().iter().all(|w| !w.is_error()));
            for (_, content) in bundle.files().iter() {
                assert!(std::str::from_utf8(content).is_ok() && !content.contains(&0));
            }
            let skill_md = bundle.files().get(limits::SKILL_MD).expect("SKILL.md");
            assert!(
                std::str::from_utf8(skill_md)
                    .expect("text")
                    .ends_with(bundle.body())
            );
        }
        Err(invalid) => assert_refusal_explained(&invalid.problems),
    }
}

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
            .map(|(_, c)| crate::format::hex::sha256_hex(c.as_bytes()))
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
                    crate::format::hex::sha256_hex(content.as_bytes())
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

/// One line from an MCP client, as the stdio framing judges it (`mcp::framing::judge`) and, read
/// as the start of a line over the bound, as it answers that (`mcp::framing::oversized`).
///
/// Invariants: every request (a string `method` and an `id`) gets exactly one answer, forwarded or
/// refused, never dropped; a refusal is a JSON-RPC 2.0 error response with one of the three codes,
/// a bounded message, and the request's own id when that id is valid (else `null`); a line that is
/// not JSON is refused with `-32700`; only a JSON object rmcp reads as a client message is
/// forwarded; only a blank line is skipped.
#[cfg(feature = "mcp")]
pub fn mcp_framing(data: &[u8]) {
    use crate::mcp::framing::{self, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, Verdict};
    use serde::Deserialize as _;

    let line = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    let valid_id = |id: &Value| rmcp::model::RequestId::deserialize(id).is_ok();
    let request_id = parsed.as_ref().and_then(|message| {
        let fields = message.as_object()?;
        fields.get("method")?.as_str()?;
        fields.get("id").cloned()
    });
    match framing::judge(data) {
        Verdict::Skip => assert!(line.iter().all(u8::is_ascii_whitespace)),
        Verdict::Forward => {
            let message = parsed.expect("only JSON is forwarded");
            assert!(message.is_object(), "only objects are forwarded");
            assert_eq!(message.get("jsonrpc"), Some(&Value::from("2.0")));
            assert!(
                rmcp::model::ClientJsonRpcMessage::deserialize(&message).is_ok(),
                "forwarded a message rmcp cannot read"
            );
        }
        Verdict::Reply(reply) => {
            let code = check_error_response(&reply, valid_id);
            match &parsed {
                None => assert_eq!(code, PARSE_ERROR, "not JSON, yet code {code}"),
                Some(_) => assert!(code == INVALID_REQUEST || code == INVALID_PARAMS),
            }
            if let Some(id) = parsed
                .as_ref()
                .and_then(|m| m.as_object()?.get("id"))
                .filter(|id| valid_id(id))
            {
                assert_eq!(&reply["id"], id, "the answer lost the message's id");
            }
        }
        Verdict::Ignore(why) => {
            assert!(!why.is_empty());
            assert!(
                request_id.is_none(),
                "a request with an id was dropped without an answer"
            );
        }
    }
    let code = check_error_response(&framing::oversized(data), valid_id);
    assert_eq!(code, INVALID_REQUEST);
}

/// Checks a JSON-RPC error response's shape and returns its code.
#[cfg(feature = "mcp")]
fn check_error_response(reply: &Value, valid_id: impl Fn(&Value) -> bool) -> i64 {
    let fields = reply.as_object().expect("an answer is an object");
    assert_eq!(fields.len(), 3, "unexpected members in {reply}");
    assert_eq!(reply["jsonrpc"], "2.0");
    assert!(
        reply["id"].is_null() || valid_id(&reply["id"]),
        "bad id in {reply}"
    );
    let message = reply["error"]["message"].as_str().expect("a message");
    assert!(!message.is_empty() && message.chars().count() <= 301);
    let wire = serde_json::to_string(reply).expect("answers serialise");
    assert!(!wire.contains('\n'), "an answer must be one line");
    reply["error"]["code"].as_i64().expect("an integer code")
}

/// An uncompressed OCI layer tar from a hostile registry, read by the strict reader: it never
/// panics; a refusal carries one of the layer codes; what it accepts holds only the wanted
/// bundle, whose file set obeys the path grammar, and the same tar reads the same way twice.
pub fn oci_layer(data: &[u8]) {
    use crate::prepare::oci::code::DistributionCode;
    use crate::prepare::oci::unpack::read_tar;

    let wanted: std::collections::BTreeSet<String> = ["pdf".to_owned()].into();
    let first = read_tar(data, &wanted, crate::format::limits::CHAMVI);
    match &first {
        Ok(bundles) => {
            assert!(bundles.keys().all(|name| name == "pdf"));
            for (files, _problems) in bundles.values() {
                for (path, _) in files.iter() {
                    assert!(BundlePath::parse(path.as_str()).is_ok());
                }
            }
        }
        Err(e) => assert!(matches!(
            e.code,
            DistributionCode::MalformedLayer
                | DistributionCode::LayerTooLarge
                | DistributionCode::LinkInLayer
                | DistributionCode::SpecialFileInLayer
                | DistributionCode::UnsafePathInLayer
                | DistributionCode::DuplicateInLayer
        )),
    }
    let second = read_tar(data, &wanted, crate::format::limits::CHAMVI);
    assert_eq!(first.is_ok(), second.is_ok());
}
