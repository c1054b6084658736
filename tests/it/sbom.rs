//! `skillfold sbom --format cyclonedx|spdx` through the binary, on a corpus prepared from a Git
//! repository served on 127.0.0.1 and on the folder `install` wrote: each document validated by
//! a real reader (cyclonedx-python-lib's strict validator of the CycloneDX 1.6 schema, spdx-tools'
//! `pyspdxtools` for SPDX 2.3, pinned in tests/sbom/requirements.txt), the same bytes twice, and
//! exit 2 for a corpus never prepared or a folder without an install record.

use std::path::Path;
use std::process::{Command, Output};

use super::support::bin::{stderr, stdout};
use super::support::git::Repo;
use super::support::git_server::HttpServer;
use super::support::world::World;

struct Setup {
    world: World,
    _repo: Repo,
    _server: HttpServer,
    url: String,
    commit: String,
    alpha: String,
}

impl Setup {
    fn new() -> Setup {
        let repo = Repo::new();
        repo.bundle("alpha", "");
        repo.bundle("beta", "");
        let commit = repo.commit("alpha and beta");
        let server = HttpServer::start(repo.tmp.path());
        let url = server.url("remote.git");
        let world = World::new();
        let gamma = world.bundle(
            "local/gamma",
            "---\nname: gamma\ndescription: The gamma skill.\n---\n# gamma\n",
            &[("scripts/run.py", "print('gamma')\n")],
        );
        // `alpha` carries a verdict for its hash; `beta` one for another hash (void).
        let scan = |hash: &str| {
            format!(
                "scans: [{{ scanner: lint, digest: 'sha256:{}', verdict: pass, hash: {hash}, at: '2026-12-01T10:00:00Z', summary: '0 findings' }}]",
                "ab".repeat(32)
            )
        };
        world.descriptor(&format!(
            "scanners:\n  lint: {{ command: [python3, lint.py] }}\nskills:\n  - git:\n      source: {url}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      approved:\n        - {{ name: alpha, version: '1.0.0', hash: {}, {} }}\n        - {{ name: beta, version: '2.0', hash: {}, {} }}\n  - local: {{ name: gamma, version: '1.0', directory: local/gamma, hash: {gamma} }}\n",
            repo.digest("alpha"),
            scan(&repo.digest("alpha")),
            repo.digest("beta"),
            scan(&"0".repeat(64)),
        ));
        let alpha = repo.digest("alpha");
        Setup {
            world,
            _repo: repo,
            _server: server,
            url,
            commit,
            alpha,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.world.cli(args)
    }
}

#[track_caller]
fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Validates `document` (`cyclonedx` or `spdx`) with the pinned Python reader.
#[track_caller]
fn validate(kind: &str, document: &[u8], dir: &Path) {
    let python = super::support::venv::python_with("tests/sbom/requirements.txt", "sbom-venv");
    let file = dir.join(format!("sbom.{kind}.json"));
    fs_err::write(&file, document).expect("write the document");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sbom/validate.py");
    let out = Command::new(python)
        .arg(script)
        .arg(kind)
        .arg(&file)
        .output()
        .expect("run the validator");
    assert!(
        out.status.success(),
        "{kind} rejected:\n{}{}\n{}",
        stdout(&out),
        stderr(&out),
        String::from_utf8_lossy(document)
    );
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

#[test]
fn a_prepared_corpus_gives_valid_reproducible_cyclonedx_and_spdx() {
    let s = Setup::new();
    ok(&s.run(&["prepare"]));
    let tmp = tempfile::tempdir().expect("tempdir");

    let cdx = s.run(&["sbom", "--format", "cyclonedx"]);
    ok(&cdx);
    validate("cyclonedx", &cdx.stdout, tmp.path());
    assert_eq!(
        cdx.stdout,
        s.run(&["sbom", "--format", "cyclonedx"]).stdout,
        "the same corpus gives the same bytes"
    );
    let doc = json(&cdx);
    assert_eq!(doc["specVersion"], "1.6");
    assert!(doc["metadata"].get("timestamp").is_none());
    let components = doc["components"].as_array().expect("components");
    let names: Vec<&str> = components
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["alpha", "beta"], "local sources have no manifest");
    let alpha = &components[0];
    assert_eq!(alpha["bom-ref"], format!("skill:alpha@{}", s.alpha));
    assert_eq!(alpha["version"], "1.0.0");
    assert_eq!(alpha["externalReferences"][0]["type"], "vcs");
    assert_eq!(alpha["externalReferences"][0]["url"], s.url.as_str());
    // The verdict recorded for `alpha`'s hash is listed; `beta`'s, for another hash, is not.
    let property = |component: &serde_json::Value, name: &str| {
        component["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["value"].clone())
    };
    assert_eq!(
        property(alpha, "skillfold:scan:lint:verdict"),
        Some(serde_json::json!("pass"))
    );
    assert_eq!(
        property(alpha, "skillfold:scan:lint:summary"),
        Some(serde_json::json!("0 findings"))
    );
    assert_eq!(
        property(&components[1], "skillfold:scan:lint:verdict"),
        None
    );
    let text = stdout(&cdx);
    assert!(text.contains(&s.commit), "{text}");
    let guide = super::support::world::sha256(b"# Guide for alpha\n");
    let files = alpha["components"].as_array().expect("files");
    assert!(
        files
            .iter()
            .any(|f| f["name"] == "references/guide.md" && f["hashes"][0]["content"] == guide),
        "{files:?}"
    );

    let spdx = s.run(&["sbom", "--format", "spdx"]);
    ok(&spdx);
    validate("spdx", &spdx.stdout, tmp.path());
    assert_eq!(spdx.stdout, s.run(&["sbom", "--format", "spdx"]).stdout);
    let doc = json(&spdx);
    assert_eq!(doc["spdxVersion"], "SPDX-2.3");
    let created = doc["creationInfo"]["created"].as_str().expect("created");
    assert_ne!(created, "1970-01-01T00:00:00Z", "the generation's own time");
    let text = stdout(&spdx);
    assert!(text.contains(&guide) && text.contains(&s.commit), "{text}");
    let reviews: Vec<&serde_json::Value> = doc["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p.get("annotations"))
        .collect();
    assert_eq!(reviews.len(), 1, "alpha alone: {reviews:?}");
    assert_eq!(reviews[0][0]["annotationType"], "REVIEW");
    assert_eq!(reviews[0][0]["annotator"], "Tool: lint");
    assert_eq!(reviews[0][0]["annotationDate"], "2026-12-01T10:00:00Z");
    // A loopback address is no download location SPDX reads; `sourceInfo` names the source.
    assert!(
        text.contains(&format!("git source {}, commit {}", s.url, s.commit)),
        "{text}"
    );

    // Asked for, a time is written; the document still validates.
    let stamped = s.run(&["sbom", "--format", "cyclonedx", "--timestamp"]);
    ok(&stamped);
    assert!(json(&stamped)["metadata"]["timestamp"].is_string());
    validate("cyclonedx", &stamped.stdout, tmp.path());
}

#[test]
fn an_installed_folder_is_described_from_its_record() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", ".claude/skills"]));
    let tmp = tempfile::tempdir().expect("tempdir");
    for format in ["cyclonedx", "spdx"] {
        let out = s.run(&["sbom", "--format", format, "--installed", ".claude/skills"]);
        ok(&out);
        validate(format, &out.stdout, tmp.path());
        let again = s.run(&["sbom", "--format", format, "--installed", ".claude/skills"]);
        assert_eq!(out.stdout, again.stdout);
        let text = stdout(&out);
        for name in ["alpha", "beta", "gamma"] {
            assert!(text.contains(&format!("skill:{name}@")), "{text}");
        }
    }
    let spdx = json(&s.run(&["sbom", "--format", "spdx", "--installed", ".claude/skills"]));
    assert_eq!(spdx["creationInfo"]["created"], "1970-01-01T00:00:00Z");
}

#[test]
fn a_corpus_never_prepared_or_a_folder_without_a_record_exits_2() {
    let s = Setup::new();
    let out = s.run(&["sbom", "--format", "cyclonedx"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("[not_prepared]"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());

    fs_err::create_dir_all(s.world.path("empty")).expect("mkdir");
    for dir in ["empty", "absent"] {
        let out = s.run(&["sbom", "--format", "spdx", "--installed", dir]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("[install_record_invalid]"),
            "{}",
            stderr(&out)
        );
    }

    ok(&s.run(&["install", "--into", "bad"]));
    fs_err::write(s.world.path("bad/.skillfold-install.json"), "{}").expect("write");
    let out = s.run(&["sbom", "--format", "spdx", "--installed", "bad"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("[install_record_invalid]"));
}
