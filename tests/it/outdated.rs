//! `skillfold outdated` against a real repository: the head of the tracked branch compared with
//! the pins (changed, removed, unchanged, available), a branch named by `track`, a head that
//! cannot be fetched (exit 1) and a bad `track` (exit 2).

use serde_json::Value;

use super::support::bin::{skillfold_in, stderr, stdout};
use super::support::git::{Repo, git};

fn descriptor(repo: &Repo, commit: &str, track: &str, pins: &[(&str, &str)]) -> String {
    let approved: String = pins
        .iter()
        .map(|(name, hash)| format!("        - {{ name: {name}, version: '1', hash: {hash} }}\n"))
        .collect();
    format!(
        "skills:\n  - git:\n      source: {}\n      revision: {commit}\n      directory: corpus\n      root: skills\n{track}      approved:\n{approved}",
        repo.file_url()
    )
}

#[test]
fn the_head_is_compared_with_every_pin() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    repo.bundle("gamma", "");
    let pinned = repo.commit("three bundles");
    // The bare repository's HEAD names the branch the fixture pushes.
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    repo.push_branch("stable", &pinned);
    let alpha = repo.digest("alpha");
    let beta = repo.digest("beta");
    repo.bundle("alpha", ", now better");
    repo.write(
        "skills/alpha/SKILL.md",
        b"---\nname: alpha\ndescription: The alpha skill, now better.\nversion: \"2.0\"\n---\n# alpha\n",
    );
    fs_err::remove_dir_all(repo.work.join("skills/beta")).expect("remove beta");
    repo.bundle("delta", "");
    let head = repo.commit("alpha changed, beta removed, delta added");

    let tmp = tempfile::tempdir().expect("tempdir");
    let write = |track: &str| {
        fs_err::write(
            tmp.path().join("skillfold.yaml"),
            descriptor(&repo, &pinned, track, &[("alpha", &alpha), ("beta", &beta)]),
        )
        .expect("write");
    };
    write("");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let source = &report["sources"][0];
    assert_eq!(source["tracking"], "HEAD");
    assert_eq!(source["pinned"], pinned.as_str());
    assert_eq!(source["head"], head.as_str());
    let bundles = source["bundles"].as_array().expect("bundles");
    assert_eq!(bundles[0]["name"], "alpha");
    assert_eq!(bundles[0]["status"], "changed");
    assert_eq!(bundles[0]["new_hash"], repo.digest("alpha").as_str());
    assert_eq!(bundles[0]["new_version"], "2.0");
    assert_eq!(bundles[1]["name"], "beta");
    assert_eq!(bundles[1]["status"], "removed");
    assert_eq!(source["available"], serde_json::json!(["delta", "gamma"]));
    assert!(stderr(&out).contains("changed alpha@1"), "{}", stderr(&out));
    // Nothing was prepared or written.
    assert!(!tmp.path().join("corpus").exists());

    // The lines a person reads: the source at its head, what changed (digests and commits
    // shortened), no line per unchanged bundle, a summary; `--available` lists what is not
    // approved, `--exit-code` exits 2 (`pins_outdated`) since a pin is behind.
    let short = |id: &str| id[..12].to_owned();
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "skills[0].git: {} HEAD: head {}, pinned {}: 1 changed, 1 removed, 2 not approved",
                repo.file_url(),
                short(&head),
                short(&pinned)
            )
            .as_str(),
            &format!(
                "  changed alpha@1: {} → {} (declares `2.0`)",
                short(&alpha),
                short(&repo.digest("alpha"))
            ),
            "  removed beta@1: no folder at the head",
            "1 source(s) checked: 1 changed, 1 removed; 2 bundle(s) not approved (--available lists them)",
        ],
        "{text}"
    );
    let out = skillfold_in(
        tmp.path(),
        &[
            "outdated",
            "-c",
            "skillfold.yaml",
            "--available",
            "--exit-code",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("  available delta\n  available gamma\n")
            && text.ends_with(
                "1 source(s) checked: 1 changed, 1 removed; 2 bundle(s) not approved\nerror: a pin is not at its head (--exit-code) [pins_outdated]\n"
            ),
        "{text}"
    );

    // A tracked branch whose head is the pin: everything unchanged.
    write("      track: stable\n");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let source = &report["sources"][0];
    assert_eq!(source["tracking"], "refs/heads/stable");
    assert_eq!(source["head"], pinned.as_str());
    for bundle in source["bundles"].as_array().expect("bundles") {
        assert_eq!(bundle["status"], "unchanged", "{bundle}");
    }
    // At its head, `--exit-code` has nothing to say: exit 0, one line for the source.
    let out = skillfold_in(
        tmp.path(),
        &["outdated", "-c", "skillfold.yaml", "--exit-code"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "skills[0].git: {} refs/heads/stable: at the head {}: 2 unchanged, 1 not approved\n",
            repo.file_url(),
            short(&pinned)
        )),
        "{}",
        stderr(&out)
    );

    // A branch the server does not have: refused, exit 2.
    write("      track: nowhere\n");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refs/heads/nowhere"),
        "{}",
        stderr(&out)
    );

    // A bad branch name: the descriptor is refused.
    write("      track: \"a..b\"\n");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("[invalid_track]"), "{}", stderr(&out));
}

#[test]
fn a_server_that_cannot_be_reached_is_retryable() {
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        format!(
            "skills:\n  - git:\n      source: http://127.0.0.1:9/skills.git\n      revision: {}\n      directory: corpus\n      approved:\n        - {{ name: alpha, version: '1', hash: {} }}\n",
            "a".repeat(40),
            "0".repeat(64)
        ),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(report["sources"][0]["error"]["retryable"], true);
}

#[test]
fn sources_of_one_branch_share_one_listing_and_one_fetch() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let commit = repo.commit("two bundles");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let server = super::support::git_server::HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let tmp = tempfile::tempdir().expect("tempdir");
    let source = |dir: &str, name: &str| {
        format!(
            "  - git:\n      source: {url}\n      revision: {commit}\n      directory: {dir}\n      root: skills\n      approved:\n        - {{ name: {name}, version: '1', hash: {} }}\n",
            repo.digest(name)
        )
    };
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        format!("skills:\n{}{}", source("a", "alpha"), source("b", "beta")),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    for source in report["sources"].as_array().expect("sources") {
        assert_eq!(source["head"], commit.as_str(), "{source}");
        assert_eq!(source["bundles"][0]["status"], "unchanged", "{source}");
    }
    // One connection lists the refs, one fetches the head: for both sources.
    assert_eq!(server.fetches(), 2, "{:?}", server.requests());
}

#[test]
fn a_head_whose_folder_names_another_bundle_is_invalid_not_changed() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    let pinned = repo.commit("alpha");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let alpha = repo.digest("alpha");
    repo.write(
        "skills/alpha/SKILL.md",
        b"---\nname: omega\ndescription: Now says it is omega.\n---\n# omega\n",
    );
    repo.commit("alpha's folder now holds omega");
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        descriptor(&repo, &pinned, "", &[("alpha", &alpha)]),
    )
    .expect("write");
    let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let bundle = &report["sources"][0]["bundles"][0];
    assert_eq!(bundle["status"], "invalid", "{bundle}");
    assert!(bundle["new_hash"].is_null(), "{bundle}");
    let problems = bundle["problems"].to_string();
    assert!(problems.contains("[name_mismatch]"), "{problems}");
}

// A head whose bundle declares a version that can never be pinned is `invalid` for `outdated`,
// with the very problem line `update` refuses it with (`invalid_version`): never `changed`.
#[test]
fn a_head_declaring_an_unpinnable_version_is_invalid_as_update_refuses_it() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    let pinned = repo.commit("alpha");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let alpha = repo.digest("alpha");
    let tmp = tempfile::tempdir().expect("tempdir");
    fs_err::write(
        tmp.path().join("skillfold.yaml"),
        descriptor(&repo, &pinned, "", &[("alpha", &alpha)]),
    )
    .expect("write");
    let long = "1".repeat(129);
    for version in [
        "latest",
        "\"1.0 beta\"",
        "\"^1.2\"",
        long.as_str(),
        "\"1.0\\u0001\"",
    ] {
        repo.write(
            "skills/alpha/SKILL.md",
            format!("---\nname: alpha\ndescription: The alpha skill.\nversion: {version}\n---\n# alpha\n").as_bytes(),
        );
        repo.commit(&format!("alpha declares {version}"));
        let out = skillfold_in(tmp.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{version}: {}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        let seen = &report["sources"][0]["bundles"][0];
        assert_eq!(seen["status"], "invalid", "{version}: {seen}");
        assert!(seen["new_hash"].is_null(), "{version}: {seen}");

        let out = skillfold_in(tmp.path(), &["update", "-c", "skillfold.yaml", "--json"]);
        let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        let refused = &report["sources"][0]["bundles"][0];
        assert_eq!(refused["status"], "refused", "{version}: {refused}");
        assert_eq!(seen["problems"], refused["problems"], "{version}");
        assert!(
            seen["problems"].to_string().contains("[invalid_version]"),
            "{version}: {seen}"
        );
    }
}
