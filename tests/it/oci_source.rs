//! `oci:` sources end to end against Debian's `docker-registry` on loopback: `push` an image,
//! `prepare` it by digest into a corpus, `verify` and serve it, take the warm path with the
//! registry gone; `check` refuses references that are not pinned by digest; and hand-built hostile
//! images, copied into the registry with the real `skopeo`, are refused with their codes and
//! nothing is published.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use skillfold::Bundle;

use super::push::{Lab, Registry, push_to};
use super::support::bin::{assert_stderr_has, skillfold_with, stderr, stdout};

/// The most a layer may inflate to (docs/distribution.md: 128 MiB): the hard ceiling of a bundle
/// (64 MiB), a header and a PAX block for each of the 65,536 entries it may hold, and the two end
/// blocks.
const MAX_LAYER_TAR_BYTES: usize = 128 * 1024 * 1024 + 1024;

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

// The human summary of `prepare` names an OCI source by the image it pins
// (`REGISTRY/REPOSITORY@sha256:…`), as it names a Git source by URL and commit, never by its
// corpus directory — on success and on failure.
#[test]
fn the_prepare_summary_names_the_image_not_the_corpus_directory() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let registry = Registry::start(&[]);
    let pushed = push_to(&lab, &registry.repository("platform/summary"), &[]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = stdout(&pushed).trim().to_owned();
    let config = oci_descriptor(lab.tmp.path(), &reference, &lab_pins(&lab));
    let corpus = lab.tmp.path().join("corpus");

    let prepared = skillfold_with(&config, &["prepare"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    // The digest shortened as a generation id shortens it.
    let shown = &reference[..reference.find("@sha256:").expect("digest") + "@sha256:".len() + 12];
    assert_stderr_has(
        &prepared,
        &format!("ok: skills[0].oci: {shown}: pdf@1.0 published"),
    );
    assert!(
        !stderr(&prepared).contains(&*corpus.to_string_lossy()),
        "{}",
        stderr(&prepared)
    );

    // A bundle the image does not hold: the failure names the image too.
    let missing = oci_descriptor(
        lab.tmp.path(),
        &reference,
        &[("nothere".to_owned(), "0".repeat(64))],
    );
    let refused = skillfold_with(&missing, &["prepare"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, &format!("error: skills[0].oci: {shown}: "));
}

#[test]
fn a_pushed_image_is_prepared_by_digest_verified_served_and_kept_without_the_registry() {
    let lab = Lab::new(
        &[
            (
                "pdf",
                &[
                    ("references/forms.md", "# Forms\n"),
                    ("scripts/fill.sh", "#!/bin/sh\necho fill\n"),
                ],
            ),
            ("docx", &[]),
        ],
        &[],
    );
    // An executable helper (a local source keeps its directory's execute bit).
    let helper = lab.tmp.path().join("src0/pdf/scripts/fill.sh");
    fs_err::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let registry = Registry::start(&[]);
    let pushed = push_to(&lab, &registry.repository("platform/skills:v1"), &[]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = stdout(&pushed).trim().to_owned();
    let pins = lab_pins(&lab);
    let config = oci_descriptor(lab.tmp.path(), &reference, &pins);

    let prepared = skillfold_with(&config, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    assert_eq!(report["sources"][0]["kind"], "oci");
    assert_eq!(
        report["sources"][0]["commit"],
        reference.rsplit_once('@').expect("@").1
    );
    assert_eq!(report["fetches"], 1);
    // The image carries the helper's execute bit, so the corpus does too (`push` writes it
    // `0555` in the layer; `prepare` keeps it, never group/other write).
    let mode = |rel: &str| {
        use std::os::unix::fs::PermissionsExt as _;
        fs_err::metadata(lab.tmp.path().join("corpus/current/pdf").join(rel))
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("scripts/fill.sh"), 0o555);
    assert_eq!(mode("SKILL.md"), 0o444);
    let verified = skillfold_with(&config, &["verify"]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    let loaded = skillfold_with(&config, &["load", "pdf", "references/forms.md"]);
    assert_eq!(loaded.status.code(), Some(0), "{}", stderr(&loaded));
    let output: Value = serde_json::from_slice(&loaded.stdout).expect("json");
    assert_eq!(output["content"], "# Forms\n");
    let prompt = skillfold_with(&config, &["prompt"]);
    assert_eq!(prompt.status.code(), Some(0), "{}", stderr(&prompt));
    assert!(
        stdout(&prompt).contains("<name>\npdf\n</name>"),
        "{}",
        stdout(&prompt)
    );

    // The registry is gone: the warm path verifies what is published and needs no network.
    drop(registry);
    let warm = skillfold_with(&config, &["prepare", "--json"]);
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
    let down = skillfold_with(&moved, &["prepare"]);
    assert_eq!(down.status.code(), Some(1), "{}", stderr(&down));
    assert_stderr_has(&down, "[registry_unavailable]");
    assert!(lab.tmp.path().join("corpus/current/pdf/SKILL.md").exists());
}

/// The name and digest of each skill the lab approves (from its descriptor).
pub(super) fn lab_pins(lab: &Lab) -> Vec<(String, String)> {
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
        let out = skillfold_with(&config, &["check"]);
        assert_eq!(out.status.code(), Some(2), "{reference}: {}", stderr(&out));
        assert_stderr_has(&out, &format!("[{code}]"));
    }
    let good = oci_descriptor(
        tmp.path(),
        &format!("127.0.0.1:5000/platform/skills@sha256:{}", "a".repeat(64)),
        &pins,
    );
    assert_eq!(skillfold_with(&good, &["check"]).status.code(), Some(0));
}

/// A ustar entry with any type flag (for entries `push` never writes), its size field `declared`
/// when given.
pub(super) fn entry(path: &str, kind: u8, bytes: &[u8], declared: Option<u64>) -> Vec<u8> {
    let size = declared.unwrap_or(bytes.len() as u64);
    let mut out = ustar_header(path, kind, size).to_vec();
    out.extend_from_slice(bytes);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

/// One POSIX ustar header as `push` writes them (`path` of at most 100 bytes, no prefix): mode
/// 0644, owner, group and time 0, empty user and group names, the checksum filled in; `kind` is
/// the entry type flag.
fn ustar_header(path: &str, kind: u8, size: u64) -> [u8; 512] {
    fn put(field: &mut [u8], value: &[u8]) {
        field[..value.len()].copy_from_slice(value);
    }
    // Zero-padded octal digits followed by a NUL, filling the field.
    fn octal(field: &mut [u8], value: u64) {
        let digits = format!("{value:0width$o}", width = field.len() - 1);
        put(field, digits.as_bytes());
        field[field.len() - 1] = 0;
    }
    assert!(path.len() <= 100, "{path}: too long for a ustar name");
    let mut header = [0u8; 512];
    put(&mut header[0..100], path.as_bytes());
    octal(&mut header[100..108], 0o644);
    octal(&mut header[108..116], 0);
    octal(&mut header[116..124], 0);
    octal(&mut header[124..136], size);
    octal(&mut header[136..148], 0);
    header[156] = kind;
    put(&mut header[257..263], b"ustar\0");
    put(&mut header[263..265], b"00");
    octal(&mut header[329..337], 0);
    octal(&mut header[337..345], 0);
    // The checksum: the sum of the header's bytes with its own field read as spaces.
    header[148..156].fill(b' ');
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    header
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", super::support::world::sha256(bytes))
}

/// An OCI layout holding one image whose single layer is the tar `layer` (gzipped here); returns
/// the layout directory.
fn hostile_layout(dir: &Path, layer: &[u8]) -> PathBuf {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(layer).expect("gzip");
    layout_listing(dir, &gz.finish().expect("gzip"), 1)
}

/// An OCI layout holding one image that lists the gzip layer `layer` `times` times; returns the
/// layout directory.
fn layout_listing(dir: &Path, layer: &[u8], times: usize) -> PathBuf {
    let out = dir.join("hostile");
    let blobs = out.join("blobs/sha256");
    fs_err::create_dir_all(&blobs).expect("mkdir");
    let put = |bytes: &[u8]| {
        let digest = sha256(bytes);
        fs_err::write(blobs.join(&digest[7..]), bytes).expect("write");
        digest
    };
    let layer_digest = put(layer);
    let config = json!({"architecture": "amd64", "os": "linux", "config": {},
        "rootfs": {"type": "layers", "diff_ids": [sha256(&[])]}})
    .to_string()
    .into_bytes();
    let config_digest = put(&config);
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": vec![json!({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer.len()}); times],
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
            vec![0u8; MAX_LAYER_TAR_BYTES + 4096],
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
        let refused = skillfold_with(&config, &["prepare"]);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{name}: {}",
            stderr(&refused)
        );
        assert_stderr_has(&refused, &format!("[{code}]"));
        if name == "bomb" {
            assert_stderr_has(&refused, &format!("more than {MAX_LAYER_TAR_BYTES} bytes"));
        }
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
    let refused = skillfold_with(&config, &["prepare"]);
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
    let refused = skillfold_with(&config, &["prepare"]);
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
    let prepared = skillfold_with(&config, &["prepare", "--json"]);
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
    let scoped = format!("127.0.0.1:{}=puller:pu11-Secret", registry.port);
    let auth = [("SKILLFOLD_REGISTRY_AUTH", scoped.as_str())];
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
    // Naming no registry, the variable is sent to none, and the refusal says so.
    let unscoped = prepare_with(
        &config,
        &[],
        &[("SKILLFOLD_REGISTRY_AUTH", "puller:pu11-Secret")],
    );
    assert_eq!(unscoped.status.code(), Some(2), "{}", stderr(&unscoped));
    assert_stderr_has(&unscoped, "SKILLFOLD_REGISTRY_AUTH names no registry");
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
        cmd.env(
            "SKILLFOLD_REGISTRY_AUTH",
            format!("https://127.0.0.1:{}=ci:tls-Pa55", registry.port),
        )
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
        let out = skillfold_with(&config, &["prepare"]);
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

/// A registry (or a host a registry redirects to, or a token realm) played by a small Python
/// HTTP server that records the path and the `Authorization` header of every request it gets. It
/// answers from a route table the test writes (read again on every request, so routes can name
/// the ports of servers started after it): the first route whose path prefixes the request's and
/// whose `auth`, when given, equals the request's `Authorization` (`null`: none) answers with its
/// status, headers and body (`file`, or `text`; `length: false` sends no `Content-Length` and
/// ends the body by closing the connection). A route answers `GET` unless it names another
/// `method` (a request body is read and dropped; a `HEAD` answer has none). With a certificate and
/// key, it speaks HTTPS.
const RECORDING_SERVER: &str = r#"
import http.server, json, ssl, sys
routes_path, log_path = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        auth = self.headers.get("Authorization")
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with open(log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "authorization": auth, "method": self.command}) + "\n")
        for r in json.load(open(routes_path)):
            if (self.path.split("?")[0].startswith(r["path"]) and r.get("auth", auth) == auth
                    and r.get("method", "GET") == self.command):
                body = open(r["file"], "rb").read() if "file" in r else r.get("text", "").encode()
                self.send_response(r["status"])
                for k, v in r.get("headers", {}).items():
                    self.send_header(k, v)
                if r.get("length", True):
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                return
        self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    do_HEAD = do_POST = do_PUT = do_PATCH = do_GET
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
if len(sys.argv) > 3:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// One [`RECORDING_SERVER`] on a free loopback port; stopped on drop.
pub(super) struct Recorder {
    child: std::process::Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Recorder {
    /// Over HTTP, or over HTTPS with `server.crt` and `server.key` from `tls`.
    pub(super) fn start(tls: Option<&Path>) -> Recorder {
        use std::io::BufRead as _;
        let dir = tempfile::tempdir().expect("tempdir");
        fs_err::write(dir.path().join("routes.json"), "[]").expect("write");
        let mut command = Command::new("python3");
        command
            .args(["-c", RECORDING_SERVER])
            .arg(dir.path().join("routes.json"))
            .arg(dir.path().join("log.jsonl"));
        if let Some(tls) = tls {
            command
                .arg(tls.join("server.crt"))
                .arg(tls.join("server.key"));
        }
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        let mut port = String::new();
        std::io::BufReader::new(child.stdout.as_mut().expect("stdout"))
            .read_line(&mut port)
            .expect("port");
        let port = port.trim().parse().expect("a port");
        Recorder { child, port, dir }
    }

    pub(super) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(super) fn routes(&self, routes: &Value) {
        fs_err::write(self.dir.path().join("routes.json"), routes.to_string()).expect("write");
    }

    /// Every request so far: its path and its `Authorization` header.
    pub(super) fn requests(&self) -> Vec<(String, Option<String>)> {
        let log = fs_err::read_to_string(self.dir.path().join("log.jsonl")).unwrap_or_default();
        log.lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).expect("json");
                (
                    v["path"].as_str().expect("path").to_owned(),
                    v["authorization"].as_str().map(str::to_owned),
                )
            })
            .collect()
    }

    /// Every request so far: its method and path.
    pub(super) fn methods(&self) -> Vec<(String, String)> {
        let log = fs_err::read_to_string(self.dir.path().join("log.jsonl")).unwrap_or_default();
        log.lines()
            .map(|line| {
                let v: Value = serde_json::from_str(line).expect("json");
                (
                    v["method"].as_str().expect("method").to_owned(),
                    v["path"].as_str().expect("path").to_owned(),
                )
            })
            .collect()
    }

    /// Asserts the server was asked something and never received an `Authorization` header.
    #[track_caller]
    fn assert_got_no_credentials(&self, case: &str) {
        let requests = self.requests();
        assert!(
            !requests.is_empty(),
            "{case}: {} was never asked",
            self.host()
        );
        assert!(
            requests.iter().all(|(_, auth)| auth.is_none()),
            "{case}: {} received credentials: {requests:?}",
            self.host()
        );
    }
}

impl Recorder {
    /// Asserts the server was asked something and received no `Authorization` header but the
    /// `allowed` ones (tokens).
    #[track_caller]
    fn assert_got_no_credentials_but(&self, case: &str, allowed: &[&str]) {
        let requests = self.requests();
        assert!(
            !requests.is_empty(),
            "{case}: {} was never asked",
            self.host()
        );
        assert!(
            requests
                .iter()
                .all(|(_, auth)| auth.as_deref().is_none_or(|a| allowed.contains(&a))),
            "{case}: {} received credentials: {requests:?}",
            self.host()
        );
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A valid one-layer image of the `pdf` bundle as files: the manifest, its digest, the layer, its
/// digest and the bundle's pin.
struct ImageFiles {
    _dir: tempfile::TempDir,
    manifest: PathBuf,
    digest: String,
    layer: PathBuf,
    layer_digest: String,
    pin: String,
}

impl ImageFiles {
    fn new() -> ImageFiles {
        let dir = tempfile::tempdir().expect("tempdir");
        let tar = [
            entry("pdf/SKILL.md", b'0', SKILL_MD.as_bytes(), None),
            vec![0u8; 1024],
        ]
        .concat();
        let layout = hostile_layout(dir.path(), &tar);
        let index: Value =
            serde_json::from_slice(&fs_err::read(layout.join("index.json")).expect("index"))
                .expect("json");
        let digest = index["manifests"][0]["digest"]
            .as_str()
            .expect("digest")
            .to_owned();
        let manifest = layout.join("blobs/sha256").join(&digest[7..]);
        let parsed: Value =
            serde_json::from_slice(&fs_err::read(&manifest).expect("manifest")).expect("json");
        let layer_digest = parsed["layers"][0]["digest"]
            .as_str()
            .expect("digest")
            .to_owned();
        let layer = layout.join("blobs/sha256").join(&layer_digest[7..]);
        let bundle = dir.path().join("pdf");
        fs_err::create_dir(&bundle).expect("mkdir");
        fs_err::write(bundle.join("SKILL.md"), SKILL_MD).expect("write");
        let pin = Bundle::read_dir(&bundle)
            .expect("valid")
            .digest()
            .to_string();
        ImageFiles {
            _dir: dir,
            manifest,
            digest,
            layer,
            layer_digest,
            pin,
        }
    }

    /// The manifest and blob routes of a registry serving this image under `/v2/r/`, answering
    /// only requests carrying `auth` (when given); the blob answered by `blob` when given.
    fn routes(&self, auth: Option<&str>, blob: Option<Value>) -> Vec<Value> {
        let with = |mut route: Value| {
            if let Some(auth) = auth {
                route["auth"] = json!(auth);
            }
            route
        };
        vec![
            with(json!({"path": format!("/v2/r/manifests/{}", self.digest), "status": 200,
                "headers": {"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
                "file": self.manifest})),
            with(blob.unwrap_or_else(|| {
                json!({"path": format!("/v2/r/blobs/{}", self.layer_digest), "status": 200, "file": self.layer})
            })),
        ]
    }
}

/// `Basic base64(user:password)`.
fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// A Docker `config.json` with one `auths` entry under `key`, in a new folder of `dir`; returns
/// the folder (for `DOCKER_CONFIG`).
fn docker_config(dir: &Path, key: &str, user: &str, password: &str) -> PathBuf {
    use base64::Engine as _;
    let folder = dir.join(format!(
        "docker-{}",
        super::support::world::sha256(key.as_bytes())
    ));
    fs_err::create_dir_all(&folder).expect("mkdir");
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    fs_err::write(
        folder.join("config.json"),
        json!({"auths": {key: {"auth": auth}}}).to_string(),
    )
    .expect("write");
    folder
}

/// `prepare` of `config` with only the credentials `env` gives (no ambient Docker config).
fn prepare_env(config: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillfold"));
    command
        .args(["prepare", "-c", config.to_str().expect("utf8")])
        .env_remove("SKILLFOLD_REGISTRY_AUTH")
        .env("DOCKER_CONFIG", config.with_extension("no-docker"));
    command.envs(env.iter().copied());
    command.output().expect("run skillfold")
}

/// The ways of giving the credentials `user:password` for `registry` (`host:port`, over HTTP).
fn scoped_credentials(
    dir: &Path,
    registry: &str,
    user: &str,
    password: &str,
) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let docker = |key: String| {
        docker_config(dir, &key, user, password)
            .to_string_lossy()
            .into_owned()
    };
    vec![
        (
            "SKILLFOLD_REGISTRY_AUTH",
            vec![(
                "SKILLFOLD_REGISTRY_AUTH",
                format!("{registry}={user}:{password}"),
            )],
        ),
        (
            "config.json host:port",
            vec![("DOCKER_CONFIG", docker(registry.to_owned()))],
        ),
        (
            "config.json http://host:port",
            vec![("DOCKER_CONFIG", docker(format!("http://{registry}")))],
        ),
    ]
}

fn env_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn credentials_go_only_to_the_registry_origin_they_are_configured_for() {
    let registry = Registry::start(&[("puller", "pu11-Secret")]);
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let host = format!("127.0.0.1:{}", registry.port);
    let push_auth = format!("{host}=puller:pu11-Secret");
    let pushed = push_to(
        &lab,
        &registry.repository("private/skills"),
        &[("SKILLFOLD_REGISTRY_AUTH", push_auth.as_str())],
    );
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = stdout(&pushed).trim().to_owned();
    let (_, digest) = reference.split_once('@').expect("@");
    // A second registry on the same host, another port, that asks every client for credentials.
    let other = Recorder::start(None);
    other.routes(&json!([{"path": "/v2/", "status": 401,
        "headers": {"WWW-Authenticate": "Basic realm=\"other\""}}]));
    let pins = lab_pins(&lab);
    let mut yaml = String::from("skills:\n");
    for (directory, image) in [
        ("mine", reference.clone()),
        ("theirs", format!("{}/other/skills@{digest}", other.host())),
    ] {
        yaml.push_str(&format!(
            "  - oci:\n      reference: {image}\n      directory: {directory}\n      plain_http: true\n      approved:\n"
        ));
        for (name, hash) in &pins {
            yaml.push_str(&format!(
                "        - {{ name: {name}, version: '1.0', hash: {hash} }}\n"
            ));
        }
    }
    let config = lab.tmp.path().join("two-registries.yaml");
    fs_err::write(&config, yaml).expect("write");
    for (case, env) in scoped_credentials(lab.tmp.path(), &host, "puller", "pu11-Secret") {
        let _ = fs_err::remove_dir_all(lab.tmp.path().join("mine"));
        let _ = fs_err::remove_file(other.dir.path().join("log.jsonl"));
        let out = prepare_env(&config, &env_refs(&env));
        assert_eq!(out.status.code(), Some(2), "{case}: {}", stderr(&out));
        assert_stderr_has(&out, "[registry_denied]");
        assert!(
            lab.tmp.path().join("mine/current/pdf/SKILL.md").exists(),
            "{case}: the registry the credentials are for: {}",
            stderr(&out)
        );
        assert!(!lab.tmp.path().join("theirs/current").exists());
        other.assert_got_no_credentials(case);
        assert!(!stderr(&out).contains("pu11-Secret"));
    }
}

#[test]
fn no_credential_follows_a_redirect_to_another_origin() {
    let image = ImageFiles::new();
    let auth = basic("puller", "pu11-Secret");
    for target_asks in [true, false] {
        let registry = Recorder::start(None);
        let target = Recorder::start(None);
        let blob = format!("/v2/r/blobs/{}", image.layer_digest);
        let mut routes = image.routes(
            Some(&auth),
            Some(json!({"path": blob, "status": 307,
                "headers": {"Location": format!("http://{}/storage/layer", target.host())}})),
        );
        routes.push(json!({"path": "/v2/", "status": 401,
            "headers": {"WWW-Authenticate": "Basic realm=\"registry\""}}));
        registry.routes(&Value::Array(routes));
        if target_asks {
            // The redirect target asks for credentials, naming itself as the token realm.
            target.routes(&json!([
                {"path": "/token", "status": 200, "text": "{\"token\": \"t\"}"},
                {"path": "/storage/", "status": 401, "headers": {"WWW-Authenticate":
                    format!("Bearer realm=\"http://{}/token\",service=\"storage\"", target.host())}},
            ]));
        } else {
            target.routes(&json!([{"path": "/storage/layer", "status": 200, "file": image.layer}]));
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let config = oci_descriptor(
            dir.path(),
            &format!("{}/r@{}", registry.host(), image.digest),
            &[("pdf".to_owned(), image.pin.clone())],
        );
        for (case, env) in scoped_credentials(dir.path(), &registry.host(), "puller", "pu11-Secret")
        {
            let _ = fs_err::remove_dir_all(dir.path().join("corpus"));
            let _ = fs_err::remove_file(target.dir.path().join("log.jsonl"));
            let out = prepare_env(&config, &env_refs(&env));
            if target_asks {
                assert_eq!(out.status.code(), Some(2), "{case}: {}", stderr(&out));
                assert_stderr_has(&out, "[registry_denied]");
                assert_stderr_has(&out, "none go beyond the registry's origin");
                assert!(!dir.path().join("corpus/current").exists());
                assert!(
                    target.requests().iter().all(|(path, _)| path != "/token"),
                    "{case}: the redirect target's realm was asked"
                );
            } else {
                assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
                assert!(dir.path().join("corpus/current/pdf/SKILL.md").exists());
            }
            target.assert_got_no_credentials(case);
            // The registry itself got them (the manifest needs them).
            assert!(
                registry
                    .requests()
                    .iter()
                    .any(|(_, a)| a.as_deref() == Some(auth.as_str())),
                "{case}"
            );
        }
    }
}

/// The routes of a registry serving `image` under `/v2/r/` to requests carrying `Bearer {token}`,
/// asking every other request for a bearer token from `realm` (a URL).
fn token_registry(image: &ImageFiles, token: &str, realm: &str) -> Vec<Value> {
    let mut routes = image.routes(Some(&format!("Bearer {token}")), None);
    routes.push(
        json!({"path": "/", "status": 401, "headers": {"WWW-Authenticate":
        format!("Bearer realm=\"{realm}\",service=\"registry\"")}}),
    );
    routes
}

/// A token server at `/token` that gives `pull-token` for `puller:pu11-Secret` and
/// `anonymous-token` to a request without credentials (as for a public image).
fn token_routes() -> Value {
    json!([
        {"path": "/token", "auth": basic("puller", "pu11-Secret"), "status": 200,
            "text": "{\"token\": \"pull-token\"}"},
        {"path": "/token", "auth": null, "status": 200, "text": "{\"token\": \"anonymous-token\"}"},
        {"path": "/token", "status": 401},
    ])
}

#[test]
fn a_token_realm_on_another_origin_gets_the_credentials_only_when_it_is_named() {
    let image = ImageFiles::new();
    let registry = Recorder::start(None);
    // Another origin: the same host, another port.
    let realm = Recorder::start(None);
    realm.routes(&token_routes());
    registry.routes(&Value::Array(token_registry(
        &image,
        "pull-token",
        &format!("http://{}/token", realm.host()),
    )));
    let dir = tempfile::tempdir().expect("tempdir");
    let config = oci_descriptor(
        dir.path(),
        &format!("{}/r@{}", registry.host(), image.digest),
        &[("pdf".to_owned(), image.pin.clone())],
    );
    let reset = || {
        let _ = fs_err::remove_dir_all(dir.path().join("corpus"));
        let _ = fs_err::remove_file(realm.dir.path().join("log.jsonl"));
        let _ = fs_err::remove_file(registry.dir.path().join("log.jsonl"));
    };
    let named = format!("{}=http://{}", registry.host(), realm.host());
    let not_named = [
        None,
        // Named for another registry, or another origin named for this one.
        Some(format!("127.0.0.1:1=http://{}", realm.host())),
        Some(format!("{}=http://127.0.0.1:1", registry.host())),
        Some(format!("{}=https://{}", registry.host(), realm.host())),
        Some(format!("{}={}", registry.host(), registry.host())),
    ];
    for (case, env) in scoped_credentials(dir.path(), &registry.host(), "puller", "pu11-Secret") {
        // Not named: the realm is asked anonymously, its token does not open the image.
        for realms in &not_named {
            reset();
            let mut env = env_refs(&env);
            if let Some(realms) = realms {
                env.push(("SKILLFOLD_REGISTRY_TOKEN_REALMS", realms));
            }
            let out = prepare_env(&config, &env);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{case} {realms:?}: {}",
                stderr(&out)
            );
            assert_stderr_has(&out, "[registry_denied]");
            assert_stderr_has(
                &out,
                &format!(
                    "hint: its credentials were not sent to its token realm http://{}",
                    realm.host()
                ),
            );
            assert_stderr_has(
                &out,
                &format!(
                    "SKILLFOLD_REGISTRY_TOKEN_REALMS={}=http://{}",
                    registry.host(),
                    realm.host()
                ),
            );
            assert!(!stderr(&out).contains("pu11-Secret"));
            realm.assert_got_no_credentials(case);
            registry.assert_got_no_credentials_but(case, &["Bearer anonymous-token"]);
            assert!(!dir.path().join("corpus/current").exists());
        }
        // Named for this registry (alone or in a list): the realm gets the credentials.
        for realms in [
            named.clone(),
            format!("127.0.0.1:1=http://127.0.0.1:2, {named}\n127.0.0.1:3=127.0.0.1:4"),
        ] {
            reset();
            let mut env = env_refs(&env);
            env.push(("SKILLFOLD_REGISTRY_TOKEN_REALMS", &realms));
            let out = prepare_env(&config, &env);
            assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
            assert!(dir.path().join("corpus/current/pdf/SKILL.md").exists());
            let asked = realm.requests();
            assert!(
                !asked.is_empty()
                    && asked.iter().all(|(path, a)| path.starts_with("/token")
                        && a.as_deref() == Some(basic("puller", "pu11-Secret").as_str())),
                "{case}: {asked:?}"
            );
            // The registry got the token and never the credentials.
            registry.assert_got_no_credentials_but(case, &["Bearer pull-token"]);
            assert!(
                registry
                    .requests()
                    .iter()
                    .any(|(path, a)| path.contains("/blobs/")
                        && a.as_deref() == Some("Bearer pull-token"))
            );
        }
    }
    // A public image: no credentials at all, and the anonymous token opens it.
    registry.routes(&Value::Array(token_registry(
        &image,
        "anonymous-token",
        &format!("http://{}/token", realm.host()),
    )));
    reset();
    let out = prepare_env(&config, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dir.path().join("corpus/current/pdf/SKILL.md").exists());
    realm.assert_got_no_credentials("public image");
}

#[test]
fn a_token_realm_on_the_registrys_own_origin_gets_its_credentials_unnamed() {
    let image = ImageFiles::new();
    let registry = Recorder::start(None);
    // The token endpoint first, on the registry's own origin.
    let mut routes = token_routes().as_array().expect("array").clone();
    routes.extend(token_registry(
        &image,
        "pull-token",
        &format!("http://{}/token", registry.host()),
    ));
    registry.routes(&Value::Array(routes));
    let dir = tempfile::tempdir().expect("tempdir");
    let config = oci_descriptor(
        dir.path(),
        &format!("{}/r@{}", registry.host(), image.digest),
        &[("pdf".to_owned(), image.pin.clone())],
    );
    for (case, env) in scoped_credentials(dir.path(), &registry.host(), "puller", "pu11-Secret") {
        let _ = fs_err::remove_dir_all(dir.path().join("corpus"));
        let _ = fs_err::remove_file(registry.dir.path().join("log.jsonl"));
        let out = prepare_env(&config, &env_refs(&env));
        assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
        assert!(dir.path().join("corpus/current/pdf/SKILL.md").exists());
        let requests = registry.requests();
        assert!(
            requests.iter().any(|(path, a)| path.starts_with("/token")
                && a.as_deref() == Some(basic("puller", "pu11-Secret").as_str())),
            "{case}: {requests:?}"
        );
        // The credentials went to the token endpoint only; the image was read with the token.
        assert!(
            requests.iter().all(|(path, a)| path.starts_with("/token")
                || a.as_deref() != Some(basic("puller", "pu11-Secret").as_str())),
            "{case}: {requests:?}"
        );
    }
}

#[test]
fn push_sends_credentials_to_a_token_realm_on_another_origin_only_when_it_is_named() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let registry = Recorder::start(None);
    let realm = Recorder::start(None);
    realm.routes(&json!([
        {"path": "/token", "auth": basic("pusher", "pu5h-Secret"), "status": 200,
            "text": "{\"token\": \"push-token\"}"},
        {"path": "/token", "status": 401},
    ]));
    let to = format!("{}/r:v1", registry.host());
    let scoped = format!("{}=pusher:pu5h-Secret", registry.host());
    let named = format!("{}=http://{}", registry.host(), realm.host());
    // Challenges that hide the realm from a naive reader of the first scheme or of the first
    // `realm=` text (oci-client reads them with a full parser): refused unnamed all the same, and
    // challenges no one reads alike are refused outright.
    let hidden = [
        format!(
            "Basic realm=\"registry\", Bearer realm=\"http://{}/token\"",
            realm.host()
        ),
        format!(
            "Bearer service=\"x,realm=http://{}/token\",realm=\"http://{}/token\"",
            registry.host(),
            realm.host()
        ),
    ];
    for challenge in &hidden {
        registry.routes(&json!([{"path": "/v2/", "status": 401,
            "headers": {"WWW-Authenticate": challenge}}]));
        let pushed = push_to(
            &lab,
            &to,
            &[("SKILLFOLD_REGISTRY_AUTH", "pusher:pu5h-Secret")],
        );
        assert_eq!(
            pushed.status.code(),
            Some(2),
            "{challenge}: {}",
            stderr(&pushed)
        );
        assert_stderr_has(&pushed, "[registry_denied]");
        assert_stderr_has(&pushed, &format!("SKILLFOLD_REGISTRY_TOKEN_REALMS={named}"));
        assert!(
            realm.requests().is_empty(),
            "{challenge}: {:?}",
            realm.requests()
        );
    }
    for challenge in [
        format!(
            "Bearer realm=\"http://{}/token\",realm=\"http://{}/token\"",
            registry.host(),
            realm.host()
        ),
        format!("Bearer realm=\"http://{}/token", realm.host()),
    ] {
        registry.routes(&json!([{"path": "/v2/", "status": 401,
            "headers": {"WWW-Authenticate": challenge}}]));
        let pushed = push_to(
            &lab,
            &to,
            &[("SKILLFOLD_REGISTRY_AUTH", "pusher:pu5h-Secret")],
        );
        assert_eq!(
            pushed.status.code(),
            Some(2),
            "{challenge}: {}",
            stderr(&pushed)
        );
        assert_stderr_has(&pushed, "[registry_refused]");
        assert_stderr_has(&pushed, "is not well formed");
        assert!(
            realm.requests().is_empty(),
            "{challenge}: {:?}",
            realm.requests()
        );
    }
    // Every blob is there already; the manifest is taken; all with the token only.
    registry.routes(&json!([
        {"path": "/v2/r/blobs/", "method": "HEAD", "auth": "Bearer push-token", "status": 200},
        {"path": "/v2/r/manifests/", "method": "PUT", "auth": "Bearer push-token", "status": 201,
            "headers": {"Location": "/v2/r/manifests/v1"}},
        {"path": "/v2/", "status": 401, "headers": {"WWW-Authenticate":
            format!("Bearer realm=\"http://{}/token\",service=\"registry\"", realm.host())}},
    ]));
    for auth in ["pusher:pu5h-Secret", scoped.as_str()] {
        for realms in [
            None,
            Some(format!("{}=http://127.0.0.1:1", registry.host())),
        ] {
            let _ = fs_err::remove_file(registry.dir.path().join("log.jsonl"));
            let mut env = vec![("SKILLFOLD_REGISTRY_AUTH", auth)];
            if let Some(realms) = &realms {
                env.push(("SKILLFOLD_REGISTRY_TOKEN_REALMS", realms));
            }
            let pushed = push_to(&lab, &to, &env);
            assert_eq!(pushed.status.code(), Some(2), "{}", stderr(&pushed));
            assert_stderr_has(&pushed, "[registry_denied]");
            assert_stderr_has(
                &pushed,
                &format!(
                    "hint: to send them there, name that realm for it: SKILLFOLD_REGISTRY_TOKEN_REALMS={named}"
                ),
            );
            assert!(!stderr(&pushed).contains("pu5h-Secret"));
            // Refused before anything was sent: the realm was never asked.
            assert!(realm.requests().is_empty(), "{:?}", realm.requests());
            registry.assert_got_no_credentials("push, realm not named");
        }
        let _ = fs_err::remove_file(registry.dir.path().join("log.jsonl"));
        let pushed = push_to(
            &lab,
            &to,
            &[
                ("SKILLFOLD_REGISTRY_AUTH", auth),
                ("SKILLFOLD_REGISTRY_TOKEN_REALMS", &named),
            ],
        );
        assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
        assert!(
            stdout(&pushed).trim().starts_with(&format!("{to}@sha256:"))
                || stdout(&pushed).contains("@sha256:"),
            "{}",
            stdout(&pushed)
        );
        let asked = realm.requests();
        assert!(
            !asked.is_empty()
                && asked
                    .iter()
                    .all(|(_, a)| a.as_deref() == Some(basic("pusher", "pu5h-Secret").as_str())),
            "{asked:?}"
        );
        registry.assert_got_no_credentials_but("push, realm named", &["Bearer push-token"]);
        assert!(
            registry
                .requests()
                .iter()
                .any(|(path, a)| path.starts_with("/v2/r/manifests/")
                    && a.as_deref() == Some("Bearer push-token"))
        );
        let _ = fs_err::remove_file(realm.dir.path().join("log.jsonl"));
    }
}

#[test]
fn an_https_registry_naming_an_http_token_realm_is_refused_and_the_realm_gets_nothing() {
    let image = ImageFiles::new();
    let certificates = tempfile::tempdir().expect("tempdir");
    super::support::git_server::make_certificates(certificates.path());
    let registry = Recorder::start(Some(certificates.path()));
    let realm = Recorder::start(None);
    let mut routes = image.routes(Some("Bearer t"), None);
    routes.push(
        json!({"path": "/v2/", "status": 401, "headers": {"WWW-Authenticate":
        format!("Bearer realm=\"http://{}/token\",service=\"registry\"", realm.host())}}),
    );
    registry.routes(&Value::Array(routes));
    realm.routes(&json!([{"path": "/token", "status": 200, "text": "{\"token\": \"t\"}"}]));
    let dir = tempfile::tempdir().expect("tempdir");
    let config = oci_descriptor(
        dir.path(),
        &format!("{}/r@{}", registry.host(), image.digest),
        &[("pdf".to_owned(), image.pin.clone())],
    );
    let text = fs_err::read_to_string(&config)
        .expect("read")
        .replace("      plain_http: true\n", "");
    fs_err::write(&config, text).expect("write");
    let ca = certificates.path().join("ca.crt");
    let scoped = format!("{}=puller:pu11-Secret", registry.host());
    for env in [
        vec![("SSL_CERT_FILE", ca.to_str().expect("utf8"))],
        vec![
            ("SSL_CERT_FILE", ca.to_str().expect("utf8")),
            ("SKILLFOLD_REGISTRY_AUTH", scoped.as_str()),
        ],
    ] {
        let out = prepare_env(&config, &env);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_stderr_has(&out, "[insecure_token_realm]");
        assert!(realm.requests().is_empty(), "{:?}", realm.requests());
        assert!(!registry.requests().is_empty(), "the registry was asked");
        assert!(!dir.path().join("corpus/current").exists());
    }
    // `push --to` with credentials, whose client answers challenges itself: refused the same way.
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let pushed = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["push", "-c", lab.config().to_str().expect("utf8"), "--to"])
        .arg(format!("{}/r:v1", registry.host()))
        .env("SKILLFOLD_REGISTRY_AUTH", "puller:pu11-Secret")
        .env("DOCKER_CONFIG", lab.tmp.path().join("no-docker"))
        .env("SSL_CERT_FILE", &ca)
        .output()
        .expect("run skillfold");
    assert_eq!(pushed.status.code(), Some(2), "{}", stderr(&pushed));
    assert_stderr_has(&pushed, "insecure_token_realm");
    assert!(realm.requests().is_empty(), "{:?}", realm.requests());
}

#[test]
fn a_pull_over_the_sources_bound_is_refused_before_any_layer_is_read() {
    // The pull bound of a source under `chamvi` and the bound on one layer's declared size
    // (docs/distribution.md: 34,652,176 bytes; 129 MiB); the refusal names the first.
    let bound: u64 = 34_652_176;
    const MAX_LAYER_BYTES: u64 = 129 * 1024 * 1024;
    let image = ImageFiles::new();
    let layer = fs_err::read(&image.layer).expect("layer");
    let tmp = tempfile::tempdir().expect("tempdir");
    // Layers that declare, together, one byte more than the bound; each within its own bound.
    let each = bound.div_ceil(3) + 1;
    assert!(each <= MAX_LAYER_BYTES && 3 * each > bound);
    let descriptor = |size: u64, i: usize| {
        json!({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": sha256(format!("{i}").as_bytes()), "size": size})
    };
    let over = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha256(b"{}"), "size": 2},
        "layers": (0..3).map(|i| descriptor(each, i)).collect::<Vec<_>>()})
    .to_string();
    // A layer whose registry sends more bytes than the manifest declares, with and without a
    // Content-Length: refused before (or while) reading past the declared size.
    let short = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha256(b"{}"), "size": 2},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": image.layer_digest, "size": layer.len() - 1}]})
    .to_string();
    let registry = Recorder::start(None);
    for (case, manifest, length, code) in [
        ("over the pull bound", &over, true, "[pull_too_large]"),
        ("more than declared", &short, true, "[image_too_large]"),
        (
            "more than declared, streamed",
            &short,
            false,
            "[image_too_large]",
        ),
    ] {
        let path = tmp.path().join("manifest.json");
        fs_err::write(&path, manifest).expect("write");
        registry.routes(&json!([
            {"path": "/v2/r/manifests/", "status": 200, "file": path,
                "headers": {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}},
            {"path": "/v2/r/blobs/", "status": 200, "file": image.layer, "length": length},
        ]));
        let _ = fs_err::remove_file(registry.dir.path().join("log.jsonl"));
        let config = oci_descriptor(
            tmp.path(),
            &format!("{}/r@{}", registry.host(), sha256(manifest.as_bytes())),
            &[("pdf".to_owned(), image.pin.clone())],
        );
        let out = prepare_env(&config, &[]);
        assert_eq!(out.status.code(), Some(2), "{case}: {}", stderr(&out));
        assert_stderr_has(&out, code);
        assert!(!tmp.path().join("corpus/current").exists(), "{case}");
        let blobs = registry
            .requests()
            .iter()
            .filter(|(path, _)| path.contains("/blobs/"))
            .count();
        if code == "[pull_too_large]" {
            assert_stderr_has(&out, &format!("pull bound of {bound} bytes"));
            assert_eq!(blobs, 0, "{case}: a layer was read");
        } else {
            assert_eq!(blobs, 1, "{case}");
        }
        // Nothing of the pull is left in the corpus.
        let fetch = tmp.path().join("corpus/.skillfold/fetch");
        assert_eq!(
            fs_err::read_dir(&fetch).map(|d| d.count()).unwrap_or(0),
            0,
            "{case}"
        );
    }
}

/// The peak resident set of `prepare` pulling one 48 MiB layer listed 1, 4 and 16 times in a
/// pinned manifest (the figures of issue 28, item 4): layers stream to files, so the peak does not
/// grow with the number of layers. `SKILLFOLD_MEASURE_BIN` measures another build (before/after)
/// without the assertion.
#[test]
#[ignore = "a measurement: moves about 1 GiB through a local registry; run it on its own"]
fn the_peak_memory_of_a_pull_does_not_grow_with_the_layers_it_pulls() {
    let registry = Registry::start(&[]);
    let tmp = tempfile::tempdir().expect("tempdir");
    // 48 MiB that do not compress (xorshift), in a file of the `pdf` bundle.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut blob = Vec::with_capacity(48 << 20);
    while blob.len() < 48 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        blob.extend_from_slice(&state.to_le_bytes());
    }
    let tar = [
        entry("pdf/SKILL.md", b'0', SKILL_MD.as_bytes(), None),
        entry("pdf/blob.bin", b'0', &blob, None),
        vec![0u8; 1024],
    ]
    .concat();
    drop(blob);
    let tar_path = tmp.path().join("layer.tar");
    fs_err::write(&tar_path, &tar).expect("write");
    drop(tar);
    let zipped = Command::new("gzip")
        .args(["-1", "-n", "-k"])
        .arg(&tar_path)
        .status()
        .expect("gzip");
    assert!(zipped.success());
    let layer = fs_err::read(tmp.path().join("layer.tar.gz")).expect("read");
    let binary = std::env::var("SKILLFOLD_MEASURE_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_skillfold").to_owned());
    let mut peaks = Vec::new();
    for times in [1, 4, 16] {
        let dir = tmp.path().join(format!("x{times}"));
        fs_err::create_dir(&dir).expect("mkdir");
        let layout = layout_listing(&dir, &layer, times);
        let reference = copy_in(&layout, &registry, &format!("big/x{times}"));
        let config = oci_descriptor(&dir, &reference, &[("pdf".to_owned(), "0".repeat(64))]);
        // The hard ceilings: the pull bound (2 GiB) admits all 16 layers.
        let text = fs_err::read_to_string(&config).expect("read").replace(
            "      plain_http: true\n",
            "      plain_http: true\n      limits: { skill_md_bytes: 1MiB, file_bytes: 16MiB, bundle_bytes: 64MiB, files: 4096, binary: true }\n",
        );
        fs_err::write(&config, text).expect("write");
        let out = Command::new("/usr/bin/time")
            .arg("-v")
            .arg(&binary)
            .args(["prepare", "-c", config.to_str().expect("utf8")])
            .env_remove("SKILLFOLD_REGISTRY_AUTH")
            .output()
            .expect("time");
        let err = stderr(&out);
        // Pulled, then refused by the bundle rules (a 48 MiB file): what is measured is the pull.
        assert_eq!(out.status.code(), Some(2), "{err}");
        let kib: u64 = err
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("Maximum resident set size (kbytes): ")
            })
            .and_then(|v| v.trim().parse().ok())
            .expect("a peak");
        eprintln!("{times:>2} × 48 MiB layer: peak RSS {} MiB", kib / 1024);
        peaks.push(kib);
    }
    if std::env::var_os("SKILLFOLD_MEASURE_BIN").is_none() {
        assert!(
            peaks[2] < peaks[0] + 32 * 1024,
            "the peak grows with the layers: {peaks:?} KiB"
        );
    }
}
