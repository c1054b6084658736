//! The review path is the prepare path (DESIGN §9): `outdated` and `update` check a candidate
//! with the per-source code `prepare` uses. Against a real `git http-backend` offering partial
//! fetches on 127.0.0.1: over a corpus of hostile heads and descriptor shapes (sources of one URL
//! with different `links` policies, limits profiles and approved bundles), whenever `update
//! --write` writes, `prepare` of the written descriptor succeeds, and whenever it refuses, a
//! descriptor pinned at that head is refused by `prepare` with the same code, source by source.
//! Each of the four defects of issue 33 §1 has its own test too (the Git ones here; the image
//! ones against a scripted registry serving images `skillfold push` wrote).

use serde_json::Value;

use super::support::bin::{skillfold_in, stderr};
use super::support::git::{Repo, git};
use super::support::git_server::{HttpServer, Serve};

/// A descriptor source: `(corpus directory, links, limits, approved names)`.
type Shape<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [&'a str]);

/// A repository whose base commit holds valid `alpha` and `beta` bundles under `skills/`, and one
/// branch per hostile head (`h0`, `h1`, …) made from that base.
struct Heads {
    repo: Repo,
    base: String,
    pins: Vec<(String, String)>,
    heads: Vec<(&'static str, String)>,
}

/// What a hostile head changes in the base's work tree.
type Change = Box<dyn Fn(&Repo)>;

fn heads() -> Heads {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let base = repo.commit("alpha and beta");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let pins = ["alpha", "beta"]
        .iter()
        .map(|n| ((*n).to_owned(), repo.digest(n)))
        .collect();
    let variants: Vec<(&'static str, Change)> = vec![
        (
            "alpha changed",
            Box::new(|r: &Repo| r.write("skills/alpha/references/new.md", b"# New\n")),
        ),
        (
            "a root link",
            Box::new(|r: &Repo| {
                r.write("CLAUDE.md", b"# Agents\n");
                r.symlink("CLAUDE.md", "AGENTS.md");
            }),
        ),
        (
            "a link inside alpha",
            Box::new(|r: &Repo| r.symlink("guide.md", "skills/alpha/references/alias.md")),
        ),
        (
            "beta breaks a rule",
            Box::new(|r: &Repo| {
                r.write(
                    "skills/beta/SKILL.md",
                    b"---\ndescription: no name\n---\n# beta\n",
                )
            }),
        ),
        (
            "a 200 KiB file in alpha",
            Box::new(|r: &Repo| {
                r.write(
                    "skills/alpha/references/big.md",
                    "x".repeat(200 * 1024).as_bytes(),
                )
            }),
        ),
        (
            "beta removed",
            Box::new(|r: &Repo| {
                fs_err::remove_dir_all(r.work.join("skills/beta")).expect("remove beta")
            }),
        ),
        (
            "alpha's folder names beta",
            Box::new(|r: &Repo| {
                r.write(
                    "skills/alpha/SKILL.md",
                    b"---\nname: beta\ndescription: The beta skill.\n---\n# beta\n",
                )
            }),
        ),
    ];
    let mut heads = Vec::new();
    for (i, (what, change)) in variants.iter().enumerate() {
        git(&repo.work, &["reset", "-q", "--hard", &base]);
        git(&repo.work, &["clean", "-qfdx"]);
        change(&repo);
        let id = repo.commit(what);
        repo.push_branch(&format!("h{i}"), &id);
        heads.push((*what, id));
    }
    git(&repo.work, &["reset", "-q", "--hard", &base]);
    let bare = repo.bare.to_str().expect("utf8");
    git(&repo.work, &["push", "-q", "-f", bare, "main"]);
    Heads {
        repo,
        base,
        pins,
        heads,
    }
}

/// `git http-backend` serving `repo` with `uploadpack.allowFilter` (partial fetches).
fn offering_filters(repo: &Repo) -> HttpServer {
    HttpServer::serving(
        repo.tmp.path(),
        &Serve {
            allow_filter: true,
            ..Serve::default()
        },
    )
}

/// A descriptor of `sources`, each of `url` at `revision` following `track`, its pins from
/// `pins` (`name → (version, hash)`).
fn descriptor(
    url: &str,
    revision: &str,
    track: &str,
    sources: &[Shape<'_>],
    pins: &dyn Fn(&str) -> (String, String),
) -> String {
    let mut text = String::from("skills:\n");
    for (directory, links, limits, names) in sources {
        text += &format!(
            "  - git:\n      source: {url}\n      revision: {revision}\n      directory: {directory}\n      root: skills\n      track: {track}\n"
        );
        if let Some(links) = links {
            text += &format!("      links: {links}\n");
        }
        if let Some(limits) = limits {
            text += &format!("      limits: {limits}\n");
        }
        text += "      approved:\n";
        for name in *names {
            let (version, hash) = pins(name);
            text += &format!("        - {{ name: {name}, version: '{version}', hash: {hash} }}\n");
        }
    }
    text
}

fn run_json(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = skillfold_in(dir, args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report, stderr(&out))
}

/// The codes in brackets in `lines` (`… [code]`), sorted and deduplicated.
fn codes(lines: &Value) -> Vec<String> {
    let mut codes: Vec<String> = lines
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|line| {
            let line = line.as_str()?;
            let start = line.rfind('[')?;
            Some(line[start + 1..].trim_end_matches(']').to_owned())
        })
        .collect();
    codes.sort();
    codes.dedup();
    codes
}

/// What `update --json` says of one source: `None` when it passed, else the source's code (or
/// `verification_failed` when bundles were refused) and the codes of the bundles' problems.
fn update_verdict(source: &Value) -> Option<(String, Vec<String>)> {
    if let Some(code) = source["error"]["code"].as_str() {
        return Some((code.to_owned(), Vec::new()));
    }
    let refused: Vec<&Value> = source["bundles"]
        .as_array()
        .expect("bundles")
        .iter()
        .filter(|b| b["status"] == "refused")
        .collect();
    if refused.is_empty() {
        return None;
    }
    let mut problems: Vec<String> = refused.iter().flat_map(|b| codes(&b["problems"])).collect();
    problems.sort();
    problems.dedup();
    Some(("verification_failed".to_owned(), problems))
}

/// What `prepare --json` says of one source, in the same shape.
fn prepare_verdict(source: &Value) -> Option<(String, Vec<String>)> {
    let error = &source["error"];
    let code = error["code"].as_str()?;
    let problems = if code == "verification_failed" {
        codes(&error["details"])
    } else {
        Vec::new()
    };
    Some((code.to_owned(), problems))
}

#[test]
fn whenever_update_writes_prepare_succeeds_and_whenever_prepare_refuses_update_refuses_alike() {
    let h = heads();
    let server = offering_filters(&h.repo);
    let url = server.url("remote.git");
    let shapes: [&[Shape<'_>]; 4] = [
        &[("one", None, None, &["alpha", "beta"])],
        &[
            ("a", Some("outside-bundles"), None, &["alpha"]),
            ("b", None, None, &["beta"]),
        ],
        &[
            ("a", None, Some("extended"), &["alpha"]),
            ("b", None, None, &["alpha", "beta"]),
        ],
        &[
            ("a", None, None, &["alpha"]),
            ("b", Some("outside-bundles"), None, &["beta"]),
            ("c", None, None, &["beta"]),
        ],
    ];
    let base_pin = |name: &str| {
        let hash = h
            .pins
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, hash)| hash.clone())
            .expect("a pin");
        ("1.0.0".to_owned(), hash)
    };
    let (mut written, mut refused) = (0, 0);
    for (i, (what, head)) in h.heads.iter().enumerate() {
        for (s, shape) in shapes.iter().enumerate() {
            let case = format!("head {i} ({what}), shape {s}");
            let work = tempfile::tempdir().expect("tempdir");
            let track = format!("h{i}");
            let config = work.path().join("skillfold.yaml");
            fs_err::write(&config, descriptor(&url, &h.base, &track, shape, &base_pin))
                .expect("write");
            let (code, update, err) = run_json(
                work.path(),
                &["update", "-c", "skillfold.yaml", "--write", "--json"],
            );
            let sources = update["sources"].as_array().cloned().unwrap_or_default();
            assert_eq!(sources.len(), shape.len(), "{case}: {err}");
            if code == Some(0) {
                written += 1;
                assert_eq!(update["written"], true, "{case}: {update}");
                let (code, prepare, err) =
                    run_json(work.path(), &["prepare", "-c", "skillfold.yaml", "--json"]);
                assert_eq!(
                    code,
                    Some(0),
                    "{case}: update wrote what prepare refuses: {prepare} {err}"
                );
                continue;
            }
            assert_eq!(code, Some(2), "{case}: {update} {err}");
            assert_eq!(update["written"], false, "{case}");
            refused += 1;
            // The head pinned as update saw it: its new digests where it found them.
            let new_pin = |source: usize, name: &str| {
                let bundle = sources[source]["bundles"]
                    .as_array()
                    .expect("bundles")
                    .iter()
                    .find(|b| b["name"] == name)
                    .cloned()
                    .unwrap_or(Value::Null);
                let (version, hash) = base_pin(name);
                (
                    bundle["new_version"]
                        .as_str()
                        .map_or(version, str::to_owned),
                    bundle["new_hash"].as_str().map_or(hash, str::to_owned),
                )
            };
            // Each source alone (two sources of one head may pin one name apart).
            for (index, one) in shape.iter().enumerate() {
                let text = descriptor(&url, head, &track, &[*one], &|n| new_pin(index, n));
                fs_err::write(&config, text).expect("write");
                let (_, prepare, err) =
                    run_json(work.path(), &["prepare", "-c", "skillfold.yaml", "--json"]);
                assert_eq!(
                    update_verdict(&sources[index]),
                    prepare_verdict(&prepare["sources"][0]),
                    "{case}, source {index}: update {}\nprepare {prepare}\n{err}",
                    sources[index]
                );
            }
        }
    }
    // The corpus covers both halves of the property.
    assert!(
        written >= 4 && refused >= 12,
        "{written} written, {refused} refused"
    );
}

/// Two sources of one URL and branch, the first `links: outside-bundles`, the second the
/// default: the head's root link refuses the second, in `outdated`, `update` and `prepare`.
#[test]
fn each_source_keeps_its_own_links_policy() {
    let h = heads();
    let server = HttpServer::start(h.repo.tmp.path());
    let url = server.url("remote.git");
    let work = tempfile::tempdir().expect("tempdir");
    let base_pin = |name: &str| {
        let hash = h.pins.iter().find(|(n, _)| n == name).expect("pin");
        ("1.0.0".to_owned(), hash.1.clone())
    };
    let shape: &[Shape<'_>] = &[
        ("a", Some("outside-bundles"), None, &["alpha"]),
        ("b", None, None, &["beta"]),
    ];
    let text = descriptor(&url, &h.base, "h1", shape, &base_pin);
    fs_err::write(work.path().join("skillfold.yaml"), &text).expect("write");
    let (code, report, err) =
        run_json(work.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(code, Some(2), "{report} {err}");
    assert!(report["sources"][0].get("error").is_none(), "{report}");
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "unchanged");
    assert_eq!(
        report["sources"][1]["error"]["code"], "symlink_in_tree",
        "{report}"
    );
    let (code, report, err) = run_json(
        work.path(),
        &["update", "-c", "skillfold.yaml", "--write", "--json"],
    );
    assert_eq!(code, Some(2), "{report} {err}");
    assert_eq!(report["sources"][1]["error"]["code"], "symlink_in_tree");
    assert_eq!(
        fs_err::read_to_string(work.path().join("skillfold.yaml")).expect("read"),
        text,
        "nothing written"
    );
}

/// Two sources of one URL approving `alpha` and `beta`, fetched in part once: the fetch brings
/// the blobs of both, so neither is `object_unreadable`.
#[test]
fn a_shared_partial_fetch_brings_every_sources_blobs() {
    let h = heads();
    let server = offering_filters(&h.repo);
    let url = server.url("remote.git");
    let work = tempfile::tempdir().expect("tempdir");
    let base_pin = |name: &str| {
        let hash = h.pins.iter().find(|(n, _)| n == name).expect("pin");
        ("1.0.0".to_owned(), hash.1.clone())
    };
    let shape: &[Shape<'_>] = &[("a", None, None, &["alpha"]), ("b", None, None, &["beta"])];
    fs_err::write(
        work.path().join("skillfold.yaml"),
        descriptor(&url, &h.base, "h0", shape, &base_pin),
    )
    .expect("write");
    let (code, report, err) =
        run_json(work.path(), &["outdated", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(code, Some(0), "{report} {err}");
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "changed");
    assert_eq!(
        report["sources"][1]["bundles"][0]["status"], "unchanged",
        "{report}"
    );
    let (code, report, err) = run_json(
        work.path(),
        &["update", "-c", "skillfold.yaml", "--write", "--json"],
    );
    assert_eq!(code, Some(0), "{report} {err}");
    assert_eq!(report["written"], true);
    let (code, report, err) = run_json(work.path(), &["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(code, Some(0), "{report} {err}");
    assert_eq!(report["sources"][0]["fetch"], "partial", "{report}");
}
