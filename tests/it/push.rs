//! `skillfold push --oci-layout`: verified bundles as one reproducible OCI image, checked with
//! the real `tar` and `skopeo` (Debian's package; scripts/test installs it): the layers, applied
//! in order, give trees whose digests are the pins; the same bundles give the same bytes in
//! another directory; a bundle shared by two images is one layer; and every refusal writes
//! nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skillfold::format::bundle::Bundle;

use super::util::{assert_stderr_has, skillfold, stdout};

/// A bundle to write: its name and its files besides `SKILL.md`.
type Skill<'a> = (&'a str, &'a [(&'a str, &'a str)]);

/// Skills written to a temporary directory and a descriptor approving them as local sources,
/// `skills` for every agent and each agent's extras.
struct Lab {
    tmp: tempfile::TempDir,
}

impl Lab {
    fn new(skills: &[Skill<'_>], agents: &[(&str, &[Skill<'_>])]) -> Lab {
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

    fn config(&self) -> PathBuf {
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
            format!("sha256:{}", super::util::sha256(&unzipped.stdout)),
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
