//! `skillfold update` against real repositories: the review (versions, digests, file lists and
//! a unified diff), `--write` changing only the `revision`, `hash` and `version` scalars of a
//! descriptor written with comments, flow and block styles, quoted and plain values and CRLF
//! line endings (compared byte for byte), the new pins then prepared for real; targets that fail
//! a check writing nothing; `--to` with a tag, a branch and a full id; sources picked by name;
//! the `"<version>"` placeholder; and scalars that cannot be rewritten in place.

use serde_json::Value;

use super::support::bin::{skillfold_in, stderr, stdout};
use super::support::git::{Repo, git};

/// A repository with `alpha` and `beta` pinned at its first commit, and a second commit where
/// `alpha` changed (it declares version 2.0 and gains a file) and `beta` did not.
struct Moved {
    repo: Repo,
    pinned: String,
    head: String,
    alpha_before: String,
    alpha_after: String,
    beta: String,
}

fn moved() -> Moved {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let pinned = repo.commit("two bundles");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let alpha_before = repo.digest("alpha");
    let beta = repo.digest("beta");
    repo.write(
        "skills/alpha/SKILL.md",
        b"---\nname: alpha\ndescription: The alpha skill, now better.\nversion: \"2.0\"\n---\n# alpha\n\nSee references/guide.md and references/more.md.\n",
    );
    repo.write("skills/alpha/references/more.md", b"# More\n");
    let head = repo.commit("alpha 2.0");
    let alpha_after = repo.digest("alpha");
    Moved {
        repo,
        pinned,
        head,
        alpha_before,
        alpha_after,
        beta,
    }
}

/// A descriptor in the operator's own style: comments, a quoted revision, one flow and one block
/// entry, a plain and a quoted version.
fn styled(m: &Moved) -> String {
    format!(
        "# Skills for the platform team (reviewed weekly)\n\
         skills:\n\
         \x20 - git:\n\
         \x20     source: {url}   # upstream\n\
         \x20     revision: '{pinned}'  # reviewed 2026-11-30\n\
         \x20     directory: corpus\n\
         \x20     root: skills\n\
         \x20     approved:\n\
         \x20       - {{ name: alpha, version: 1.0.0, hash: {alpha} }} # flow\n\
         \x20       - name: beta\n\
         \x20         version: \"1\"\n\
         \x20         hash: \"{beta}\"\n",
        url = m.repo.file_url(),
        pinned = m.pinned,
        alpha = m.alpha_before,
        beta = m.beta,
    )
}

fn run(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["update", "-c", "skillfold.yaml"];
    all.extend_from_slice(args);
    skillfold_in(dir, &all)
}

#[test]
fn the_review_shows_what_changed_and_write_changes_only_the_pins() {
    let m = moved();
    for line_end in ["\n", "\r\n"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("skillfold.yaml");
        let before = styled(&m).replace('\n', line_end);
        fs_err::write(&path, &before).expect("write");

        // The review: Markdown on stdout, nothing written.
        let out = run(tmp.path(), &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let review = stdout(&out);
        assert!(review.contains("| `alpha` | 1.0.0 → 2.0 |"), "{review}");
        assert!(review.contains("| `beta` | 1 | "), "{review}");
        assert!(
            review.contains("- Changed: `SKILL.md`\n- Added: `references/more.md`"),
            "{review}"
        );
        assert!(review.contains("+version: \"2.0\"\n"), "{review}");
        assert!(
            review.contains("--- /dev/null\n+++ b/alpha/references/more.md\n"),
            "{review}"
        );
        assert!(
            stderr(&out).contains("review only: nothing written"),
            "{}",
            stderr(&out)
        );
        assert_eq!(fs_err::read_to_string(&path).expect("read"), before);

        // The same as JSON.
        let out = run(tmp.path(), &["--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        assert_eq!(report["scalars"], 3, "{report}");
        assert_eq!(report["written"], false);
        let source = &report["sources"][0];
        assert_eq!(source["from"], m.pinned.as_str());
        assert_eq!(source["to"], m.head.as_str());
        assert_eq!(source["bundles"][0]["status"], "changed");
        assert_eq!(source["bundles"][0]["new_hash"], m.alpha_after.as_str());
        assert_eq!(source["bundles"][0]["new_version"], "2.0");
        assert_eq!(source["bundles"][1]["status"], "unchanged");

        // Written: exactly the three scalars, in their own styles, every other byte kept.
        let out = run(tmp.path(), &["--write"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("3 value(s) changed"),
            "{}",
            stderr(&out)
        );
        let expected = before
            .replace(&format!("'{}'", m.pinned), &format!("'{}'", m.head))
            .replace(
                &format!("version: 1.0.0, hash: {}", m.alpha_before),
                &format!("version: \"2.0\", hash: {}", m.alpha_after),
            );
        assert_eq!(fs_err::read_to_string(&path).expect("read"), expected);

        // The new pins prepare for real, and a second update finds nothing to do.
        let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let out = run(tmp.path(), &["--write"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("nothing to update"),
            "{}",
            stderr(&out)
        );
        assert_eq!(fs_err::read_to_string(&path).expect("read"), expected);
    }
}

#[test]
fn a_target_that_fails_a_check_writes_nothing() {
    let m = moved();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("skillfold.yaml");
    let before = styled(&m);
    fs_err::write(&path, &before).expect("write");

    // beta removed at the head: refused, exit 2, the descriptor untouched.
    fs_err::remove_dir_all(m.repo.work.join("skills/beta")).expect("remove beta");
    m.repo.commit("beta removed");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("beta: no folder `skills/beta`"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("**refused**"), "{}", stdout(&out));
    assert_eq!(fs_err::read_to_string(&path).expect("read"), before);

    // A symbolic link anywhere in the head's tree: refused, nothing written.
    m.repo.bundle("beta", "");
    m.repo.symlink("/etc/passwd", "elsewhere/link");
    m.repo.commit("a link elsewhere");
    let out = run(tmp.path(), &["--write", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(report["written"], false);
    assert_eq!(
        report["sources"][0]["error"]["retryable"], false,
        "{report}"
    );
    assert_eq!(fs_err::read_to_string(&path).expect("read"), before);

    // A bundle that now declares a version that cannot be pinned.
    fs_err::remove_dir_all(m.repo.work.join("elsewhere")).expect("remove link");
    m.repo.write(
        "skills/beta/SKILL.md",
        b"---\nname: beta\ndescription: Beta.\nversion: latest\n---\n# beta\n",
    );
    m.repo.commit("beta declares latest");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[invalid_version]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs_err::read_to_string(&path).expect("read"), before);
}

#[test]
fn to_names_a_tag_a_branch_or_a_full_id_and_sources_can_be_picked() {
    let m = moved();
    git(
        &m.repo.work,
        &["tag", "-a", "v2", "-m", "release 2", &m.head],
    );
    git(
        &m.repo.work,
        &["push", "-q", m.repo.bare.to_str().expect("utf8"), "v2"],
    );
    m.repo.push_branch("stable", &m.pinned);
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("skillfold.yaml");
    // Two sources of one repository; the second approves only beta.
    let second = format!(
        "  - git:\n      source: {}\n      revision: {}\n      directory: corpus-b\n      root: skills\n      approved:\n        - {{ name: beta, version: '1', hash: {} }}\n",
        m.repo.file_url(),
        m.pinned,
        m.beta
    );
    let before = styled(&m) + &second;
    fs_err::write(&path, &before).expect("write");
    let to = |args: &[&str]| -> Value {
        let out = run(tmp.path(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        serde_json::from_str(&stdout(&out)).expect("JSON")
    };

    // An annotated tag, peeled to its commit.
    let report = to(&["--to", "v2", "--json"]);
    assert_eq!(report["sources"][0]["to"], m.head.as_str(), "{report}");
    assert_eq!(report["sources"][0]["reference"], "refs/tags/v2");
    assert_eq!(report["sources"].as_array().expect("sources").len(), 2);
    // A branch whose head is the pin: nothing to change.
    let report = to(&["--to", "stable", "--json"]);
    assert_eq!(report["scalars"], 0, "{report}");
    // A full id; and a source picked by a bundle only it approves.
    let report = to(&["--to", &m.head, "alpha", "--json"]);
    assert_eq!(report["sources"].as_array().expect("sources").len(), 1);
    assert_eq!(report["sources"][0]["location"], "skills[0].git");
    // Picked by location: the second source alone moves, its entry keeps its quotes.
    let out = run(tmp.path(), &["skills[1].git", "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = fs_err::read_to_string(&path).expect("read");
    let expected = format!(
        "{}{}",
        styled(&m),
        second.replace(
            &format!("revision: {}", m.pinned),
            &format!("revision: {}", m.head)
        )
    );
    assert_eq!(after, expected);

    // Refused before anything is fetched: an abbreviated id, an unknown source.
    let out = run(tmp.path(), &["--to", &m.head[..12]]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("abbreviated"), "{}", stderr(&out));
    let out = run(tmp.path(), &["nothing-like-it"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[unknown_source]"),
        "{}",
        stderr(&out)
    );
    // A name the server does not have.
    let out = run(tmp.path(), &["--to", "v9"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("refs/tags/v9"), "{}", stderr(&out));
    assert_eq!(fs_err::read_to_string(&path).expect("read"), expected);
}

#[test]
fn a_version_placeholder_is_filled_from_the_bundle_or_refused() {
    let m = moved();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("skillfold.yaml");
    let with_placeholder = |name: &str, hash: &str| {
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {}\n      directory: corpus\n      root: skills\n      approved:\n        - {{ name: {name}, version: \"<version>\", hash: {hash} }}\n",
            m.repo.file_url(),
            m.pinned
        )
    };
    // alpha declares 2.0 at the head: the placeholder becomes "2.0".
    let before = with_placeholder("alpha", &m.alpha_before);
    fs_err::write(&path, &before).expect("write");
    let out = skillfold_in(tmp.path(), &["check", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(2), "the placeholder is not a pin");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = before
        .replace(&m.pinned, &m.head)
        .replace(&m.alpha_before, &m.alpha_after)
        .replace("\"<version>\"", "\"2.0\"");
    assert_eq!(fs_err::read_to_string(&path).expect("read"), expected);

    // beta declares none: refused, nothing written.
    let before = with_placeholder("beta", &m.beta);
    fs_err::write(&path, &before).expect("write");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[version_placeholder]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs_err::read_to_string(&path).expect("read"), before);
}

#[test]
fn a_value_that_cannot_be_rewritten_in_place_is_refused() {
    let m = moved();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("skillfold.yaml");
    let before = styled(&m).replace(
        &format!("revision: '{}'", m.pinned),
        &format!("revision: &pinned '{}'", m.pinned),
    );
    fs_err::write(&path, &before).expect("write");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[not_rewritable]"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("anchor"), "{}", stderr(&out));
    assert_eq!(fs_err::read_to_string(&path).expect("read"), before);

    // Through a symbolic link, the file it points to is rewritten and the link stays.
    fs_err::write(tmp.path().join("real.yaml"), styled(&m)).expect("write");
    fs_err::remove_file(&path).expect("remove");
    std::os::unix::fs::symlink("real.yaml", &path).expect("symlink");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs_err::symlink_metadata(&path).expect("stat").is_symlink());
    let real = fs_err::read_to_string(tmp.path().join("real.yaml")).expect("read");
    assert!(real.contains(&m.head), "{real}");
}

// Under `links: outside-bundles` an update applies the option to the target (a root
// `AGENTS.md` → `CLAUDE.md` link and a link in an unapproved bundle are skipped) and the rewrite
// keeps it; without the option the same target is refused (`symlink_in_tree`).
#[test]
fn update_applies_links_outside_bundles_and_keeps_the_option() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("gamma", "");
    repo.symlink("guide.md", "skills/gamma/references/alias.md");
    repo.write("CLAUDE.md", b"# Agents\n");
    repo.symlink("CLAUDE.md", "AGENTS.md");
    let pinned = repo.commit("links outside alpha");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let before_hash = repo.digest("alpha");
    repo.bundle("alpha", ", now better");
    let head = repo.commit("alpha changed");
    let after_hash = repo.digest("alpha");
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("skillfold.yaml");
    let descriptor = |links: &str| {
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {pinned}\n      directory: corpus\n      root: skills\n{links}      approved:\n        - {{ name: alpha, version: \"1.0.0\", hash: {before_hash} }}\n",
            repo.file_url()
        )
    };

    let strict = descriptor("");
    fs_err::write(&path, &strict).expect("write");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[symlink_in_tree]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs_err::read_to_string(&path).expect("read"), strict);

    let before = descriptor("      links: outside-bundles   # AGENTS.md\n");
    fs_err::write(&path, &before).expect("write");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = before
        .replace(&pinned, &head)
        .replace(&before_hash, &after_hash);
    assert_eq!(fs_err::read_to_string(&path).expect("read"), expected);
    assert!(expected.contains("links: outside-bundles   # AGENTS.md\n"));
    let out = skillfold_in(tmp.path(), &["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn write_keeps_the_descriptors_owner_group_and_mode() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    let m = moved();
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("skillfold.yaml");
    fs_err::write(&path, styled(&m)).expect("write");
    if fs_err::metadata(&path).expect("stat").uid() != 0 {
        eprintln!("skipped: giving a file to another user takes root");
        return;
    }
    // Another user's descriptor, which root rewrites.
    std::os::unix::fs::chown(&path, Some(1234), Some(1234)).expect("chown");
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let out = run(tmp.path(), &["--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        fs_err::read_to_string(&path)
            .expect("read")
            .contains(&m.head),
        "rewritten"
    );
    let meta = fs_err::metadata(&path).expect("stat");
    assert_eq!(
        (meta.uid(), meta.gid()),
        (1234, 1234),
        "owner and group kept"
    );
    assert_eq!(meta.mode() & 0o7777, 0o640, "mode kept");
}
