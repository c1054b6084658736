//! `outdated` and `update` on `oci:` sources that follow a tag (`track:`), against Debian's
//! `docker-registry` on loopback with images built by `skillfold push`: a tag moved to an image
//! where one bundle changed, one was removed and one was added is reported, reviewed, written
//! (only the digest inside `reference` and the pinned scalars, compared byte for byte) and then
//! prepared. Against a scripted registry ([`Recorder`]): a tag that still names the pin costs
//! one `HEAD` and nothing else; a registry whose `HEAD` names a digest its manifest does not
//! have, a `GET` whose bytes are not the digest it names, and an oversized manifest are refused.
//! Refusals made before anything is fetched: a `track` that is not an OCI tag, a `--to` that is no
//! target of a selected source, an untracked source named without `--to`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::oci_source::{Recorder, lab_pins};
use super::push::{Lab, Registry, push_to};
use super::support::bin::{assert_stderr_has, skillfold, skillfold_with, stderr, stdout};

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

/// The pin of `name` in `lab`.
fn pin_of(lab: &Lab, name: &str) -> String {
    lab_pins(lab)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, hash)| hash)
        .expect("a pin")
}

/// Pushes `lab` to `to` and returns the pinned reference `push` prints.
fn pushed(lab: &Lab, to: &str) -> String {
    let out = push_to(lab, to, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

fn digest_of(reference: &str) -> &str {
    reference.rsplit_once('@').expect("@").1
}

/// A descriptor in the operator's own style (comments, a double-quoted reference, a flow and a
/// block entry) pinning `reference`, following `track`, approving `pins`.
fn styled(reference: &str, track: &str, pins: &[(&str, &str)]) -> String {
    let mut text = format!(
        "# Skills from the platform registry (reviewed weekly)\n\
         skills:\n\
         \x20 - oci:\n\
         \x20     reference: \"{reference}\"   # v1, reviewed 2026-11-30\n\
         \x20     directory: corpus\n\
         \x20     plain_http: true\n\
         \x20     track: {track}\n\
         \x20     approved:\n"
    );
    for (i, (name, hash)) in pins.iter().enumerate() {
        if i % 2 == 0 {
            text += &format!("        - {{ name: {name}, version: '1.0', hash: {hash} }} # flow\n");
        } else {
            text += &format!(
                "        - name: {name}\n          version: \"1.0\"\n          hash: \"{hash}\"\n"
            );
        }
    }
    text
}

#[test]
fn a_moved_tag_is_reported_reviewed_written_and_then_prepared() {
    let registry = Registry::start(&[]);
    let v1 = Lab::new(&[("pdf", &[]), ("docx", &[])], &[]);
    let first = pushed(&v1, &registry.repository("platform/skills:v1"));
    assert_eq!(
        pushed(&v1, &registry.repository("platform/skills:stable")),
        first
    );
    // `stable` moves: pdf changed (a new file), docx removed, xlsx added.
    let v2 = Lab::new(
        &[
            ("pdf", &[("references/forms.md", "# Forms\n")]),
            ("xlsx", &[]),
        ],
        &[],
    );
    let second = pushed(&v2, &registry.repository("platform/skills:stable"));
    assert_ne!(digest_of(&second), digest_of(&first));
    let (pdf1, docx1, pdf2) = (pin_of(&v1, "pdf"), pin_of(&v1, "docx"), pin_of(&v2, "pdf"));
    assert_ne!(pdf1, pdf2);

    let work = tempfile::tempdir().expect("tempdir");
    let config = work.path().join("skillfold.yaml");
    let both = styled(&first, "stable", &[("pdf", &pdf1), ("docx", &docx1)]);
    fs_err::write(&config, &both).expect("write");

    // outdated: changed, removed, available; the same shapes as for Git.
    let out = skillfold_with(&config, &["outdated", "--json", "--available"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    let source = &report["sources"][0];
    assert_eq!(source["kind"], "oci", "{report}");
    assert_eq!(source["location"], "skills[0].oci");
    assert_eq!(source["tracking"], "stable");
    assert_eq!(source["pinned"], digest_of(&first));
    assert_eq!(source["head"], digest_of(&second));
    assert_eq!(source["bundles"][0]["status"], "changed", "{report}");
    assert_eq!(source["bundles"][0]["new_hash"], pdf2.as_str());
    assert_eq!(source["bundles"][1]["status"], "removed");
    assert_eq!(source["available"], json!(["xlsx"]));
    assert_stderr_has(
        &out,
        &format!("changed pdf@1.0: {} → {}", &pdf1[..12], &pdf2[..12]),
    );
    assert_stderr_has(&out, "removed docx@1.0: no folder at the head");
    assert_stderr_has(&out, "available xlsx");
    assert_stderr_has(
        &out,
        &format!(
            "platform/skills:stable: head {}, pinned sha256:",
            &digest_of(&second)[.."sha256:".len() + 12]
        ),
    );

    // update: docx cannot be pinned at the target, so nothing is written.
    let out = skillfold_with(&config, &["update", "--write"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "no folder `docx` at the target");
    assert_eq!(fs_err::read_to_string(&config).expect("read"), both);

    // Without docx: the review, then the rewrite of the digest and the pdf hash alone.
    let before = styled(&first, "stable", &[("pdf", &pdf1)]);
    fs_err::write(&config, &before).expect("write");
    let out = skillfold_with(&config, &["update"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let review = stdout(&out);
    assert!(
        review.contains(&format!("- From `{}`", digest_of(&first))),
        "{review}"
    );
    assert!(
        review.contains(&format!("- To `{}` (`stable`)", digest_of(&second))),
        "{review}"
    );
    assert!(review.contains("| `pdf` | 1.0 | "), "{review}");
    assert!(
        review.contains("- Added: `references/forms.md`"),
        "{review}"
    );
    assert!(
        review.contains("--- /dev/null\n+++ b/pdf/references/forms.md\n"),
        "{review}"
    );
    assert_stderr_has(&out, "review only: nothing written");
    assert_eq!(fs_err::read_to_string(&config).expect("read"), before);

    let out = skillfold_with(&config, &["update", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["sources"][0]["kind"], "oci");
    assert_eq!(report["sources"][0]["to"], digest_of(&second));
    assert_eq!(report["sources"][0]["reference"], "stable");
    assert_eq!(
        report["sources"][0]["bundles"][0]["new_hash"],
        pdf2.as_str()
    );
    assert_eq!(report["scalars"], 2, "{report}");

    let out = skillfold_with(&config, &["update", "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = format!(
        "# Skills from the platform registry (reviewed weekly)\n\
         skills:\n\
         \x20 - oci:\n\
         \x20     reference: \"{second}\"   # v1, reviewed 2026-11-30\n\
         \x20     directory: corpus\n\
         \x20     plain_http: true\n\
         \x20     track: stable\n\
         \x20     approved:\n\
         \x20       - {{ name: pdf, version: '1.0', hash: {pdf2} }} # flow\n"
    );
    assert_eq!(fs_err::read_to_string(&config).expect("read"), expected);

    // The new pins prepare and verify; the tag now names the pin.
    let out = skillfold_with(&config, &["prepare"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        work.path()
            .join("corpus/current/pdf/references/forms.md")
            .exists()
    );
    let out = skillfold_with(&config, &["verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = skillfold_with(&config, &["outdated", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["sources"][0]["head"], digest_of(&second));
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "unchanged");
    let out = skillfold_with(&config, &["update"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_stderr_has(&out, "nothing to update");

    // --to a tag and --to a digest: back to v1, review only.
    for to in ["v1", digest_of(&first)] {
        let out = skillfold_with(&config, &["update", "--to", to, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{to}: {}", stderr(&out));
        let report = json_of(&out);
        assert_eq!(report["sources"][0]["to"], digest_of(&first), "{report}");
        assert_eq!(
            report["sources"][0]["bundles"][0]["new_hash"],
            pdf1.as_str()
        );
        assert_eq!(report["written"], false);
    }
    assert_eq!(fs_err::read_to_string(&config).expect("read"), expected);

    // A tag the repository does not have: a configuration error, for both commands.
    let missing = work.path().join("missing.yaml");
    fs_err::write(&missing, styled(&second, "nothere", &[("pdf", &pdf2)])).expect("write");
    for command in ["outdated", "update"] {
        let out = skillfold_with(&missing, &[command]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert_stderr_has(&out, "has no tag `nothere` in `platform/skills`");
        assert_stderr_has(&out, "[tag_not_found]");
    }
    let out = skillfold_with(&config, &["update", "--to", "v9"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[tag_not_found]");
}

/// A one-bundle image as files, from `skillfold push --oci-layout`: the manifest (its path and
/// digest), its layer (path and digest) and the bundle's pin.
struct Image {
    lab: Lab,
    manifest: PathBuf,
    digest: String,
    layer: PathBuf,
    layer_digest: String,
}

impl Image {
    fn new() -> Image {
        let lab = Lab::new(&[("pdf", &[])], &[]);
        let layout = lab.tmp.path().join("layout");
        let config = lab.config();
        let out = skillfold(&[
            "push",
            "-c",
            config.to_str().expect("utf8"),
            "--oci-layout",
            layout.to_str().expect("utf8"),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let read = |path: &Path| -> Value {
            serde_json::from_slice(&fs_err::read(path).expect("read")).expect("json")
        };
        let blob = |digest: &str| layout.join("blobs/sha256").join(&digest[7..]);
        let index = read(&layout.join("index.json"));
        let digest = index["manifests"][0]["digest"]
            .as_str()
            .expect("digest")
            .to_owned();
        let manifest = blob(&digest);
        let layer_digest = read(&manifest)["layers"][0]["digest"]
            .as_str()
            .expect("digest")
            .to_owned();
        Image {
            layer: blob(&layer_digest),
            lab,
            manifest,
            digest,
            layer_digest,
        }
    }

    fn pin(&self) -> String {
        pin_of(&self.lab, "pdf")
    }

    /// A descriptor pinning `digest` of `host`'s repository `r`, following `stable`.
    fn descriptor(&self, host: &str, digest: &str) -> PathBuf {
        let path = self.lab.tmp.path().join("track.yaml");
        let text = format!(
            "skills:\n  - oci:\n      reference: {host}/r@{digest}\n      directory: corpus\n      plain_http: true\n      track: stable\n      approved:\n        - {{ name: pdf, version: '1.0', hash: {} }}\n",
            self.pin()
        );
        fs_err::write(&path, text).expect("write");
        path
    }

    /// The routes serving the image by digest (its manifest and layer).
    fn by_digest(&self, as_digest: &str) -> Vec<Value> {
        vec![
            json!({"path": format!("/v2/r/manifests/{as_digest}"), "status": 200,
                "headers": {"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
                "file": self.manifest}),
            json!({"path": format!("/v2/r/blobs/{}", self.layer_digest), "status": 200, "file": self.layer}),
        ]
    }
}

/// `HEAD /v2/r/manifests/stable`, answered with `headers`.
fn head(headers: Value) -> Value {
    json!({"path": "/v2/r/manifests/stable", "method": "HEAD", "status": 200, "headers": headers})
}

#[test]
fn a_tag_is_resolved_by_its_manifest_digest_and_a_lying_or_oversized_answer_is_refused() {
    let image = Image::new();
    let registry = Recorder::start(None);
    let host = registry.host();
    let other = |c: char| format!("sha256:{}", c.to_string().repeat(64));

    // The tag names the pin: one HEAD, nothing else fetched, every bundle unchanged.
    registry.routes(&json!([head(
        json!({"Docker-Content-Digest": image.digest})
    )]));
    let config = image.descriptor(&host, &image.digest);
    let out = skillfold_with(&config, &["outdated", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["sources"][0]["head"], image.digest.as_str());
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "unchanged");
    assert_eq!(
        registry.methods(),
        [("HEAD".to_owned(), "/v2/r/manifests/stable".to_owned())]
    );
    // Two sources following one tag of one repository share that look-up.
    let text = fs_err::read_to_string(&config).expect("read");
    let (_, entry) = text.split_once("skills:\n").expect("skills");
    let two = image.lab.tmp.path().join("two.yaml");
    fs_err::write(
        &two,
        format!(
            "{text}agents:\n  writer:\n    skills:\n{}",
            entry
                .replace("corpus", "other")
                .replace("\n  ", "\n      ")
                .replacen("  - ", "      - ", 1)
        ),
    )
    .expect("write");
    let out = skillfold_with(&two, &["outdated", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json_of(&out)["sources"].as_array().expect("sources").len(),
        2
    );
    assert_eq!(
        registry.methods().len(),
        2,
        "one more HEAD for both sources"
    );

    // No digest on the HEAD: the GET's bytes give it, and that image is pulled and compared.
    let manifest = json!({"path": "/v2/r/manifests/stable", "status": 200,
        "headers": {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, "file": image.manifest});
    let mut routes = vec![head(json!({})), manifest.clone()];
    routes.extend(image.by_digest(&image.digest));
    registry.routes(&Value::Array(routes));
    let config = image.descriptor(&host, &other('1'));
    let out = skillfold_with(&config, &["outdated", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(
        report["sources"][0]["head"],
        image.digest.as_str(),
        "{report}"
    );
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "unchanged");

    // A HEAD naming a digest whose manifest has another: refused when it is pulled.
    let mut routes = vec![head(json!({"Docker-Content-Digest": other('2')}))];
    routes.extend(image.by_digest(&other('2')));
    registry.routes(&Value::Array(routes));
    let config = image.descriptor(&host, &image.digest);
    for command in ["outdated", "update"] {
        let out = skillfold_with(&config, &[command]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert_stderr_has(&out, "[digest_mismatch]");
    }

    // A GET whose bytes are not the digest it names.
    let mut lying = manifest.clone();
    lying["headers"]["Docker-Content-Digest"] = json!(other('3'));
    registry.routes(&json!([head(json!({})), lying]));
    let out = skillfold_with(&config, &["outdated"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(
        &out,
        &format!("names the manifest of {host}/r:stable {}", other('3')),
    );
    assert_stderr_has(&out, "[digest_mismatch]");

    // A HEAD digest that is not a digest.
    registry.routes(&json!([head(
        json!({"Docker-Content-Digest": "sha256:abc"})
    )]));
    let out = skillfold_with(&config, &["outdated"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[malformed_image]");

    // An oversized manifest, with and without a length: refused at its bound (4 MiB).
    let big = image.lab.tmp.path().join("big.json");
    fs_err::write(&big, vec![b' '; 4 * 1024 * 1024 + 1]).expect("write");
    for length in [true, false] {
        registry.routes(&json!([head(json!({})), {"path": "/v2/r/manifests/stable",
            "status": 200, "file": big, "length": length}]));
        let out = skillfold_with(&config, &["outdated"]);
        assert_eq!(out.status.code(), Some(2), "{length}: {}", stderr(&out));
        assert_stderr_has(&out, "[image_too_large]");
    }

    // A tag the registry does not have.
    registry.routes(&json!([]));
    let out = skillfold_with(&config, &["outdated"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[tag_not_found]");
}

#[test]
fn a_registry_that_does_not_answer_head_is_read_with_a_get() {
    let image = Image::new();
    let registry = Recorder::start(None);
    let host = registry.host();
    let config = image.descriptor(&host, &image.digest);
    let manifest = json!({"path": "/v2/r/manifests/stable", "status": 200,
        "headers": {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, "file": image.manifest});
    // 405 Method Not Allowed and 501 Not Implemented: the registry does not answer `HEAD`, so
    // the tag is read as for a `HEAD` without a digest, not refused or retried for ever.
    for status in [405, 501] {
        let mut head = head(json!({}));
        head["status"] = json!(status);
        registry.routes(&json!([head, manifest]));
        let before = registry.methods().len();
        let out = skillfold_with(&config, &["outdated", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{status}: {}", stderr(&out));
        let report = json_of(&out);
        assert_eq!(
            report["sources"][0]["head"],
            image.digest.as_str(),
            "{status}"
        );
        assert_eq!(report["sources"][0]["bundles"][0]["status"], "unchanged");
        let tag = "/v2/r/manifests/stable".to_owned();
        assert_eq!(
            registry.methods()[before..],
            [("HEAD".to_owned(), tag.clone()), ("GET".to_owned(), tag)],
            "{status}"
        );
    }
    // Any other failure of the `HEAD` is final: a 500 stays retryable, a 400 a refusal.
    for (status, exit, code) in [
        (500, 1, "registry_unavailable"),
        (400, 2, "registry_refused"),
    ] {
        let mut head = head(json!({}));
        head["status"] = json!(status);
        registry.routes(&json!([head, manifest]));
        let before = registry.methods().len();
        let out = skillfold_with(&config, &["outdated"]);
        assert_eq!(out.status.code(), Some(exit), "{status}: {}", stderr(&out));
        assert_stderr_has(&out, &format!("[{code}]"));
        assert_eq!(registry.methods().len(), before + 1, "{status}: no GET");
    }
}

#[test]
fn a_track_that_is_not_a_tag_and_a_target_that_does_not_fit_are_refused_before_any_fetch() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let digest = format!("sha256:{}", "0".repeat(64));
    let hash = "1".repeat(64);
    let oci = |track: Option<&str>| {
        let mut text = format!(
            "  - oci:\n      reference: 127.0.0.1:9/r@{digest}\n      directory: images\n      plain_http: true\n"
        );
        if let Some(track) = track {
            text += &format!("      track: {track}\n");
        }
        text +=
            &format!("      approved:\n        - {{ name: pdf, version: '1.0', hash: {hash} }}\n");
        text
    };
    let write = |name: &str, text: String| {
        let path = tmp.path().join(name);
        fs_err::write(&path, text).expect("write");
        path
    };
    for bad in ["'.hidden'", "'a/b'", "'v1:x'", "''", &"a".repeat(129)] {
        let config = write("bad.yaml", format!("skills:\n{}", oci(Some(bad))));
        let out = skillfold_with(&config, &["check"]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert_stderr_has(&out, "skills[0].oci.track");
        assert_stderr_has(&out, "is not an OCI tag: a tag is 1 to 128 characters");
        assert_stderr_has(&out, "[invalid_track]");
    }

    // A Git source (its server is never reached) beside an untracked OCI source.
    let git = format!(
        "  - git:\n      source: https://127.0.0.1:9/s.git\n      revision: {}\n      directory: corpus\n      approved:\n        - {{ name: docx, version: '1.0', hash: {hash} }}\n",
        "a".repeat(40)
    );
    let config = write("mixed.yaml", format!("skills:\n{git}{}", oci(None)));
    for (args, code) in [
        (vec!["update", "--to", "not a tag"], "[invalid_target]"),
        (vec!["update", "--to", &digest], "[invalid_target]"),
        (
            vec!["update", "--to", "sha256:abc", "skills[1].oci"],
            "[invalid_target]",
        ),
        (
            vec!["update", "--to", "abcdef012345", "docx"],
            "[invalid_target]",
        ),
        (vec!["update", "skills[1].oci"], "[not_tracked]"),
        (vec!["update", "pdf", "--write"], "[not_tracked]"),
    ] {
        let out = skillfold_with(&config, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_stderr_has(&out, code);
    }
    let out = skillfold_with(&config, &["update", "--to", &digest]);
    assert_stderr_has(&out, "skills[0].git: `sha256:");
    let out = skillfold_with(&config, &["update", "--to", "abcdef012345", "docx"]);
    assert_stderr_has(&out, "abbreviated");

    // Not named, the untracked source is left out of `update` and reported by `outdated`.
    let out = skillfold_with(&config, &["update", "--json", "--fetch-timeout", "5"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    let sources = report["sources"].as_array().expect("sources");
    assert_eq!(sources.len(), 1, "{report}");
    assert_eq!(sources[0]["location"], "skills[0].git");
    let only = write("untracked.yaml", format!("skills:\n{}", oci(None)));
    let out = skillfold_with(&only, &["outdated", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["sources"][0]["kind"], "oci");
    assert!(report["sources"][0].get("tracking").is_none(), "{report}");
    assert_eq!(report["sources"][0]["bundles"], json!([]));
    assert_stderr_has(&out, "skills[0].oci: 127.0.0.1:9/r: not tracked");
}
