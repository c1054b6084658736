//! Keyless Sigstore signatures made at test time by real implementations, for the image
//! signature tests: `tests/sigstore/make-fixtures.mjs` (sigstore-js signing against
//! @sigstore/mock's Fulcio CA and Rekor log on 127.0.0.1, installed by `npm ci` under the target
//! directory) writes a trusted root, bundles, cosign v2 annotations and refusal variants for a
//! digest and an identity, with sigstore-js's verdicts; `tests/sigstore/verify-python.py`
//! (sigstore-python, pinned in `tests/sigstore/requirements.txt`, in a virtual environment under
//! the target directory) gives the second verdict. [`made`] is what other tests call; the test
//! here checks that both oracles run and agree on a fresh set.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::mcp_client::npm_installed;
use super::support::bin::target_dir;

/// The identity the fixtures are signed for.
pub const ISSUER: &str = "https://token.actions.githubusercontent.com";
/// The subject the fixtures are signed for.
pub const SUBJECT: &str =
    "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main";

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(command: &mut Command) {
    let out = command.output().expect("run a sigstore harness step");
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Keyless fixtures for `digest` (`sha256:<hex>`) and `reference` (`REGISTRY/REPOSITORY`), signed
/// for `issuer` and `subject`, written into `out` (see `tests/fixtures/sigstore/README.md` for
/// the files). Panics when sigstore-js's verdicts are not the expected ones.
pub fn made(digest: &str, reference: &str, issuer: &str, subject: &str, out: &Path) {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR
        .get_or_init(|| npm_installed("tests/sigstore", "sigstore-js", Some("make-fixtures.mjs")));
    run(Command::new("node")
        .arg(dir.join("make-fixtures.mjs"))
        .args([
            "--digest",
            digest,
            "--reference",
            reference,
            "--issuer",
            issuer,
        ])
        .args(["--subject", subject, "--out"])
        .arg(out)
        .current_dir(dir));
}

/// sigstore-python's interpreter: a virtual environment under the target directory holding
/// exactly `tests/sigstore/requirements.txt` (made on first use, rebuilt when that file changes).
pub fn sigstore_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let requirements = manifest_dir().join("tests/sigstore/requirements.txt");
        let wanted = fs_err::read(&requirements).expect("tests/sigstore/requirements.txt");
        let venv = target_dir().join("sigstore-python-venv");
        let python = venv.join("bin/python");
        let stamp = venv.join("skillfold-requirements.txt");
        if fs_err::read(&stamp).ok().as_deref() == Some(wanted.as_slice()) && python.exists() {
            return python;
        }
        if venv.exists() {
            fs_err::remove_dir_all(&venv).expect("remove the stale venv");
        }
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements));
        fs_err::write(&stamp, &wanted).expect("write the venv stamp");
        python
    })
}

/// sigstore-python's verdicts on the fixtures in `dir` (`oracle-python.json`); panics when they
/// differ from sigstore-js's but for the known differences `verify-python.py` names.
pub fn judged_by_sigstore_python(dir: &Path) -> Value {
    run(Command::new(sigstore_python())
        .arg(manifest_dir().join("tests/sigstore/verify-python.py"))
        .arg(dir));
    serde_json::from_slice(&fs_err::read(dir.join("oracle-python.json")).unwrap()).unwrap()
}

#[test]
fn sigstore_js_and_sigstore_python_agree_on_fresh_fixtures() {
    let out = tempfile::tempdir().unwrap();
    let digest = format!("sha256:{}", "5a".repeat(32));
    let reference = "127.0.0.1:5000/acme/skills";
    made(&digest, reference, ISSUER, SUBJECT, out.path());

    // The payload is cosign's simple-signing payload, byte for byte.
    let payload = fs_err::read_to_string(out.path().join("payload.json")).unwrap();
    assert_eq!(
        payload,
        format!(
            r#"{{"critical":{{"identity":{{"docker-reference":"{reference}"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":null}}"#
        )
    );
    // cosign v3's statement names the image by its digest alone.
    let statement: Value =
        serde_json::from_slice(&fs_err::read(out.path().join("statement.json")).unwrap()).unwrap();
    assert_eq!(statement["subject"][0]["digest"]["sha256"], "5a".repeat(32));
    assert_eq!(
        statement["predicateType"],
        "https://sigstore.dev/cosign/sign/v1"
    );

    let js: Value =
        serde_json::from_slice(&fs_err::read(out.path().join("oracle.json")).unwrap()).unwrap();
    let python = judged_by_sigstore_python(out.path());
    for (name, accepted) in [
        ("message.bundle.json", true),
        ("message.v02.bundle.json", true),
        ("dsse.bundle.json", true),
        ("cosign-v2.json", true),
        ("legacy-issuer/message.bundle.json", true),
        ("other-subject/message.bundle.json", false),
        ("other-issuer/dsse.bundle.json", false),
        ("other-ca/message.bundle.json", false),
        ("other-log/dsse.bundle.json", false),
        ("expired/message.bundle.json", false),
        ("no-issuer/message.bundle.json", false),
        ("trusted_root.ca-ended.json + message.bundle.json", false),
    ] {
        assert_eq!(
            js[name]["accepted"], accepted,
            "sigstore-js on {name}: {}",
            js[name]
        );
        assert!(
            python.get(name).is_some(),
            "sigstore-python did not see {name}"
        );
    }
    // The known difference, written down where it is relied on.
    assert_eq!(
        python["trusted_root.ca-ended.json + message.bundle.json"]["accepted"],
        true
    );
    assert!(python["cosign-v2.json"]["not_judged"].is_string());
}
