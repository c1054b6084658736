//! The bundled examples: `examples/skillfold.yaml` checks, pins exactly the bytes of
//! `examples/skills/`, and `scripts/demo` (the README's main command) prepares it end to end;
//! every YAML example parses, every descriptor (embedded in a Kubernetes ConfigMap too) passes
//! `skillfold check`, and the Kubernetes and Containerfile examples hold their promises.

use std::path::Path;
use std::process::Command;

use super::support::bin::{skillfold, stderr, stdout};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn example_descriptor_checks() {
    let out = skillfold(&["check", "-c", "examples/skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn example_pins_name_the_example_bundles() {
    // The pins as the operator reads them (the Git corpora need not be prepared: only the pins
    // are compared), each `{ name: N, version: V, …hash: H }` on a line of its own.
    let descriptor = fs_err::read_to_string(root().join("examples/skillfold.yaml")).expect("read");
    let field = |line: &str, key: &str| -> Option<String> {
        let rest = &line[line.find(&format!("{key}: "))? + key.len() + 2..];
        Some(
            rest.split([',', ' ', '}'])
                .next()?
                .trim_matches('"')
                .to_owned(),
        )
    };
    let mut seen = 0;
    for line in descriptor
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
    {
        let (Some(name), Some(hash)) = (field(line, "name"), field(line, "hash")) else {
            continue;
        };
        let dir = root().join("examples/skills").join(&name);
        let bundle = skillfold::Bundle::read_dir(&dir).expect("example bundle");
        assert_eq!(
            bundle.digest().to_string(),
            hash,
            "{name}: re-pin after review"
        );
        seen += 1;
    }
    assert_eq!(
        seen,
        fs_err::read_dir(root().join("examples/skills"))
            .expect("dir")
            .count()
    );
}

#[test]
fn demo_prepares_the_example_end_to_end() {
    let out = Command::new("bash")
        .arg(root().join("scripts/demo"))
        .env("SKILLFOLD_BIN", env!("CARGO_BIN_EXE_skillfold"))
        .current_dir(root())
        .output()
        .expect("run scripts/demo");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stderr(&out);
    assert!(text.contains("up to date (verified, no fetch)"), "{text}");
    // Three Git sources pin one commit: the cold run fetches it once, the warm run not at all.
    assert!(
        text.contains("prepared 4 source(s) with 1 fetch(es)"),
        "{text}"
    );
    assert!(
        text.contains("prepared 4 source(s) with 0 fetch(es)"),
        "{text}"
    );
    for name in [
        "commit-message",
        "changelog-writer",
        "csv-profiler",
        "http-api-review",
    ] {
        assert!(
            stdout(&out).contains(&format!("  {name}/SKILL.md")),
            "{name} not published"
        );
    }
}

/// Every YAML document under `examples/`, by file.
fn example_yaml() -> Vec<(std::path::PathBuf, Vec<serde_yaml::Value>)> {
    let mut found = Vec::new();
    let mut dirs = vec![root().join("examples")];
    while let Some(dir) = dirs.pop() {
        for entry in fs_err::read_dir(&dir).expect("read examples") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                let text = fs_err::read_to_string(&path).expect("read");
                let docs = serde_yaml::Deserializer::from_str(&text)
                    .map(|d| {
                        serde::Deserialize::deserialize(d)
                            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                    })
                    .collect();
                found.push((path, docs));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn kind<'a>(docs: &'a [serde_yaml::Value], kind: &str) -> &'a serde_yaml::Value {
    docs.iter()
        .find(|d| d["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("no {kind}"))
}

#[test]
fn every_example_parses_and_every_descriptor_checks() {
    let examples = example_yaml();
    let names: Vec<String> = examples
        .iter()
        .map(|(p, _)| {
            p.strip_prefix(root())
                .expect("under the root")
                .display()
                .to_string()
        })
        .collect();
    for expected in [
        "examples/kubernetes/cronjob.yaml",
        "examples/kubernetes/deployment.yaml",
        "examples/kubernetes/image-volume.yaml",
        "examples/kubernetes/server.yaml",
        "examples/skillfold.yaml",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    // Descriptors: the example itself and every `skillfold.yaml` embedded in a ConfigMap.
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut descriptors = vec![root().join("examples/skillfold.yaml")];
    for (path, docs) in &examples {
        for doc in docs
            .iter()
            .filter(|d| d["kind"].as_str() == Some("ConfigMap"))
        {
            if let Some(text) = doc["data"]["skillfold.yaml"].as_str() {
                let out = tmp
                    .path()
                    .join(format!("configmap-{}.yaml", descriptors.len()));
                fs_err::write(&out, text).expect("write");
                descriptors.push(out);
                assert!(
                    path.ends_with("deployment.yaml")
                        || path.ends_with("server.yaml")
                        || path.ends_with("image-volume.yaml")
                );
            }
        }
    }
    assert_eq!(
        descriptors.len(),
        4,
        "the deployment's, the server's and the image volume's ConfigMaps embed a descriptor"
    );
    for descriptor in &descriptors {
        let out = skillfold(&["check", "-c", descriptor.to_str().expect("utf8")]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            descriptor.display(),
            stderr(&out)
        );
    }
}

#[test]
fn kubernetes_examples_prepare_first_and_fail_the_verify_job_only_on_exit_2() {
    let examples = example_yaml();
    let docs = |name: &str| {
        &examples
            .iter()
            .find(|(p, _)| p.ends_with(name))
            .expect(name)
            .1
    };
    let deployment = kind(docs("deployment.yaml"), "Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    let prepare = pod["initContainers"]
        .as_sequence()
        .expect("init containers")
        .iter()
        .find(|c| c["name"].as_str() == Some("prepare"))
        .expect("a prepare init container");
    assert_eq!(prepare["args"][0].as_str(), Some("prepare"));
    let agent = &pod["containers"][0];
    let probe = &agent["startupProbe"];
    assert_eq!(probe["exec"]["command"][1].as_str(), Some("verify"));
    let budget =
        probe["periodSeconds"].as_u64().unwrap() * probe["failureThreshold"].as_u64().unwrap();
    assert!(
        budget >= 300,
        "the startup probe allows a preparation: {budget} s"
    );
    assert_eq!(pod["securityContext"]["runAsUser"].as_u64(), Some(1000));

    let cronjob = kind(docs("cronjob.yaml"), "CronJob");
    let job = &cronjob["spec"]["jobTemplate"]["spec"];
    assert_eq!(
        job["template"]["spec"]["containers"][0]["args"][0].as_str(),
        Some("verify")
    );
    assert_eq!(
        job["template"]["spec"]["restartPolicy"].as_str(),
        Some("Never")
    );
    let rules = job["podFailurePolicy"]["rules"]
        .as_sequence()
        .expect("rules");
    let action_for = |code: u64| {
        rules
            .iter()
            .find(|r| {
                r["onExitCodes"]["values"]
                    .as_sequence()
                    .is_some_and(|v| v.iter().any(|x| x.as_u64() == Some(code)))
            })
            .and_then(|r| r["action"].as_str())
    };
    assert_eq!(action_for(2), Some("FailJob"));
    assert_eq!(action_for(1), Some("Count"));
}

#[test]
fn containerfile_builds_a_small_non_root_runtime_image() {
    let text = fs_err::read_to_string(root().join("Containerfile")).expect("Containerfile");
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let stages: Vec<&&str> = lines.iter().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(stages.len(), 2, "a build stage and a runtime stage");
    assert!(stages[0].ends_with(" AS build"));
    let runtime: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("FROM ") || l.ends_with(" AS build"))
        .copied()
        .collect();
    for needed in [
        "USER 1000:1000",
        "ENTRYPOINT [\"/usr/local/bin/skillfold\"]",
        "COPY --from=build /out/skillfold /usr/local/bin/skillfold",
    ] {
        assert!(runtime.contains(&needed), "{needed}");
    }
    assert!(text.contains("cargo build --release --locked"));
    assert!(
        text.contains("RUSTFLAGS=\"-C target-feature=+crt-static\""),
        "the binary is built fully static"
    );
    // git only on request (file:// and ssh:// sources); nothing else the runtime does not need.
    assert!(
        text.contains("if [ \"$WITH_GIT\" = 1 ]; then packages=\"$packages git openssh-client\"")
    );
    let rust = stages[0]
        .split(':')
        .nth(1)
        .and_then(|t| t.split('-').next())
        .expect("a pinned Rust version");
    let manifest = fs_err::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.contains(&format!("rust-version = \"{rust}\"")),
        "the build stage uses the crate's rust-version"
    );
}

#[cfg(feature = "http")]
#[test]
fn kubernetes_server_probes_its_health_and_holds_only_token_hashes() {
    use super::http_raw::{INITIALIZE, post};
    use super::mcp_client::Listening;

    let examples = example_yaml();
    let docs = &examples
        .iter()
        .find(|(p, _)| p.ends_with("server.yaml"))
        .expect("server.yaml")
        .1;
    let deployment = kind(docs, "Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(
        pod["initContainers"][0]["args"][0].as_str(),
        Some("prepare")
    );
    let server = &pod["containers"][0];
    let args: Vec<&str> = server["args"]
        .as_sequence()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert_eq!(args[..3], ["serve", "--listen", "0.0.0.0:8080"]);
    assert!(args.contains(&"--tokens"), "{args:?}");
    assert_eq!(
        server["readinessProbe"]["httpGet"]["path"].as_str(),
        Some("/readyz")
    );
    assert_eq!(
        server["livenessProbe"]["httpGet"]["path"].as_str(),
        Some("/healthz")
    );
    let service = kind(docs, "Service");
    assert_eq!(service["spec"]["ports"][0]["port"].as_u64(), Some(8080));

    // The Secret's file is what `--tokens` reads, for the agents the ConfigMap names, and the
    // hashes are of the example tokens its comment names: `serve --listen` with both starts
    // (it refuses tokens for an agent the descriptor does not name) and lets each token into its
    // own endpoint only. (The corpora are not prepared here: the bundles are refused, the
    // endpoints still answer.)
    let tmp = tempfile::tempdir().expect("tempdir");
    let descriptor = kind(docs, "ConfigMap")["data"]["skillfold.yaml"]
        .as_str()
        .expect("descriptor");
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(&config, descriptor).expect("write");
    let secret = kind(docs, "Secret")["stringData"]["tokens.json"]
        .as_str()
        .expect("tokens.json");
    let tokens = tmp.path().join("tokens.json");
    fs_err::write(&tokens, secret).expect("write");
    let server = Listening::start(&config, &["--tokens", tokens.to_str().expect("utf8")], &[]);
    let open = |path: &str, token: &str| post(server.port, path, Some(token), &[], INITIALIZE);
    let allowed = open("/agents/support/mcp", "example-support-token");
    assert_eq!(allowed.status, 200, "{}\n{}", allowed.body, server.log());
    let allowed = open("/mcp", "example-default-token");
    assert_eq!(allowed.status, 200, "{}\n{}", allowed.body, server.log());
    assert_eq!(
        open("/agents/support/mcp", "example-default-token").status,
        403
    );
}

/// The image volume example mounts, read-only and by digest, exactly the image `skillfold push`
/// makes of the five example skills, and its descriptor verifies each bundle from the mount: the
/// digest is computed here again (reproducible builds make it the same on every machine), and the
/// descriptor, with the mount path replaced by an unpacked copy of that image, serves every skill.
#[test]
fn the_image_volume_example_mounts_the_image_of_the_example_skills() {
    let examples = example_yaml();
    let docs = &examples
        .iter()
        .find(|(p, _)| p.ends_with("image-volume.yaml"))
        .expect("image-volume.yaml")
        .1;
    let pod = &kind(docs, "Deployment")["spec"]["template"]["spec"];
    assert!(pod["initContainers"].is_null(), "nothing to prepare");
    let volume = pod["volumes"]
        .as_sequence()
        .expect("volumes")
        .iter()
        .find(|v| v["name"].as_str() == Some("skills"))
        .expect("the skills volume");
    let reference = volume["image"]["reference"]
        .as_str()
        .expect("an image volume");
    let (_, digest) = reference.split_once('@').expect("pinned by digest");
    let mount = pod["containers"][0]["volumeMounts"]
        .as_sequence()
        .expect("mounts")
        .iter()
        .find(|m| m["name"].as_str() == Some("skills"))
        .expect("mounted");
    assert_eq!(mount["readOnly"].as_bool(), Some(true));
    let mount_path = mount["mountPath"].as_str().expect("path");

    // The image of the five example skills, as `push` builds it from the example's own pins.
    let tmp = tempfile::tempdir().expect("tempdir");
    let skills = root().join("examples/skills");
    let example = kind(docs, "ConfigMap")["data"]["skillfold.yaml"]
        .as_str()
        .expect("descriptor")
        .to_owned();
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(
        &config,
        example.replace(&format!("{mount_path}/"), &format!("{}/", skills.display())),
    )
    .expect("write");
    let layout = tmp.path().join("layout");
    let pushed = skillfold(&[
        "push",
        "-c",
        config.to_str().expect("utf8"),
        "--oci-layout",
        layout.to_str().expect("utf8"),
    ]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let printed = String::from_utf8_lossy(&pushed.stdout).trim().to_owned();
    assert!(
        printed.ends_with(&format!("@{digest}")),
        "the example mounts {digest}, push made {printed}"
    );

    // Unpacked as a container runtime would, the example's descriptor verifies every bundle.
    let unpacked = tmp.path().join("mount");
    fs_err::create_dir(&unpacked).expect("mkdir");
    let manifest: serde_json::Value = serde_json::from_slice(
        &fs_err::read(
            layout
                .join("blobs/sha256")
                .join(digest.trim_start_matches("sha256:")),
        )
        .expect("manifest"),
    )
    .expect("json");
    for layer in manifest["layers"].as_array().expect("layers") {
        let blob = layout.join("blobs/sha256").join(
            layer["digest"]
                .as_str()
                .expect("digest")
                .trim_start_matches("sha256:"),
        );
        let status = std::process::Command::new("tar")
            .arg("-xzf")
            .arg(&blob)
            .arg("-C")
            .arg(&unpacked)
            .status()
            .expect("tar");
        assert!(status.success());
    }
    let descriptor = kind(docs, "ConfigMap")["data"]["skillfold.yaml"]
        .as_str()
        .expect("descriptor")
        .replace(
            &format!("{mount_path}/"),
            &format!("{}/", unpacked.display()),
        );
    let local = tmp.path().join("from-image.yaml");
    fs_err::write(&local, descriptor).expect("write");
    let verified = skillfold(&["verify", "-c", local.to_str().expect("utf8")]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    assert_eq!(
        stderr(&verified).matches("ok: ").count(),
        5,
        "{}",
        stderr(&verified)
    );
}
