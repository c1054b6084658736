//! Limits profiles end to end, on synthetic bundles shaped like the public skills that the
//! `chamvi` bounds refuse (anthropics/skills: `docx`/`pptx`/`xlsx`, `canvas-design`, `claude-api`,
//! `theme-factory`, `web-artifacts-builder`), built here from scratch: each is refused under
//! `chamvi`, accepted under `extended` with the digest an independent implementation of the
//! framing (Python, below) computes, prepared from Git, verified, and served — body and text
//! references through `load_skill`, binary references refused with `binary_reference` and served
//! as MCP resource blobs. A bundle within the `chamvi` bounds behaves the same under both
//! profiles; a profile over a ceiling, an unknown key or profile is refused by `check`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::Engine as _;
use serde_json::{Value, json};

use super::support::bin::{skillfold, skillfold_in, stderr, stdout};
use super::support::git::Repo;
use super::support::world::{World as TempWorld, sha256};

/// Deterministic bytes that are not text: every byte value appears, NUL included.
fn binary(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

/// Text of exactly `len` bytes (lines of XML-ish ASCII).
fn text(len: usize, seed: usize) -> Vec<u8> {
    let line = format!("<xs:element name=\"e{seed}\" type=\"xs:string\"/>\n");
    line.bytes().cycle().take(len).collect()
}

fn skill_md(name: &str, body_len: usize) -> Vec<u8> {
    let mut out = format!("---\nname: {name}\ndescription: The {name} skill, shaped like a public skill.\n---\n# {name}\n\n").into_bytes();
    let pad = body_len.saturating_sub(out.len());
    out.extend(
        text(pad, 0)
            .iter()
            .map(|&b| if b == b'<' { b'(' } else { b }),
    );
    out
}

/// One synthetic bundle: its files, the codes `chamvi` refuses it with, a text reference to load
/// and its binary files.
struct Shape {
    name: &'static str,
    files: Vec<(String, Vec<u8>)>,
    refused_with: &'static [&'static str],
}

impl Shape {
    fn binaries(&self) -> Vec<&(String, Vec<u8>)> {
        self.files
            .iter()
            .filter(|(_, b)| std::str::from_utf8(b).is_err() || b.contains(&0))
            .collect()
    }

    /// The largest text supporting file.
    fn big_text(&self) -> &(String, Vec<u8>) {
        self.files
            .iter()
            .filter(|(p, b)| p != "SKILL.md" && std::str::from_utf8(b).is_ok() && !b.contains(&0))
            .max_by_key(|(_, b)| b.len())
            .expect("a text reference")
    }

    fn write_to(&self, dir: &Path) {
        for (path, bytes) in &self.files {
            let full = dir.join(path);
            fs_err::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            fs_err::write(full, bytes).expect("write");
        }
    }
}

fn shapes() -> Vec<Shape> {
    let mut office = vec![("SKILL.md".to_owned(), skill_md("office", 20_000))];
    for (i, len) in [242_277usize, 200_000, 152_039].into_iter().enumerate() {
        office.push((
            format!("scripts/office/schemas/ecma/s{i}.xsd"),
            text(len, i),
        ));
    }
    for i in 0..55 {
        office.push((
            format!("scripts/office/schemas/part{i:02}.xsd"),
            text(14_000, i),
        ));
    }
    let mut fonts = vec![("SKILL.md".to_owned(), skill_md("fonts", 11_000))];
    for i in 0..28 {
        // Half over the 128 KiB bound, half under it (refused as binary then), as in the original.
        let len = if i % 2 == 0 { 190_000 } else { 100_000 };
        fonts.push((format!("canvas-fonts/F{i:02}-Regular.ttf"), binary(len, i)));
    }
    for i in 0..54 {
        fonts.push((
            format!("canvas-fonts/F{i:02}-OFL.txt"),
            text(4_000, i as usize),
        ));
    }
    let mut api = vec![("SKILL.md".to_owned(), skill_md("api", 70_000))];
    for i in 0..65 {
        api.push((format!("shared/topic-{i:02}.md"), text(9_000, i)));
    }
    let mut showcase = vec![("SKILL.md".to_owned(), skill_md("showcase", 3_000))];
    showcase.push(("theme-showcase.pdf".to_owned(), {
        let mut pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
        pdf.extend(binary(124_000, 7));
        pdf
    }));
    for i in 0..11 {
        showcase.push((format!("themes/theme-{i}.md"), text(1_500, i)));
    }
    let mut artifacts = vec![("SKILL.md".to_owned(), skill_md("artifacts", 3_000))];
    artifacts.push(("scripts/shadcn-components.tar.gz".to_owned(), {
        let mut gz = vec![0x1f, 0x8b, 0x08, 0x00];
        gz.extend(binary(19_967, 9));
        gz
    }));
    artifacts.push((
        "scripts/init-artifact.sh".to_owned(),
        b"#!/bin/sh\necho init\n".to_vec(),
    ));
    vec![
        Shape {
            name: "office",
            files: office,
            refused_with: &["file_too_large", "bundle_too_large"],
        },
        Shape {
            name: "fonts",
            files: fonts,
            refused_with: &[
                "file_too_large",
                "too_many_files",
                "bundle_too_large",
                "nul_byte",
            ],
        },
        Shape {
            name: "api",
            files: api,
            refused_with: &["file_too_large", "too_many_files"],
        },
        Shape {
            name: "showcase",
            files: showcase,
            // A binary file is one problem.
            refused_with: &["nul_byte"],
        },
        Shape {
            name: "artifacts",
            files: artifacts,
            refused_with: &["nul_byte"],
        },
    ]
}

/// The `chamvi-skill-bundle-v1` digest of a directory, computed by an implementation of the
/// framing that shares no code with skillfold (Python's hashlib over an `os.walk`).
fn independent_digest(dir: &Path) -> String {
    const SCRIPT: &str = r#"
import hashlib, os, sys
root = sys.argv[1]
files = []
for d, _, names in os.walk(root):
    for n in names:
        p = os.path.join(d, n)
        with open(p, 'rb') as f:
            files.append((os.path.relpath(p, root).replace(os.sep, '/').encode(), f.read()))
files.sort()
h = hashlib.sha256(b'chamvi-skill-bundle-v1\n')
for path, content in files:
    h.update(b'%d:%s%d:%s' % (len(path), path, len(content), content))
print(h.hexdigest())
"#;
    let out = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(dir)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_owned()
}

/// The shape `name` written as a local source approved under `limits: extended`, with its
/// descriptor: the temporary directory, the shape and the bundle directory.
fn local_extended(name: &str) -> (tempfile::TempDir, Shape, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let shape = shapes()
        .into_iter()
        .find(|s| s.name == name)
        .expect("a shape");
    let dir = tmp.path().join(name);
    shape.write_to(&dir);
    let hash = independent_digest(&dir);
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        format!("skills:\n  - local: {{ name: {name}, version: '1', directory: {name}, hash: {hash}, limits: extended }}\n"),
    )
    .expect("write");
    (tmp, shape, dir)
}

#[test]
fn each_shape_is_refused_under_chamvi_and_accepted_under_extended_with_the_independent_digest() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for shape in shapes() {
        let dir = tmp.path().join(shape.name);
        shape.write_to(&dir);
        let dir_arg = dir.to_str().expect("utf8");

        let out = skillfold(&["hash", "--json", dir_arg]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            shape.name,
            stderr(&out)
        );
        // stderr shows the first ten problems; the report holds them all.
        let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON refusal");
        let codes: Vec<&str> = report["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .filter_map(|p| p["code"].as_str())
            .collect();
        for code in shape.refused_with {
            assert!(
                codes.contains(code),
                "{}: no {code} in {codes:?}",
                shape.name
            );
        }
        assert!(
            stderr(&out).contains("hint: `--limits extended`"),
            "{}: {}",
            shape.name,
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("missing_skill_md"),
            "{}: SKILL.md exists: {}",
            shape.name,
            stderr(&out)
        );

        let out = skillfold(&["hash", "--limits", "extended", dir_arg]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            shape.name,
            stderr(&out)
        );
        assert_eq!(
            stdout(&out).trim(),
            independent_digest(&dir),
            "{}",
            shape.name
        );

        let out = skillfold(&["hash", "--json", "--limits", "extended", dir_arg]);
        let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        assert_eq!(report["limits"], "extended");
        let binaries: Vec<&str> = report["files"]
            .as_array()
            .expect("files")
            .iter()
            .filter(|f| f["binary"] == true)
            .map(|f| f["path"].as_str().expect("path"))
            .collect();
        let expected: Vec<&str> = shape.binaries().iter().map(|(p, _)| p.as_str()).collect();
        let mut expected = expected;
        expected.sort();
        assert_eq!(binaries, expected, "{}", shape.name);
    }
}

#[test]
fn a_mapping_raises_only_the_bounds_it_names() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let shape = shapes()
        .into_iter()
        .find(|s| s.name == "showcase")
        .expect("showcase");
    let dir = tmp.path().join("showcase");
    shape.write_to(&dir);
    let dir = dir.to_str().expect("utf8");
    // Text only, larger files: the PDF is still refused as binary.
    let out = skillfold(&["hash", "--limits", "file_bytes=1MiB", dir]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("[nul_byte]"), "{}", stderr(&out));
    let out = skillfold(&["hash", "--limits", "binary=true", dir]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Over a ceiling, an unknown key or profile: a usage error naming it.
    for (bad, needle) in [
        ("file_bytes=17MiB", "ceiling"),
        ("colour=blue", "unknown limits key `colour`"),
        ("huge", "unknown limits profile `huge`"),
        ("files=10", "below the default"),
    ] {
        let out = skillfold(&["hash", "--limits", bad, dir]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{bad}: {}", stderr(&out));
    }
}

#[test]
fn a_bundle_within_the_chamvi_bounds_is_the_same_under_both_profiles() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("small");
    fs_err::create_dir_all(dir.join("references")).expect("mkdir");
    fs_err::write(
        dir.join("SKILL.md"),
        "---\nname: small\ndescription: A small skill.\n---\n# small\n",
    )
    .expect("write");
    fs_err::write(dir.join("references/a.md"), "# a\n").expect("write");
    let digests: Vec<String> = ["chamvi", "extended"]
        .iter()
        .map(|limits| {
            let out = skillfold(&["hash", "--limits", limits, dir.to_str().expect("utf8")]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            stdout(&out)
        })
        .collect();
    assert_eq!(digests[0], digests[1]);
    let hash = digests[0].trim();
    // The same tool answers under both profiles, byte for byte, with every file in memory.
    let answers: Vec<Vec<Value>> = ["", "\n    limits: extended"]
        .iter()
        .map(|limits| {
            let config = tmp.path().join("skillfold.yaml");
            fs_err::write(
                &config,
                format!("skills:\n  - local:\n    name: small\n    version: '1'\n    directory: small\n    hash: {hash}{limits}\n")
                    .replace("\n    name", "\n      name")
                    .replace("\n    version", "\n      version")
                    .replace("\n    directory", "\n      directory")
                    .replace("\n    hash", "\n      hash")
                    .replace("\n    limits", "\n      limits"),
            )
            .expect("write");
            let catalogue = catalogue(&config);
            let snapshot = catalogue.get("small").expect("served");
            assert!(snapshot.files().iter().all(|f| f.in_memory()));
            [json!({"name": "small", "reference": null}), json!({"name": "small", "reference": "references/a.md"})]
                .iter()
                .map(|input| catalogue.call("load_skill", input).expect("loads").0)
                .collect()
        })
        .collect();
    assert_eq!(answers[0], answers[1]);
    assert!(answers[0][0].get("binary_references").is_none());
}

fn catalogue(config: &Path) -> skillfold::Catalogue {
    let runtime = skillfold::Runtime::open(config).expect("open").runtime;
    let failures: Vec<String> = runtime.failures().map(ToString::to_string).collect();
    assert!(failures.is_empty(), "{failures:?}");
    runtime.catalogue(None).expect("catalogue")
}

#[test]
fn check_refuses_unknown_profiles_keys_and_values_over_a_ceiling() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let hash = "0".repeat(64);
    for (limits, code, needle) in [
        ("huge", "invalid_limits", "unknown limits profile `huge`"),
        (
            "{ colour: blue }",
            "invalid_limits",
            "unknown limits key `colour`",
        ),
        ("{ files: many }", "invalid_limits", "`many` is not a count"),
        ("{ files: 10 }", "invalid_limits", "below the default"),
        (
            "{ file_bytes: 17MiB }",
            "limits_over_ceiling",
            "over the ceiling of 16777216",
        ),
        (
            "{ bundle_bytes: 67108865 }",
            "limits_over_ceiling",
            "ceiling",
        ),
        ("{ skill_md_bytes: 2MiB }", "limits_over_ceiling", "ceiling"),
        ("{ files: 4097 }", "limits_over_ceiling", "ceiling of 4096"),
    ] {
        let config = tmp.path().join("skillfold.yaml");
        fs_err::write(
            &config,
            format!(
                "skills:\n  - local: {{ name: demo, version: '1', directory: demo, hash: {hash}, limits: {limits} }}\n"
            ),
        )
        .expect("write");
        let out = skillfold_in(tmp.path(), &["check", "-c", "skillfold.yaml"]);
        assert_eq!(out.status.code(), Some(2), "{limits}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("[{code}]")), "{limits}: {err}");
        assert!(err.contains(needle), "{limits}: {err}");
        assert!(err.contains("skills[0].local.limits"), "{limits}: {err}");
    }
    // The ceilings themselves are accepted.
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(
        &config,
        format!("skills:\n  - local: {{ name: demo, version: '1', directory: demo, hash: {hash}, limits: {{ skill_md_bytes: 1MiB, file_bytes: 16MiB, bundle_bytes: 64MiB, files: 4096, binary: true }} }}\n"),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["check", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Every shape under `skills/` of one commit, and a descriptor that approves them all.
///
/// A wrapper, not a [`TempWorld`]: it holds the repository (the source the descriptor pins) and
/// the shapes, and writes the descriptor for a given `limits` line.
struct World {
    repo: Repo,
    commit: String,
    world: TempWorld,
    shapes: Vec<Shape>,
}

impl std::ops::Deref for World {
    type Target = TempWorld;

    fn deref(&self) -> &TempWorld {
        &self.world
    }
}

impl World {
    fn new() -> World {
        let repo = Repo::new();
        let shapes = shapes();
        for shape in &shapes {
            shape.write_to(&repo.work.join("skills").join(shape.name));
        }
        let commit = repo.commit("large skills");
        World {
            repo,
            commit,
            world: TempWorld::new(),
            shapes,
        }
    }

    /// Writes the descriptor approving every shape, with `limits` (a line of the source, or
    /// nothing) before its approvals; returns its path.
    fn descriptor(&self, limits: &str) -> PathBuf {
        let mut yaml = format!(
            "skills:\n  - git:\n      source: {}\n      revision: {}\n      directory: corpus\n      root: skills\n{limits}      approved:\n",
            self.repo.file_url(),
            self.commit
        );
        for shape in &self.shapes {
            let digest = independent_digest(&self.repo.work.join("skills").join(shape.name));
            yaml.push_str(&format!(
                "        - {{ name: {}, version: '1', hash: {digest} }}\n",
                shape.name
            ));
        }
        self.world.descriptor(&yaml)
    }
}

#[test]
fn prepared_from_git_under_extended_verified_and_served() {
    let world = World::new();

    // Under the default profile, preparation refuses every shape and publishes nothing.
    world.descriptor("");
    let out = world.run(&["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!world.tmp.path().join("corpus/current").exists());

    let config = world.descriptor("      limits: extended\n");
    let out = world.run(&["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    for bundle in report["sources"][0]["bundles"].as_array().expect("bundles") {
        assert_eq!(bundle["limits"], "extended", "{bundle}");
        assert_eq!(bundle["status"], "published", "{bundle}");
    }
    let manifests = world.tmp.path().join("corpus/.skillfold/manifests");
    let manifest = fs_err::read_dir(&manifests)
        .expect("manifests")
        .next()
        .expect("one manifest")
        .expect("entry")
        .path();
    let manifest: Value =
        serde_json::from_str(&fs_err::read_to_string(manifest).expect("read")).expect("JSON");
    for bundle in manifest["bundles"].as_array().expect("bundles") {
        assert_eq!(bundle["limits"], "extended", "{}", bundle["pin"]);
    }
    let out = world.run(&["verify", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    for bundle in report["bundles"].as_array().expect("bundles") {
        assert_eq!(bundle["limits"], "extended", "{bundle}");
    }
    // Warm: the same profile is up to date; no fetch.
    let out = world.run(&["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(report["fetches"], 0);

    let catalogue = catalogue(&config);
    // What an MCP client of `skillfold serve` gets: every binary file read, and `skills/list`.
    let mut requests = vec![("skills/list".to_owned(), json!({}))];
    for shape in &world.shapes {
        for (path, _) in shape.binaries() {
            let uri = format!("skill://{}/{path}", shape.name);
            requests.push(("resources/read".to_owned(), json!({ "uri": uri })));
        }
    }
    let mut answers = mcp_answers(world.tmp.path(), &requests).into_iter();
    let listed_skills = answers.next().expect("skills/list")["result"]["skills"].take();
    let mut reads = answers;
    for shape in &world.shapes {
        let name = shape.name;
        let snapshot = catalogue.get(name).expect("served");
        // The body, and the largest text reference (read back from disk when over 128 KiB).
        let (body, _) = catalogue
            .call("load_skill", &json!({"name": name, "reference": null}))
            .expect("body");
        let skill_md = &shape
            .files
            .iter()
            .find(|(p, _)| p == "SKILL.md")
            .expect("SKILL.md")
            .1;
        assert!(skill_md.ends_with(body["content"].as_str().expect("content").as_bytes()));
        let (path, bytes) = shape.big_text();
        let (loaded, record) = catalogue
            .call("load_skill", &json!({"name": name, "reference": path}))
            .expect("text reference");
        assert_eq!(
            loaded["content"].as_str().expect("content").as_bytes(),
            bytes.as_slice()
        );
        assert_eq!(record.sha256, sha256(bytes), "{name}");
        let big = snapshot.reference(path).expect("listed");
        assert_eq!(big.in_memory(), bytes.len() <= 128 * 1024, "{name}: {path}");

        // Binary references: listed and marked, refused by load_skill, served as MCP blobs.
        let binaries = shape.binaries();
        let marked: Vec<&str> = body["binary_references"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().expect("path")).collect())
            .unwrap_or_default();
        assert_eq!(marked.len(), binaries.len(), "{name}");
        for (path, bytes) in binaries {
            assert!(marked.contains(&path.as_str()));
            assert!(!snapshot.reference(path).expect("listed").in_memory());
            let err = catalogue
                .call("load_skill", &json!({"name": name, "reference": path}))
                .expect_err("binary refused");
            assert_eq!(err.code.as_str(), "binary_reference");
            assert!(err.message.contains(&sha256(bytes)), "{}", err.message);
            assert!(
                err.message.contains(&format!("{} bytes", bytes.len())),
                "{}",
                err.message
            );

            let uri = format!("skill://{name}/{path}");
            let answer = reads.next().expect("an answer");
            assert!(answer["error"].is_null(), "a verified resource: {answer}");
            let contents = &answer["result"]["contents"][0];
            assert_eq!(contents["uri"], uri, "{answer}");
            let blob = contents["blob"].as_str().expect("a blob, not text");
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64");
            assert_eq!(&decoded, bytes, "{name}: {path}");
            assert!(contents.get("text").is_none());
            assert_ne!(contents["mimeType"], "text/plain");
            // skills/list lists it with its digest and size.
            let entry = listed_skills
                .as_array()
                .expect("skills")
                .iter()
                .find(|s| s["uri"] == format!("skill://{name}/SKILL.md"))
                .expect("listed skill");
            let listed = entry["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .find(|r| r["uri"] == uri)
                .expect("listed file");
            assert_eq!(listed["digest"], format!("sha256:{}", sha256(bytes)));
            assert_eq!(listed["size"], bytes.len());
        }
    }
}

/// The answers of `skillfold serve -c skillfold.yaml` in `dir`, over stdio, to `requests`
/// (method, params) sent after the handshake, in their order.
fn mcp_answers(dir: &Path, requests: &[(String, Value)]) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["serve", "-c", "skillfold.yaml"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    )
    .expect("write");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .expect("write");
    for (id, (method, params)) in requests.iter().enumerate() {
        let message = json!({"jsonrpc": "2.0", "id": id + 1, "method": method, "params": params});
        writeln!(stdin, "{message}").expect("write");
    }
    let mut answers: Vec<Value> = vec![Value::Null; requests.len()];
    let mut missing = requests.len();
    for line in lines {
        let message: Value = serde_json::from_str(&line.expect("line")).expect("JSON");
        if let Some(id) = message["id"].as_u64().filter(|&id| id >= 1) {
            let slot = &mut answers[usize::try_from(id).expect("id") - 1];
            if slot.is_null() {
                *slot = message;
                missing -= 1;
            }
        }
        if missing == 0 {
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    assert_eq!(missing, 0, "serve did not answer every request");
    answers
}

#[test]
fn the_profile_is_part_of_what_is_prepared_and_a_stricter_one_is_refused() {
    let world = World::new();
    world.descriptor("      limits: extended\n");
    let out = world.run(&["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let current = fs_err::read_link(world.tmp.path().join("corpus/current")).expect("current");
    // Back to the default: the published generation is not taken as up to date; the new
    // preparation refuses the bundles and leaves the published generation in place.
    world.descriptor("");
    let out = world.run(&["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[file_too_large]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs_err::read_link(world.tmp.path().join("corpus/current")).expect("current"),
        current
    );
    // And the runtime does not serve them under the default either.
    let out = world.run(&["verify", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_file_kept_on_disk_that_changes_is_never_served() {
    let (tmp, shape, dir) = local_extended("office");
    let catalogue = catalogue(&tmp.path().join("skillfold.yaml"));
    let (path, bytes) = shape.big_text();
    let input = json!({"name": "office", "reference": path});
    assert!(catalogue.call("load_skill", &input).is_ok());
    // Same size, other bytes: refused, not served.
    let mut changed = bytes.clone();
    changed[0] = b'#';
    fs_err::write(dir.join(path), &changed).expect("write");
    let err = catalogue.call("load_skill", &input).expect_err("changed");
    assert_eq!(err.code.as_str(), "reference_changed", "{}", err.message);
    // Grown: refused too (read at most the verified size).
    let mut grown = bytes.clone();
    grown.push(b'\n');
    fs_err::write(dir.join(path), &grown).expect("write");
    let err = catalogue.call("load_skill", &input).expect_err("grown");
    assert_eq!(err.code.as_str(), "reference_changed", "{}", err.message);
}

#[test]
fn pin_takes_a_profile_and_writes_it_into_the_entry() {
    let world = World::new();
    let url = world.repo.file_url();
    let args = |limits: Option<&str>| {
        let mut args = vec![
            "pin".to_owned(),
            "--source".to_owned(),
            url.clone(),
            "--revision".to_owned(),
            world.commit.clone(),
            "--root".to_owned(),
            "skills".to_owned(),
        ];
        if let Some(limits) = limits {
            args.extend(["--limits".to_owned(), limits.to_owned()]);
        }
        args.extend(["fonts".to_owned(), "showcase".to_owned()]);
        args
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        skillfold(&args)
    };
    let out = run(args(None));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(args(Some("extended")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let entry = stdout(&out);
    assert!(entry.contains("    limits: extended"), "{entry}");
    let fonts = independent_digest(&world.repo.work.join("skills/fonts"));
    assert!(entry.contains(&fonts), "{entry}");
}

#[test]
fn serve_answers_resources_read_of_a_binary_file_with_a_blob() {
    let (tmp, shape, _) = local_extended("artifacts");
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["serve", "-c", "skillfold.yaml"])
        .current_dir(tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let uri = "skill://artifacts/scripts/shadcn-components.tar.gz";
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri}}),
    ] {
        writeln!(stdin, "{message}").expect("write");
    }
    let mut answer = Value::Null;
    for line in lines.by_ref() {
        let message: Value = serde_json::from_str(&line.expect("line")).expect("JSON");
        if message["id"] == 2 {
            answer = message;
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    let contents = &answer["result"]["contents"][0];
    assert_eq!(contents["uri"], uri, "{answer}");
    assert_eq!(contents["mimeType"], "application/gzip", "{answer}");
    let blob = contents["blob"].as_str().expect("blob");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .expect("base64");
    let (_, bytes) = shape.binaries()[0];
    assert_eq!(&decoded, bytes);
}

#[test]
fn an_approved_helper_opens_the_binary_files_of_its_prepared_bundle() {
    const HELPER: &str =
        "import hashlib, sys\nprint(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())\n";
    let repo = Repo::new();
    let shape = shapes()
        .into_iter()
        .find(|s| s.name == "showcase")
        .expect("showcase");
    let dir = repo.work.join("skills/showcase");
    shape.write_to(&dir);
    fs_err::create_dir_all(dir.join("scripts")).expect("mkdir");
    fs_err::write(dir.join("scripts/digest.py"), HELPER).expect("write");
    let commit = repo.commit("showcase with a helper");
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      limits: extended\n      approved:\n        - {{ name: showcase, version: '1', hash: {} }}\nscripts:\n  python: {}\n  allowlist:\n    - {{ skill: showcase, script: scripts/digest.py, sha256: {} }}\n",
            repo.file_url(),
            independent_digest(&dir),
            super::runner::real_python().display(),
            sha256(HELPER.as_bytes()),
        ),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let catalogue = catalogue(&tmp.path().join("skillfold.yaml"));
    let (pdf_path, pdf) = shape.binaries()[0];
    let (result, _) = catalogue
        .call(
            "skill_run_script",
            &json!({"skill": "showcase", "script": "scripts/digest.py", "args": [pdf_path]}),
        )
        .expect("the helper runs");
    assert_eq!(
        result["stdout"].as_str().expect("stdout").trim(),
        sha256(pdf)
    );
}

#[test]
fn snapshots_hold_skill_md_and_at_most_the_chamvi_budget_of_text_in_memory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("budget");
    fs_err::create_dir_all(dir.join("references")).expect("mkdir");
    // A SKILL.md over 128 KiB (allowed by `extended`) and 2.4 MB of 100 KB text files.
    fs_err::write(dir.join("SKILL.md"), skill_md("budget", 200_000)).expect("write");
    for i in 0..24 {
        fs_err::write(dir.join(format!("references/r{i:02}.md")), text(100_000, i)).expect("write");
    }
    let hash = independent_digest(&dir);
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(
        &config,
        format!("skills:\n  - local: {{ name: budget, version: '1', directory: budget, hash: {hash}, limits: extended }}\n"),
    )
    .expect("write");
    let catalogue = catalogue(&config);
    let snapshot = catalogue.get("budget").expect("served");
    assert!(snapshot.file("SKILL.md").expect("SKILL.md").in_memory());
    let held: u64 = snapshot
        .files()
        .iter()
        .filter(|f| f.path() != "SKILL.md" && f.in_memory())
        .map(|f| f.size())
        .sum();
    assert!(held > 0 && held <= 1024 * 1024, "{held} bytes of text held");
    let on_disk: Vec<&str> = snapshot
        .files()
        .iter()
        .filter(|f| !f.in_memory())
        .map(|f| f.path())
        .collect();
    assert!(!on_disk.is_empty());
    // A file past the budget is still served, read again from disk.
    let (loaded, _) = catalogue
        .call(
            "load_skill",
            &json!({"name": "budget", "reference": on_disk[0]}),
        )
        .expect("served from disk");
    let expected = fs_err::read(dir.join(on_disk[0])).expect("read");
    assert_eq!(
        loaded["content"].as_str().expect("text").as_bytes(),
        expected.as_slice()
    );
}
