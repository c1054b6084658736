//! `links: outside-bundles` through the binary, against repositories shaped like the ones users
//! pin (obra/superpowers: a root `AGENTS.md` → `CLAUDE.md` link) served over smart HTTP on
//! 127.0.0.1: links outside the approved bundles are reported and skipped; a link inside an
//! approved bundle, or as a folder on the path to one, still refuses the source; the default
//! (`refuse`) is unchanged.

use super::pin::{Setup, bundle_in, code, digest};
use super::support::bin::{stderr, stdout};
use super::support::git::Repo;
use super::support::git_server::HttpServer;

/// A repository with a root `AGENTS.md` → `CLAUDE.md` link and a link inside the unapproved
/// bundle `gamma`; `alpha` and `beta` hold none.
fn agents_link() -> (Repo, String) {
    let repo = Repo::new();
    bundle_in(&repo, "skills", "alpha");
    bundle_in(&repo, "skills", "beta");
    bundle_in(&repo, "skills", "gamma");
    repo.symlink("guide.md", "skills/gamma/references/alias.md");
    repo.write("CLAUDE.md", b"# Agents\n");
    repo.symlink("CLAUDE.md", "AGENTS.md");
    let commit = repo.commit("a root link and a link in an unapproved bundle");
    (repo, commit)
}

/// A descriptor entry for `names` under `skills` at `commit`, with `links` when given.
fn entry(url: &str, commit: &str, links: Option<&str>, pins: &[(&str, String)]) -> String {
    let mut text = format!(
        "- git:\n    source: {url}\n    revision: {commit}\n    directory: /var/lib/skillfold/remote\n    root: skills\n"
    );
    if let Some(links) = links {
        text += &format!("    links: {links}\n");
    }
    text += "    approved:\n";
    for (name, hash) in pins {
        text += &format!("      - {{ name: {name}, version: \"1.0.0\", hash: {hash} }}\n");
    }
    text
}

fn pin_args<'a>(url: &'a str, commit: &'a str) -> Vec<&'a str> {
    vec![
        "pin",
        "--source",
        url,
        "--revision",
        commit,
        "--root",
        "skills",
    ]
}

#[test]
fn the_default_still_refuses_a_link_anywhere() {
    let (repo, commit) = agents_link();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let pins = [("alpha", digest(&repo, "skills/alpha"))];
    for links in [None, Some("refuse")] {
        s.adopt(&entry(&url, &commit, links, &pins));
        assert_eq!(code(&s.run(&["check"])), Some(0), "{links:?}");
        let prep = s.run(&["prepare"]);
        assert_eq!(code(&prep), Some(2), "{links:?}: {}", stderr(&prep));
        let err = stderr(&prep);
        assert!(err.contains("[symlink_in_tree]"), "{err}");
        assert!(err.contains("symbolic link: AGENTS.md"), "{err}");
    }
    let mut args = pin_args(&url, &commit);
    args.push("alpha");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[symlink_in_tree]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn links_outside_the_approved_bundles_are_reported_and_skipped() {
    let (repo, commit) = agents_link();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, &commit);
    args.extend(["--links", "outside-bundles", "alpha", "beta"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("link: AGENTS.md -> CLAUDE.md (outside the pinned bundles, skipped)"),
        "{err}"
    );
    assert!(
        err.contains("link: skills/gamma/references/alias.md -> guide.md"),
        "{err}"
    );
    let printed = stdout(&out);
    assert!(printed.contains("    links: outside-bundles"), "{printed}");
    s.adopt(&printed);
    assert_eq!(code(&s.run(&["check"])), Some(0));
    let prep = s.run(&["prepare", "--json"]);
    assert_eq!(code(&prep), Some(0), "{}", stderr(&prep));
    let err = stderr(&prep);
    assert!(
        err.contains(
            "symbolic link `AGENTS.md` -> `CLAUDE.md` outside the approved bundles is skipped"
        ),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&prep.stdout).expect("json");
    let source = &report["sources"][0];
    assert_eq!(source["links"], "outside-bundles");
    let generation = source["generation"].as_str().expect("generation");
    let manifest = fs_err::read_to_string(
        s.corpus()
            .join(format!(".skillfold/manifests/{generation}.json")),
    )
    .expect("manifest");
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("json");
    assert_eq!(manifest["source"]["links"], "outside-bundles");
    assert!(s.corpus().join("current/alpha/SKILL.md").is_file());
    assert!(!s.corpus().join("current/gamma").exists());
    assert_eq!(code(&s.run(&["verify"])), Some(0));
    // The warm path holds under the same policy; a stricter one is not satisfied by it.
    let warm = s.run(&["prepare", "--json"]);
    assert_eq!(code(&warm), Some(0), "{}", stderr(&warm));
    let warm: serde_json::Value = serde_json::from_slice(&warm.stdout).expect("json");
    assert_eq!(warm["sources"][0]["bundles"][0]["status"], "up-to-date");
    let strict = fs_err::read_to_string(s.config())
        .expect("descriptor")
        .replace("    links: outside-bundles", "    links: refuse");
    fs_err::write(s.config(), strict).expect("write");
    let prep = s.run(&["prepare"]);
    assert_eq!(code(&prep), Some(2), "{}", stderr(&prep));
    assert!(
        stderr(&prep).contains("[symlink_in_tree]"),
        "{}",
        stderr(&prep)
    );
}

/// `prepare` and `pin` under `links: outside-bundles` both refuse the source with
/// `symlink_in_tree`, naming `link`.
fn assert_refused(repo: &Repo, commit: &str, name: &str, link: &str) {
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let hash = "0".repeat(64);
    s.adopt(&entry(
        &url,
        commit,
        Some("outside-bundles"),
        &[(name, hash)],
    ));
    assert_eq!(code(&s.run(&["check"])), Some(0));
    let prep = s.run(&["prepare"]);
    assert_eq!(code(&prep), Some(2), "{}", stderr(&prep));
    let err = stderr(&prep);
    assert!(err.contains("[symlink_in_tree]"), "{err}");
    assert!(
        err.contains(&format!("a symbolic link at `{link}`")),
        "{err}"
    );
    assert!(!s.corpus().join("current").exists(), "nothing published");
    let mut args = pin_args(&url, commit);
    args.extend(["--links", "outside-bundles", name]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[symlink_in_tree]"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(&format!("`{link}`")),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn a_link_inside_an_approved_bundle_still_refuses_the_source() {
    let repo = Repo::new();
    bundle_in(&repo, "skills", "alpha");
    repo.symlink("guide.md", "skills/alpha/references/alias.md");
    let commit = repo.commit("a link in an approved bundle");
    assert_refused(&repo, &commit, "alpha", "skills/alpha/references/alias.md");
}

#[test]
fn a_link_as_the_folder_above_the_bundles_still_refuses_the_source() {
    let repo = Repo::new();
    bundle_in(&repo, "real-skills", "alpha");
    repo.symlink("real-skills", "skills");
    let commit = repo.commit("skills is a link");
    assert_refused(&repo, &commit, "alpha", "skills");
}

#[test]
fn pin_all_refuses_a_root_reached_through_a_link() {
    let repo = Repo::new();
    bundle_in(&repo, "real-skills", "alpha");
    repo.symlink("real-skills", "skills");
    let commit = repo.commit("skills is a link");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, &commit);
    args.extend(["--links", "outside-bundles", "--all"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("a symbolic link at `skills`") && err.contains("[symlink_in_tree]"),
        "{err}"
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn a_link_in_a_tree_an_approved_bundle_shares_with_an_unapproved_one_is_found() {
    // `gamma` and `zeta` hold the same `references/` tree: the whole-tree walk reports its link
    // once, under `skills/gamma/`, the first path that reached it.
    let repo = Repo::new();
    for name in ["gamma", "zeta"] {
        bundle_in(&repo, "skills", name);
        repo.symlink("guide.md", &format!("skills/{name}/references/alias.md"));
    }
    let commit = repo.commit("one shared tree with a link");
    assert_refused(&repo, &commit, "zeta", "skills/zeta/references/alias.md");
}

#[test]
fn pin_all_under_outside_bundles_refuses_each_bundle_with_a_link_and_pins_the_rest() {
    let (repo, commit) = agents_link();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, &commit);
    args.extend(["--links", "outside-bundles", "--all", "--json"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["links"], "outside-bundles");
    let names: Vec<&str> = report["pinned"]
        .as_array()
        .expect("pinned")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(report["refused"][0]["folder"], "skills/gamma");
    assert_eq!(report["refused"][0]["code"], "symlink_in_tree");
    let skipped: Vec<&str> = report["skipped_links"]
        .as_array()
        .expect("skipped_links")
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["AGENTS.md", "skills/gamma/references/alias.md"]);
    assert_eq!(report["skipped_links"][0]["target"], "CLAUDE.md");
    // Without the option the whole commit is refused, as before.
    let out = s.run(&[
        "pin",
        "--source",
        &url,
        "--revision",
        &commit,
        "--root",
        "skills",
        "--all",
    ]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("[symlink_in_tree]"));
}

#[test]
fn outdated_applies_the_policy() {
    let (repo, commit) = agents_link();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let pins = [("alpha", digest(&repo, "skills/alpha"))];
    let tracking = |links| {
        entry(&url, &commit, links, &pins).replace("    root:", "    track: main\n    root:")
    };
    s.adopt(&tracking(Some("outside-bundles")));
    let out = s.run(&["outdated", "--json"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["bundles"][0]["status"], "unchanged",
        "{report}"
    );
    s.adopt(&tracking(None));
    let out = s.run(&["outdated", "--json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[symlink_in_tree]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unknown_links_policy_is_refused() {
    let s = Setup::new();
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let url = "http://127.0.0.1:9/git/remote.git";
    s.adopt(&entry(
        url,
        commit,
        Some("follow"),
        &[("alpha", "0".repeat(64))],
    ));
    let out = s.run(&["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("follow"), "{}", stderr(&out));
    let mut args = pin_args(url, commit);
    args.extend(["--links", "follow", "alpha"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a links policy"),
        "{}",
        stderr(&out)
    );
}
