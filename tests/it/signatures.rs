//! Signed commits: skillfold's verdict on a matrix of commits equals `git verify-commit` with the
//! same allowed-signers file or keyring (SSH-signed by an allowed key, by another key, unsigned, a
//! signed commit whose message was altered, a key whose validity ended before the commit, a key
//! allowed only for another namespace; OpenPGP-signed by a listed key, by its signing subkey, by
//! an unknown key, altered), and X.509 signatures are refused, never accepted. Keys are made by
//! `ssh-keygen` and `gpg`, commits signed by `git`, all under throwaway homes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::support::bin::{skillfold, skillfold_in, stderr, stdout};
use super::support::git::{Repo, git, git_input};

/// An SSH key pair made by `ssh-keygen` in `dir`; returns the private key's path.
fn ssh_key(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .output()
        .expect("ssh-keygen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

fn public(key: &Path) -> String {
    fs_err::read_to_string(key.with_extension("pub"))
        .expect("public key")
        .trim()
        .to_owned()
}

/// Commits `skills/demo` with `message`, signed by `key` when given; returns the commit id.
fn commit(repo: &Repo, message: &str, key: Option<&Path>) -> String {
    repo.write(
        "skills/demo/SKILL.md",
        format!("---\nname: demo\ndescription: Demo.\n---\n# demo\n\n{message}\n").as_bytes(),
    );
    git(&repo.work, &["add", "-A"]);
    let mut args = vec!["-c".to_owned(), "gpg.format=ssh".to_owned()];
    if let Some(key) = key {
        args.extend([
            "-c".to_owned(),
            format!("user.signingkey={}", key.display()),
            "commit".to_owned(),
            "-S".to_owned(),
        ]);
    } else {
        args.push("commit".to_owned());
    }
    args.extend(["-q".to_owned(), "-m".to_owned(), message.to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    git(&repo.work, &args);
    publish(repo, &git(&repo.work, &["rev-parse", "HEAD"]), message)
}

/// Makes `id` reachable in the bare repository under a branch named after `label`.
fn publish(repo: &Repo, id: &str, label: &str) -> String {
    repo.push_branch(&label.replace(' ', "-"), id);
    id.to_owned()
}

/// A commit object written by hand from `commit`'s, with `edit` applied to its text.
fn rewritten(repo: &Repo, commit: &str, label: &str, edit: impl Fn(&str) -> String) -> String {
    let text = git(&repo.work, &["cat-file", "commit", commit]);
    let id = git_input(
        &repo.work,
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        format!("{}\n", edit(&text)).as_bytes(),
    );
    publish(repo, &id, label)
}

/// `git verify-commit` with `signers` as the allowed-signers file and `gnupg_home` as the
/// OpenPGP keyring: whether it accepts `commit`.
fn git_accepts(repo: &Repo, signers: &Path, gnupg_home: &Path, commit: &str) -> bool {
    Command::new("git")
        .args([
            "-c",
            &format!("gpg.ssh.allowedSignersFile={}", signers.display()),
            "verify-commit",
            commit,
        ])
        .current_dir(&repo.work)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GNUPGHOME", gnupg_home)
        .output()
        .expect("git verify-commit")
        .status
        .success()
}

/// `skillfold pin OPTION KEYS` on `commit` (`--allowed-signers` or `--openpgp-keys`): the error
/// code, or `None` when accepted.
fn skillfold_verdict(repo: &Repo, option: &str, keys: &Path, commit: &str) -> Option<String> {
    let out = skillfold(&[
        "pin",
        "--source",
        &repo.file_url(),
        "--revision",
        commit,
        "--root",
        "skills",
        option,
        keys.to_str().expect("utf8"),
        "demo",
    ]);
    match out.status.code() {
        Some(0) => {
            let key = option.trim_start_matches("--").replace('-', "_");
            assert!(
                stdout(&out).contains(&format!("{key}:")),
                "{}",
                stdout(&out)
            );
            None
        }
        Some(2) => {
            let err = stderr(&out);
            let code = err
                .rsplit('[')
                .next()
                .and_then(|c| c.split(']').next())
                .unwrap_or_default()
                .to_owned();
            Some(code)
        }
        other => panic!("exit {other:?}: {}", stderr(&out)),
    }
}

#[test]
fn the_verdicts_agree_with_git_verify_commit() {
    let keys = tempfile::tempdir().expect("tempdir");
    let alice = ssh_key(keys.path(), "alice");
    let mallory = ssh_key(keys.path(), "mallory");
    let old = ssh_key(keys.path(), "old");
    let other_ns = ssh_key(keys.path(), "filesigner");
    let signers = keys.path().join("allowed_signers");
    fs_err::write(
        &signers,
        format!(
            "# who may sign the skills\nalice@example.com namespaces=\"git\" {}\nold@example.com namespaces=\"git\",valid-before=\"20200101\" {}\nfiles@example.com namespaces=\"file\" {}\n",
            public(&alice),
            public(&old),
            public(&other_ns)
        ),
    )
    .expect("write");

    let repo = Repo::new();
    let signed = commit(&repo, "signed by alice", Some(&alice));
    let cases = [
        ("allowed key", signed.clone(), None),
        (
            "another key",
            commit(&repo, "signed by mallory", Some(&mallory)),
            Some("signer_not_allowed"),
        ),
        (
            "unsigned",
            commit(&repo, "not signed", None),
            Some("signature_missing"),
        ),
        (
            "altered message",
            rewritten(&repo, &signed, "altered", |t| {
                t.replace("signed by alice", "signed by alice, then edited")
            }),
            Some("signature_invalid"),
        ),
        (
            "expired key",
            commit(&repo, "signed by old", Some(&old)),
            Some("signer_not_allowed"),
        ),
        (
            "key allowed for another namespace",
            commit(&repo, "signed by filesigner", Some(&other_ns)),
            Some("signer_not_allowed"),
        ),
    ];
    for (case, id, expected) in cases {
        let ours = skillfold_verdict(&repo, "--allowed-signers", &signers, &id);
        assert_eq!(ours.as_deref(), expected, "{case}");
        assert_eq!(
            ours.is_none(),
            git_accepts(&repo, &signers, keys.path(), &id),
            "{case}: skillfold and git verify-commit disagree"
        );
    }
}

#[test]
fn x509_is_refused_as_unsupported_and_openpgp_needs_a_keyring() {
    let keys = tempfile::tempdir().expect("tempdir");
    let alice = ssh_key(keys.path(), "alice");
    let signers = keys.path().join("allowed_signers");
    fs_err::write(&signers, format!("alice {}\n", public(&alice))).expect("write");
    let repo = Repo::new();
    let signed = commit(&repo, "signed", Some(&alice));
    for (label, armor, code) in [
        (
            "openpgp",
            "-----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----",
            "signer_not_allowed",
        ),
        (
            "x509",
            "-----BEGIN SIGNED MESSAGE-----\n MIIGJgYJKoZIhvcNAQcC\n -----END SIGNED MESSAGE-----",
            "signature_unsupported",
        ),
    ] {
        let id = rewritten(&repo, &signed, label, |text| {
            let start = text.find("gpgsig ").expect("a signature header");
            let end = text[start..]
                .find("-----END SSH SIGNATURE-----")
                .expect("its end")
                + start
                + "-----END SSH SIGNATURE-----".len();
            format!("{}gpgsig {armor}{}", &text[..start], &text[end..])
        });
        assert_eq!(
            skillfold_verdict(&repo, "--allowed-signers", &signers, &id).as_deref(),
            Some(code),
            "{label}"
        );
    }
}

#[test]
fn prepare_records_the_signer_and_refuses_an_unsigned_commit() {
    let keys = tempfile::tempdir().expect("tempdir");
    let alice = ssh_key(keys.path(), "alice");
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!("alice@example.com {}\n", public(&alice)),
    )
    .expect("write");
    let repo = Repo::new();
    let signed = commit(&repo, "signed", Some(&alice));
    let digest = repo.digest("demo");
    let descriptor = |revision: &str, digest: &str| {
        fs_err::write(
            tmp.path().join("skillfold.yaml"),
            format!(
                "skills:\n  - git:\n      source: {}\n      revision: {revision}\n      directory: corpus\n      root: skills\n      verify:\n        allowed_signers: allowed_signers\n      approved:\n        - {{ name: demo, version: '1', hash: {digest} }}\n",
                repo.file_url()
            ),
        )
        .expect("write");
    };
    descriptor(&signed, &digest);
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let signer = &report["sources"][0]["signer"];
    assert_eq!(signer["principal"], "alice@example.com", "{report}");
    assert!(
        signer["fingerprint"]
            .as_str()
            .expect("fingerprint")
            .starts_with("SHA256:")
    );
    let current = fs_err::read_link(tmp.path().join("corpus/current")).expect("published");

    // Warm: up to date, no fetch, and the report still names the signer.
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(report["fetches"], 0, "{report}");
    assert_eq!(
        report["sources"][0]["signer"]["principal"],
        "alice@example.com"
    );

    // The warm path verifies the recorded signature again: alice's key still listed for `git`,
    // but on a second line, after one for another principal and namespace — Git takes the
    // principals of the first line, so the commit is refused, not reused.
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!(
            "files@example.com namespaces=\"file\" {0}\nalice@example.com namespaces=\"git\" {0}\n",
            public(&alice)
        ),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[signer_not_allowed]"),
        "{}",
        stderr(&out)
    );
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!("alice@example.com {}\n", public(&alice)),
    )
    .expect("write");

    // `verify` checks the signature again from the commit object the manifest keeps: it holds
    // while the key is allowed, and fails once the allowed signers no longer list it.
    let out = skillfold_in(tmp.path(), &["verify", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let other = ssh_key(keys.path(), "other");
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!("other@example.com {}\n", public(&other)),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["verify", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("signer_not_allowed"),
        "{}",
        stderr(&out)
    );
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!("alice@example.com {}\n", public(&alice)),
    )
    .expect("write");

    // Unsigned: refused, the published generation stays.
    let unsigned = commit(&repo, "unsigned", None);
    descriptor(&unsigned, &repo.digest("demo"));
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[signature_missing]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs_err::read_link(tmp.path().join("corpus/current")).expect("published"),
        current
    );

    // A malformed allowed-signers file is refused by `check`, naming the line.
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!(
            "alice@example.com {}\nbob ssh-ed25519 AAAA\n",
            public(&alice)
        ),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["check", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("allowed_signers:2:"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("[invalid_trust_policy]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn update_applies_the_signature_policy_to_its_target() {
    let keys = tempfile::tempdir().expect("tempdir");
    let alice = ssh_key(keys.path(), "alice");
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!("alice@example.com {}\n", public(&alice)),
    )
    .expect("write");
    let repo = Repo::new();
    let pinned = commit(&repo, "first", Some(&alice));
    let before = format!(
        "skills:\n  - git:\n      source: {}\n      revision: {pinned}  # signed by alice\n      directory: corpus\n      root: skills\n      verify:\n        allowed_signers: allowed_signers\n      approved:\n        - {{ name: demo, version: '1', hash: {} }}\n",
        repo.file_url(),
        repo.digest("demo")
    );
    let path = tmp.path().join("skillfold.yaml");
    fs_err::write(&path, &before).expect("write");

    // An unsigned target: refused as `prepare` would refuse it, nothing written.
    commit(&repo, "unsigned", None);
    let out = skillfold_in(
        tmp.path(),
        &[
            "update",
            "-c",
            "skillfold.yaml",
            "--to",
            "unsigned",
            "--write",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[signature_missing]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs_err::read_to_string(&path).expect("read"), before);

    // A target signed by alice: the review names her, and the new pin is written.
    let signed = commit(&repo, "second", Some(&alice));
    let out = skillfold_in(
        tmp.path(),
        &[
            "update",
            "-c",
            "skillfold.yaml",
            "--to",
            "second",
            "--write",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("- Signed by alice@example.com (`SHA256:"),
        "{}",
        stdout(&out)
    );
    let after = fs_err::read_to_string(&path).expect("read");
    assert!(
        after.contains(&format!("revision: {signed}  # signed by alice")),
        "{after}"
    );
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A throwaway GnuPG home.
fn gnupg_home(parent: &Path, name: &str) -> PathBuf {
    let home = parent.join(name);
    fs_err::create_dir(&home).expect("mkdir");
    std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    home
}

/// Runs `gpg --batch` in `home`; returns its stdout.
fn gpg(home: &Path, args: &[&str]) -> String {
    let out = Command::new("gpg")
        .arg("--batch")
        .args(args)
        .env("GNUPGHOME", home)
        .output()
        .expect("gpg");
    assert!(
        out.status.success(),
        "gpg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Makes an ed25519 key for `user` in `home`; returns the fingerprints (primary first, then
/// subkeys).
fn gpg_key(home: &Path, user: &str) -> Vec<String> {
    gpg(
        home,
        &[
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            user,
            "ed25519",
            "sign",
            "never",
        ],
    );
    fingerprints(home, user)
}

fn fingerprints(home: &Path, user: &str) -> Vec<String> {
    gpg(home, &["--with-colons", "--list-keys", user])
        .lines()
        .filter_map(|l| l.strip_prefix("fpr:"))
        .map(|l| l.trim_matches(':').to_owned())
        .collect()
}

/// Commits `skills/demo` signed with the OpenPGP key `key` of `home`.
fn gpg_commit(repo: &Repo, home: &Path, message: &str, key: &str) -> String {
    gpg_commit_at(repo, home, message, key, None)
}

/// [`gpg_commit`] with the committer date `date` (Git's `@<unix seconds>` form) when given.
fn gpg_commit_at(repo: &Repo, home: &Path, message: &str, key: &str, date: Option<&str>) -> String {
    repo.write(
        "skills/demo/SKILL.md",
        format!("---\nname: demo\ndescription: Demo.\n---\n# demo\n\n{message}\n").as_bytes(),
    );
    git(&repo.work, &["add", "-A"]);
    let out = Command::new("git")
        .args([
            "-c",
            "gpg.format=openpgp",
            "-c",
            &format!("user.signingkey={key}"),
            "commit",
            "-S",
            "-q",
            "-m",
            message,
        ])
        .current_dir(&repo.work)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@example.com")
        .env("GIT_COMMITTER_NAME", "Fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@example.com")
        .env("GNUPGHOME", home)
        .envs(date.map(|d| ("GIT_COMMITTER_DATE", d)))
        .output()
        .expect("git commit -S");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    publish(repo, &git(&repo.work, &["rev-parse", "HEAD"]), message)
}

#[test]
fn openpgp_verdicts_agree_with_git_verify_commit() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let signing = gnupg_home(tmp.path(), "signing");
    let verifying = gnupg_home(tmp.path(), "verifying");
    let alice = gpg_key(&signing, "Alice <alice@example.com>");
    gpg(
        &signing,
        &[
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-add-key",
            &alice[0],
            "ed25519",
            "sign",
            "never",
        ],
    );
    let alice = fingerprints(&signing, "alice@example.com");
    assert_eq!(alice.len(), 2, "a primary key and a signing subkey");
    let mallory = gpg_key(&signing, "Mallory <mallory@example.com>");
    let keyring = tmp.path().join("alice.asc");
    fs_err::write(
        &keyring,
        gpg(&signing, &["--armor", "--export", "alice@example.com"]),
    )
    .expect("write");
    gpg(&verifying, &["--import", keyring.to_str().expect("utf8")]);
    // git verify-commit needs no trust level beyond a valid signature; the SSH file is unused.
    let no_ssh = tmp.path().join("allowed_signers");
    fs_err::write(&no_ssh, "").expect("write");

    let repo = Repo::new();
    let by_alice = gpg_commit(
        &repo,
        &signing,
        "signed by alice",
        &format!("{}!", alice[0]),
    );
    let cases = [
        ("listed primary key", by_alice.clone(), None),
        (
            "listed signing subkey",
            gpg_commit(
                &repo,
                &signing,
                "signed by alice's subkey",
                &format!("{}!", alice[1]),
            ),
            None,
        ),
        (
            "unknown key",
            gpg_commit(&repo, &signing, "signed by mallory", &mallory[0]),
            Some("signer_not_allowed"),
        ),
        (
            "altered message",
            rewritten(&repo, &by_alice, "pgp altered", |t| {
                t.replace("signed by alice", "signed by alice, then edited")
            }),
            Some("signature_invalid"),
        ),
        (
            "unsigned",
            commit(&repo, "pgp unsigned", None),
            Some("signature_missing"),
        ),
    ];
    for (case, id, expected) in cases {
        let ours = skillfold_verdict(&repo, "--openpgp-keys", &keyring, &id);
        assert_eq!(ours.as_deref(), expected, "{case}");
        assert_eq!(
            ours.is_none(),
            git_accepts(&repo, &no_ssh, &verifying, &id),
            "{case}: skillfold and git verify-commit disagree"
        );
    }
    for home in [&signing, &verifying] {
        let _ = Command::new("gpgconf")
            .args(["--kill", "all"])
            .env("GNUPGHOME", home)
            .output();
    }
}

#[test]
fn revoked_and_expired_openpgp_keys_are_refused_as_git_verify_commit_refuses_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let signing = gnupg_home(tmp.path(), "signing");
    let no_ssh = tmp.path().join("allowed_signers");
    fs_err::write(&no_ssh, "").expect("write");
    let repo = Repo::new();

    // Carol signs, then revokes her key with the certificate gpg made for it.
    let carol = gpg_key(&signing, "Carol <carol@example.com>");
    let by_carol = gpg_commit(&repo, &signing, "signed by carol", &carol[0]);
    let certificate = fs_err::read_to_string(
        signing
            .join("openpgp-revocs.d")
            .join(format!("{}.rev", carol[0])),
    )
    .expect("revocation certificate")
    // gpg guards the stored certificate against an accidental import with a leading colon.
    .replace(
        ":-----BEGIN PGP PUBLIC KEY BLOCK-----",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----",
    );
    let revocation = tmp.path().join("carol.rev");
    fs_err::write(&revocation, certificate).expect("write");
    gpg(&signing, &["--import", revocation.to_str().expect("utf8")]);

    // Dave's key expires three seconds after it is made; his commit is dated a minute later
    // (after the expiry), and by the time it is verified the key has expired for gpg too.
    gpg(
        &signing,
        &[
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            "Dave <dave@example.com>",
            "ed25519",
            "sign",
            "seconds=3",
        ],
    );
    let dave = fingerprints(&signing, "dave@example.com");
    let later = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_secs()
        + 60;
    let by_dave = gpg_commit_at(
        &repo,
        &signing,
        "signed by dave",
        &dave[0],
        Some(&format!("@{later} +0000")),
    );
    // Erin's primary key never expires; her signing subkey does, three seconds after it is
    // made, and her commit through it is dated after that.
    let erin = gpg_key(&signing, "Erin <erin@example.com>");
    gpg(
        &signing,
        &[
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-add-key",
            &erin[0],
            "ed25519",
            "sign",
            "seconds=3",
        ],
    );
    let erin = fingerprints(&signing, "erin@example.com");
    let by_erin = gpg_commit_at(
        &repo,
        &signing,
        "signed by erin's subkey",
        &format!("{}!", erin[1]),
        Some(&format!("@{later} +0000")),
    );
    // Frank's key expires three seconds after it is made too, but his commit is made at once,
    // while the key is valid: gpg judges the expiry now, so Git refuses it once the key has
    // expired, and so does skillfold (never more lenient than gpg).
    gpg(
        &signing,
        &[
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            "Frank <frank@example.com>",
            "ed25519",
            "sign",
            "seconds=3",
        ],
    );
    let frank = fingerprints(&signing, "frank@example.com");
    let by_frank = gpg_commit(&repo, &signing, "signed by frank", &frank[0]);
    std::thread::sleep(std::time::Duration::from_secs(4));

    for (case, user, id) in [
        ("revoked key", "carol@example.com", &by_carol),
        ("expired key", "dave@example.com", &by_dave),
        ("expired signing subkey", "erin@example.com", &by_erin),
        (
            "key expired since the commit",
            "frank@example.com",
            &by_frank,
        ),
    ] {
        let keyring = tmp.path().join(format!("{user}.asc"));
        fs_err::write(&keyring, gpg(&signing, &["--armor", "--export", user])).expect("write");
        let verifying = gnupg_home(tmp.path(), &format!("verifying-{user}"));
        gpg(&verifying, &["--import", keyring.to_str().expect("utf8")]);
        let ours = skillfold_verdict(&repo, "--openpgp-keys", &keyring, id);
        assert_eq!(ours.as_deref(), Some("signer_not_allowed"), "{case}");
        assert!(
            !git_accepts(&repo, &no_ssh, &verifying, id),
            "{case}: git verify-commit accepts it"
        );
        let _ = Command::new("gpgconf")
            .args(["--kill", "all"])
            .env("GNUPGHOME", &verifying)
            .output();
    }
    let _ = Command::new("gpgconf")
        .args(["--kill", "all"])
        .env("GNUPGHOME", &signing)
        .output();
}

// ---------------------------------------------------------------------------------------------
// Hostile cases (issue 28, items 6–9): each builds its keys, allowed-signers file and commit from
// scratch, asks `git verify-commit` (so `ssh-keygen` or `gpg`), and asserts that skillfold's
// verdict is the one expected, and never more lenient than Git's.

/// One hostile case: skillfold's expected verdict (`None`: accepted) and whether Git accepts.
struct Verdict {
    case: String,
    ours: Option<String>,
    expected: Option<&'static str>,
    git: bool,
}

/// Asserts, over every case at once (so a run lists every disagreement): skillfold's verdict is
/// the expected one, and skillfold accepts only what Git accepts. Cases where skillfold is
/// stricter than Git by design have an expected refusal while Git accepts; they are named.
fn assert_verdicts(verdicts: &[Verdict]) {
    let mut wrong = Vec::new();
    for v in verdicts {
        // The table, for `--nocapture`.
        eprintln!(
            "{:<55} skillfold {:<22} git {}",
            v.case,
            v.ours.as_deref().unwrap_or("accepts"),
            if v.git { "accepts" } else { "refuses" }
        );
        let more_lenient = v.ours.is_none() && !v.git;
        if more_lenient || v.ours.as_deref() != v.expected {
            wrong.push(format!(
                "{}: skillfold {:?} (expected {:?}), git verify-commit {}",
                v.case,
                v.ours,
                v.expected,
                if v.git { "accepts" } else { "refuses" }
            ));
        }
    }
    let accepted_where_git_refuses = verdicts
        .iter()
        .filter(|v| v.ours.is_none() && !v.git)
        .count();
    assert!(
        wrong.is_empty(),
        "{} of {} verdicts wrong ({accepted_where_git_refuses} accepted what git refuses):\n{}",
        wrong.len(),
        verdicts.len(),
        wrong.join("\n")
    );
}

/// Signs `payload` with the SSH key `key` in the `git` namespace, as `git commit -S` does.
fn ssh_sign(key: &Path, payload: &[u8]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("payload");
    fs_err::write(&file, payload).expect("write");
    let out = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", "git", "-f"])
        .arg(key)
        .arg(&file)
        .output()
        .expect("ssh-keygen -Y sign");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs_err::read_to_string(file.with_extension("sig")).expect("signature")
}

/// A header line `name` whose value is the armored `armor` (continuation lines indented).
fn signature_header(name: &str, armor: &str) -> String {
    format!("{name} {}", armor.trim_end().replace('\n', "\n "))
}

/// Writes the commit object `headers`, a blank line and `message` by hand (`git hash-object
/// --literally`: such objects are what is under test) and publishes it as `label`.
fn hand_commit(repo: &Repo, label: &str, headers: &[String], message: &str) -> String {
    let text = format!("{}\n\n{message}", headers.join("\n"));
    let id = git_input(
        &repo.work,
        &[
            "hash-object",
            "--literally",
            "-t",
            "commit",
            "-w",
            "--stdin",
        ],
        text.as_bytes(),
    );
    publish(repo, &id, label)
}

/// The text a signature over `headers` and `message` covers (what Git signs).
fn payload(headers: &[String], message: &str) -> String {
    format!("{}\n\n{message}", headers.join("\n"))
}

/// `skillfold pin` and `git verify-commit` on `commit` with the allowed-signers text `signers`.
fn ssh_verdict(
    repo: &Repo,
    dir: &Path,
    case: &str,
    signers: &str,
    commit: &str,
    expected: Option<&'static str>,
) -> Verdict {
    let file = dir.join(format!("signers-{}", case.replace([' ', '/', '"'], "-")));
    fs_err::write(&file, signers).expect("write");
    Verdict {
        case: case.to_owned(),
        ours: skillfold_verdict(repo, "--allowed-signers", &file, commit),
        expected,
        git: git_accepts(repo, &file, dir, commit),
    }
}

#[test]
fn hostile_allowed_signers_lines_get_verdicts_no_more_lenient_than_git() {
    let keys = tempfile::tempdir().expect("tempdir");
    let alice = ssh_key(keys.path(), "alice");
    let a = public(&alice);
    let repo = Repo::new();
    let signed = commit(&repo, "signed by alice", Some(&alice));
    let mut verdicts = Vec::new();
    let mut case = |case: &str, signers: String, expected: Option<&'static str>| {
        verdicts.push(ssh_verdict(
            &repo,
            keys.path(),
            case,
            &signers,
            &signed,
            expected,
        ));
    };
    const BAD: Option<&str> = Some("invalid_trust_policy");
    const NOT_ALLOWED: Option<&str> = Some("signer_not_allowed");
    // Item 7: an option given twice refuses the line (here: the file, and `check` says so).
    case(
        "namespaces twice, the last git",
        format!("alice@example.com namespaces=\"file\",namespaces=\"git\" {a}\n"),
        BAD,
    );
    case(
        "valid-before twice, the last in the future",
        format!("alice@example.com valid-before=\"20000101\",valid-before=\"20990101\" {a}\n"),
        BAD,
    );
    case(
        "valid-after twice, the last in the past",
        format!("alice@example.com valid-after=\"20990101\",valid-after=\"20000101\" {a}\n"),
        BAD,
    );
    // Next to it: windows `ssh-keygen` refuses as a whole.
    case(
        "valid-after at the epoch",
        format!("alice@example.com valid-after=\"19700101Z\" {a}\n"),
        BAD,
    );
    case(
        "valid-before before valid-after",
        format!("alice@example.com valid-after=\"20990101\",valid-before=\"20000101\" {a}\n"),
        BAD,
    );
    // Item 9: namespace patterns as `ssh-keygen`'s match_pattern_list reads them.
    case(
        "namespaces g*",
        format!("alice@example.com namespaces=\"g*\" {a}\n"),
        None,
    );
    case(
        "namespaces gi?",
        format!("alice@example.com namespaces=\"gi?\" {a}\n"),
        None,
    );
    case(
        "namespaces !file,*",
        format!("alice@example.com namespaces=\"!file,*\" {a}\n"),
        None,
    );
    case(
        "namespaces !git,*",
        format!("alice@example.com namespaces=\"!git,*\" {a}\n"),
        NOT_ALLOWED,
    );
    case(
        "namespaces *,!g*",
        format!("alice@example.com namespaces=\"*,!g*\" {a}\n"),
        NOT_ALLOWED,
    );
    // Item 9: one key on two lines — Git takes the principals of the first line.
    case(
        "first line file for x, then git for y",
        format!("x namespaces=\"file\" {a}\ny namespaces=\"git\" {a}\n"),
        NOT_ALLOWED,
    );
    case(
        "first line file for x, then git for x",
        format!("x namespaces=\"file\" {a}\nx namespaces=\"git\" {a}\n"),
        None,
    );
    case(
        "first line file for x,y, then git for y",
        format!("x,y namespaces=\"file\" {a}\ny namespaces=\"git\" {a}\n"),
        None,
    );
    case(
        "first line file for x, then git for !x,*",
        format!("x namespaces=\"file\" {a}\n!x,* namespaces=\"git\" {a}\n"),
        NOT_ALLOWED,
    );
    case(
        "first line file for x, then git for *",
        format!("x namespaces=\"file\" {a}\n* namespaces=\"git\" {a}\n"),
        None,
    );
    case(
        "first line expired for x, then y",
        format!("x valid-before=\"20200101\" {a}\ny {a}\n"),
        None,
    );
    case(
        "first line file for x,,y, then git for y",
        format!("x,,y namespaces=\"file\" {a}\ny namespaces=\"git\" {a}\n"),
        NOT_ALLOWED,
    );
    assert_verdicts(&verdicts);

    // `check` refuses a descriptor whose allowed-signers file repeats an option, naming the line
    // and the rule.
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("allowed_signers"),
        format!("alice@example.com {a}\nbob@example.com valid-before=\"20000101\",valid-before=\"20990101\" {a}\n"),
    )
    .expect("write");
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {signed}\n      directory: corpus\n      root: skills\n      verify:\n        allowed_signers: allowed_signers\n      approved:\n        - {{ name: demo, version: '1', hash: {} }}\n",
            repo.file_url(),
            repo.digest("demo")
        ),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["check", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("allowed_signers:2:"), "{err}");
    assert!(err.contains("`valid-before` is given twice"), "{err}");
    assert!(err.contains("multiple \"valid-before\" clauses"), "{err}");
    assert!(err.contains("[invalid_trust_policy]"), "{err}");
}

#[test]
fn hand_built_commits_are_read_as_git_reads_them() {
    let keys = tempfile::tempdir().expect("tempdir");
    let alice = ssh_key(keys.path(), "alice");
    let mallory = ssh_key(keys.path(), "mallory");
    let a = public(&alice);
    let repo = Repo::new();
    let base = commit(&repo, "base", None);
    let tree = git(&repo.work, &["rev-parse", &format!("{base}^{{tree}}")]);
    let header = |name: &str, value: String| format!("{name} {value}");
    let ident = |time: &str| format!("Fixture <fixture@example.com> {time} +0000");
    let common = |committers: &[&str]| -> Vec<String> {
        let mut h = vec![
            header("tree", tree.clone()),
            header("parent", base.clone()),
            header("author", ident("1700000000")),
        ];
        h.extend(committers.iter().map(|t| header("committer", ident(t))));
        h
    };
    let message = "hand-built\n";
    let allowed = format!("alice@example.com {a}\n");
    // The window ends 2025-01-01; 2026-01-01 is after it, 2020-01-01 inside.
    let windowed = format!("alice@example.com valid-before=\"20250101\" {a}\n");
    let (after, inside) = ("1767225600", "1577836800");
    let other = ssh_sign(&mallory, b"another payload");
    let mut verdicts = Vec::new();
    let mut case = |case: &str, signers: &str, headers: Vec<String>, expected| {
        let id = hand_commit(&repo, case, &headers, message);
        verdicts.push(ssh_verdict(
            &repo,
            keys.path(),
            case,
            signers,
            &id,
            expected,
        ));
    };
    const INVALID: Option<&str> = Some("signature_invalid");

    // Control: one signature over the object without it.
    let plain = common(&[inside]);
    let mut headers = plain.clone();
    headers.push(signature_header(
        "gpgsig",
        &ssh_sign(&alice, payload(&plain, message).as_bytes()),
    ));
    case("one signature", &allowed, headers, None);

    // Item 8: a signature over a payload that still holds a `gpgsig-sha256` header, which Git
    // strips before verifying.
    let mut signed = plain.clone();
    signed.push(signature_header("gpgsig-sha256", &other));
    let mut headers = signed.clone();
    headers.push(signature_header(
        "gpgsig",
        &ssh_sign(&alice, payload(&signed, message).as_bytes()),
    ));
    case(
        "signature over a payload holding gpgsig-sha256",
        &allowed,
        headers,
        INVALID,
    );
    // ... and the other way round: the signature over the stripped payload, a `gpgsig-sha256`
    // beside it: Git accepts, and so does skillfold.
    let mut headers = plain.clone();
    headers.push(signature_header(
        "gpgsig",
        &ssh_sign(&alice, payload(&plain, message).as_bytes()),
    ));
    headers.push(signature_header("gpgsig-sha256", &other));
    case("gpgsig beside gpgsig-sha256", &allowed, headers, None);
    // Two `gpgsig` headers, the first over a payload holding the second.
    let mut signed = plain.clone();
    signed.push(signature_header("gpgsig", &other));
    let mut headers = plain.clone();
    headers.push(signature_header(
        "gpgsig",
        &ssh_sign(&alice, payload(&signed, message).as_bytes()),
    ));
    headers.push(signature_header("gpgsig", &other));
    case(
        "two gpgsig, the first over the second",
        &allowed,
        headers,
        INVALID,
    );
    // Two `gpgsig` headers, the first over the stripped payload: Git verifies the first (it
    // concatenates both and ssh-keygen reads one); skillfold refuses two (stricter by design).
    let mut headers = plain.clone();
    headers.push(signature_header(
        "gpgsig",
        &ssh_sign(&alice, payload(&plain, message).as_bytes()),
    ));
    headers.push(signature_header("gpgsig", &other));
    case(
        "two gpgsig, the first over the stripped payload",
        &allowed,
        headers,
        INVALID,
    );
    // Two committers: Git judges the window by the first (after it), skillfold took the last.
    let two = common(&[after, inside]);
    let mut headers = two.clone();
    headers.push(signature_header(
        "gpgsig",
        &ssh_sign(&alice, payload(&two, message).as_bytes()),
    ));
    case(
        "two committers, the first outside the window",
        &windowed,
        headers,
        INVALID,
    );
    // Next to it: a committer time of 0 (Git then judges at the current time, after the
    // window), and one Git cannot read (`+…`: Git judges at the current time too).
    for (label, time) in [
        ("committer time 0", "0"),
        ("committer time +1577836800", "+1577836800"),
    ] {
        let odd = common(&[time]);
        let mut headers = odd.clone();
        headers.push(signature_header(
            "gpgsig",
            &ssh_sign(&alice, payload(&odd, message).as_bytes()),
        ));
        case(label, &windowed, headers, INVALID);
    }
    assert_verdicts(&verdicts);
}

/// What an OpenPGP key made for a case looks like.
#[derive(Clone, Copy)]
enum PgpKey {
    /// A primary key flagged certify and sign (the control).
    SigningPrimary,
    /// A primary key flagged certify only.
    CertifyOnlyPrimary,
    /// A certify-only primary with a subkey flagged sign, back-signed (the control).
    SigningSubkey,
    /// A certify-only primary with a subkey flagged for encryption only, with or without the
    /// back-signature a signing subkey carries.
    EncryptionSubkey { backsig: bool },
}

/// Makes the key of `kind` for `user` with rpgp (gpg will not make an encryption-only subkey of
/// a signing algorithm, nor sign with one): the secret key that signs, and the armored public
/// keyring.
fn pgp_key(
    kind: PgpKey,
    user: &str,
) -> (
    pgp::composed::SignedSecretKey,
    pgp::composed::SignedPublicKey,
) {
    use pgp::composed::{KeyType, SecretKeyParamsBuilder, SubkeyParamsBuilder};
    use pgp::types::{Password, Timestamp};
    let mut rng = ssh_key::rand_core::OsRng;
    let an_hour_ago = Timestamp::from_secs(Timestamp::now().as_secs() - 3600);
    let subkey = SubkeyParamsBuilder::default()
        .key_type(KeyType::Ed25519Legacy)
        .can_sign(true)
        .created_at(an_hour_ago)
        .build()
        .expect("subkey params");
    let mut params = SecretKeyParamsBuilder::default();
    params
        .key_type(KeyType::Ed25519Legacy)
        .can_certify(true)
        .can_sign(matches!(kind, PgpKey::SigningPrimary))
        .created_at(an_hour_ago)
        .primary_user_id(user.to_owned());
    if !matches!(kind, PgpKey::SigningPrimary | PgpKey::CertifyOnlyPrimary) {
        params.subkey(subkey);
    }
    let secret = params
        .build()
        .expect("key params")
        .generate(rng)
        .expect("generate");
    let mut public = secret.to_public_key();
    if let PgpKey::EncryptionSubkey { backsig } = kind {
        // Bind the subkey again, flagged for encryption only (the newest binding decides).
        let sub = &secret.secret_subkeys[0].key;
        let mut flags = pgp::packet::KeyFlags::default();
        flags.set_encrypt_comms(true);
        flags.set_encrypt_storage(true);
        let back = backsig.then(|| {
            sub.sign_primary_key_binding(
                &mut rng,
                secret.primary_key.public_key(),
                &Password::empty(),
            )
            .expect("back-signature")
        });
        let binding = sub
            .sign(
                &mut rng,
                &secret.primary_key,
                secret.primary_key.public_key(),
                &Password::empty(),
                flags,
                back,
            )
            .expect("binding");
        public.public_subkeys[0].signatures = vec![binding];
    }
    (secret, public)
}

/// An armored detached signature over `payload` by the primary key of `secret` or its first
/// subkey.
fn pgp_sign(secret: &pgp::composed::SignedSecretKey, by_subkey: bool, payload: &[u8]) -> String {
    use pgp::composed::{ArmorOptions, DetachedSignature};
    let rng = ssh_key::rand_core::OsRng;
    let password = pgp::types::Password::empty();
    let hash = pgp::crypto::hash::HashAlgorithm::Sha256;
    let signature = if by_subkey {
        DetachedSignature::sign_binary_data(
            rng,
            &secret.secret_subkeys[0].key,
            &password,
            hash,
            payload,
        )
    } else {
        DetachedSignature::sign_binary_data(rng, &secret.primary_key, &password, hash, payload)
    }
    .expect("sign");
    signature
        .to_armored_string(ArmorOptions::default())
        .expect("armor")
}

#[test]
fn openpgp_key_flags_decide_who_may_sign_as_gpg_decides() {
    use pgp::composed::ArmorOptions;
    let tmp = tempfile::tempdir().expect("tempdir");
    let no_ssh = tmp.path().join("allowed_signers");
    fs_err::write(&no_ssh, "").expect("write");
    let repo = Repo::new();
    let base = commit(&repo, "base", None);
    let tree = git(&repo.work, &["rev-parse", &format!("{base}^{{tree}}")]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_secs();
    let ident = format!("Fixture <fixture@example.com> {} +0000", now - 60);
    let headers = vec![
        format!("tree {tree}"),
        format!("parent {base}"),
        format!("author {ident}"),
        format!("committer {ident}"),
    ];
    let mut verdicts = Vec::new();
    const NOT_ALLOWED: Option<&str> = Some("signer_not_allowed");
    for (index, (case, kind, by_subkey, shape, expected)) in [
        (
            "primary flagged sign",
            PgpKey::SigningPrimary,
            false,
            Shape::One,
            None,
        ),
        (
            "certify-only primary",
            PgpKey::CertifyOnlyPrimary,
            false,
            Shape::One,
            NOT_ALLOWED,
        ),
        (
            "back-signed signing subkey",
            PgpKey::SigningSubkey,
            true,
            Shape::One,
            None,
        ),
        (
            "encryption-only subkey",
            PgpKey::EncryptionSubkey { backsig: false },
            true,
            Shape::One,
            NOT_ALLOWED,
        ),
        (
            "encryption-only subkey with a back-signature",
            PgpKey::EncryptionSubkey { backsig: true },
            true,
            Shape::One,
            NOT_ALLOWED,
        ),
        // Next to it: two signatures in one armored block (gpg reports both; Git refuses).
        (
            "two signatures in one block",
            PgpKey::SigningPrimary,
            false,
            Shape::Twice,
            Some("signature_invalid"),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let user = format!("Signer {index} <signer{index}@example.com>");
        let (secret, public) = pgp_key(kind, &user);
        let keyring = tmp.path().join(format!("key-{index}.asc"));
        fs_err::write(
            &keyring,
            public
                .to_armored_string(ArmorOptions::default())
                .expect("armor"),
        )
        .expect("write");
        let home = gnupg_home(tmp.path(), &format!("verifying-{index}"));
        gpg(&home, &["--import", keyring.to_str().expect("utf8")]);
        let signed = payload(&headers, &format!("{case}\n"));
        let armor = match shape {
            Shape::One => pgp_sign(&secret, by_subkey, signed.as_bytes()),
            // One block, two signature packets.
            Shape::Twice => join_armored_signatures(
                &pgp_sign(&secret, by_subkey, signed.as_bytes()),
                &pgp_sign(&secret, by_subkey, signed.as_bytes()),
            ),
        };
        let mut object = headers.clone();
        object.push(signature_header("gpgsig", &armor));
        let id = hand_commit(&repo, case, &object, &format!("{case}\n"));
        // gpg's status lines, for `--nocapture` (`ERRSIG … 125`: wrong key usage).
        let raw = Command::new("git")
            .args(["verify-commit", "--raw", &id])
            .current_dir(&repo.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GNUPGHOME", &home)
            .output()
            .expect("git verify-commit --raw");
        let status = String::from_utf8_lossy(&raw.stderr)
            .lines()
            .filter(|l| l.contains("SIG "))
            .collect::<Vec<_>>()
            .join("; ");
        eprintln!("{case}: {status}");
        verdicts.push(Verdict {
            case: case.to_owned(),
            ours: skillfold_verdict(&repo, "--openpgp-keys", &keyring, &id),
            expected,
            git: git_accepts(&repo, &no_ssh, &home, &id),
        });
        let _ = Command::new("gpgconf")
            .args(["--kill", "all"])
            .env("GNUPGHOME", &home)
            .output();
    }
    assert_verdicts(&verdicts);
}

/// How the signature of a case is made.
#[derive(Clone, Copy)]
enum Shape {
    /// One binary data signature.
    One,
    /// Two in one armored block.
    Twice,
}

/// One armored signature block holding the packets of both `first` and `second`.
fn join_armored_signatures(first: &str, second: &str) -> String {
    use pgp::composed::{ArmorOptions, Deserializable as _, DetachedSignature};
    use pgp::ser::Serialize as _;
    let mut packets = Vec::new();
    for armor in [first, second] {
        let (sig, _) = DetachedSignature::from_armor_single(armor.as_bytes()).expect("armored");
        sig.to_writer(&mut packets).expect("serialise");
    }
    let mut out = Vec::new();
    pgp::armor::write(
        &RawPackets(packets),
        pgp::armor::BlockType::Signature,
        &mut out,
        None,
        ArmorOptions::default().include_checksum,
    )
    .expect("armor");
    String::from_utf8(out).expect("ascii")
}

/// Bytes written as they are (packets already serialised).
struct RawPackets(Vec<u8>);

impl pgp::ser::Serialize for RawPackets {
    fn to_writer<W: std::io::Write>(&self, writer: &mut W) -> pgp::errors::Result<()> {
        writer.write_all(&self.0)?;
        Ok(())
    }

    fn write_len(&self) -> usize {
        self.0.len()
    }
}
