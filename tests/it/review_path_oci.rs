//! The review path is the prepare path for `oci:` sources (DESIGN §9): `outdated` and `update`
//! read each source's bundles from a candidate image with the reader `prepare` uses, against a
//! scripted registry on 127.0.0.1 serving images built here layer by layer. A layer annotated
//! with another bundle's name is not read for a source that does not approve that name (the
//! bundle is not in the image, in the review as in `prepare`), and two sources of one image are
//! each checked under their own limits profile.

use std::io::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::oci_source::{Recorder, entry};
use super::support::bin::{skillfold, stderr};

/// One layer: its bundle-name annotation, and its files (`name/path`, bytes).
type Layer<'a> = (Option<&'a str>, Vec<(String, Vec<u8>)>);

/// A source of the descriptor: its directory, limits profile and `(name, hash)` pins.
type Source<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// The `SKILL.md` of bundle `name`.
fn skill_md(name: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n").into_bytes()
}

/// The `chamvi-skill-bundle-v1` digest of `files` (relative paths and bytes).
fn bundle_digest(files: &[(&str, &[u8])]) -> String {
    let mut sorted = files.to_vec();
    sorted.sort();
    let mut framed = b"chamvi-skill-bundle-v1\n".to_vec();
    for (path, bytes) in sorted {
        framed.extend_from_slice(format!("{}:{path}{}:", path.len(), bytes.len()).as_bytes());
        framed.extend_from_slice(bytes);
    }
    super::support::world::sha256(&framed)
}

/// Images of repository `r` served by a [`Recorder`], and the routes so far.
struct Registry {
    recorder: Recorder,
    dir: tempfile::TempDir,
    routes: Vec<Value>,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            recorder: Recorder::start(None),
            dir: tempfile::tempdir().expect("tempdir"),
            routes: Vec::new(),
        }
    }

    /// Serves `bytes` as the blob or manifest at `path`; returns its digest.
    fn serve(&mut self, kind: &str, bytes: &[u8], headers: Value) -> String {
        let digest = format!("sha256:{}", super::support::world::sha256(bytes));
        let file = self.dir.path().join(&digest[7..]);
        fs_err::write(&file, bytes).expect("write");
        self.routes.push(
            json!({"path": format!("/v2/r/{kind}/{digest}"), "status": 200,
            "headers": headers, "file": file}),
        );
        digest
    }

    /// An image of `layers`, served by digest; returns the manifest digest.
    fn image(&mut self, layers: &[Layer<'_>]) -> String {
        let mut listed = Vec::new();
        for (annotation, files) in layers {
            let mut tar = Vec::new();
            for (path, bytes) in files {
                tar.extend(entry(path, b'0', bytes, None));
            }
            tar.extend([0u8; 1024]);
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&tar).expect("gzip");
            let gz = gz.finish().expect("gzip");
            let digest = self.serve("blobs", &gz, json!({}));
            let mut layer = json!({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": digest, "size": gz.len()});
            if let Some(name) = annotation {
                layer["annotations"] = json!({"io.skillfold.bundle.name": name});
            }
            listed.push(layer);
        }
        let config = br#"{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":[]}}"#;
        let config_digest = self.serve("blobs", config, json!({}));
        let manifest = json!({"schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest, "size": config.len()},
            "layers": listed})
        .to_string();
        self.serve(
            "manifests",
            manifest.as_bytes(),
            json!({"Content-Type": "application/vnd.oci.image.manifest.v1+json"}),
        )
    }

    /// Publishes the routes, the tag `stable` naming `digest`.
    fn publish(&self, stable: &str) {
        let mut routes = vec![json!({"path": "/v2/r/manifests/stable", "method": "HEAD",
            "status": 200, "headers": {"Docker-Content-Digest": stable,
            "Content-Type": "application/vnd.oci.image.manifest.v1+json"}})];
        routes.extend(self.routes.iter().cloned());
        self.recorder.routes(&Value::Array(routes));
    }

    /// A descriptor of sources of image `digest` following `stable`: `(directory, limits,
    /// [(name, hash)])` each.
    fn descriptor(&self, dir: &Path, digest: &str, sources: &[Source<'_>]) {
        let mut text = String::from("skills:\n");
        for (directory, limits, pins) in sources {
            text += &format!(
                "  - oci:\n      reference: {}/r@{digest}\n      directory: {directory}\n      plain_http: true\n      track: stable\n      limits: {limits}\n      approved:\n",
                self.recorder.host()
            );
            for (name, hash) in *pins {
                text += &format!("        - {{ name: {name}, version: '1.0', hash: {hash} }}\n");
            }
        }
        fs_err::write(dir.join("skillfold.yaml"), text).expect("write");
    }
}

fn run(dir: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let config = dir.join("skillfold.yaml");
    let mut all = vec![args[0], "-c", config.to_str().expect("utf8")];
    all.extend_from_slice(&args[1..]);
    let out = skillfold(&all);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report, stderr(&out))
}

fn files(name: &str, extra: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![(format!("{name}/SKILL.md"), skill_md(name))];
    files.extend(
        extra
            .iter()
            .map(|(p, b)| (format!("{name}/{p}"), b.to_vec())),
    );
    files
}

#[test]
fn a_layer_annotated_with_another_bundle_is_not_read_by_the_review_either() {
    let mut registry = Registry::new();
    let pdf = bundle_digest(&[("SKILL.md", &skill_md("pdf"))]);
    let pinned = registry.image(&[(Some("pdf"), files("pdf", &[]))]);
    // The head: `pdf/` changed, in a layer annotated as `docx`'s.
    let guide: &[u8] = b"# Guide\n";
    let head = registry.image(&[(Some("docx"), files("pdf", &[("guide.md", guide)]))]);
    registry.publish(&head);
    let work = tempfile::tempdir().expect("tempdir");
    registry.descriptor(
        work.path(),
        &pinned,
        &[("corpus", "chamvi", &[("pdf", &pdf)])],
    );
    let written = fs_err::read_to_string(work.path().join("skillfold.yaml")).expect("read");

    let (code, report, err) = run(work.path(), &["outdated", "--json"]);
    assert_eq!(code, Some(0), "{report} {err}");
    assert_eq!(
        report["sources"][0]["bundles"][0]["status"], "removed",
        "{report}"
    );
    assert_eq!(report["sources"][0]["available"], json!(["docx"]));

    let (code, report, err) = run(work.path(), &["update", "--write", "--json"]);
    assert_eq!(code, Some(2), "{report} {err}");
    let bundle = &report["sources"][0]["bundles"][0];
    assert_eq!(bundle["status"], "refused", "{report}");
    assert!(
        bundle["problems"][0]
            .as_str()
            .is_some_and(|p| p.ends_with("[bundle_not_in_image]")),
        "{report}"
    );
    assert_eq!(
        fs_err::read_to_string(work.path().join("skillfold.yaml")).expect("read"),
        written
    );

    // prepare of the head pinned by hand refuses it alike.
    let changed = bundle_digest(&[("SKILL.md", &skill_md("pdf")), ("guide.md", guide)]);
    registry.descriptor(
        work.path(),
        &head,
        &[("corpus", "chamvi", &[("pdf", &changed)])],
    );
    let (code, report, err) = run(work.path(), &["prepare", "--json"]);
    assert_eq!(code, Some(2), "{report} {err}");
    let error = &report["sources"][0]["error"];
    assert_eq!(error["code"], "verification_failed", "{report}");
    assert!(
        error["details"]
            .to_string()
            .contains("[bundle_not_in_image]"),
        "{report}"
    );
}

#[test]
fn sources_of_one_image_are_each_checked_under_their_own_limits() {
    let mut registry = Registry::new();
    let pdf = bundle_digest(&[("SKILL.md", &skill_md("pdf"))]);
    let pinned = registry.image(&[(Some("pdf"), files("pdf", &[]))]);
    // The head: a 200 KiB supporting file, over `chamvi`'s 128 KiB, within `extended`.
    let big = vec![b'x'; 200 * 1024];
    let head = registry.image(&[(Some("pdf"), files("pdf", &[("references/big.md", &big)]))]);
    registry.publish(&head);
    let changed = bundle_digest(&[("SKILL.md", &skill_md("pdf")), ("references/big.md", &big)]);
    let work = tempfile::tempdir().expect("tempdir");
    for order in [["extended", "chamvi"], ["chamvi", "extended"]] {
        registry.descriptor(
            work.path(),
            &pinned,
            &[
                ("a", order[0], &[("pdf", &pdf)]),
                ("b", order[1], &[("pdf", &pdf)]),
            ],
        );
        let (code, report, err) = run(work.path(), &["update", "--write", "--json"]);
        assert_eq!(code, Some(2), "{order:?}: {report} {err}");
        assert_eq!(report["written"], false);
        for (i, limits) in order.iter().enumerate() {
            let bundle = &report["sources"][i]["bundles"][0];
            if *limits == "extended" {
                assert_eq!(bundle["status"], "changed", "{order:?}: {report}");
                assert_eq!(bundle["new_hash"], changed.as_str());
            } else {
                assert_eq!(bundle["status"], "refused", "{order:?}: {report}");
                assert!(
                    bundle["problems"].to_string().contains("[file_too_large]"),
                    "{report}"
                );
            }
        }
    }
    // prepare agrees, source by source.
    registry.descriptor(
        work.path(),
        &head,
        &[
            ("a", "extended", &[("pdf", &changed)]),
            ("b", "chamvi", &[("pdf", &changed)]),
        ],
    );
    let (code, report, err) = run(work.path(), &["prepare", "--json"]);
    assert_eq!(code, Some(2), "{report} {err}");
    assert!(report["sources"][0].get("error").is_none(), "{report}");
    assert!(
        report["sources"][1]["error"]["details"]
            .to_string()
            .contains("[file_too_large]"),
        "{report}"
    );
}
