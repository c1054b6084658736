//! The corpus's own folders through the binary: made with their modes whatever the umask, never
//! followed when a link stands in place of one, and two sources whose directories are one folder
//! on disk (through a link) refused by `prepare` and `verify` alike, naming both.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Output;

use super::support::bin::{BIN, stderr, stdout};
use super::support::git::{Repo, write_descriptor};

/// A repository with the bundles `alpha` and `beta`, and its commit.
fn two_bundles() -> (Repo, String) {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let commit = repo.commit("bundles");
    (repo, commit)
}

/// `skillfold ARGS -c skillfold.yaml` in `dir`, under `umask`.
fn run(dir: &Path, umask: &str, args: &[&str]) -> Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$@\""))
        .arg("sh")
        .arg(BIN)
        .args(args)
        .args(["-c", "skillfold.yaml"])
        .current_dir(dir)
        .env_remove("SKILLFOLD_FAILPOINT")
        .output()
        .expect("run skillfold")
}

fn mode(path: &Path) -> u32 {
    fs_err::symlink_metadata(path)
        .expect("meta")
        .permissions()
        .mode()
        & 0o7777
}

// Under `umask 000` (or `077`) the store's folders still get their own modes: 0755 for what
// readers of `current` go through, 0700 for staging and fetch, where nobody else may swap a
// folder while the preparer writes.
#[test]
fn the_stores_folders_have_their_modes_whatever_the_umask() {
    let (repo, commit) = two_bundles();
    for umask in ["000", "077"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let url = repo.file_url();
        write_descriptor(
            tmp.path(),
            &[(
                &url,
                &commit,
                "corpus",
                vec![("alpha", repo.digest("alpha"))],
            )],
        );
        let out = run(tmp.path(), umask, &["prepare"]);
        assert_eq!(out.status.code(), Some(0), "{umask}: {}", stderr(&out));
        let corpus = tmp.path().join("corpus");
        let meta = corpus.join(".skillfold");
        let generation = fs_err::canonicalize(corpus.join("current")).expect("published");
        for (path, expected) in [
            (corpus.clone(), 0o755),
            (meta.clone(), 0o755),
            (meta.join("generations"), 0o755),
            (meta.join("manifests"), 0o755),
            (meta.join("staging"), 0o700),
            (meta.join("fetch"), 0o700),
            (generation.clone(), 0o755),
            (generation.join("alpha"), 0o755),
            (generation.join("alpha/references"), 0o755),
        ] {
            assert_eq!(mode(&path), expected, "{umask}: {}", path.display());
        }
    }
}

// A store made by an earlier version under `umask 000` (its folders 0777) gets its modes back
// at the next preparation.
#[test]
fn store_folders_left_writable_by_others_get_their_modes_back() {
    let (repo, commit) = two_bundles();
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = repo.file_url();
    write_descriptor(
        tmp.path(),
        &[(
            &url,
            &commit,
            "corpus",
            vec![("alpha", repo.digest("alpha"))],
        )],
    );
    let meta = tmp.path().join("corpus/.skillfold");
    for sub in ["generations", "manifests", "staging", "fetch"] {
        fs_err::create_dir_all(meta.join(sub)).expect("mkdir");
        fs_err::set_permissions(meta.join(sub), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
    }
    fs_err::set_permissions(&meta, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = run(tmp.path(), "022", &["prepare"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mode(&meta), 0o755);
    assert_eq!(mode(&meta.join("staging")), 0o700);
    assert_eq!(mode(&meta.join("fetch")), 0o700);
    assert_eq!(mode(&meta.join("generations")), 0o755);
}

// `.skillfold/staging` or `.skillfold/fetch` replaced by a link to a folder holding a file:
// `prepare` refuses (exit 2), names the link, and neither empties nor writes into what it
// leads to.
#[test]
fn a_link_in_place_of_staging_or_fetch_is_refused_and_never_emptied() {
    let (repo, commit) = two_bundles();
    for sub in ["staging", "fetch"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let url = repo.file_url();
        write_descriptor(
            tmp.path(),
            &[(
                &url,
                &commit,
                "corpus",
                vec![("alpha", repo.digest("alpha"))],
            )],
        );
        let out = run(tmp.path(), "022", &["prepare"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let victim = tmp.path().join("victim");
        fs_err::create_dir(&victim).expect("mkdir");
        fs_err::write(victim.join("precious.txt"), "keep me\n").expect("write");
        let link = tmp.path().join("corpus/.skillfold").join(sub);
        fs_err::remove_dir(&link).expect("rmdir");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        for _ in 0..2 {
            let out = run(tmp.path(), "022", &["prepare"]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
            assert!(err.contains("[corpus_not_managed]"), "{sub}: {err}");
            assert!(err.contains(&format!(".skillfold/{sub}`")), "{sub}: {err}");
            assert!(err.contains("symbolic link"), "{sub}: {err}");
            let left: Vec<_> = fs_err::read_dir(&victim)
                .expect("read")
                .map(|e| e.expect("entry").file_name())
                .collect();
            assert_eq!(left, ["precious.txt"], "{sub}: nothing emptied or written");
            assert_eq!(
                fs_err::read_to_string(victim.join("precious.txt")).expect("read"),
                "keep me\n"
            );
        }
    }
}

/// A descriptor in `dir` with two sources of `repo`'s `commit`: `alpha` into `real`, `beta`
/// into `alias`.
fn alias_and_real(dir: &Path, repo: &Repo, commit: &str) {
    let url = repo.file_url();
    write_descriptor(
        dir,
        &[
            (&url, commit, "real", vec![("alpha", repo.digest("alpha"))]),
            (&url, commit, "alias", vec![("beta", repo.digest("beta"))]),
        ],
    );
}

/// Asserts that `out` failed with exit 2 and `shared_directory`, naming both sources.
#[track_caller]
fn assert_shared(out: &Output, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains("[shared_directory]"), "{what}: {err}");
    for location in ["skills[0].git", "skills[1].git"] {
        assert!(err.contains(location), "{what}: {location} in {err}");
    }
    assert!(
        err.contains("/alias`") && err.contains("/real`"),
        "{what}: {err}"
    );
}

// Two sources whose directories differ as text (`check` passes) but are one folder through a
// link: `prepare` (whatever its concurrency, on a first run or with `real` made) and `verify`
// refuse both with `shared_directory`, naming both; nothing is published over the other.
#[test]
fn directories_that_are_one_folder_through_a_link_are_refused_naming_both() {
    let (repo, commit) = two_bundles();
    for (concurrency, real_exists) in [("4", false), ("1", false), ("1", true), ("4", true)] {
        let what = format!("--concurrency {concurrency}, real made: {real_exists}");
        let tmp = tempfile::tempdir().expect("tempdir");
        alias_and_real(tmp.path(), &repo, &commit);
        if real_exists {
            fs_err::create_dir(tmp.path().join("real")).expect("mkdir");
        }
        std::os::unix::fs::symlink("real", tmp.path().join("alias")).expect("symlink");
        let check = run(tmp.path(), "022", &["check"]);
        assert_eq!(check.status.code(), Some(0), "{what}: {}", stderr(&check));
        let out = run(
            tmp.path(),
            "022",
            &["prepare", "--concurrency", concurrency, "--json"],
        );
        assert_shared(&out, &what);
        let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        for source in report["sources"].as_array().expect("sources") {
            assert_eq!(
                source["error"]["code"], "shared_directory",
                "{what}: {source}"
            );
        }
        assert!(
            fs_err::symlink_metadata(tmp.path().join("real/current")).is_err(),
            "{what}: nothing published"
        );
        assert_shared(
            &run(tmp.path(), "022", &["verify"]),
            &format!("verify, {what}"),
        );
    }
}

// `verify` finds them too when the corpus was prepared under one source and the other source
// was added later through a link.
#[test]
fn verify_refuses_a_prepared_corpus_a_second_source_reaches_through_a_link() {
    let (repo, commit) = two_bundles();
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = repo.file_url();
    write_descriptor(
        tmp.path(),
        &[(&url, &commit, "real", vec![("alpha", repo.digest("alpha"))])],
    );
    let out = run(tmp.path(), "022", &["prepare"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run(tmp.path(), "022", &["verify"]).status.code(), Some(0));
    std::os::unix::fs::symlink("real", tmp.path().join("alias")).expect("symlink");
    alias_and_real(tmp.path(), &repo, &commit);
    assert_shared(&run(tmp.path(), "022", &["verify"]), "verify");
    assert_shared(&run(tmp.path(), "022", &["prepare"]), "prepare");
    assert_shared(
        &run(tmp.path(), "022", &["prepare", "--rollback"]),
        "rollback",
    );
}
