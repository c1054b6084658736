//! One fetch per (URL, commit) and `prepare` run: several sources that pin the same commit are
//! fetched once (counted at the smart-HTTP server, which logs every upload-pack handshake), while
//! each keeps its own corpus, guard and promotion and fails on its own.

use super::support::bin::{skillfold_in, stderr};
use super::support::git::{GitSource, PUBLICATION_STEPS, Repo, prepare_json, write_descriptor};
use super::support::git_server::HttpServer;

/// A repository with three bundles and one commit.
fn three_bundles() -> (Repo, String) {
    let repo = Repo::new();
    for name in ["alpha", "beta", "gamma"] {
        repo.bundle(name, "");
    }
    let commit = repo.commit("bundles");
    (repo, commit)
}

/// One string field of each source of a `--json` report, in order (`none` where it is absent).
fn per_source(
    report: &serde_json::Value,
    field: impl Fn(&serde_json::Value) -> &serde_json::Value,
) -> Vec<String> {
    report["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|s| field(s).as_str().unwrap_or("none").to_owned())
        .collect()
}

fn statuses(report: &serde_json::Value) -> Vec<String> {
    per_source(report, |s| &s["bundles"][0]["status"])
}

#[test]
fn four_sources_of_one_commit_make_one_fetch_and_four_corpora() {
    let (repo, commit) = three_bundles();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let dir = tempfile::tempdir().expect("tempdir");
    let pin = |name: &'static str| (name, repo.digest(name));
    let sources: Vec<GitSource<'_>> = vec![
        (&url, &commit, "corpus/one", vec![pin("alpha")]),
        (&url, &commit, "corpus/two", vec![pin("beta"), pin("gamma")]),
        (&url, &commit, "corpus/three", vec![pin("gamma")]),
        (
            &url,
            &commit,
            "corpus/four",
            vec![pin("alpha"), pin("beta")],
        ),
    ];
    write_descriptor(dir.path(), &sources);
    // `-v`: the step lines that say which source shares which fetch.
    let out = super::support::bin::skillfold_in(
        dir.path(),
        &["prepare", "-c", "skillfold.yaml", "--json", "-v"],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.fetches(), 1, "the server saw more than one fetch");
    assert_eq!(report["fetches"], 1);
    assert_eq!(statuses(&report), ["published"; 4]);
    for corpus in ["one", "two", "three", "four"] {
        let corpus = dir.path().join("corpus").join(corpus);
        assert!(
            corpus.join("current").is_dir(),
            "{} not published",
            corpus.display()
        );
        // The shared object store is gone from every corpus.
        let fetch = corpus.join(".skillfold/fetch");
        assert!(
            fs_err::read_dir(&fetch)
                .map(|mut d| d.next().is_none())
                .unwrap_or(true)
        );
    }
    let shared = stderr(&out).matches("sharing the fetch of").count();
    assert_eq!(shared, 3, "{}", stderr(&out));
    // The warm path fetches nothing.
    let (out, report) = prepare_json(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.fetches(), 1);
    assert_eq!(report["fetches"], 0);
    assert_eq!(statuses(&report), ["up-to-date"; 4]);
}

#[test]
fn distinct_commits_fetch_once_each_even_when_concurrent() {
    let (repo, first) = three_bundles();
    let alpha = repo.digest("alpha");
    repo.write("skills/beta/references/extra.md", b"# more\n");
    let second = repo.commit("more");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let dir = tempfile::tempdir().expect("tempdir");
    let beta = repo.digest("beta");
    let sources: Vec<GitSource<'_>> = vec![
        (&url, &first, "corpus/a", vec![("alpha", alpha.clone())]),
        (&url, &second, "corpus/b", vec![("beta", beta.clone())]),
        (&url, &first, "corpus/c", vec![("alpha", alpha)]),
        (&url, &second, "corpus/d", vec![("beta", beta)]),
    ];
    write_descriptor(dir.path(), &sources);
    let out = skillfold_in(
        dir.path(),
        &[
            "prepare",
            "-c",
            "skillfold.yaml",
            "--json",
            "--concurrency",
            "4",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(server.fetches(), 2);
    assert_eq!(report["fetches"], 2);
    assert_eq!(statuses(&report), ["published"; 4]);
    // The report keeps the descriptor's order.
    let corpora: Vec<String> = per_source(&report, |s| &s["directory"])
        .iter()
        .map(|d| d.rsplit('/').next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(corpora, ["a", "b", "c", "d"]);
}

#[test]
fn one_failing_source_of_a_shared_commit_leaves_the_others_published() {
    let (repo, commit) = three_bundles();
    let url = repo.file_url();
    let dir = tempfile::tempdir().expect("tempdir");
    let wrong = "0".repeat(64);
    let sources: Vec<GitSource<'_>> = vec![
        (
            &url,
            &commit,
            "corpus/good",
            vec![("alpha", repo.digest("alpha"))],
        ),
        (&url, &commit, "corpus/bad", vec![("beta", wrong)]),
        (
            &url,
            &commit,
            "corpus/also-good",
            vec![("gamma", repo.digest("gamma"))],
        ),
    ];
    write_descriptor(dir.path(), &sources);
    let (out, report) = prepare_json(dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(report["fetches"], 1);
    assert_eq!(statuses(&report), ["published", "failed", "published"]);
    assert_eq!(report["sources"][1]["error"]["code"], "verification_failed");
    assert!(!dir.path().join("corpus/bad/current").exists());
    for corpus in ["good", "bad", "also-good"] {
        let meta = dir.path().join("corpus").join(corpus).join(".skillfold");
        for sub in ["staging", "fetch"] {
            let left = fs_err::read_dir(meta.join(sub))
                .map(|d| d.count())
                .unwrap_or(0);
            assert_eq!(left, 0, "{corpus}: {sub} not cleaned");
        }
    }
}

#[test]
fn a_fetch_that_fails_fails_every_source_that_shares_it() {
    let (repo, commit) = three_bundles();
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}/missing.git", repo.tmp.path().display());
    let sources: Vec<GitSource<'_>> = vec![
        (
            &url,
            &commit,
            "corpus/one",
            vec![("alpha", repo.digest("alpha"))],
        ),
        (
            &url,
            &commit,
            "corpus/two",
            vec![("beta", repo.digest("beta"))],
        ),
    ];
    write_descriptor(dir.path(), &sources);
    let (out, report) = prepare_json(dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(report["fetches"], 1);
    let codes = per_source(&report, |s| &s["error"]["code"]);
    assert_eq!(codes[0], codes[1]);
    assert_ne!(codes[0], "none");
}

// The sources of one commit are checked and published side by side (one worker per core), yet
// each corpus stays its own: a file changed in one published corpus makes that corpus (and only
// it) prepare again, the others stay up to date, and no corpus ever holds the changed bytes.
#[test]
fn a_change_in_one_corpus_of_a_shared_commit_is_caught_there_and_reaches_no_other() {
    use std::os::unix::fs::PermissionsExt as _;
    let (repo, commit) = three_bundles();
    let url = repo.file_url();
    let dir = tempfile::tempdir().expect("tempdir");
    let beta = ("beta", repo.digest("beta"));
    let sources: Vec<GitSource<'_>> = vec![
        (&url, &commit, "corpus/one", vec![beta.clone()]),
        (&url, &commit, "corpus/two", vec![beta.clone()]),
        (&url, &commit, "corpus/three", vec![beta]),
    ];
    write_descriptor(dir.path(), &sources);
    let (out, report) = prepare_json(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(statuses(&report), ["published"; 3]);
    let skill = |corpus: &str| {
        dir.path()
            .join("corpus")
            .join(corpus)
            .join("current/beta/SKILL.md")
    };
    let original = fs_err::read(skill("one")).expect("read");
    let changed = skill("two");
    fs_err::set_permissions(&changed, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    fs_err::write(&changed, b"---\nname: beta\ndescription: Changed.\n---\n").expect("write");
    let (out, report) = prepare_json(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(statuses(&report), ["up-to-date", "published", "up-to-date"]);
    assert_eq!(report["fetches"], 1);
    for corpus in ["one", "two", "three"] {
        assert_eq!(
            fs_err::read(skill(corpus)).expect("read"),
            original,
            "{corpus}"
        );
    }
}

// The corpora of one commit are published together, each step made durable for all of them at
// once: a crash at any step still leaves every corpus on its old generation or its new one, and
// the next preparation publishes them all.
#[test]
#[cfg_attr(
    not(feature = "failpoints"),
    ignore = "needs the `failpoints` feature (scripts/test turns it on)"
)]
fn a_crash_at_any_step_of_a_shared_publication_leaves_each_corpus_old_or_new() {
    let (repo, old) = three_bundles();
    let old_alpha = repo.digest("alpha");
    repo.write("skills/alpha/notes.md", b"# alpha v2\n");
    let new = repo.commit("alpha v2");
    let new_alpha = repo.digest("alpha");
    let url = repo.file_url();
    let corpora = ["corpus/one", "corpus/two", "corpus/three"];
    let sources = |commit: &str, alpha: &str| -> String {
        let mut text = String::from("skills:\n");
        for (corpus, other) in corpora.iter().zip(["beta", "gamma", "beta"]) {
            text.push_str(&format!(
                "  - git:\n      source: {url}\n      revision: {commit}\n      directory: {corpus}\n      root: skills\n      approved:\n        - {{ name: alpha, version: '1.0.0', hash: {alpha} }}\n        - {{ name: {other}, version: '1.0.0', hash: {} }}\n",
                repo.digest(other)
            ));
        }
        text
    };
    for point in PUBLICATION_STEPS {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("skillfold.yaml");
        fs_err::write(&config, sources(&old, &old_alpha)).expect("write");
        let (out, _) = prepare_json(dir.path());
        assert_eq!(out.status.code(), Some(0), "{point}: {}", stderr(&out));
        fs_err::write(&config, sources(&new, &new_alpha)).expect("write");
        let crashed = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
            .current_dir(dir.path())
            .args(["prepare", "-c", "skillfold.yaml"])
            .env("SKILLFOLD_FAILPOINT", point)
            .output()
            .expect("run");
        assert_ne!(crashed.status.code(), Some(0), "{point}: must abort");
        for corpus in corpora {
            // `current` is the old generation or the new one, whole: its files are those its
            // manifest pins (alpha without or with its notes).
            let corpus = dir.path().join(corpus);
            let id = fs_err::read_link(corpus.join("current")).expect("current is a link");
            let id = id.file_name().expect("generation id").to_string_lossy();
            let manifest: serde_json::Value = serde_json::from_slice(
                &fs_err::read(corpus.join(format!(".skillfold/manifests/{id}.json")))
                    .expect("its manifest"),
            )
            .expect("json");
            let pinned = manifest["bundles"]
                .as_array()
                .expect("bundles")
                .iter()
                .find(|b| b["pin"]["name"] == "alpha")
                .map(|b| b["pin"]["hash"].as_str().unwrap_or("").to_owned())
                .expect("alpha is published");
            let has_notes = corpus.join("current/alpha/notes.md").is_file();
            let expected = if has_notes { &new_alpha } else { &old_alpha };
            assert_eq!(&pinned, expected, "{point}: {} is a mix", corpus.display());
            assert!(corpus.join("current/alpha/SKILL.md").is_file(), "{point}");
        }
        let (again, report) = prepare_json(dir.path());
        assert_eq!(again.status.code(), Some(0), "{point}: {}", stderr(&again));
        assert!(
            report["fetches"].as_u64().is_some_and(|n| n <= 1),
            "{point}"
        );
        for corpus in corpora {
            let corpus = dir.path().join(corpus);
            assert_eq!(
                fs_err::read(corpus.join("current/alpha/notes.md")).expect("new alpha"),
                b"# alpha v2\n",
                "{point}"
            );
            for sub in ["staging", "fetch"] {
                let left = fs_err::read_dir(corpus.join(".skillfold").join(sub))
                    .map(|d| d.count())
                    .unwrap_or(0);
                assert_eq!(left, 0, "{point}: {sub} left in {}", corpus.display());
            }
        }
    }
}
