//! `oci:` sources end to end against Debian's `docker-registry` on loopback: `push` an image,
//! `prepare` it by digest into a corpus, `verify` and serve it, take the warm path with the
//! registry gone; `check` refuses references that are not pinned by digest; and hand-built hostile
//! images, copied into the registry with the real `skopeo`, are refused with their codes and
//! nothing is published.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use skillfold::format::bundle::Bundle;

use super::push::{Lab, Registry, push_to};
use super::util::{assert_stderr_has, skillfold, stderr, stdout};

const SKILL_MD: &str = "---\nname: pdf\ndescription: The pdf skill.\n---\n# pdf\n";

/// A descriptor with one `oci` source approving `pins`, in `dir`; returns its path.
fn oci_descriptor(dir: &Path, reference: &str, pins: &[(String, String)]) -> PathBuf {
    let mut yaml = format!(
        "skills:\n  - oci:\n      reference: {reference}\n      directory: corpus\n      plain_http: true\n      approved:\n"
    );
    for (name, hash) in pins {
        yaml.push_str(&format!(
            "        - {{ name: {name}, version: '1.0', hash: {hash} }}\n"
        ));
    }
    let path = dir.join("oci.yaml");
    fs_err::write(&path, yaml).expect("write");
    path
}

fn run(config: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec![args[0], "-c", config.to_str().expect("utf8")];
    all.extend_from_slice(&args[1..]);
    skillfold(&all)
}

#[test]
fn a_pushed_image_is_prepared_by_digest_verified_served_and_kept_without_the_registry() {
    let lab = Lab::new(
        &[
            ("pdf", &[("references/forms.md", "# Forms\n")]),
            ("docx", &[]),
        ],
        &[],
    );
    let registry = Registry::start(&[]);
    let pushed = push_to(&lab, &registry.repository("platform/skills:v1"), &[]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = stdout(&pushed).trim().to_owned();
    let pins = lab_pins(&lab);
    let config = oci_descriptor(lab.tmp.path(), &reference, &pins);

    let prepared = run(&config, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    assert_eq!(report["sources"][0]["kind"], "oci");
    assert_eq!(
        report["sources"][0]["commit"],
        reference.rsplit_once('@').expect("@").1
    );
    assert_eq!(report["fetches"], 1);
    let verified = run(&config, &["verify"]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    let loaded = run(&config, &["load", "pdf", "references/forms.md"]);
    assert_eq!(loaded.status.code(), Some(0), "{}", stderr(&loaded));
    let output: Value = serde_json::from_slice(&loaded.stdout).expect("json");
    assert_eq!(output["content"], "# Forms\n");
    let prompt = run(&config, &["prompt"]);
    assert_eq!(prompt.status.code(), Some(0), "{}", stderr(&prompt));
    assert!(
        stdout(&prompt).contains("<name>\npdf\n</name>"),
        "{}",
        stdout(&prompt)
    );

    // The registry is gone: the warm path verifies what is published and needs no network.
    drop(registry);
    let warm = run(&config, &["prepare", "--json"]);
    assert_eq!(warm.status.code(), Some(0), "{}", stderr(&warm));
    let report: Value = serde_json::from_slice(&warm.stdout).expect("json");
    assert_eq!(report["fetches"], 0);
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "up-to-date");

    // Another digest cannot be fetched now: retryable, and the published generation stays.
    let moved = oci_descriptor(
        lab.tmp.path(),
        &format!(
            "{}@sha256:{}",
            reference.split('@').next().expect("name"),
            "1".repeat(64)
        ),
        &pins,
    );
    let down = run(&moved, &["prepare"]);
    assert_eq!(down.status.code(), Some(1), "{}", stderr(&down));
    assert_stderr_has(&down, "[registry_unavailable]");
    assert!(lab.tmp.path().join("corpus/current/pdf/SKILL.md").exists());
}

/// The name and digest of each skill the lab approves (from its descriptor).
fn lab_pins(lab: &Lab) -> Vec<(String, String)> {
    let yaml = fs_err::read_to_string(lab.config()).expect("read");
    yaml.lines()
        .filter_map(|l| {
            let name = l.split("name: ").nth(1)?.split(',').next()?.to_owned();
            let hash = l.split("hash: ").nth(1)?.trim_end_matches(" }").to_owned();
            Some((name, hash))
        })
        .collect()
}

#[test]
fn check_refuses_references_not_pinned_by_digest() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pins = [("pdf".to_owned(), "0".repeat(64))];
    for (reference, code) in [
        (
            "registry.example.com/platform/skills:v3",
            "reference_not_pinned",
        ),
        (
            "registry.example.com/platform/skills:latest",
            "reference_not_pinned",
        ),
        (
            "registry.example.com/platform/skills",
            "reference_not_pinned",
        ),
        (
            &*format!(
                "registry.example.com/platform/skills:v3@sha256:{}",
                "a".repeat(64)
            ),
            "reference_not_pinned",
        ),
        (
            &*format!("platform/skills@sha256:{}", "a".repeat(64)),
            "invalid_reference",
        ),
        (
            &*format!(
                "registry.example.com/Platform/skills@sha256:{}",
                "a".repeat(64)
            ),
            "invalid_reference",
        ),
        (
            "registry.example.com/platform/skills@sha256:abc",
            "invalid_reference",
        ),
        (
            &*format!(
                "registry.example.com/platform/skills@md5:{}",
                "a".repeat(32)
            ),
            "invalid_reference",
        ),
    ] {
        let config = oci_descriptor(tmp.path(), reference, &pins);
        let out = run(&config, &["check"]);
        assert_eq!(out.status.code(), Some(2), "{reference}: {}", stderr(&out));
        assert_stderr_has(&out, &format!("[{code}]"));
    }
    let good = oci_descriptor(
        tmp.path(),
        &format!("127.0.0.1:5000/platform/skills@sha256:{}", "a".repeat(64)),
        &pins,
    );
    assert_eq!(run(&good, &["check"]).status.code(), Some(0));
}

/// A ustar entry with any type flag (for entries `push` never writes), its size field `declared`
/// when given.
fn entry(path: &str, kind: u8, bytes: &[u8], declared: Option<u64>) -> Vec<u8> {
    let size = declared.unwrap_or(bytes.len() as u64);
    let mut out = skillfold::prepare::oci::tar::ustar_header(path, "", kind, 0o644, size).to_vec();
    out.extend_from_slice(bytes);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", super::util::sha256(bytes))
}

/// An OCI layout holding one image whose single layer is the tar `layer` (gzipped here); returns
/// the layout directory.
fn hostile_layout(dir: &Path, layer: &[u8]) -> PathBuf {
    let out = dir.join("hostile");
    let blobs = out.join("blobs/sha256");
    fs_err::create_dir_all(&blobs).expect("mkdir");
    let put = |bytes: &[u8]| {
        let digest = sha256(bytes);
        fs_err::write(blobs.join(&digest[7..]), bytes).expect("write");
        digest
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(layer).expect("gzip");
    let layer = gz.finish().expect("gzip");
    let layer_digest = put(&layer);
    let config = json!({"architecture": "amd64", "os": "linux", "config": {},
        "rootfs": {"type": "layers", "diff_ids": [sha256(&[])]}})
    .to_string()
    .into_bytes();
    let config_digest = put(&config);
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer.len()}],
    })
    .to_string()
    .into_bytes();
    let manifest_digest = put(&manifest);
    fs_err::write(out.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).expect("write");
    fs_err::write(
        out.join("index.json"),
        json!({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest_digest, "size": manifest.len(), "annotations": {"org.opencontainers.image.ref.name": "x"}}]})
        .to_string(),
    )
    .expect("write");
    out
}

/// Copies the layout's image into the registry with skopeo; returns the pinned reference.
fn copy_in(layout: &Path, registry: &Registry, name: &str) -> String {
    let copied = Command::new("skopeo")
        .args(["copy", "--dest-tls-verify=false", "--preserve-digests"])
        .arg(format!("oci:{}:x", layout.display()))
        .arg(format!(
            "docker://{}",
            registry.repository(&format!("{name}:x"))
        ))
        .output()
        .expect("skopeo (scripts/test installs it)");
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    let index: Value =
        serde_json::from_slice(&fs_err::read(layout.join("index.json")).expect("index"))
            .expect("json");
    format!(
        "{}@{}",
        registry.repository(name),
        index["manifests"][0]["digest"].as_str().expect("digest")
    )
}

#[test]
fn hostile_images_are_refused_and_nothing_is_published() {
    let registry = Registry::start(&[]);
    let skill = entry("pdf/SKILL.md", b'0', SKILL_MD.as_bytes(), None);
    let digest = {
        let tmp = tempfile::tempdir().expect("tempdir");
        fs_err::create_dir(tmp.path().join("pdf")).expect("mkdir");
        fs_err::write(tmp.path().join("pdf/SKILL.md"), SKILL_MD).expect("write");
        Bundle::read_dir(&tmp.path().join("pdf"))
            .expect("valid")
            .digest()
            .to_string()
    };
    let end = vec![0u8; 1024];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "symlink",
            [
                skill.clone(),
                entry("pdf/link", b'2', b"", None),
                end.clone(),
            ]
            .concat(),
            "link_in_layer",
        ),
        (
            "hardlink",
            [
                skill.clone(),
                entry("other/hard", b'1', b"", None),
                end.clone(),
            ]
            .concat(),
            "link_in_layer",
        ),
        (
            "dotdot",
            [
                skill.clone(),
                entry("pdf/../../escape", b'0', b"x", None),
                end.clone(),
            ]
            .concat(),
            "unsafe_path_in_layer",
        ),
        (
            "absolute",
            [
                entry("/etc/cron.d/x", b'0', b"x", None),
                skill.clone(),
                end.clone(),
            ]
            .concat(),
            "unsafe_path_in_layer",
        ),
        (
            "device",
            [
                skill.clone(),
                entry("pdf/dev", b'3', b"", None),
                end.clone(),
            ]
            .concat(),
            "special_file_in_layer",
        ),
        (
            "fifo",
            [
                skill.clone(),
                entry("pdf/fifo", b'6', b"", None),
                end.clone(),
            ]
            .concat(),
            "special_file_in_layer",
        ),
        (
            "declared",
            [
                skill.clone(),
                entry("pdf/big.md", b'0', b"x", Some(1 << 32)),
            ]
            .concat(),
            "malformed_layer",
        ),
        (
            "duplicate",
            [skill.clone(), skill.clone(), end.clone()].concat(),
            "duplicate_in_layer",
        ),
        (
            "bomb",
            vec![
                0u8;
                usize::try_from(skillfold::prepare::oci::unpack::MAX_LAYER_TAR_BYTES)
                    .expect("fits")
                    + 4096
            ],
            "layer_too_large",
        ),
    ];
    for (name, tar, code) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let layout = hostile_layout(tmp.path(), &tar);
        let reference = copy_in(&layout, &registry, &format!("hostile/{name}"));
        let config = oci_descriptor(
            tmp.path(),
            &reference,
            &[("pdf".to_owned(), digest.clone())],
        );
        let refused = run(&config, &["prepare"]);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{name}: {}",
            stderr(&refused)
        );
        assert_stderr_has(&refused, &format!("[{code}]"));
        assert!(
            !tmp.path().join("corpus/current").exists(),
            "{name}: nothing published"
        );
    }

    // An image index where an image is pinned.
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = hostile_layout(tmp.path(), &[skill.clone(), end.clone()].concat());
    let image = copy_in(&layout, &registry, "hostile/indexed");
    let (_, image_digest) = image.split_once('@').expect("@");
    let index = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": image_digest,
        "size": fs_err::metadata(layout.join("blobs/sha256").join(&image_digest[7..])).expect("size").len(),
        "platform": {"architecture": "amd64", "os": "linux"}}]})
    .to_string();
    let put = Command::new("curl")
        .args([
            "-sf",
            "-X",
            "PUT",
            "-H",
            "Content-Type: application/vnd.oci.image.index.v1+json",
            "--data-binary",
        ])
        .arg(&index)
        .arg(format!(
            "http://127.0.0.1:{}/v2/hostile/indexed/manifests/idx",
            registry.port
        ))
        .status()
        .expect("curl");
    assert!(put.success());
    let config = oci_descriptor(
        tmp.path(),
        &format!(
            "{}@{}",
            registry.repository("hostile/indexed"),
            sha256(index.as_bytes())
        ),
        &[("pdf".to_owned(), digest.clone())],
    );
    let refused = run(&config, &["prepare"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[image_index]");

    // The image holds a valid `pdf`, but the descriptor approves one that is not there.
    let config = oci_descriptor(
        tmp.path(),
        &image,
        &[
            ("pdf".to_owned(), digest),
            ("docx".to_owned(), "0".repeat(64)),
        ],
    );
    let refused = run(&config, &["prepare"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[bundle_not_in_image]");
    assert!(!tmp.path().join("corpus/current").exists());
}

#[test]
fn sources_of_one_image_share_one_pull() {
    let lab = Lab::new(&[("pdf", &[]), ("docx", &[])], &[]);
    let registry = Registry::start(&[]);
    let pushed = push_to(&lab, &registry.repository("platform/skills"), &[]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = stdout(&pushed).trim().to_owned();
    let pins = lab_pins(&lab);
    let mut yaml = String::from("skills:\n");
    for (i, (name, hash)) in pins.iter().enumerate() {
        yaml.push_str(&format!(
            "  - oci:\n      reference: {reference}\n      directory: corpus{i}\n      plain_http: true\n      approved:\n        - {{ name: {name}, version: '1.0', hash: {hash} }}\n"
        ));
    }
    let config = lab.tmp.path().join("two.yaml");
    fs_err::write(&config, yaml).expect("write");
    let prepared = run(&config, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    assert_eq!(report["fetches"], 1, "{report}");
    for (i, (name, _)) in pins.iter().enumerate() {
        assert!(
            lab.tmp
                .path()
                .join(format!("corpus{i}/current/{name}/SKILL.md"))
                .exists()
        );
    }
}

fn prepare_with(config: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["prepare", "-c", config.to_str().expect("utf8")])
        .args(args)
        .env_remove("SKILLFOLD_REGISTRY_AUTH")
        .env("DOCKER_CONFIG", config.with_extension("no-docker"))
        .envs(env.iter().copied())
        .output()
        .expect("run skillfold")
}

#[test]
fn a_private_registry_needs_its_credentials_and_a_new_digest_can_be_rolled_back() {
    let registry = Registry::start(&[("puller", "pu11-Secret")]);
    let auth = [("SKILLFOLD_REGISTRY_AUTH", "puller:pu11-Secret")];
    let first = Lab::new(&[("pdf", &[("references/a.md", "first\n")])], &[]);
    let second = Lab::new(&[("pdf", &[("references/a.md", "second\n")])], &[]);
    let mut references = Vec::new();
    for lab in [&first, &second] {
        let pushed = push_to(lab, &registry.repository("private/skills"), &auth);
        assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
        references.push(stdout(&pushed).trim().to_owned());
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let config = oci_descriptor(dir.path(), &references[0], &lab_pins(&first));
    let anonymous = prepare_with(&config, &[], &[]);
    assert_eq!(anonymous.status.code(), Some(2), "{}", stderr(&anonymous));
    assert_stderr_has(&anonymous, "[registry_denied]");
    assert!(!String::from_utf8_lossy(&anonymous.stderr).contains("pu11-Secret"));
    let with = prepare_with(&config, &[], &auth);
    assert_eq!(with.status.code(), Some(0), "{}", stderr(&with));
    let published = |dir: &Path| {
        fs_err::read_to_string(dir.join("corpus/current/pdf/references/a.md")).expect("read")
    };
    assert_eq!(published(dir.path()), "first\n");

    // The next image, then back to the first with --rollback.
    let config = oci_descriptor(dir.path(), &references[1], &lab_pins(&second));
    let next = prepare_with(&config, &[], &auth);
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    assert_eq!(published(dir.path()), "second\n");
    let back = prepare_with(&config, &["--rollback", "--json"], &[]);
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    let report: Value = serde_json::from_slice(&back.stdout).expect("json");
    assert_eq!(report["sources"][0]["kind"], "oci");
    assert_eq!(
        report["sources"][0]["commit"],
        references[0].rsplit_once('@').expect("@").1
    );
    assert_eq!(published(dir.path()), "first\n");
}

#[test]
fn a_tls_registry_with_users_is_pushed_to_and_prepared_from_over_https() {
    let registry = Registry::start_tls(&[("ci", "tls-Pa55")]);
    let ca = registry.dir().join("ca.crt");
    let lab = Lab::new(&[("pdf", &[("references/a.md", "over https\n")])], &[]);
    let env = |trust: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skillfold"));
        cmd.env("SKILLFOLD_REGISTRY_AUTH", "ci:tls-Pa55")
            .env("DOCKER_CONFIG", lab.tmp.path().join("no-docker"));
        if trust {
            cmd.env("SSL_CERT_FILE", &ca);
        } else {
            cmd.env_remove("SSL_CERT_FILE");
        }
        cmd
    };
    let to = registry.repository("secure/skills:v1");
    let config = lab.config();
    let untrusted = env(false)
        .args(["push", "-c", config.to_str().expect("utf8"), "--to", &to])
        .output()
        .expect("run");
    assert_eq!(
        untrusted.status.code(),
        Some(1),
        "an unknown CA: {}",
        stderr(&untrusted)
    );
    let pushed = env(true)
        .args(["push", "-c", config.to_str().expect("utf8"), "--to", &to])
        .output()
        .expect("run");
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = stdout(&pushed).trim().to_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptor = oci_descriptor(dir.path(), &reference, &lab_pins(&lab));
    // Over HTTPS: the same descriptor without `plain_http`.
    let text = fs_err::read_to_string(&descriptor)
        .expect("read")
        .replace("      plain_http: true\n", "");
    fs_err::write(&descriptor, text).expect("write");
    let prepared = env(true)
        .args(["prepare", "-c", descriptor.to_str().expect("utf8")])
        .output()
        .expect("run");
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    assert_eq!(
        fs_err::read_to_string(dir.path().join("corpus/current/pdf/references/a.md"))
            .expect("read"),
        "over https\n"
    );
}

/// A registry that lies, played by a small Python HTTP server: it answers the manifest by the
/// pinned digest but serves a layer whose bytes are not the ones the manifest names, or answers
/// 503. Real registries cannot be made to do this; a proxy or a compromised mirror can.
const LYING_REGISTRY: &str = r#"
import http.server, json, sys, hashlib
manifest, layer, mode = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if mode == "503":
            self.send_response(503); self.send_header("Content-Length", "0"); self.end_headers(); return
        body = manifest if "/manifests/" in self.path else layer
        kind = "application/vnd.oci.image.manifest.v1+json" if "/manifests/" in self.path else "application/octet-stream"
        self.send_response(200); self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
server = http.server.HTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

#[test]
fn a_registry_that_serves_other_bytes_is_refused_and_one_that_fails_is_retried() {
    use std::io::BufRead as _;
    let skill = entry("pdf/SKILL.md", b'0', SKILL_MD.as_bytes(), None);
    let tar = [skill, vec![0u8; 1024]].concat();
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = hostile_layout(tmp.path(), &tar);
    let index: Value =
        serde_json::from_slice(&fs_err::read(layout.join("index.json")).expect("index"))
            .expect("json");
    let digest = index["manifests"][0]["digest"]
        .as_str()
        .expect("digest")
        .to_owned();
    let manifest_path = layout.join("blobs/sha256").join(&digest[7..]);
    let manifest: Value =
        serde_json::from_slice(&fs_err::read(&manifest_path).expect("manifest")).expect("json");
    let size = manifest["layers"][0]["size"].as_u64().expect("size") as usize;
    // Another layer of the same size: the digest the manifest names does not match it.
    let forged = tmp.path().join("forged");
    fs_err::write(&forged, vec![b'x'; size]).expect("write");
    let pin_digest = {
        let dir = tmp.path().join("pdf");
        fs_err::create_dir(&dir).expect("mkdir");
        fs_err::write(dir.join("SKILL.md"), SKILL_MD).expect("write");
        Bundle::read_dir(&dir).expect("valid").digest().to_string()
    };
    for (mode, status, code) in [
        ("lie", 2, "[digest_mismatch]"),
        ("503", 1, "[registry_unavailable]"),
    ] {
        let mut server = Command::new("python3")
            .args(["-c", LYING_REGISTRY])
            .arg(&manifest_path)
            .arg(&forged)
            .arg(mode)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        let mut port = String::new();
        std::io::BufReader::new(server.stdout.as_mut().expect("stdout"))
            .read_line(&mut port)
            .expect("port");
        let reference = format!("127.0.0.1:{}/liar/skills@{digest}", port.trim());
        let config = oci_descriptor(
            tmp.path(),
            &reference,
            &[("pdf".to_owned(), pin_digest.clone())],
        );
        let out = run(&config, &["prepare"]);
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(out.status.code(), Some(status), "{mode}: {}", stderr(&out));
        assert_stderr_has(&out, code);
        assert!(
            !tmp.path().join("corpus/current").exists(),
            "{mode}: nothing published"
        );
    }
}
