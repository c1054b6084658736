//! The bodies of the fuzz targets under `fuzz/`, shared with the unit test that replays their
//! committed seeds and crash reproducers on stable ([`harness_seeds.rs`](seeds)). Compiled into the
//! library only for the fuzz targets (`cfg(fuzzing)`) and its unit tests: not part of the API.
//!
//! Each function takes the raw bytes a fuzzer produced, feeds them to one parser through its
//! public entry point, and asserts the invariants that are cheap to state: nothing panics, a
//! refusal always says why, an accepted value satisfies the rule that accepted it, and what
//! round-trips does so exactly. A failed assertion is a finding, exactly like a crash.
//!
//! - [`frontmatter`]: `SKILL.md` in the bundle dialect, cross-checked with [`Bundle::check`].
//! - [`skills_ref`]: `SKILL.md` in the skills-ref dialect (decoding, fences, strict YAML,
//!   `validate_metadata`, the JSON printer).
//! - [`bundle_path()`]: the path grammar.
//! - [`descriptor`]: `skillfold.yaml` parsed, re-serialised and checked.
//! - [`ToolHarness`]: the three tools on a catalogue built once from in-memory bundles and a
//!   small discovered-skills folder.
//! - [`bundle`]: a whole bundle from an in-memory file set, its check and its digest.
//! - [`mcp_framing`] (feature `mcp`): one line from an MCP client, judged by the stdio framing.
//! - [`oci_layer`]: an image layer's tar, read by the strict reader of `oci:` sources.
//! - [`signers`]: an allowed-signers file (`verify.allowed_signers`).
//! - [`signature`]: a raw commit object: Git's header split and the signature verdict.
//! - [`descriptor_edit`]: the in-place editor of `update --write`.
//! - [`tokens`] (feature `http`): the tokens file of `serve --listen` and the bearer verdicts.
//! - [`oci_pull`] (feature `oci`): a manifest and its blobs, pulled from a registry on 127.0.0.1.
//! - [`oci_tag`] (feature `oci`): the answers of a registry on 127.0.0.1 to the `HEAD` and `GET`
//!   of a tag's manifest, as `outdated` and `update` resolve a tag.
//! - [`http_request`] (feature `http`): raw bytes to a `serve --listen` server on 127.0.0.1.
//! - [`oauth_documents`] (feature `http`): an identity provider's discovery document, key set
//!   and an access token, as `serve --listen --oauth` reads them.
//! - [`git_answer`] (feature `git`): a Git server's answer, read through the bounded pkt-line
//!   reader of the fetcher.

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
use crate::skills_ref::strict_yaml::{self, Value as YamlValue};
use crate::skills_ref::{properties, skill_file, validate};

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
    use crate::mcp::framing::{self, INVALID_PARAMS, INVALID_REQUEST, LineVerdict, PARSE_ERROR};
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
        LineVerdict::Skip => assert!(line.iter().all(u8::is_ascii_whitespace)),
        LineVerdict::Forward => {
            let message = parsed.expect("only JSON is forwarded");
            assert!(message.is_object(), "only objects are forwarded");
            assert_eq!(message.get("jsonrpc"), Some(&Value::from("2.0")));
            assert!(
                rmcp::model::ClientJsonRpcMessage::deserialize(&message).is_ok(),
                "forwarded a message rmcp cannot read"
            );
        }
        LineVerdict::Reply(reply) => {
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
        LineVerdict::Ignore(why) => {
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
    use crate::source::oci::code::DistributionCode;
    use crate::source::oci::unpack::read_tar;

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

#[cfg(feature = "signatures")]
/// The path the fuzzed allowed-signers text is said to come from.
const SIGNERS_PATH: &str = "fuzz/allowed_signers";

#[cfg(feature = "signatures")]
/// An allowed-signers file's text (lossy UTF-8), parsed as `check` parses `verify.allowed_signers`.
///
/// Invariants: a refusal names the file and either the first line that does not parse (a line
/// that is neither blank nor a comment, after which no earlier line is at fault: each earlier
/// line parses alone, and that line alone is refused) or no line, when no signer is listed;
/// an accepted file has one entry per non-blank, non-comment line, in order, each with its own
/// line number, principals without quotes or spaces and a key; every entry written back in the
/// canonical form (options from its fields, the key in OpenSSH form) parses to the same entry;
/// `allows` and `lists` agree with the entry's fields.
///
/// The rules of issue 28's items 7 and 9 (a repeated option refuses its line; namespace
/// patterns as `ssh-keygen` matches them) are the signers tests' (tests/it/signatures.rs); here
/// a namespace list allows what `match_pattern_list` says.
pub fn signers(data: &[u8]) {
    use crate::descriptor::signers::AllowedSigners;

    let text = String::from_utf8_lossy(data);
    let path = Path::new(SIGNERS_PATH);
    let listed: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        // Trimmed as the parser trims a line (spaces, tabs and a carriage return).
        .map(|(i, l)| (i + 1, l.trim_matches([' ', '\t', '\r'])))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let parse_alone = |line: &str| AllowedSigners::parse(line, path);
    match AllowedSigners::parse(&text, path) {
        Err(e) => {
            assert_eq!(e.path, path);
            assert!(!e.message.is_empty());
            assert!(e.to_string().starts_with(SIGNERS_PATH));
            match e.line {
                None => assert!(listed.is_empty(), "refused without a line: {e}"),
                // A NUL byte refuses the file at the first line holding one, blank or comment
                // lines included.
                Some(n) if text.lines().nth(n - 1).is_some_and(|l| l.contains('\0')) => {
                    assert!(e.message.contains("NUL"), "{e}");
                    assert!(text.lines().take(n - 1).all(|l| !l.contains('\0')));
                }
                Some(n) => {
                    let at = listed.iter().position(|(i, _)| *i == n);
                    let at = at.unwrap_or_else(|| panic!("line {n} is blank or a comment: {e}"));
                    for (_, earlier) in &listed[..at] {
                        assert!(parse_alone(earlier).is_ok(), "an earlier line is at fault");
                    }
                    let alone = parse_alone(listed[at].1).expect_err("the line alone is refused");
                    assert_eq!(alone.line, Some(1));
                    assert_eq!(alone.message, e.message, "the same line, another reason");
                }
            }
        }
        Ok(parsed) => {
            assert_eq!(parsed.path, path);
            assert_eq!(parsed.signers.len(), listed.len());
            for (signer, (line, raw)) in parsed.signers.iter().zip(&listed) {
                assert_eq!(signer.line, *line);
                check_signer(signer, raw);
            }
        }
    }
}

#[cfg(feature = "signatures")]
/// One accepted allowed-signers entry: its fields are sane, written back canonically it parses
/// to the same entry, and `allows` follows the fields.
fn check_signer(signer: &crate::descriptor::signers::AllowedSigner, raw: &str) {
    use crate::descriptor::signers::AllowedSigners;

    assert!(!signer.principals.is_empty());
    assert!(raw.starts_with(&signer.principals));
    // No quote, and none of the parser's separators (spaces, tabs, a carriage return: other
    // Unicode white space is part of a principal, as for `ssh-keygen`).
    assert!(!signer.principals.contains(['"', ' ', '\t', '\r']));
    let mut options = Vec::new();
    if signer.cert_authority {
        options.push("cert-authority".to_owned());
    }
    if let Some(namespaces) = &signer.namespaces {
        options.push(format!("namespaces=\"{namespaces}\""));
    }
    for (name, time) in [
        ("valid-after", signer.valid_after),
        ("valid-before", signer.valid_before),
    ] {
        if let Some(time) = time {
            options.push(format!("{name}=\"{}\"", civil_time(time)));
        }
    }
    // A quote inside a value changes how the written-back line splits into tokens: no
    // canonical form to compare with then.
    if !signer
        .namespaces
        .as_deref()
        .is_some_and(|n| n.contains('"'))
    {
        let key = signer.key.to_openssh().expect("a parsed key writes back");
        let line = if options.is_empty() {
            format!("{} {key}", signer.principals)
        } else {
            format!("{} {} {key}", signer.principals, options.join(","))
        };
        let again = AllowedSigners::parse(&line, Path::new(SIGNERS_PATH))
            .unwrap_or_else(|e| panic!("`{line}` written back does not parse: {e}"));
        let again = &again.signers[0];
        assert_eq!(again.principals, signer.principals);
        assert_eq!(again.namespaces, signer.namespaces, "`{line}`");
        assert_eq!(again.valid_after, signer.valid_after, "`{line}`");
        assert_eq!(again.valid_before, signer.valid_before, "`{line}`");
        assert_eq!(again.cert_authority, signer.cert_authority);
        assert_eq!(again.key.key_data(), signer.key.key_data());
    }
    let data = signer.key.key_data();
    use crate::descriptor::signers::{PatternMatch, match_pattern_list};
    // A namespace the line's pattern list allows (absent: any), when one is easy to name: `git`,
    // or one of its patterns without wildcards or negation.
    let namespace = match signer.namespaces.as_deref() {
        None => Some("git".to_owned()),
        Some(list) => std::iter::once("git")
            .chain(list.split(','))
            .filter(|n| !n.contains(['*', '?', '!']))
            .find(|n| match_pattern_list(n, list) == PatternMatch::Matched)
            .map(str::to_owned),
    };
    let inside = signer.valid_after.or(signer.valid_before).unwrap_or(0);
    let window_open = signer.valid_after.is_none_or(|t| inside >= t)
        && signer.valid_before.is_none_or(|t| inside <= t);
    if let Some(namespace) = &namespace {
        assert_eq!(
            signer.allows(data, namespace, inside),
            !signer.cert_authority && window_open
        );
        if let Some(after) = signer.valid_after {
            assert!(
                !signer.allows(data, namespace, after - 1),
                "allowed before valid-after"
            );
        }
        if let Some(before) = signer.valid_before {
            assert!(
                !signer.allows(data, namespace, before + 1),
                "allowed after valid-before"
            );
        }
    }
    // A namespace the pattern list does not match is never allowed.
    if let Some(list) = signer.namespaces.as_deref() {
        let other = format!("{}-not-listed", list.replace(['*', '?', '!', ','], ""));
        if match_pattern_list(&other, list) != PatternMatch::Matched {
            assert!(
                !signer.allows(data, &other, inside),
                "an unlisted namespace"
            );
        }
    }
}

#[cfg(feature = "signatures")]
/// Unix seconds as `YYYYMMDDHHMMSSZ` (proleptic Gregorian, UTC), written out independently of
/// the signers parser's day count.
fn civil_time(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}{:02}{:02}{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The agents the fuzzed tokens files may name.
#[cfg(feature = "http")]
const TOKEN_AGENTS: [&str; 2] = ["alpha", "beta"];

/// A tokens file of `serve --listen` and the `Authorization` values presented to it: the JSON
/// text, then each header value, separated by the byte `0xFF`.
///
/// Invariants: the file is accepted exactly when an independent reading accepts it (a JSON array
/// of objects with exactly `agent`, null or a descriptor's agent, and `sha256`, 64 lowercase hex
/// digits, each key written once, no hash twice); a refusal is `invalid_tokens` naming the source; each presented value
/// gets, at each endpoint, the verdict the reading gives (401 without a listed bearer token, 403
/// for a token of another endpoint, else allowed with the token's own hash); and a file listing
/// the presented tokens' hashes is accepted and lets each token in at its endpoint only.
/// A key written twice in any object refuses the file.
#[cfg(feature = "http")]
pub fn tokens(data: &[u8]) {
    use crate::mcp::http::tokens::{TokenVerdict, Tokens};

    let mut parts = data.split(|&b| b == 0xFF);
    let text = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let presented: Vec<&[u8]> = parts.collect();
    let agents: std::collections::BTreeSet<String> =
        TOKEN_AGENTS.iter().map(|a| (*a).to_owned()).collect();
    let endpoints = [None, Some("alpha"), Some("beta")];
    let reference = reference_tokens(&text, &agents);
    match Tokens::parse(&text, "fuzz-tokens", &agents) {
        Err(e) => {
            assert!(reference.is_none(), "refused a valid tokens file: {e}");
            assert_eq!(e.source_name, "fuzz-tokens");
            assert!(!e.message.is_empty());
            assert_eq!(e.code().as_str(), "invalid_tokens");
        }
        Ok(tokens) => {
            let entries = reference.expect("accepted a tokens file the reading refuses");
            for value in &presented {
                let hash = bearer_token(value).map(|t| <[u8; 32]>::from(Sha256::digest(t)));
                for agent in endpoints {
                    let want = match hash.and_then(|h| entries.iter().find(|(_, e)| *e == h)) {
                        None => TokenVerdict::Unauthenticated,
                        Some((owner, _)) if owner.as_deref() == agent => {
                            TokenVerdict::Allowed(hash)
                        }
                        Some(_) => TokenVerdict::Forbidden,
                    };
                    assert_eq!(tokens.authorize(Some(value), agent), want);
                }
            }
            assert_eq!(tokens.authorize(None, None), TokenVerdict::Unauthenticated);
        }
    }
    // A file listing each presented bearer token's hash, for the endpoints in turn.
    let mut listed: Vec<(Option<&str>, [u8; 32], &[u8])> = Vec::new();
    for value in &presented {
        if let Some(token) = bearer_token(value) {
            let hash: [u8; 32] = Sha256::digest(token).into();
            if !listed.iter().any(|(_, h, _)| *h == hash) {
                listed.push((endpoints[listed.len() % 3], hash, value));
            }
        }
    }
    let file: Vec<Value> = listed
        .iter()
        .map(|(agent, hash, _)| {
            serde_json::json!({"agent": agent, "sha256": crate::support::hex::encode(hash)})
        })
        .collect();
    let tokens = Tokens::parse(&Value::Array(file).to_string(), "fuzz-listed", &agents)
        .expect("a file of valid entries is accepted");
    for (owner, hash, value) in &listed {
        for agent in endpoints {
            let want = if agent == *owner {
                TokenVerdict::Allowed(Some(*hash))
            } else {
                TokenVerdict::Forbidden
            };
            assert_eq!(tokens.authorize(Some(value), agent), want);
        }
        let mut other = value.to_vec();
        other.push(b'x');
        let other_hash = bearer_token(&other).map(|t| <[u8; 32]>::from(Sha256::digest(t)));
        if !listed.iter().any(|(_, h, _)| Some(*h) == other_hash) {
            assert_eq!(
                tokens.authorize(Some(&other), *owner),
                TokenVerdict::Unauthenticated
            );
        }
    }
}

/// The token of an `Authorization` value: `Bearer` in any case, one space, then a token that is
/// not empty and holds no space.
#[cfg(feature = "http")]
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    if value.len() <= 7 || !value[..7].eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = &value[7..];
    (!token.contains(&b' ')).then_some(token)
}

/// Any JSON value that writes no key twice in any of its objects (an independent reading for
/// [`reference_tokens`]: serde_json's own `Value` keeps the last of two).
#[cfg(feature = "http")]
struct KeysOnce;

#[cfg(feature = "http")]
impl<'de> serde::Deserialize<'de> for KeysOnce {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = KeysOnce;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON whose objects write each key once")
            }
            fn visit_bool<E>(self, _: bool) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_i64<E>(self, _: i64) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_u64<E>(self, _: u64) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_f64<E>(self, _: f64) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_str<E>(self, _: &str) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_unit<E>(self) -> Result<KeysOnce, E> {
                Ok(KeysOnce)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<KeysOnce, A::Error> {
                while seq.next_element::<KeysOnce>()?.is_some() {}
                Ok(KeysOnce)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<KeysOnce, A::Error> {
                let mut seen = std::collections::BTreeSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key) {
                        return Err(serde::de::Error::custom("a key written twice"));
                    }
                    map.next_value::<KeysOnce>()?;
                }
                Ok(KeysOnce)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// The tokens file read independently: `(agent, hash)` of each entry, or `None` when it is
/// refused.
#[cfg(feature = "http")]
fn reference_tokens(
    text: &str,
    agents: &std::collections::BTreeSet<String>,
) -> Option<Vec<(Option<String>, [u8; 32])>> {
    if text.len() > crate::mcp::http::tokens::MAX_TOKENS_BYTES {
        return None;
    }
    // No object anywhere in the file writes a key twice.
    serde_json::from_str::<KeysOnce>(text).ok()?;
    let Value::Array(items) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    let mut out: Vec<(Option<String>, [u8; 32])> = Vec::new();
    for item in items {
        let fields = item.as_object()?;
        if fields.len() != 2 {
            return None;
        }
        let agent = match fields.get("agent")? {
            Value::Null => None,
            Value::String(a) if agents.contains(a) => Some(a.clone()),
            _ => return None,
        };
        let hex = fields.get("sha256")?.as_str()?;
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return None;
        }
        let mut hash = [0u8; 32];
        for (i, byte) in hash.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        if out.iter().any(|(_, h)| *h == hash) {
            return None;
        }
        out.push((agent, hash));
    }
    Some(out)
}

#[cfg(feature = "signatures")]
/// The allowed-signers file of [`signature`]: the SSH keys the seed commits were signed with
/// (`ssh-keygen -t ed25519` and `-t ecdsa`, by `git commit -S` with `gpg.format = ssh`), one line
/// for `git` only, one for any namespace, and a line whose window closed long ago.
const FUZZ_ALLOWED_SIGNERS: &str = "\
fuzz@example.com namespaces=\"git\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILz+kamIDiMu7JpLENnvQIvtm++oej5FHZxC+ZseWziS fuzz@example.com
expired@example.com valid-before=\"20200101\" ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPi04pFG+dmdONaCXKWdgx3HiX6EPMOHXOqUfP1NQGDKo+6yccKTfzwAZdwGNTOdHPxiQgvbU03UowqSSaNsQ1I=
ecdsa@example.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPi04pFG+dmdONaCXKWdgx3HiX6EPMOHXOqUfP1NQGDKo+6yccKTfzwAZdwGNTOdHPxiQgvbU03UowqSSaNsQ1I=
";

#[cfg(feature = "signatures")]
/// The OpenPGP keyring of [`signature`]: the key the seed commits were signed with (`gpg
/// --quick-gen-key … ed25519 sign,cert` plus an ed25519 signing subkey, `gpg --armor --export`).
const FUZZ_OPENPGP_KEYS: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----

mDMEaw7aQBYJKwYBBAHaRw8BAQdA8poPpYX/cRt//GlAn5luLrZ30RXKwWUkcOis
0jHKBQO0HUZ1enogU2lnbmVyIDxwZ3BAZXhhbXBsZS5jb20+iJAEExYIADgWIQS2
bzK15tuzhBBDJsD8taW4cV970gUCaw7aQAIbAwULCQgHAgYVCgkICwIEFgIDAQIe
AQIXgAAKCRD8taW4cV970jzsAP9vyyag01JCDNG0gfq7jTaPxT1KrAk9bd/dk4Nf
TfF/WAD/TW3oiDSiJo6FH5zrRnPXAynHQOTUHwJIpJzJ9P/Mbwe4MwRrDtpAFgkr
BgEEAdpHDwEBB0CGR41uJu8bTewntA+SH4Tsxb7f1DmljKiVGbohh2F3D4jvBBgW
CAAgFiEEtm8ytebbs4QQQybA/LWluHFfe9IFAmsO2kACGwIAgQkQ/LWluHFfe9J2
IAQZFggAHRYhBC1V8Lwve9u0OBevlk5fxy7OTLeUBQJrDtpAAAoJEE5fxy7OTLeU
bQIBAJ2yiglu7/efI/GUqqG/tP7zYmNH4ewZhZ1HKlJYQdWHAQCuopc1xV5D2LTZ
340L5CpRYbVRq0MVoIqKGRma27DBDlPCAQDVAUFjMTiXq5Hvax1uAYsbTUPhmjEl
LG7KE/D3JyGZxQEAsKv+vnSdYkBi3VcFik1AZJUj08lGjbJm7dmusCLcWAU=
=WX/s
-----END PGP PUBLIC KEY BLOCK-----
";

#[cfg(feature = "signatures")]
/// Who may sign, as [`signature`] reports them: `(format, principal, fingerprint)`.
const FUZZ_SIGNERS: [(&str, &str, &str); 4] = [
    (
        "ssh",
        "fuzz@example.com",
        "SHA256:7Y91yN+/LnR7jkD2ZPI9cZTzzxN4qv4rEY5OqjPOtcM",
    ),
    (
        "ssh",
        "ecdsa@example.com",
        "SHA256:m5cYud5TuUeQzEzHWDi37PBuXuTjtwPcLmnFja4i1tE",
    ),
    (
        "openpgp",
        "Fuzz Signer <pgp@example.com>",
        "B66F32B5E6DBB384104326C0FCB5A5B8715F7BD2",
    ),
    (
        "openpgp",
        "Fuzz Signer <pgp@example.com>",
        "2D55F0BC2F7BDBB43817AF964E5FC72ECE4CB794",
    ),
];

#[cfg(feature = "signatures")]
/// The trust policy of [`signature`], built once.
pub(crate) fn fuzz_trust_policy() -> &'static crate::descriptor::signers::TrustPolicy {
    use crate::descriptor::signers::{AllowedSigners, OpenPgpKeys, TrustPolicy};
    use pgp::composed::Deserializable as _;

    static POLICY: std::sync::OnceLock<TrustPolicy> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        let ssh = AllowedSigners::parse(FUZZ_ALLOWED_SIGNERS, Path::new("fuzz/allowed_signers"))
            .expect("the fuzz allowed-signers file parses");
        let (keys, _) =
            pgp::composed::SignedPublicKey::from_armor_many(FUZZ_OPENPGP_KEYS.as_bytes())
                .expect("the fuzz keyring is armored");
        let keys: Vec<_> = keys
            .map(|k| {
                let key = k.expect("the fuzz key reads");
                key.verify_bindings()
                    .expect("the fuzz key's bindings verify");
                key
            })
            .collect();
        TrustPolicy {
            ssh: Some(ssh),
            openpgp: Some(OpenPgpKeys {
                path: "fuzz/openpgp_keys.asc".into(),
                keys,
            }),
        }
    })
}

#[cfg(feature = "signatures")]
/// What Git makes of a raw commit object's headers (`parse_buffer_signed_by_header` in Git's
/// `commit.c`, written out again): the payload a signature covers (every `gpgsig*` header
/// removed), the signature (every header of this repository's kind, continuation lines
/// included, newlines kept), and whether the headers are unambiguous: at most one `gpgsig*`
/// header and at most one `committer` line.
struct GitSplit {
    payload: Vec<u8>,
    signature: Option<Vec<u8>>,
    unambiguous: bool,
    committer: Option<Vec<u8>>,
}

#[cfg(feature = "signatures")]
fn git_split(object: &[u8], hex_len: usize) -> GitSplit {
    let header: &[u8] = if hex_len == 64 {
        b"gpgsig-sha256"
    } else {
        b"gpgsig"
    };
    let mut payload = Vec::new();
    let mut signature: Option<Vec<u8>> = None;
    let (mut in_signature, mut other_signature) = (false, false);
    let (mut signature_headers, mut committers) = (0, 0);
    let mut committer = None;
    let mut at = 0;
    while at < object.len() {
        let line_end = object[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(object.len(), |i| at + i + 1);
        let line = &object[at..line_end];
        let mut next = line_end;
        let sig = if in_signature && line.first() == Some(&b' ') {
            Some(&line[1..])
        } else if line.starts_with(header) && line.get(header.len()) == Some(&b' ') {
            other_signature = false;
            signature_headers += 1;
            Some(&line[header.len() + 1..])
        } else {
            if line.starts_with(b"gpgsig") {
                other_signature = true;
                signature_headers += 1;
            } else if other_signature && line.first() != Some(&b' ') {
                other_signature = false;
            }
            None
        };
        match sig {
            Some(sig) => {
                signature
                    .get_or_insert_with(Vec::new)
                    .extend_from_slice(sig);
                in_signature = true;
            }
            None => {
                if line.first() == Some(&b'\n') {
                    next = object.len();
                } else if line.starts_with(b"committer ") && !other_signature {
                    committers += 1;
                    committer.get_or_insert_with(|| line.to_vec());
                }
                if !other_signature {
                    payload.extend_from_slice(&object[at..next]);
                }
                in_signature = false;
            }
        }
        at = next;
    }
    GitSplit {
        payload,
        signature,
        unambiguous: signature_headers <= 1 && committers <= 1,
        committer,
    }
}

#[cfg(feature = "signatures")]
/// The seconds of a well-formed committer line (`committer NAME <EMAIL> SECONDS +HHMM`).
fn committer_seconds(line: &[u8]) -> Option<i64> {
    let line = std::str::from_utf8(line).ok()?;
    let line = line.strip_suffix('\n').unwrap_or(line);
    let rest = line.strip_prefix("committer ")?;
    let (ident, date) = rest.rsplit_once("> ")?;
    if ident.contains(['\n', '>']) || !ident.contains(" <") {
        return None;
    }
    let (seconds, zone) = date.split_once(' ')?;
    let zone_ok = zone.len() == 5
        && matches!(zone.as_bytes()[0], b'+' | b'-')
        && zone[1..].bytes().all(|b| b.is_ascii_digit());
    let digits_ok =
        (1..=15).contains(&seconds.len()) && seconds.bytes().all(|b| b.is_ascii_digit());
    (zone_ok && digits_ok).then(|| seconds.parse().ok())?
}

#[cfg(feature = "signatures")]
/// A raw commit object (without its `commit <len>\0` prefix), judged as from a SHA-1 and from a
/// SHA-256 repository, against a fixed policy of two SSH keys and one OpenPGP key (the keys the
/// seed commits were signed with by `git commit -S`).
///
/// Invariants: on a commit (first header `tree`) whose signature headers and committer line are
/// unambiguous, the split is Git's exactly (payload, signature, committer time); a verdict is one of the four signature
/// codes, with a message; the same object under another id is refused as `signature_invalid`; an
/// accepted commit carries a signature by one of the policy's keys, reported with the principal
/// and fingerprint the policy gives it, over exactly the payload Git would check (it verifies
/// again through `verify` with Git's split); the verdict is deterministic.
///
/// Ambiguous headers (two `gpgsig`, `gpgsig` beside `gpgsig-sha256`, two `committer` lines) are
/// judged against `git verify-commit` by the signature tests (tests/it/signatures.rs); the fuzzer
/// reaches them, and the invariants above hold for them too.
pub fn signature(data: &[u8]) {
    use crate::source::signature::{self, SignedCommit};

    let policy = fuzz_trust_policy();
    for hex_len in [40, 64] {
        let git = git_split(data, hex_len);
        let split = SignedCommit::parse(data, hex_len).ok();
        // A commit (its first header `tree`) with one signature header, the only one: Git's
        // payload and ours must agree.
        if let Some(split) = &split
            && git.unambiguous
            && data.starts_with(b"tree ")
            && (git.signature.is_some() || split.signature.is_some())
        {
            assert_eq!(split.payload, git.payload, "the payload is not Git's");
            // Git keeps each line's newline, skillfold joins the lines with newlines: the same
            // lines, but for the newlines at the end (an object can end inside the header).
            let trimmed = |s: &[u8]| {
                let end = s.iter().rposition(|&b| b != b'\n').map_or(0, |i| i + 1);
                s[..end].to_vec()
            };
            assert_eq!(
                split.signature.as_deref().map(trimmed),
                git.signature.as_deref().map(trimmed),
                "the signature is not Git's"
            );
            if let Some(seconds) = git.committer.as_deref().and_then(committer_seconds) {
                assert_eq!(split.committed_at, seconds, "not the committer's time");
            }
        }
        let id = signature::commit_object_id(data, hex_len);
        assert_eq!(id.len(), hex_len);
        let verdict = signature::verify_commit_object(&id, data, policy);
        let other = if id.starts_with('0') { "1" } else { "0" }.repeat(hex_len);
        let refused = signature::verify_commit_object(&other, data, policy)
            .expect_err("another commit's id is refused");
        assert_eq!(refused.code().as_str(), "signature_invalid");
        match &verdict {
            Err(e) => {
                assert!(matches!(
                    e.code().as_str(),
                    "signature_missing"
                        | "signature_invalid"
                        | "signer_not_allowed"
                        | "signature_unsupported"
                ));
                assert!(!e.to_string().is_empty());
                if e.code().as_str() == "signature_missing" {
                    assert!(split.as_ref().is_some_and(|s| s.signature.is_none()));
                }
            }
            Ok(signer) => {
                let split = split.as_ref().expect("an accepted commit splits");
                assert!(split.signature.is_some(), "accepted without a signature");
                assert!(
                    FUZZ_SIGNERS.contains(&(
                        signer.format.as_str(),
                        signer.principal.as_str(),
                        signer.fingerprint.as_str()
                    )),
                    "accepted for an unknown signer {signer:?}"
                );
                if git.unambiguous {
                    let again = signature::verify(
                        &id,
                        git.signature.as_deref(),
                        &git.payload,
                        split.committed_at,
                        policy,
                    );
                    assert_eq!(again.as_ref(), Ok(signer), "Git's split does not verify");
                }
            }
        }
        // The verdict, not its message: the pgp crate's messages can carry a captured backtrace
        // (with `RUST_BACKTRACE` set), which names the caller's line.
        let again = signature::verify_commit_object(&id, data, policy);
        assert_eq!(
            again.as_ref().map_err(|e| e.code()),
            verdict.as_ref().map_err(|e| e.code()),
            "the verdict is not deterministic"
        );
    }
}

/// The scalars `update --write` may rewrite, as [`descriptor_edit`] addresses them: a source's
/// `revision`, or an approved entry's `version` or `hash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditSlot {
    Revision,
    Version(usize),
    Hash(usize),
}

/// Descriptor text and replacement scalars for the editor of `update --write`: the text, then
/// one value per rewritable scalar in the order [`crate::descriptor::edit::locate`] lists them
/// (each source's `revision`, then each approved entry's `version` and `hash`), separated by the
/// byte `0xFF`; an empty value leaves its scalar alone.
///
/// Invariants: the editor either refuses (`not_rewritable`, with a line) or writes text that
/// (1) is YAML whose tree equals the old tree with exactly the rewritten scalars replaced by
/// their new values — every other node keeps its value, style, flow, anchor and tag, and a
/// rewritten scalar keeps its quoting unless a plain one must be quoted to read back as the
/// same string — and (2) when the old text is a descriptor, is the same descriptor with those
/// fields changed. The scalars are found independently, by walking the tree from the
/// location `locate` names.
pub fn descriptor_edit(data: &[u8]) {
    use crate::descriptor::edit;
    use crate::format::yaml;

    let mut parts = data.split(|&b| b == 0xFF);
    let text = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let mut values = parts.map(|v| String::from_utf8_lossy(v).into_owned());
    let sites = match edit::locate(&text) {
        Ok(sites) => sites,
        Err(e) => {
            assert!(yaml::parse(&text).is_err(), "located nothing in YAML: {e}");
            assert_eq!(e.code().as_str(), "not_rewritable");
            assert!(e.line >= 1 && !e.message.is_empty());
            return;
        }
    };
    let Some(old) = yaml::parse(&text).expect("located in YAML") else {
        return assert!(sites.is_empty(), "sites in an empty document");
    };
    if has_duplicate_keys(&old) {
        // The descriptor refuses them, and which of two keys an edit addresses is the editor's
        // choice (it visits both agents of a name written twice): nothing to compare with.
        return;
    }
    let mut edits = Vec::new();
    let mut changed: Vec<(String, EditSlot, String)> = Vec::new();
    for source in &sites {
        let mut slots: Vec<(EditSlot, &edit::Site)> = Vec::new();
        slots.extend(source.revision.as_ref().map(|s| (EditSlot::Revision, s)));
        for (j, pin) in source.approved.iter().enumerate() {
            slots.extend(pin.version.as_ref().map(|s| (EditSlot::Version(j), s)));
            slots.extend(pin.hash.as_ref().map(|s| (EditSlot::Hash(j), s)));
        }
        for (slot, site) in slots {
            let node = slot_node(&old, &source.location, slot).expect("a located scalar");
            assert_eq!(node.position.line, site.line);
            if let Some((value, _)) = node.as_scalar() {
                assert_eq!(value, site.value);
            }
            let Some(value) = values.next() else { break };
            if value.is_empty() {
                continue;
            }
            match site.replace(&value) {
                Ok(e) => {
                    edits.push(e);
                    changed.push((source.location.clone(), slot, value));
                }
                Err(e) => {
                    assert_eq!(e.code().as_str(), "not_rewritable");
                    assert_eq!(e.line, site.line);
                    assert!(
                        node.anchored
                            || node.tag.is_some()
                            || node.bytes.is_empty()
                            || matches!(
                                node.kind,
                                yaml::NodeKind::Alias
                                    | yaml::NodeKind::Scalar {
                                        style: yaml::Style::Literal | yaml::Style::Folded,
                                        ..
                                    }
                            ),
                        "refused to rewrite a plain or quoted scalar: {e}"
                    );
                }
            }
        }
    }
    let new_text = match edit::apply(&text, edits) {
        Ok(t) => t,
        Err(e) => return assert_eq!(e.code().as_str(), "not_rewritable"),
    };
    let new = yaml::parse(&new_text)
        .unwrap_or_else(|e| panic!("the rewrite is not YAML ({e:?}):\n{new_text}"))
        .expect("a document");
    let mut want = old.clone();
    for (location, slot, value) in &changed {
        let node = slot_node_mut(&mut want, location, *slot).expect("a located scalar");
        let was_plain = matches!(node.as_scalar(), Some((_, yaml::Style::Plain)));
        // Single quotes cannot escape: a value with a control character is double-quoted.
        let style = match node.as_scalar() {
            Some((_, yaml::Style::SingleQuoted)) if !value.chars().any(char::is_control) => {
                yaml::Style::SingleQuoted
            }
            Some((_, yaml::Style::Plain)) => yaml::Style::Plain,
            _ => yaml::Style::DoubleQuoted,
        };
        node.kind = yaml::NodeKind::Scalar {
            value: value.clone(),
            style,
        };
        if was_plain {
            // Plain stays plain only when it reads back as the same string.
            let still_plain = matches!(
                slot_node(&new, location, *slot).and_then(yaml::Node::as_scalar),
                Some((_, yaml::Style::Plain))
            );
            if still_plain {
                assert!(yaml::plain_scalar_is_string(value), "`{value}` left plain");
            } else {
                node.kind = yaml::NodeKind::Scalar {
                    value: value.clone(),
                    style: yaml::Style::DoubleQuoted,
                };
            }
        }
    }
    assert_same_tree(&new, &want, &new_text);
    assert_eq!(new.to_json(), want.to_json());
    if let Ok(before) = crate::descriptor::parse(&text) {
        let after = crate::descriptor::parse(&new_text)
            .unwrap_or_else(|e| panic!("the rewritten descriptor does not parse: {e}\n{new_text}"));
        let mut expected = before.clone();
        for (location, slot, value) in &changed {
            let spec = git_spec_mut(&mut expected, location).expect("a located Git source");
            match slot {
                EditSlot::Revision => spec.revision = value.clone(),
                EditSlot::Version(j) => spec.approved[*j].version = value.clone(),
                EditSlot::Hash(j) => spec.approved[*j].hash = value.clone(),
            }
        }
        assert_eq!(after, expected, "not the expected descriptor:\n{new_text}");
    }
}

/// The value of `key` in a mapping node (the last of duplicates, as the editor reads them).
fn yaml_get<'n>(
    node: &'n crate::format::yaml::Node,
    key: &str,
) -> Option<&'n crate::format::yaml::Node> {
    match &node.kind {
        crate::format::yaml::NodeKind::Mapping { entries, .. } => entries
            .iter()
            .rev()
            .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn yaml_get_mut<'n>(
    node: &'n mut crate::format::yaml::Node,
    key: &str,
) -> Option<&'n mut crate::format::yaml::Node> {
    match &mut node.kind {
        crate::format::yaml::NodeKind::Mapping { entries, .. } => entries
            .iter_mut()
            .rev()
            .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn yaml_item(node: &crate::format::yaml::Node, i: usize) -> Option<&crate::format::yaml::Node> {
    match &node.kind {
        crate::format::yaml::NodeKind::Sequence { items, .. } => items.get(i),
        _ => None,
    }
}

fn yaml_item_mut(
    node: &mut crate::format::yaml::Node,
    i: usize,
) -> Option<&mut crate::format::yaml::Node> {
    match &mut node.kind {
        crate::format::yaml::NodeKind::Sequence { items, .. } => items.get_mut(i),
        _ => None,
    }
}

/// A location `locate` names (`skills[3].git`, `agents.<name>.skills[0].git`): the agent, if
/// any, and the index in its `skills`.
fn edit_location(location: &str) -> Option<(Option<&str>, usize)> {
    let (list, index) = location.strip_suffix("].git")?.rsplit_once('[')?;
    let index = index.parse().ok()?;
    if list == "skills" {
        return Some((None, index));
    }
    let agent = list.strip_prefix("agents.")?.strip_suffix(".skills")?;
    Some((Some(agent), index))
}

/// The `(key path, index)` steps from the root to a slot's scalar.
fn slot_steps(location: &str, slot: EditSlot) -> Option<Vec<(&str, Option<usize>)>> {
    let (agent, index) = edit_location(location)?;
    let mut steps = Vec::new();
    if let Some(agent) = agent {
        steps.push(("agents", None));
        steps.push((agent, None));
    }
    steps.push(("skills", Some(index)));
    match slot {
        EditSlot::Revision => {
            steps.push(("git", None));
            steps.push(("revision", None));
        }
        EditSlot::Version(j) | EditSlot::Hash(j) => {
            steps.push(("git", None));
            steps.push(("approved", Some(j)));
            steps.push((
                if matches!(slot, EditSlot::Version(_)) {
                    "version"
                } else {
                    "hash"
                },
                None,
            ));
        }
    }
    Some(steps)
}

fn slot_node<'n>(
    root: &'n crate::format::yaml::Node,
    location: &str,
    slot: EditSlot,
) -> Option<&'n crate::format::yaml::Node> {
    let mut node = root;
    for (key, index) in slot_steps(location, slot)? {
        node = yaml_get(node, key)?;
        if let Some(i) = index {
            node = yaml_item(node, i)?;
        }
    }
    Some(node)
}

fn slot_node_mut<'n>(
    root: &'n mut crate::format::yaml::Node,
    location: &str,
    slot: EditSlot,
) -> Option<&'n mut crate::format::yaml::Node> {
    let mut node = root;
    for (key, index) in slot_steps(location, slot)? {
        node = yaml_get_mut(node, key)?;
        if let Some(i) = index {
            node = yaml_item_mut(node, i)?;
        }
    }
    Some(node)
}

fn git_spec_mut<'d>(
    descriptor: &'d mut crate::descriptor::Descriptor,
    location: &str,
) -> Option<&'d mut crate::descriptor::GitSpec> {
    let (agent, index) = edit_location(location)?;
    let skills = match agent {
        None => &mut descriptor.skills,
        Some(agent) => &mut descriptor.agents.get_mut(agent)?.skills,
    };
    match skills.get_mut(index)? {
        crate::descriptor::SkillSource::Git(spec) => Some(spec),
        _ => None,
    }
}

/// Whether a mapping anywhere in the tree holds one scalar key twice.
fn has_duplicate_keys(node: &crate::format::yaml::Node) -> bool {
    use crate::format::yaml::NodeKind;
    match &node.kind {
        NodeKind::Mapping { entries, .. } => {
            let mut keys: Vec<&str> = entries
                .iter()
                .filter_map(|(k, _)| Some(k.as_scalar()?.0))
                .collect();
            keys.sort_unstable();
            keys.windows(2).any(|w| w[0] == w[1])
                || entries
                    .iter()
                    .any(|(k, v)| has_duplicate_keys(k) || has_duplicate_keys(v))
        }
        NodeKind::Sequence { items, .. } => items.iter().any(has_duplicate_keys),
        _ => false,
    }
}

/// Two trees equal in everything but positions and byte ranges.
fn assert_same_tree(got: &crate::format::yaml::Node, want: &crate::format::yaml::Node, text: &str) {
    use crate::format::yaml::NodeKind;
    assert_eq!(got.anchored, want.anchored, "an anchor changed:\n{text}");
    assert_eq!(got.tag, want.tag, "a tag changed:\n{text}");
    match (&got.kind, &want.kind) {
        (NodeKind::Sequence { items: a, flow: fa }, NodeKind::Sequence { items: b, flow: fb }) => {
            assert_eq!((a.len(), fa), (b.len(), fb), "a sequence changed:\n{text}");
            a.iter()
                .zip(b)
                .for_each(|(x, y)| assert_same_tree(x, y, text));
        }
        (
            NodeKind::Mapping {
                entries: a,
                flow: fa,
            },
            NodeKind::Mapping {
                entries: b,
                flow: fb,
            },
        ) => {
            assert_eq!((a.len(), fa), (b.len(), fb), "a mapping changed:\n{text}");
            for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                assert_same_tree(ka, kb, text);
                assert_same_tree(va, vb, text);
            }
        }
        (a, b) => assert_eq!(a, b, "a scalar changed:\n{text}"),
    }
}

/// The blobs a [`FakeRegistry`] serves, by digest (`sha256:<hex>`), the manifest among them.
type Blobs = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>>;

/// A registry on 127.0.0.1 for [`oci_pull`]: answers `GET /v2/fuzz/manifests/<digest>` and
/// `GET /v2/fuzz/blobs/<digest>` with the bytes of that digest (404 for any other), one request
/// per connection.
#[cfg(feature = "oci")]
struct FakeRegistry {
    address: std::net::SocketAddr,
    blobs: Blobs,
}

#[cfg(feature = "oci")]
impl FakeRegistry {
    fn get() -> &'static FakeRegistry {
        static REGISTRY: std::sync::OnceLock<FakeRegistry> = std::sync::OnceLock::new();
        REGISTRY.get_or_init(|| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
            let address = listener.local_addr().expect("its address");
            let blobs = Blobs::default();
            let served = Blobs::clone(&blobs);
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = FakeRegistry::answer(stream, &served);
                }
            });
            FakeRegistry { address, blobs }
        })
    }

    fn answer(mut stream: std::net::TcpStream, blobs: &Blobs) -> std::io::Result<()> {
        use std::io::{Read as _, Write as _};
        stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 65_536 {
            let n = stream.read(&mut buffer)?;
            if n == 0 {
                return Ok(());
            }
            request.extend_from_slice(&buffer[..n]);
        }
        let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
        let path = String::from_utf8_lossy(line)
            .split(' ')
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let digest = path
            .strip_prefix("/v2/fuzz/manifests/")
            .or_else(|| path.strip_prefix("/v2/fuzz/blobs/"));
        let body = digest.and_then(|d| blobs.lock().ok()?.get(d).cloned());
        let head = match &body {
            Some(body) => format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ),
            None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                .to_owned(),
        };
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_deref().unwrap_or_default())?;
        stream.flush()
    }
}

/// The manifest and blobs of [`oci_pull`]: the manifest text, then each blob, separated by the
/// byte `0xFF`. In the manifest, `@D0`…`@D9` stand for `sha256:<hex>` of blob 0…9 and `@S0`…`@S9`
/// for its size, so a mutated manifest can still name the blobs it is served with.
pub fn oci_manifest_and_blobs(data: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut parts = data.split(|&b| b == 0xFF);
    let template = parts.next().unwrap_or_default();
    let blobs: Vec<Vec<u8>> = parts.map(<[u8]>::to_vec).collect();
    let mut manifest = Vec::with_capacity(template.len());
    let mut i = 0;
    while i < template.len() {
        let placeholder = template.get(i..i + 3).and_then(|p| {
            let index = usize::from(p[2].checked_sub(b'0')?);
            (p[0] == b'@' && index <= 9 && matches!(p[1], b'D' | b'S')).then_some((p[1], index))
        });
        match placeholder {
            Some((kind, index)) => {
                let blob = blobs.get(index).map_or(&[][..], Vec::as_slice);
                let text = if kind == b'D' {
                    crate::source::oci::image::sha256(blob)
                } else {
                    blob.len().to_string()
                };
                manifest.extend_from_slice(text.as_bytes());
                i += 3;
            }
            None => {
                manifest.push(template[i]);
                i += 1;
            }
        }
    }
    (manifest, blobs)
}

/// What a pull of `manifest` must give, judged from the rules `pull` documents (written out
/// again): the digests of the layers pulled, in order, or the code of the first refusal.
#[cfg(feature = "oci")]
fn reference_pull(
    manifest: &[u8],
    served: &std::collections::HashMap<String, Vec<u8>>,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<String>, &'static str> {
    use crate::source::oci::pull::{MAX_LAYER_BYTES, MAX_LAYERS, MAX_MANIFEST_BYTES};

    if manifest.len() as u64 > MAX_MANIFEST_BYTES {
        return Err("image_too_large");
    }
    let manifest: Value = serde_json::from_slice(manifest).map_err(|_| "malformed_image")?;
    let media_type = manifest
        .get("mediaType")
        .and_then(Value::as_str)
        .unwrap_or(crate::source::oci::MEDIA_MANIFEST);
    let index = [
        crate::source::oci::MEDIA_INDEX,
        "application/vnd.docker.distribution.manifest.list.v2+json",
    ];
    if index.contains(&media_type) || manifest.get("manifests").is_some() {
        return Err("image_index");
    }
    if ![
        crate::source::oci::MEDIA_MANIFEST,
        "application/vnd.docker.distribution.manifest.v2+json",
    ]
    .contains(&media_type)
    {
        return Err("malformed_image");
    }
    let layers = manifest
        .get("layers")
        .and_then(Value::as_array)
        .ok_or("malformed_image")?;
    if layers.len() > MAX_LAYERS {
        return Err("image_too_large");
    }
    let mut pulled = Vec::new();
    for layer in layers {
        let kind = layer.get("mediaType").and_then(Value::as_str);
        if !matches!(
            kind,
            Some(
                crate::source::oci::MEDIA_LAYER_TAR_GZIP
                    | "application/vnd.docker.image.rootfs.diff.tar.gzip"
            )
        ) {
            return Err("malformed_image");
        }
        let digest = layer
            .get("digest")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let hex = digest.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err("malformed_image");
        }
        let size = layer
            .get("size")
            .and_then(Value::as_u64)
            .ok_or("malformed_image")?;
        if size > MAX_LAYER_BYTES {
            return Err("image_too_large");
        }
        let bundle = layer
            .get("annotations")
            .and_then(|a| a.get(crate::source::oci::ANNOTATION_BUNDLE_NAME))
            .and_then(Value::as_str);
        if bundle.is_some_and(|b| !wanted(b)) {
            continue;
        }
        pulled.push((digest.to_owned(), size));
    }
    // Every descriptor is checked before any layer is fetched; then the layers in order.
    for (digest, size) in &pulled {
        let bytes = served.get(digest).ok_or("image_not_found")?;
        if bytes.len() as u64 > *size {
            return Err("image_too_large");
        }
        if bytes.len() as u64 != *size {
            return Err("digest_mismatch");
        }
    }
    Ok(pulled.into_iter().map(|(digest, _)| digest).collect())
}

/// An image manifest and its blobs (see [`oci_manifest_and_blobs`]), served by a registry on
/// 127.0.0.1 and pulled by digest with the pull of `oci:` sources (`prepare::oci::pull`, over
/// reqwest); then each pulled layer through the strict reader (`unpack`: gzip, then tar).
///
/// Invariants: the pull gives exactly what the documented rules give (the layers the manifest
/// lists and `wanted` keeps, in order, each of the declared size and digest; else the first
/// refusal's code: `malformed_image`, `image_index`, `image_too_large`, `image_not_found`,
/// `digest_mismatch`); a pulled layer's bytes are the registry's bytes of its digest; a layer is
/// refused only with the layer codes, and what it yields is the wanted bundle only.
///
/// The image config is not fuzzed: `pull` never reads it (the manifest's layer descriptors say
/// everything a pull uses).
#[cfg(feature = "oci")]
pub fn oci_pull(data: &[u8]) {
    use crate::source::oci::unpack::unpack;

    let (manifest, blobs) = oci_manifest_and_blobs(data);
    let registry = FakeRegistry::get();
    let digest = crate::source::oci::image::sha256(&manifest);
    let served: std::collections::HashMap<String, Vec<u8>> = blobs
        .iter()
        .map(|b| (crate::source::oci::image::sha256(b), b.clone()))
        .chain([(digest.clone(), manifest.clone())])
        .collect();
    *registry.blobs.lock().unwrap_or_else(|e| e.into_inner()) = served.clone();
    let reference = crate::descriptor::plan::ImageReference {
        registry: registry.address.to_string(),
        repository: "fuzz".to_owned(),
        digest,
    };
    let wanted = |name: &str| name != "unwanted";
    let want = reference_pull(&manifest, &served, &wanted);
    // The layers stream into files of a folder of their own; no pull bound (the rules above do
    // not model it) and a deadline that only stops a hung run.
    let into = tempfile::tempdir().expect("a folder for the layers");
    let got = crate::source::oci::pull::pull(&crate::source::oci::pull::PullRequest {
        reference: &reference,
        plain_http: true,
        wanted: &wanted,
        into: into.path(),
        max_bytes: u64::MAX,
        deadline: std::time::Duration::from_secs(60),
    });
    match (&got, &want) {
        (Ok(layers), Ok(digests)) => {
            let got: Vec<&str> = layers.iter().map(|l| l.digest.as_str()).collect();
            assert_eq!(&got, digests, "not the layers the manifest lists");
            for layer in layers {
                let bytes = fs_err::read(&layer.path).expect("the pulled layer's file");
                assert_eq!(Some(&bytes), served.get(&layer.digest));
            }
        }
        (Err(e), Err(code)) => {
            assert_eq!(e.code.as_str(), *code, "{e}");
            assert!(!e.message.is_empty());
        }
        _ => panic!(
            "pulled {:?}, the rules give {want:?}",
            got.as_ref().map(|l| l.len()).map_err(|e| e.to_string())
        ),
    }
    let wanted_bundles: std::collections::BTreeSet<String> = ["pdf".to_owned()].into();
    for layer in got.iter().flatten() {
        let file = fs_err::File::open(&layer.path).expect("the pulled layer's file");
        match unpack(file, &wanted_bundles, crate::format::limits::CHAMVI) {
            Ok(bundles) => {
                assert!(bundles.keys().all(|name| name == "pdf"));
                for (files, _) in bundles.values() {
                    for (path, _) in files.iter() {
                        assert!(BundlePath::parse(path.as_str()).is_ok());
                    }
                }
            }
            Err(e) => assert!(matches!(
                e.code.as_str(),
                "malformed_layer"
                    | "layer_too_large"
                    | "link_in_layer"
                    | "special_file_in_layer"
                    | "unsafe_path_in_layer"
                    | "duplicate_in_layer"
            )),
        }
    }
}

/// The statuses [`oci_tag`]'s registry answers with, picked by a byte: successes, the refusals
/// and failures a registry sends, and the two that say it does not answer `HEAD` (405, 501). No
/// 401 (its token exchange is not modelled) and no redirect.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
const TAG_STATUSES: [u16; 13] = [
    200, 203, 204, 400, 403, 404, 405, 406, 429, 500, 501, 502, 503,
];

/// One answer of [`TagRegistry`]: a status, a `Docker-Content-Digest` (if any) and a body.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
#[derive(Debug, Clone, Default)]
pub struct TagAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The `Docker-Content-Digest` header, if any.
    pub digest: Option<String>,
    /// The body (the manifest bytes; none is sent for a `HEAD` or a 204).
    pub body: Vec<u8>,
}

/// The `HEAD` and `GET` answers of [`oci_tag`] from `data`: four bytes (the `HEAD`'s status and
/// digest header, the `GET`'s status and digest header), then the manifest bytes and a header
/// value, separated by `0xFF`. A digest-header byte picks none, the digest of the manifest bytes,
/// another well-formed digest, or the header value (printable ASCII without spaces kept).
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
pub fn oci_tag_answers(data: &[u8]) -> (TagAnswer, TagAnswer) {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let rest = data.get(4..).unwrap_or_default();
    let mut parts = rest.splitn(2, |&b| b == 0xFF);
    let body = parts.next().unwrap_or_default().to_vec();
    let value: String = parts
        .next()
        .unwrap_or_default()
        .iter()
        .filter(|b| b.is_ascii_graphic())
        .map(|&b| char::from(b))
        .collect();
    let digest = |pick: u8| match pick % 4 {
        0 => None,
        1 => Some(crate::source::oci::image::sha256(&body)),
        2 => Some(format!("sha256:{}", "0".repeat(64))),
        _ => Some(value.clone()),
    };
    let status = |pick: u8| TAG_STATUSES[usize::from(pick) % TAG_STATUSES.len()];
    let head = TagAnswer {
        status: status(byte(0)),
        digest: digest(byte(1)),
        body: body.clone(),
    };
    let get = TagAnswer {
        status: status(byte(2)),
        digest: digest(byte(3)),
        body,
    };
    (head, get)
}

/// What resolving the tag must give, from the rules `resolve_tag` documents (written out
/// again): the digest, or the code of the refusal; and whether a `GET` is sent.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
fn reference_tag(head: &TagAnswer, get: &TagAnswer) -> (Result<String, &'static str>, bool) {
    use crate::source::oci::pull::MAX_MANIFEST_BYTES;

    let failed = |status: u16| match status {
        403 => "registry_denied",
        404 => "tag_not_found",
        500.. => "registry_unavailable",
        _ => "registry_refused",
    };
    let well_formed = |d: &str| {
        d.strip_prefix("sha256:").is_some_and(|hex| {
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
    };
    // A 204 has no body, whatever it says.
    fn body(a: &TagAnswer) -> &[u8] {
        if a.status == 204 { &[] } else { &a.body }
    }
    if !matches!(head.status, 405 | 501) {
        if !(200..300).contains(&head.status) {
            return (Err(failed(head.status)), false);
        }
        if body(head).len() as u64 > MAX_MANIFEST_BYTES {
            return (Err("image_too_large"), false);
        }
        match &head.digest {
            Some(d) if well_formed(d) => return (Ok(d.clone()), false),
            Some(_) => return (Err("malformed_image"), false),
            None => {}
        }
    }
    if !(200..300).contains(&get.status) {
        return (Err(failed(get.status)), true);
    }
    let digest = crate::source::oci::image::sha256(body(get));
    let verdict = match &get.digest {
        Some(d) if !well_formed(d) => Err("malformed_image"),
        Some(d) if *d != digest => Err("digest_mismatch"),
        _ => Ok(digest),
    };
    (verdict, true)
}

/// A registry on 127.0.0.1 for [`oci_tag`]: answers `HEAD` and `GET` of
/// `/v2/fuzz/manifests/stable` with the answers set for the run, and records each method.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
struct TagRegistry {
    address: std::net::SocketAddr,
    /// The answers of this run, and the methods asked so far.
    state: std::sync::Arc<std::sync::Mutex<(TagAnswer, TagAnswer, Vec<String>)>>,
}

#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
impl TagRegistry {
    fn get() -> &'static TagRegistry {
        static REGISTRY: std::sync::OnceLock<TagRegistry> = std::sync::OnceLock::new();
        REGISTRY.get_or_init(|| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
            let address = listener.local_addr().expect("its address");
            let state = std::sync::Arc::default();
            let served = std::sync::Arc::clone(&state);
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = TagRegistry::answer(stream, &served);
                }
            });
            TagRegistry { address, state }
        })
    }

    fn answer(
        mut stream: std::net::TcpStream,
        state: &std::sync::Mutex<(TagAnswer, TagAnswer, Vec<String>)>,
    ) -> std::io::Result<()> {
        use std::io::{Read as _, Write as _};
        stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 65_536 {
            let n = stream.read(&mut buffer)?;
            if n == 0 {
                return Ok(());
            }
            request.extend_from_slice(&buffer[..n]);
        }
        let line =
            String::from_utf8_lossy(request.split(|&b| b == b'\r').next().unwrap_or_default())
                .into_owned();
        let mut words = line.split(' ');
        let method = words.next().unwrap_or_default().to_owned();
        let path = words.next().unwrap_or_default();
        let answer = {
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            state.2.push(method.clone());
            match (method.as_str(), path) {
                ("HEAD", "/v2/fuzz/manifests/stable") => Some(state.0.clone()),
                ("GET", "/v2/fuzz/manifests/stable") => Some(state.1.clone()),
                _ => None,
            }
        };
        let answer = answer.unwrap_or(TagAnswer {
            status: 404,
            ..TagAnswer::default()
        });
        let body = if answer.status == 204 {
            &[][..]
        } else {
            &answer.body[..]
        };
        let mut head = format!(
            "HTTP/1.1 {} Fuzz\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nConnection: close\r\n",
            answer.status
        );
        if answer.status != 204 {
            head += &format!("Content-Length: {}\r\n", body.len());
        }
        if let Some(digest) = &answer.digest {
            head += &format!("Docker-Content-Digest: {digest}\r\n");
        }
        head += "\r\n";
        stream.write_all(head.as_bytes())?;
        if method != "HEAD" {
            stream.write_all(body)?;
        }
        stream.flush()
    }
}

/// Fuzz body for `oci_tag`: a registry's answers to the `HEAD` and the `GET` of a tag's manifest
/// ([`oci_tag_answers`] reads them from `data`), resolved as `outdated` and `update` resolve a
/// tag ([`crate::source::oci::pull::resolve_tag`]). The digest, or the refusal's code, is what the
/// documented rules give ([`reference_tag`], written out again): a `HEAD` naming a well-formed
/// digest is the answer and nothing else is asked; a `HEAD` without one, or answered 405 or 501,
/// is followed by one `GET` whose bytes give the digest, equal to the one it names if any; any
/// other failed `HEAD` is final, with no `GET`. A refusal always says why.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
pub fn oci_tag(data: &[u8]) {
    let (head, get) = oci_tag_answers(data);
    let registry = TagRegistry::get();
    *registry.state.lock().unwrap_or_else(|e| e.into_inner()) =
        (head.clone(), get.clone(), Vec::new());
    let got = crate::source::oci::pull::resolve_tag(&crate::source::oci::pull::TagRequest {
        registry: &registry.address.to_string(),
        repository: "fuzz",
        tag: "stable",
        plain_http: true,
        deadline: std::time::Duration::from_secs(60),
    });
    let (want, asks_get) = reference_tag(&head, &get);
    match (&got, &want) {
        (Ok(got), Ok(want)) => assert_eq!(got, want),
        (Err(e), Err(code)) => {
            assert_eq!(e.code.as_str(), *code, "{e}");
            assert!(!e.message.is_empty());
        }
        _ => panic!("resolved {got:?}, the rules give {want:?} for {head:?} then {get:?}"),
    }
    let methods = registry
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .2
        .clone();
    let want_methods: &[&str] = if asks_get {
        &["HEAD", "GET"]
    } else {
        &["HEAD"]
    };
    assert_eq!(methods, want_methods, "for {head:?} then {get:?}");
}

/// The tokens of [`HttpWorld`]: the default endpoint's, the `writer` agent's, and `/metrics`'.
#[cfg(feature = "http")]
const HTTP_TOKENS: [(&str, &str); 3] = [
    ("@T", "default-token"),
    ("@W", "writer-token"),
    ("@M", "metrics-token"),
];

/// The only browser origin [`HttpWorld`]'s server is told to allow.
#[cfg(feature = "http")]
const HTTP_ALLOWED_ORIGIN: &str = "https://allowed.example";

/// A `serve --listen` server on 127.0.0.1 for [`http_request`], started once per process (in
/// a thread, on a port picked free): two local bundles, `/mcp` with the defaults, the agent
/// `writer` at `/agents/writer/mcp`, bearer tokens for both and for `/metrics`, one allowed
/// origin, at most 16 sessions idle at most 5 s.
#[cfg(feature = "http")]
pub struct HttpWorld {
    port: u16,
    _dir: tempfile::TempDir,
}

#[cfg(feature = "http")]
impl HttpWorld {
    /// The server, started on first use.
    pub fn get() -> &'static HttpWorld {
        static WORLD: std::sync::OnceLock<HttpWorld> = std::sync::OnceLock::new();
        WORLD.get_or_init(HttpWorld::start)
    }

    fn start() -> HttpWorld {
        use crate::mcp::http::{HttpOptions, run, tokens::Tokens};

        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut descriptor = String::new();
        for (name, agent) in [("alpha", false), ("beta", true)] {
            let bundle = dir.path().join(name);
            fs_err::create_dir(&bundle).expect("a bundle folder");
            fs_err::write(
                bundle.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n"),
            )
            .expect("a SKILL.md");
            let digest = Bundle::read_dir(&bundle).expect("a bundle").digest();
            let entry = format!(
                "  - local: {{ name: {name}, version: '1', directory: {name}, hash: {digest} }}\n"
            );
            if agent {
                descriptor.push_str(&format!("agents:\n  writer:\n    skills:\n  {entry}"));
            } else {
                descriptor.insert_str(0, &format!("skills:\n{entry}"));
            }
        }
        let config = dir.path().join("skillfold.yaml");
        fs_err::write(&config, descriptor).expect("a descriptor");
        let agents: std::collections::BTreeSet<String> = ["writer".to_owned()].into();
        let hash = |token: &str| crate::support::hex::sha256_hex(token.as_bytes());
        let tokens = serde_json::json!([
            {"agent": null, "sha256": hash(HTTP_TOKENS[0].1)},
            {"agent": "writer", "sha256": hash(HTTP_TOKENS[1].1)},
        ]);
        let metrics = serde_json::json!([{"agent": null, "sha256": hash(HTTP_TOKENS[2].1)}]);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let options = HttpOptions {
            config,
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            tokens: Some(Tokens::parse(&tokens.to_string(), "fuzz", &agents).expect("tokens")),
            oauth: None,
            allow_origins: vec![HTTP_ALLOWED_ORIGIN.to_owned()],
            insecure_no_auth: false,
            max_sessions: 16,
            session_idle: std::time::Duration::from_secs(5),
            watch: false,
            poll_interval: std::time::Duration::from_secs(2),
            audit_log: None,
            tls: None,
            metrics_tokens: Some(
                Tokens::parse(&metrics.to_string(), "fuzz-metrics", &agents).expect("tokens"),
            ),
            body_timeout: std::time::Duration::from_secs(10),
            max_connections: crate::mcp::http::DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: crate::mcp::http::DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            max_connections_per_token: crate::mcp::http::DEFAULT_MAX_CONNECTIONS_PER_TOKEN,
            max_in_flight: crate::mcp::http::DEFAULT_MAX_IN_FLIGHT,
            max_in_flight_per_token: crate::mcp::http::DEFAULT_MAX_IN_FLIGHT_PER_TOKEN,
        };
        std::thread::spawn(move || {
            let result = run(options);
            panic!("the fuzzed HTTP server stopped: {result:?}");
        });
        for _ in 0..600 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return HttpWorld { port, _dir: dir };
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the fuzzed HTTP server did not start on port {port}");
    }

    /// The raw request bytes with the placeholders replaced: `@H` by the server's
    /// `127.0.0.1:PORT`, `@T`, `@W` and `@M` by the default, `writer` and metrics tokens.
    pub fn request(&self, data: &[u8]) -> Vec<u8> {
        let host = format!("127.0.0.1:{}", self.port);
        let mut out = Vec::with_capacity(data.len() + 32);
        let mut i = 0;
        while i < data.len() {
            let pair = data.get(i..i + 2);
            let token = HTTP_TOKENS.iter().find(|(p, _)| Some(p.as_bytes()) == pair);
            match (pair, token) {
                (Some(b"@H"), _) => out.extend_from_slice(host.as_bytes()),
                (_, Some((_, token))) => out.extend_from_slice(token.as_bytes()),
                _ => {
                    out.push(data[i]);
                    i += 1;
                    continue;
                }
            }
            i += 2;
        }
        out
    }

    /// Sends `request` on one connection and reads what the server answers: until it closes the
    /// connection, or 100 ms pass without a byte once something arrived, or `patience` passes
    /// without any answer (a request the server is still waiting on, such as a body shorter
    /// than its `Content-Length`); at most 4 MiB. The connection stays open for writing (hyper
    /// drops a pending answer when the client half-closes).
    pub fn exchange(&self, request: &[u8], patience: std::time::Duration) -> Vec<u8> {
        use std::io::{Read as _, Write as _};
        let mut stream =
            std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("the server answers");
        let _ = stream.set_write_timeout(Some(std::time::Duration::from_secs(2)));
        let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(100)));
        let _ = stream.write_all(request);
        let started = std::time::Instant::now();
        let mut out = Vec::new();
        let mut buffer = [0u8; 16 * 1024];
        while out.len() < 4 * 1024 * 1024 {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buffer[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if !out.is_empty() || started.elapsed() > patience {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        out
    }
}

/// One parsed HTTP/1.1 response.
#[cfg(feature = "http")]
#[derive(Debug)]
pub struct HttpAnswer {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body (an event stream: what arrived of it).
    pub body: Vec<u8>,
}

#[cfg(feature = "http")]
impl HttpAnswer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The responses in `raw`, in order; panics on bytes that are not HTTP/1.1 (or, to an HTTP/1.0
/// request, HTTP/1.0) responses.
#[cfg(feature = "http")]
pub fn http_answers(mut raw: &[u8]) -> Vec<HttpAnswer> {
    let mut answers = Vec::new();
    while !raw.is_empty() {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| {
                panic!(
                    "a response head without its end: {:?}",
                    String::from_utf8_lossy(raw)
                )
            });
        let head = std::str::from_utf8(&raw[..end]).expect("a response head is text");
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .or_else(|| status_line.strip_prefix("HTTP/1.0 "))
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("not a status line: {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l
                    .split_once(':')
                    .unwrap_or_else(|| panic!("a bad header {l:?}"));
                (n.to_ascii_lowercase(), v.trim().to_owned())
            })
            .collect();
        raw = &raw[end + 4..];
        let mut answer = HttpAnswer {
            status,
            headers,
            body: Vec::new(),
        };
        if (100..200).contains(&status) {
            // An interim answer (`100 Continue`): no body, the final answer follows.
            continue;
        }
        if let Some(length) = answer.header("content-length") {
            let length: usize = length.parse().expect("a numeric content-length");
            let length = length.min(raw.len());
            answer.body = raw[..length].to_vec();
            raw = &raw[length..];
        } else if answer
            .header("transfer-encoding")
            .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") else {
                    raw = &[];
                    break;
                };
                let size = std::str::from_utf8(&raw[..line_end])
                    .ok()
                    .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
                    .expect("a chunk size");
                raw = &raw[line_end + 2..];
                let take = size.min(raw.len());
                answer.body.extend_from_slice(&raw[..take]);
                raw = raw.get(take + 2..).unwrap_or_default();
                if size == 0 {
                    break;
                }
            }
        } else {
            // No framing: the body runs to the end of the connection.
            answer.body = raw.to_vec();
            raw = &[];
        }
        answers.push(answer);
    }
    answers
}

/// A request's method, path and headers (names lowercase).
#[cfg(feature = "http")]
type StrictRequest = (String, String, Vec<(String, String)>);

/// The first request of a byte stream, read strictly (CRLF lines, an origin-form target, token
/// header names, visible header values); `None` when it is not that strict.
#[cfg(feature = "http")]
fn strict_request(raw: &[u8]) -> Option<StrictRequest> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?;
    let target = request_line.next()?;
    if request_line.next()? != "HTTP/1.1"
        || request_line.next().is_some()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || method.is_empty()
        || !target.starts_with('/')
        || !target.bytes().all(|b| b.is_ascii_graphic())
    {
        return None;
    }
    let path = target.split('?').next()?.to_owned();
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return None;
        }
        let value = value.trim_matches([' ', '\t']);
        if !value
            .bytes()
            .all(|b| b.is_ascii_graphic() || b == b' ' || b == b'\t')
        {
            return None;
        }
        headers.push((name.to_ascii_lowercase(), value.to_owned()));
    }
    Some((method.to_owned(), path, headers))
}

/// Raw bytes sent to `serve --listen` on one connection (with the placeholders of
/// [`HttpWorld::request`]): hyper's HTTP/1.1 parsing, the routes, the bearer tokens, the
/// Host and Origin checks and rmcp's Streamable HTTP handling of the body (framing, JSON-RPC).
///
/// Invariants: the server answers only with well-formed HTTP/1.1 responses (or closes); never
/// a 5xx but a 503 with `Retry-After`; a 401 carries `WWW-Authenticate: Bearer`; every
/// `application/json` body is JSON. For the first request, read strictly: `GET /healthz` is
/// 200 (or a 4xx, for a header hyper refuses); an MCP endpoint (`/mcp`, `/agents/writer/mcp`) answers 2xx only to its own bearer token,
/// with a loopback `Host` and an `Origin` that is absent, allowed or the server's own loopback
/// origin; `/metrics` answers 2xx only to its token; any other path is never 2xx.
///
/// JSON-RPC errors over HTTP equal to stdio's and probes refusing a foreign `Host` or `Origin`
/// are the serving tests' (tests/it/serve_http_rpc.rs, tests/it/serve_http.rs); no 5xx but a 503
/// with `Retry-After` is asserted here, which covers the judge's answers.
#[cfg(feature = "http")]
pub fn http_request(data: &[u8]) {
    let world = HttpWorld::get();
    let request = world.request(data);
    let raw = world.exchange(&request, std::time::Duration::from_secs(3));
    let answers = http_answers(&raw);
    for answer in &answers {
        assert!(
            answer.status < 500 || (answer.status == 503 && answer.header("retry-after").is_some()),
            "HTTP {} for {:?}",
            answer.status,
            String::from_utf8_lossy(&request)
        );
        if answer.status == 401 {
            assert!(
                answer
                    .header("www-authenticate")
                    .is_some_and(|v| v.starts_with("Bearer"))
            );
        }
        if answer
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
            && answer.header("content-length").is_some()
            && !answer.body.is_empty()
        {
            assert!(
                serde_json::from_slice::<Value>(&answer.body).is_ok(),
                "a JSON answer that is not JSON: {:?}",
                String::from_utf8_lossy(&answer.body)
            );
        }
    }
    let (Some((method, path, headers)), Some(first)) = (strict_request(&request), answers.first())
    else {
        return;
    };
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let bearer_of = |token: &str| {
        header("authorization").is_some_and(|v| {
            v.len() > 7 && v[..7].eq_ignore_ascii_case("bearer ") && &v[7..] == token
        })
    };
    let ok = (200..300).contains(&first.status);
    let loopback_host = |host: &str| {
        let name = host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                h
            } else {
                host
            }
        });
        matches!(name, "127.0.0.1" | "localhost" | "[::1]")
    };
    let endpoint_token = match path.as_str() {
        "/mcp" => Some(HTTP_TOKENS[0].1),
        "/agents/writer/mcp" => Some(HTTP_TOKENS[1].1),
        _ => None,
    };
    match (method.as_str(), path.as_str(), endpoint_token) {
        // hyper may refuse a header the strict reading lets through (400).
        ("GET", "/healthz", _) => {
            assert!(first.status == 200 || (400..500).contains(&first.status))
        }
        ("GET", "/readyz", _) => {}
        ("GET", "/metrics", _) => {
            assert!(
                !ok || bearer_of(HTTP_TOKENS[2].1),
                "/metrics without its token"
            )
        }
        (_, _, Some(token)) => {
            if ok {
                assert!(
                    bearer_of(token),
                    "{path} answered {} without its token",
                    first.status
                );
                assert!(
                    header("host").is_none_or(loopback_host),
                    "{path} answered {} to Host {:?}",
                    first.status,
                    header("host")
                );
                assert!(
                    header("origin").is_none_or(|o| o == HTTP_ALLOWED_ORIGIN
                        || o.strip_prefix("http://").is_some_and(loopback_host)),
                    "{path} answered {} to Origin {:?}",
                    first.status,
                    header("origin")
                );
            }
        }
        _ => assert!(!ok, "{method} {path} answered {}", first.status),
    }
}

/// The issuer the fuzzed identity-provider documents are read for: one with a path, so every
/// place RFC 8414 and OpenID Connect Discovery put the metadata is a distinct URL.
#[cfg(feature = "http")]
const OAUTH_ISSUER: &str = "https://idp.example/tenant";

/// An identity provider's documents as `serve --listen --oauth` reads them: a discovery document
/// (OpenID Connect or RFC 8414 metadata), a JWKS key set and an access token, separated by the
/// byte `0xFF`.
///
/// Invariants: the discovery URLs of the issuer are distinct, on its origin, and the first is the
/// OpenID Connect one; read from each, the document yields a key set URL exactly when an
/// independent reading does (`issuer` the configured string, `jwks_uri` a URL on the issuer's
/// origin), and then that URL; a refusal says why. The key set is refused exactly when it has no
/// `keys` array; the keys kept are at most the entries an independent reading allows (`use`
/// absent or `sig`, `key_ops` absent or a list holding `verify`, a type this server verifies),
/// each with the `kid` of one of them. The token's verdict with those keys is deterministic, and
/// a verified token names by `kid` a kept key (or carries none).
#[cfg(feature = "http")]
pub fn oauth_documents(data: &[u8]) {
    use crate::mcp::http::oauth::{jwks, validate};
    use crate::source::origin::same_origin;
    use reqwest::Url;

    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let discovery = parts.next().unwrap_or_default();
    let key_set = parts.next().unwrap_or_default();
    let token = parts.next().unwrap_or_default();

    let issuer = Url::parse(OAUTH_ISSUER).expect("the issuer is a URL");
    let urls = jwks::discovery_urls(&issuer);
    assert_eq!(urls.len(), 4, "{urls:?}");
    assert_eq!(
        urls[0].as_str(),
        "https://idp.example/tenant/.well-known/openid-configuration"
    );
    for (i, url) in urls.iter().enumerate() {
        assert!(same_origin(url, &issuer), "{url}");
        assert!(!urls[..i].contains(url), "{url} twice");
    }
    if let Ok(document) = serde_json::from_slice::<Value>(discovery) {
        for at in &urls {
            let expected = (document.get("issuer").and_then(Value::as_str) == Some(OAUTH_ISSUER))
                .then(|| document.get("jwks_uri").and_then(Value::as_str))
                .flatten()
                .and_then(|text| Url::parse(text).ok())
                .filter(|url| same_origin(url, &issuer));
            match jwks::jwks_uri(&document, OAUTH_ISSUER, at) {
                Ok(url) => assert_eq!(Some(url), expected, "{document}"),
                Err(why) => {
                    assert!(expected.is_none(), "refused ({why}): {document}");
                    assert!(!why.is_empty());
                }
            }
        }
    }

    let Ok(document) = serde_json::from_slice::<Value>(key_set) else {
        return;
    };
    let keys = match validate::parse_key_set(&document) {
        Ok(keys) => {
            assert!(document.get("keys").is_some_and(Value::is_array));
            keys
        }
        Err(why) => {
            assert!(!document.get("keys").is_some_and(Value::is_array));
            assert!(!why.is_empty());
            return;
        }
    };
    let allowed: Vec<&Value> = document["keys"]
        .as_array()
        .map(|entries| entries.iter().filter(|e| oauth_key_allowed(e)).collect())
        .unwrap_or_default();
    assert!(
        keys.len() <= allowed.len(),
        "{} of {}",
        keys.len(),
        allowed.len()
    );
    for key in &keys {
        assert!(
            allowed
                .iter()
                .any(|e| e.get("kid").and_then(Value::as_str) == key.kid.as_deref()),
            "a kept key that no allowed entry names: {:?}",
            key.kid
        );
    }
    let Ok(token) = std::str::from_utf8(token) else {
        return;
    };
    if let Ok(parsed) = validate::parse(token, &validate::Algorithm::ALL) {
        let verdict = parsed.verify(&keys);
        assert_eq!(verdict, parsed.verify(&keys), "not deterministic");
        if verdict.is_ok()
            && let Some(kid) = &parsed.kid
        {
            assert!(keys.iter().any(|k| k.kid.as_ref() == Some(kid)));
        }
        if verdict.is_ok()
            && let Ok(identity) =
                parsed.check_claims(OAUTH_ISSUER, &["https://skills.example/mcp"], 1.8e9)
        {
            let (claim, value) = identity.principal();
            assert!(matches!(claim, "sub" | "client_id") && !value.is_empty());
        }
    }
}

/// The bounds [`git_answer`] reads under: small, so that inputs cross them.
#[cfg(feature = "git")]
const GIT_ANSWER_BOUNDS: crate::source::git::answer::LineBounds =
    crate::source::git::answer::LineBounds {
        bytes: 4096,
        lines: 64,
    };

/// What an answer's lines come to, read independently of [`crate::source::git::answer::PktLines`]
/// (the whole input at once, packet by packet): the bound it breaks, if any. Bytes before the
/// pack count, framing included; each packet counts as a line once its four length digits have
/// come; the pack begins after v2's `packfile` header (as it is, or on side-band channel 1), at
/// v0/v1's first side-band byte 1 or at four bytes that are not hex digits (elsewhere such bytes
/// and all after them count).
#[cfg(feature = "git")]
fn git_answer_reference(
    pack_after: crate::source::git::answer::PackAfter,
    data: &[u8],
) -> Result<(), crate::source::git::answer::LineBoundBroken> {
    use crate::source::git::answer::{LineBoundBroken, PackAfter};
    let bounds = GIT_ANSWER_BOUNDS;
    let mut counted = 0u64;
    let mut count = |n: usize| {
        counted += n as u64;
        if counted > bounds.bytes {
            Err(LineBoundBroken::Bytes(bounds.bytes))
        } else {
            Ok(())
        }
    };
    let (mut at, mut lines) = (0, 0u64);
    while at < data.len() {
        let digits = &data[at..data.len().min(at + 4)];
        count(digits.len())?;
        let hex = digits.len() == 4 && digits.iter().all(u8::is_ascii_hexdigit);
        let len = digits.iter().fold(0, |len, d| {
            len * 16 + char::from(*d).to_digit(16).unwrap_or(0) as usize
        });
        if digits.len() < 4 {
            return Ok(());
        }
        if !hex {
            return match pack_after {
                PackAfter::SideBand => Ok(()),
                PackAfter::Never | PackAfter::Header => count(data.len() - at - 4),
            };
        }
        lines += 1;
        if lines > bounds.lines {
            return Err(LineBoundBroken::Lines(bounds.lines));
        }
        at += 4;
        let payload_len = len.saturating_sub(4);
        if payload_len == 0 {
            continue;
        }
        if at == data.len() {
            return Ok(());
        }
        let here = payload_len.min(data.len() - at);
        if pack_after == PackAfter::SideBand && data[at] == 1 {
            return count(1);
        }
        count(here)?;
        if here < payload_len {
            return Ok(());
        }
        let payload = &data[at..at + payload_len];
        at += payload_len;
        let header = matches!(
            payload,
            b"packfile\n" | b"packfile" | b"\x01packfile\n" | b"\x01packfile"
        );
        if pack_after == PackAfter::Header && header {
            return Ok(());
        }
    }
    Ok(())
}

/// A Git server's answer, read through the fetcher's bounded reader: the first byte chooses the
/// request it answers (the advertisement, a v2 command, a v0/v1 fetch: modulo 3) and the second
/// the size of the pieces it arrives in; the rest is the answer.
///
/// Invariants: the verdict (within the bounds, or the bound broken) does not depend on how the
/// answer is cut into pieces, and is the one an independent reading of the whole answer gives
/// ([`git_answer_reference`]); the reader hands on exactly the answer when it is within the
/// bounds, and otherwise a prefix of it no longer than the byte bound, refuses every later read,
/// and keeps the refusal for the fetcher with the request's kind and the bound.
#[cfg(feature = "git")]
pub fn git_answer(data: &[u8]) {
    use std::io::Read as _;

    use crate::source::git::answer::{
        Answer, AnswerKind, AnswerRefusal, AnswerRefusalSlot, PktLines,
    };
    let [which, piece, answer @ ..] = data else {
        return;
    };
    let kind = [
        AnswerKind::Advertisement,
        AnswerKind::Command,
        AnswerKind::Fetch,
    ][usize::from(*which % 3)];
    let piece = usize::from(*piece).max(1);
    let whole = {
        let mut lines = PktLines::new(kind.pack_after(), GIT_ANSWER_BOUNDS);
        lines.take(answer)
    };
    let mut lines = PktLines::new(kind.pack_after(), GIT_ANSWER_BOUNDS);
    let pieces = answer.chunks(piece).try_for_each(|c| lines.take(c));
    assert_eq!(pieces, whole, "pieces of {piece} bytes");
    assert_eq!(
        git_answer_reference(kind.pack_after(), answer),
        whole,
        "the independent reading"
    );

    /// Hands out the answer `piece` bytes at a time.
    struct Pieces<'a>(&'a [u8], usize);
    impl std::io::Read for Pieces<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(out.len()).min(self.1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    let refused = AnswerRefusalSlot::default();
    let mut reader = Answer::with_bounds(
        Pieces(answer, piece),
        kind,
        far,
        refused.clone(),
        GIT_ANSWER_BOUNDS,
    );
    let mut out = Vec::new();
    let read = reader.read_to_end(&mut out);
    match whole {
        Ok(()) => {
            assert!(read.is_ok(), "{read:?}");
            assert_eq!(out, answer, "the answer handed on unchanged");
            assert_eq!(refused.get(), None);
        }
        Err(over) => {
            assert!(read.is_err(), "an answer over its bounds read whole");
            assert!(answer.starts_with(&out), "not a prefix of the answer");
            assert!(
                out.len() as u64 <= GIT_ANSWER_BOUNDS.bytes,
                "{} bytes",
                out.len()
            );
            assert_eq!(refused.get(), Some(AnswerRefusal { answer: kind, over }));
            assert!(
                std::io::BufRead::fill_buf(&mut reader).is_err(),
                "read again"
            );
        }
    }
}

/// Whether a JWKS entry may be kept, read independently of the key set parser: `use` absent or
/// `sig`, `key_ops` absent or a list holding `verify`, and a type and curve the server verifies.
#[cfg(feature = "http")]
fn oauth_key_allowed(entry: &Value) -> bool {
    let use_ok = match entry.get("use") {
        None => true,
        Some(value) => value == "sig",
    };
    let ops_ok = match entry.get("key_ops") {
        None => true,
        Some(Value::Array(ops)) => ops.contains(&Value::from("verify")),
        Some(_) => false,
    };
    let type_ok = matches!(
        (
            entry.get("kty").and_then(Value::as_str),
            entry.get("crv").and_then(Value::as_str),
        ),
        (Some("RSA"), _) | (Some("EC"), Some("P-256")) | (Some("OKP"), Some("Ed25519"))
    );
    use_ok && ops_ok && type_ok
}

#[cfg(test)]
#[path = "harness_seeds.rs"]
mod seeds;
