//! `skillfold push --oci-layout`: verified bundles as one reproducible OCI image, checked with
//! the real `tar` and `skopeo` (Debian's package; scripts/test installs it): the layers, applied
//! in order, give trees whose digests are the pins; the same bundles give the same bytes in
//! another directory; a bundle shared by two images is one layer; and every refusal writes
//! nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skillfold::Bundle;

use super::support::bin::{assert_stderr_has, skillfold, stderr, stdout};

/// A bundle to write: its name and its files besides `SKILL.md`.
pub(super) type Skill<'a> = (&'a str, &'a [(&'a str, &'a str)]);

/// Skills written to a temporary directory and a descriptor approving them as local sources,
/// `skills` for every agent and each agent's extras.
pub(super) struct Lab {
    pub(super) tmp: tempfile::TempDir,
}

impl Lab {
    pub(super) fn new(skills: &[Skill<'_>], agents: &[(&str, &[Skill<'_>])]) -> Lab {
        let tmp = tempfile::tempdir().expect("tempdir");
        let lab = Lab { tmp };
        let mut yaml = String::from("skills:\n");
        for (name, files) in skills {
            yaml.push_str(&lab.entry(name, files, "  "));
        }
        if !agents.is_empty() {
            yaml.push_str("agents:\n");
        }
        for (agent, extras) in agents {
            yaml.push_str(&format!("  {agent}:\n    skills:\n"));
            for (name, files) in *extras {
                yaml.push_str(&lab.entry(name, files, "      "));
            }
        }
        fs_err::write(lab.config(), yaml).expect("write");
        lab
    }

    /// Writes a skill (under a folder unique to it) and returns its descriptor entry.
    fn entry(&self, name: &str, files: &[(&str, &str)], indent: &str) -> String {
        let n = fs_err::read_dir(self.tmp.path()).expect("dir").count();
        let dir = self.tmp.path().join(format!("src{n}")).join(name);
        fs_err::create_dir_all(&dir).expect("mkdir");
        fs_err::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n"),
        )
        .expect("write");
        for (path, text) in files {
            let path = dir.join(path);
            fs_err::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs_err::write(path, text).expect("write");
        }
        let digest = Bundle::read_dir(&dir).expect("valid").digest();
        format!(
            "{indent}- local: {{ name: {name}, version: '1.0', directory: {}, hash: {digest} }}\n",
            dir.display()
        )
    }

    pub(super) fn config(&self) -> PathBuf {
        self.tmp.path().join("skillfold.yaml")
    }

    fn push(&self, layout: &Path, extra: &[&str]) -> std::process::Output {
        let config = self.config();
        let mut args = vec![
            "push",
            "-c",
            config.to_str().expect("utf8"),
            "--oci-layout",
            layout.to_str().expect("utf8"),
        ];
        args.extend_from_slice(extra);
        skillfold(&args)
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&fs_err::read(path).expect("read")).expect("json")
}

fn blob(layout: &Path, digest: &str) -> PathBuf {
    layout
        .join("blobs/sha256")
        .join(digest.trim_start_matches("sha256:"))
}

/// Every file of a layout, relative path → bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).expect("dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under").display().to_string();
                out.push((rel, fs_err::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

const LONG: &str = "references/a-rather-long-folder-name-for-the-reference-material/another-level-of-nesting-that-goes-on/and-then-the-file-itself-with-a-long-name.md";

#[test]
fn the_image_holds_exactly_the_verified_bundles_and_is_the_same_anywhere() {
    let lab = Lab::new(
        &[
            (
                "pdf",
                &[("scripts/fill.py", "print('fill')\n"), (LONG, "deep\n")],
            ),
            ("docx", &[("references/styles.md", "# Styles\n")]),
        ],
        &[],
    );
    let out = lab.tmp.path().join("out");
    let pushed = lab.push(&out, &["--tag", "v1"]);
    assert_eq!(
        pushed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );
    let last = stdout(&pushed).lines().last().expect("a line").to_owned();
    let (dir, digest) = last.rsplit_once('@').expect("DIR@digest");
    assert_eq!(Path::new(dir), out);
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );

    // The layout: marker, index naming the image, manifest, config, one layer per bundle.
    assert_eq!(json(&out.join("oci-layout"))["imageLayoutVersion"], "1.0.0");
    let index = json(&out.join("index.json"));
    assert_eq!(index["manifests"][0]["digest"], digest);
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        "v1"
    );
    let manifest = json(&blob(&out, digest));
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.oci.image.config.v1+json"
    );
    assert!(
        manifest.get("annotations").is_none(),
        "local sources have no Git provenance"
    );
    let layers = manifest["layers"].as_array().expect("layers");
    let names: Vec<&str> = layers
        .iter()
        .map(|l| {
            l["annotations"]["io.skillfold.bundle.name"]
                .as_str()
                .expect("name")
        })
        .collect();
    assert_eq!(names, ["docx", "pdf"]);
    let config = json(&blob(
        &out,
        manifest["config"]["digest"].as_str().expect("digest"),
    ));
    assert_eq!(
        (config["os"].as_str(), config["architecture"].as_str()),
        (Some("linux"), Some("amd64"))
    );

    // Applied in order with the real tar, the layers give trees whose digests are the pins.
    let root = lab.tmp.path().join("unpacked");
    fs_err::create_dir(&root).expect("mkdir");
    for (layer, diff_id) in layers
        .iter()
        .zip(config["rootfs"]["diff_ids"].as_array().expect("ids"))
    {
        assert_eq!(
            layer["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+gzip"
        );
        let path = blob(&out, layer["digest"].as_str().expect("digest"));
        let unzipped = Command::new("gzip")
            .args(["-dc"])
            .arg(&path)
            .output()
            .expect("gzip");
        assert_eq!(
            format!("sha256:{}", super::support::world::sha256(&unzipped.stdout)),
            diff_id.as_str().expect("diff id")
        );
        let listing = Command::new("tar")
            .args(["-tvzf"])
            .arg(&path)
            .output()
            .expect("tar");
        for line in String::from_utf8_lossy(&listing.stdout).lines() {
            assert!(
                line.starts_with("-r--r--r-- 0/0") || line.starts_with("dr-xr-xr-x 0/0"),
                "{line}"
            );
            assert!(line.contains(" 1970-01-01 00:00 "), "{line}");
        }
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(&path)
            .arg("-C")
            .arg(&root)
            .status()
            .expect("tar");
        assert!(status.success());
        let name = layer["annotations"]["io.skillfold.bundle.name"]
            .as_str()
            .expect("name");
        let digest = Bundle::read_dir(&root.join(name)).expect("valid").digest();
        assert_eq!(
            layer["annotations"]["io.skillfold.bundle.digest"],
            digest.to_string()
        );
    }
    assert_eq!(
        fs_err::read_to_string(root.join("pdf").join(LONG)).expect("pax path"),
        "deep\n"
    );

    // Elsewhere, the same bytes, file for file.
    let again = lab.tmp.path().join("again");
    assert_eq!(lab.push(&again, &["--tag", "v1"]).status.code(), Some(0));
    assert_eq!(files(&out), files(&again));

    // The real skopeo reads it, and copies it without changing a digest.
    let inspect = Command::new("skopeo")
        .args(["inspect", &format!("oci:{}:v1", out.display())])
        .output()
        .expect("skopeo (scripts/test installs it)");
    assert!(
        inspect.status.success(),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let inspected: Value = serde_json::from_slice(&inspect.stdout).expect("json");
    assert_eq!(inspected["Digest"], digest);
    assert_eq!(inspected["Layers"].as_array().map(Vec::len), Some(2));
    let copy = lab.tmp.path().join("copy");
    let copied = Command::new("skopeo")
        .args(["copy", "--preserve-digests"])
        .arg(format!("oci:{}:v1", out.display()))
        .arg(format!("oci:{}:copied", copy.display()))
        .output()
        .expect("skopeo");
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    assert_eq!(
        json(&copy.join("index.json"))["manifests"][0]["digest"],
        digest
    );
}

#[test]
fn images_of_two_agents_share_the_layer_they_have_in_common() {
    let lab = Lab::new(
        &[("pdf", &[])],
        &[
            (
                "ops",
                &[("runbook", &[("references/steps.md", "1. check\n")])],
            ),
            ("web", &[("frontend", &[])]),
        ],
    );
    let out = lab.tmp.path().join("out");
    let ops = lab.push(&out, &["--tag", "ops", "--agent", "ops", "--json"]);
    assert_eq!(ops.status.code(), Some(0));
    let web = lab.push(&out, &["--tag", "web", "--agent", "web", "--json"]);
    assert_eq!(web.status.code(), Some(0));
    let ops: Value = serde_json::from_slice(&ops.stdout).expect("json report");
    let web: Value = serde_json::from_slice(&web.stdout).expect("json report");
    let layer_of = |r: &Value, name: &str| {
        r["bundles"]
            .as_array()
            .expect("bundles")
            .iter()
            .find(|b| b["name"] == name)
            .map(|b| b["layer"].clone())
    };
    assert_eq!(layer_of(&ops, "pdf"), layer_of(&web, "pdf"));
    assert!(layer_of(&ops, "frontend").is_none() && layer_of(&web, "runbook").is_none());
    assert_ne!(ops["digest"], web["digest"]);
    let index = json(&out.join("index.json"));
    assert_eq!(index["manifests"].as_array().map(Vec::len), Some(2));
    // Three layers (pdf once), two configs, two manifests.
    assert_eq!(
        fs_err::read_dir(out.join("blobs/sha256"))
            .expect("blobs")
            .count(),
        7
    );
    // Everything approved: all three bundles.
    let all = lab.push(&lab.tmp.path().join("all"), &["--json"]);
    let all: Value = serde_json::from_slice(&all.stdout).expect("json report");
    assert_eq!(all["bundles"].as_array().map(Vec::len), Some(3));
}

#[test]
fn nothing_is_written_when_a_bundle_does_not_verify_or_the_configuration_is_refused() {
    let lab = Lab::new(&[("pdf", &[("references/a.md", "A\n")])], &[]);
    // Tamper with the approved bundle after pinning it.
    let yaml = fs_err::read_to_string(lab.config()).expect("read");
    let dir = yaml
        .split("directory: ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .expect("dir")
        .to_owned();
    fs_err::write(Path::new(&dir).join("references/a.md"), "tampered\n").expect("write");
    let out = lab.tmp.path().join("out");
    let refused = lab.push(&out, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "digest_mismatch");
    assert!(!out.exists(), "nothing may be written");

    let clash = Lab::new(
        &[("pdf", &[])],
        &[("ops", &[("pdf", &[("references/other.md", "other\n")])])],
    );
    let out = clash.tmp.path().join("out");
    let refused = clash.push(&out, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "conflicting_pins");
    assert!(!out.exists());

    let fine = Lab::new(&[("pdf", &[])], &[]);
    let not_layout = fine.tmp.path().join("taken");
    fs_err::create_dir(&not_layout).expect("mkdir");
    fs_err::write(
        not_layout.join("oci-layout"),
        "{\"imageLayoutVersion\": \"0.9\"}",
    )
    .expect("write");
    let refused = fine.push(&not_layout, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "not_layout");
    assert!(!not_layout.join("index.json").exists());
    let refused = fine.push(&fine.tmp.path().join("out"), &["--agent", "nobody"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "unknown_agent");
    let refused = fine.push(&fine.tmp.path().join("out"), &["--platform", "linux"]);
    assert_eq!(refused.status.code(), Some(2));
}

/// Debian's `docker-registry` (the CNCF distribution registry) on a free loopback port, with
/// `htpasswd` users when given; stopped on drop.
#[cfg(feature = "oci")]
pub(super) struct Registry {
    child: std::process::Child,
    pub(super) port: u16,
    _dir: tempfile::TempDir,
}

#[cfg(feature = "oci")]
impl Registry {
    pub(super) fn start(users: &[(&str, &str)]) -> Registry {
        Registry::spawn(users, false)
    }

    /// HTTPS with a throwaway CA (`ca.crt` in [`Registry::dir`]), with `htpasswd` users.
    pub(super) fn start_tls(users: &[(&str, &str)]) -> Registry {
        Registry::spawn(users, true)
    }

    /// The registry's own folder (its configuration, storage and, with TLS, `ca.crt`).
    pub(super) fn dir(&self) -> &Path {
        self._dir.path()
    }

    fn spawn(users: &[(&str, &str)], tls: bool) -> Registry {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: test\n",
            dir.path().join("data").display()
        );
        if tls {
            super::support::git_server::make_certificates(dir.path());
            config.push_str(&format!(
                "  tls:\n    certificate: {0}/server.crt\n    key: {0}/server.key\n",
                dir.path().display()
            ));
        }
        if !users.is_empty() {
            let htpasswd = dir.path().join("htpasswd");
            let mut lines = String::new();
            for (user, password) in users {
                let made = Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                    .expect("htpasswd (apache2-utils; scripts/test installs it)");
                lines.push_str(String::from_utf8_lossy(&made.stdout).trim());
                lines.push('\n');
            }
            fs_err::write(&htpasswd, lines).expect("write");
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: skillfold-test\n    path: {}\n",
                htpasswd.display()
            ));
        }
        let path = dir.path().join("config.yml");
        fs_err::write(&path, config).expect("write");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("docker-registry (scripts/test installs it)");
        let registry = Registry {
            child,
            port,
            _dir: dir,
        };
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed().as_secs() < 20,
                "the registry did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        registry
    }

    pub(super) fn repository(&self, name: &str) -> String {
        format!("127.0.0.1:{}/{name}", self.port)
    }
}

#[cfg(feature = "oci")]
impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(feature = "oci")]
pub(super) fn push_to(lab: &Lab, to: &str, env: &[(&str, &str)]) -> std::process::Output {
    let config = lab.config();
    Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args([
            "push",
            "-c",
            config.to_str().expect("utf8"),
            "--to",
            to,
            "--plain-http",
        ])
        .env_remove("SKILLFOLD_REGISTRY_AUTH")
        .env("DOCKER_CONFIG", lab.tmp.path().join("no-docker-config"))
        .envs(env.iter().copied())
        .output()
        .expect("run skillfold")
}

#[cfg(feature = "oci")]
#[test]
fn a_push_to_a_registry_gives_the_digest_of_the_image_layout() {
    let lab = Lab::new(
        &[
            ("pdf", &[("references/forms.md", "# Forms\n")]),
            ("docx", &[]),
        ],
        &[],
    );
    let registry = Registry::start(&[]);
    let layout = lab.tmp.path().join("layout");
    let local = lab.push(&layout, &[]);
    let expected = stdout(&local)
        .lines()
        .last()
        .expect("line")
        .rsplit_once('@')
        .expect("@")
        .1
        .to_owned();

    let pushed = push_to(&lab, &registry.repository("platform/skills:v1"), &[]);
    assert_eq!(
        pushed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );
    assert_eq!(
        stdout(&pushed).lines().last(),
        Some(format!("{}@{expected}", registry.repository("platform/skills")).as_str())
    );
    // The registry holds the manifest under the tag and serves it by digest, as skopeo sees it.
    let inspect = Command::new("skopeo")
        .args(["inspect", "--tls-verify=false"])
        .arg(format!(
            "docker://{}",
            registry.repository("platform/skills:v1")
        ))
        .output()
        .expect("skopeo");
    assert!(
        inspect.status.success(),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    let inspected: Value = serde_json::from_slice(&inspect.stdout).expect("json");
    assert_eq!(inspected["Digest"], expected.as_str());
    assert_eq!(inspected["Layers"].as_array().map(Vec::len), Some(2));
    // Copied back out of the registry into a layout, the layers give trees whose digests are the pins.
    let copy = lab.tmp.path().join("copy");
    let copied = Command::new("skopeo")
        .args(["copy", "--src-tls-verify=false", "--preserve-digests"])
        .arg(format!(
            "docker://{}@{expected}",
            registry.repository("platform/skills")
        ))
        .arg(format!("oci:{}:x", copy.display()))
        .output()
        .expect("skopeo");
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    let manifest = json(&blob(&copy, &expected));
    let root = lab.tmp.path().join("unpacked");
    fs_err::create_dir(&root).expect("mkdir");
    for layer in manifest["layers"].as_array().expect("layers") {
        let path = blob(&copy, layer["digest"].as_str().expect("digest"));
        assert!(
            Command::new("tar")
                .arg("-xzf")
                .arg(&path)
                .arg("-C")
                .arg(&root)
                .status()
                .expect("tar")
                .success()
        );
        let name = layer["annotations"]["io.skillfold.bundle.name"]
            .as_str()
            .expect("name");
        let digest = Bundle::read_dir(&root.join(name)).expect("valid").digest();
        assert_eq!(
            layer["annotations"]["io.skillfold.bundle.digest"],
            digest.to_string()
        );
    }
    // Without a tag the manifest is stored by its digest; pushing again changes nothing.
    let again = push_to(&lab, &registry.repository("platform/skills"), &[]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(stdout(&again).ends_with(&format!("@{expected}\n")));
}

#[cfg(feature = "oci")]
#[test]
fn registry_credentials_are_used_never_shown_and_a_refusal_is_not_retryable() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let registry = Registry::start(&[("ci", "s3cret-Pa55")]);
    let to = registry.repository("platform/skills:v1");
    let anonymous = push_to(&lab, &to, &[]);
    assert_eq!(anonymous.status.code(), Some(2));
    assert_stderr_has(&anonymous, "[registry_denied]");
    assert_stderr_has(&anonymous, "(anonymous)");
    let wrong = push_to(&lab, &to, &[("SKILLFOLD_REGISTRY_AUTH", "ci:wrong-Pa55")]);
    assert_eq!(wrong.status.code(), Some(2));
    assert_stderr_has(&wrong, "credentials from SKILLFOLD_REGISTRY_AUTH");
    assert!(!String::from_utf8_lossy(&wrong.stderr).contains("wrong-Pa55"));
    let right = push_to(&lab, &to, &[("SKILLFOLD_REGISTRY_AUTH", "ci:s3cret-Pa55")]);
    assert_eq!(
        right.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&right.stderr)
    );
    // Docker's config.json, as `docker login` writes it.
    let docker = lab.tmp.path().join("docker");
    fs_err::create_dir(&docker).expect("mkdir");
    let auth = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode("ci:s3cret-Pa55")
    };
    fs_err::write(
        docker.join("config.json"),
        format!(
            r#"{{"auths": {{"127.0.0.1:{}": {{"auth": "{auth}"}}}}}}"#,
            registry.port
        ),
    )
    .expect("write");
    let from_config = push_to(
        &lab,
        &to,
        &[("DOCKER_CONFIG", docker.to_str().expect("utf8"))],
    );
    assert_eq!(
        from_config.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&from_config.stderr)
    );
    for output in [&anonymous, &wrong, &right, &from_config] {
        let all = format!(
            "{}{}",
            stdout(output),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !all.contains("s3cret-Pa55") && !all.contains(&auth),
            "{all}"
        );
    }
}

#[cfg(feature = "oci")]
#[test]
fn a_registry_that_cannot_be_reached_is_retryable_and_bad_destinations_are_refused() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let down = push_to(&lab, &format!("127.0.0.1:{port}/platform/skills"), &[]);
    assert_eq!(down.status.code(), Some(1));
    assert_stderr_has(&down, "[registry_unavailable]");
    for bad in [
        "skills",
        "platform/skills",
        "127.0.0.1:5000/skills@sha256:abc",
    ] {
        let refused = push_to(&lab, bad, &[]);
        assert_eq!(refused.status.code(), Some(2), "{bad}");
    }
}

/// `push --oci-layout` into `layout`, answered or killed after two minutes (a FIFO that blocks
/// the push, or `/dev/zero` read without end, must not hang the suite: it fails it).
fn push_answered(lab: &Lab, layout: &Path) -> std::process::Output {
    let logs = tempfile::tempdir().expect("tempdir");
    let (out, err) = (logs.path().join("out"), logs.path().join("err"));
    let config = lab.config();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["push", "-c", config.to_str().expect("utf8"), "--oci-layout"])
        .arg(layout)
        .stdout(fs_err::File::create(&out).expect("log").into_file())
        .stderr(fs_err::File::create(&err).expect("log").into_file())
        .spawn()
        .expect("run skillfold");
    let mut status = None;
    for _ in 0..1200 {
        status = child.try_wait().expect("wait");
        if status.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("push into {} never answered", layout.display());
    };
    std::process::Output {
        status,
        stdout: fs_err::read(&out).expect("log"),
        stderr: fs_err::read(&err).expect("log"),
    }
}

#[test]
fn planted_links_fifos_and_folders_in_the_layout_are_refused_and_nothing_outside_is_touched() {
    let lab = Lab::new(&[("pdf", &[("references/a.md", "A\n")])], &[]);
    let reference = lab.tmp.path().join("reference");
    let pushed = lab.push(&reference, &[]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let last = stdout(&pushed).lines().last().expect("a line").to_owned();
    let manifest = last.rsplit_once('@').expect("DIR@digest").1.to_owned();
    // The blob paths a push writes are predictable: the same bundles give the same digests.
    let layer = json(&blob(&reference, &manifest))["layers"][0]["digest"]
        .as_str()
        .expect("layer digest")
        .to_owned();
    let layer_rel = format!("blobs/sha256/{}", layer.trim_start_matches("sha256:"));
    let manifest_rel = format!("blobs/sha256/{}", manifest.trim_start_matches("sha256:"));

    let outside = lab.tmp.path().join("outside");
    fs_err::create_dir(&outside).expect("mkdir");
    let secret = outside.join("secret");
    fs_err::write(&secret, "outside, untouched\n").expect("write");
    let symlink = |target: &Path, at: &Path| std::os::unix::fs::symlink(target, at).expect("ln");
    let fifo = |at: &Path| {
        rustix::fs::mkfifoat(rustix::fs::CWD, at, rustix::fs::Mode::from(0o644)).expect("mkfifo")
    };

    type Plant = Box<dyn Fn(&Path)>;
    let dev_zero = Path::new("/dev/zero");
    let mut cases: Vec<(String, Plant)> = Vec::new();
    for rel in [
        "index.json",
        "oci-layout",
        layer_rel.as_str(),
        manifest_rel.as_str(),
    ] {
        let rel = rel.to_owned();
        cases.push((
            format!("{rel} → /dev/zero"),
            Box::new({
                let rel = rel.clone();
                move |l: &Path| symlink(dev_zero, &l.join(&rel))
            }),
        ));
        cases.push((
            format!("{rel} a FIFO"),
            Box::new({
                let rel = rel.clone();
                move |l: &Path| fifo(&l.join(&rel))
            }),
        ));
        cases.push((
            format!("{rel} a directory"),
            Box::new({
                let rel = rel.clone();
                move |l: &Path| fs_err::create_dir(l.join(&rel)).expect("mkdir")
            }),
        ));
        cases.push((
            format!("{rel} → an outside file"),
            Box::new({
                let (rel, secret) = (rel.clone(), secret.clone());
                move |l: &Path| symlink(&secret, &l.join(&rel))
            }),
        ));
    }
    for rel in ["blobs", "blobs/sha256"] {
        let (rel, outside) = (rel.to_owned(), outside.clone());
        cases.push((
            format!("{rel} → an outside folder"),
            Box::new(move |l: &Path| {
                fs_err::remove_dir_all(l.join(&rel)).expect("rm");
                symlink(&outside, &l.join(&rel));
            }),
        ));
    }
    cases.push((
        "index.json over its bound".into(),
        Box::new(|l: &Path| {
            let mut big = b"{\"manifests\":[]}".to_vec();
            big.resize(4 * 1024 * 1024 + 1, b' ');
            fs_err::write(l.join("index.json"), big).expect("write");
        }),
    ));
    cases.push((
        "oci-layout over its bound".into(),
        Box::new(|l: &Path| {
            let mut big = b"{\"imageLayoutVersion\":\"1.0.0\"}".to_vec();
            big.resize(4 * 1024 + 1, b' ');
            fs_err::write(l.join("oci-layout"), big).expect("write");
        }),
    ));

    for (n, (case, plant)) in cases.iter().enumerate() {
        let layout = lab.tmp.path().join(format!("layout{n}"));
        fs_err::create_dir_all(layout.join("blobs/sha256")).expect("mkdir");
        plant(&layout);
        let refused = push_answered(&lab, &layout);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{case}: {}",
            stderr(&refused)
        );
        assert_stderr_has(&refused, "not_layout");
        assert_eq!(
            fs_err::read_to_string(&secret).expect("read"),
            "outside, untouched\n",
            "{case}"
        );
        assert_eq!(
            fs_err::read_dir(&outside).expect("dir").count(),
            1,
            "{case}: nothing is written outside the layout"
        );
    }

    // The layout directory itself a link to an outside folder: refused, nothing written there.
    let linked = lab.tmp.path().join("linked");
    symlink(&outside, &linked);
    let refused = push_answered(&lab, &linked);
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "not_layout");
    assert_eq!(fs_err::read_dir(&outside).expect("dir").count(), 1);

    // A planted entry where the push does not look is left alone, and a second push into the
    // same layout still gives the same bytes.
    let again = lab.push(&reference, &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        fs_err::read_dir(reference.join("blobs/sha256"))
            .expect("dir")
            .all(|e| !e
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .starts_with('.')),
        "no temporary file is left behind"
    );
}
