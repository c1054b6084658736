//! Partial fetches against `git http-backend` on 127.0.0.1: the pinned commit's trees first
//! (`filter blob:none`), then exactly the approved blobs by id, counted and read at the server
//! (every request and every request body is logged by the fixture's CGI wrapper); the fallback
//! to the whole commit when the server offers no filter or refuses the blobs by id; servers that
//! do not keep their word; and hostile trees, refused with the same codes as on the full path.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::support::bin::{skillfold_in, stderr};
use super::support::git::{Repo, git, git_input, prepare_json, write_descriptor};
use super::support::git_server::{HttpServer, Serve};

/// A repository with the bundles `alpha`, `beta` and `gamma` and an unrelated binary file,
/// in one commit.
fn repository() -> (Repo, String) {
    let repo = Repo::new();
    for name in ["alpha", "beta", "gamma"] {
        repo.bundle(name, "");
    }
    let noise: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    repo.write("assets/noise.bin", &noise);
    let commit = repo.commit("bundles and assets");
    (repo, commit)
}

/// Serves `repo`'s bare repository as `serve` says and prepares `alpha` from it: the server,
/// the output, the report and the corpus directory.
fn prepare_alpha(repo: &Repo, commit: &str, serve: &Serve) -> Prepared {
    let server = HttpServer::serving(repo.tmp.path(), serve);
    let dir = tempfile::tempdir().expect("tempdir");
    let url = server.url("remote.git");
    write_descriptor(
        dir.path(),
        &[(
            &url,
            commit,
            "corpus",
            vec![("alpha", repo.digest("alpha"))],
        )],
    );
    // `-v`: a whole-commit fetch the server made necessary is a step line, said once.
    let out = skillfold_in(
        dir.path(),
        &["prepare", "-c", "skillfold.yaml", "--json", "-v"],
    );
    let report = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    Prepared {
        corpus: dir.path().join("corpus"),
        _dir: dir,
        server,
        out,
        report,
    }
}

/// Prepares the descriptor in `dir`, which must succeed with every source fetched in part;
/// returns the bodies of the `POST`s `server` answered.
fn prepare_partially(dir: &Path, server: &HttpServer) -> Vec<String> {
    let (out, report) = prepare_json(dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for source in report["sources"].as_array().expect("sources") {
        assert_eq!(source["fetch"], "partial", "{report}");
    }
    server.posts()
}

struct Prepared {
    _dir: tempfile::TempDir,
    corpus: PathBuf,
    server: HttpServer,
    out: Output,
    report: serde_json::Value,
}

impl Prepared {
    #[track_caller]
    fn assert_published(&self, fetch: &str) {
        assert_eq!(self.out.status.code(), Some(0), "{}", stderr(&self.out));
        let source = &self.report["sources"][0];
        assert_eq!(source["fetch"], fetch, "{}", self.report);
        assert_eq!(source["bundles"][0]["status"], "published");
        assert!(
            self.corpus
                .join("current/alpha/references/guide.md")
                .is_file()
        );
    }

    /// How many `fetch` commands asked for the commit and its trees (`deepen 1`), and the
    /// `want` lines of each command that asked for blobs.
    fn commands(&self) -> (usize, Vec<Vec<String>>) {
        let posts = self.server.posts();
        let commits = posts.iter().filter(|p| p.contains("deepen 1")).count();
        let blobs = posts
            .iter()
            .filter(|p| !p.contains("deepen 1"))
            .map(|p| wants(p))
            .collect();
        (commits, blobs)
    }
}

/// The ids of a request body's `want` pkt-lines (four hex digits of length, then `want `).
fn wants(body: &str) -> Vec<String> {
    body.match_indices("want ")
        .filter(|(at, _)| {
            *at >= 4
                && body.as_bytes()[at - 4..*at]
                    .iter()
                    .all(u8::is_ascii_hexdigit)
        })
        .map(|(at, _)| body[at + 5..at + 45].to_owned())
        .collect()
}

/// The blob at `path` of `commit`.
fn blob_at(repo: &Repo, commit: &str, path: &str) -> String {
    git(&repo.bare, &["rev-parse", &format!("{commit}:{path}")])
}

fn filters() -> Serve {
    Serve {
        allow_filter: true,
        ..Serve::default()
    }
}

#[test]
fn one_trees_request_then_one_request_for_exactly_the_approved_blobs() {
    let (repo, commit) = repository();
    let done = prepare_alpha(&repo, &commit, &filters());
    done.assert_published("partial");
    let posts = done.server.posts();
    assert_eq!(posts.len(), 2, "{posts:#?}");
    assert!(posts[0].contains("filter blob:none"), "{}", posts[0]);
    assert!(posts[0].contains(&format!("want {commit}")), "{}", posts[0]);
    assert!(!posts[1].contains("filter"), "{}", posts[1]);
    let mut asked = wants(&posts[1]);
    asked.sort();
    let mut approved = vec![
        blob_at(&repo, &commit, "skills/alpha/SKILL.md"),
        blob_at(&repo, &commit, "skills/alpha/references/guide.md"),
    ];
    approved.sort();
    assert_eq!(asked, approved);
    // One connection: one handshake, no ref listing.
    assert_eq!(done.server.fetches(), 1, "{:#?}", done.server.requests());
    assert!(!posts.iter().any(|p| p.contains("command=ls-refs")));
    assert!(!stderr(&done.out).contains("whole commit"));
}

#[test]
fn sources_of_one_commit_share_one_trees_request_and_one_blobs_request() {
    let (repo, commit) = repository();
    let server = HttpServer::serving(repo.tmp.path(), &filters());
    let dir = tempfile::tempdir().expect("tempdir");
    let url = server.url("remote.git");
    write_descriptor(
        dir.path(),
        &[
            (&url, &commit, "one", vec![("alpha", repo.digest("alpha"))]),
            (
                &url,
                &commit,
                "two",
                vec![
                    ("alpha", repo.digest("alpha")),
                    ("beta", repo.digest("beta")),
                ],
            ),
        ],
    );
    let posts = prepare_partially(dir.path(), &server);
    assert_eq!(posts.len(), 2, "{posts:#?}");
    let mut asked = wants(&posts[1]);
    asked.sort();
    let mut union: Vec<String> = ["alpha", "beta"]
        .iter()
        .flat_map(|name| {
            [
                blob_at(&repo, &commit, &format!("skills/{name}/SKILL.md")),
                blob_at(
                    &repo,
                    &commit,
                    &format!("skills/{name}/references/guide.md"),
                ),
            ]
        })
        .collect();
    union.sort();
    assert_eq!(asked, union, "each blob once, the union of both sources");
    assert!(dir.path().join("two/current/beta/SKILL.md").is_file());
}

// More than 2,048 blobs in one request under the default profile: gix's allocation limit also
// bounds the pack index's table of objects, and a limit of one file's size refused it, so the
// blobs' answer was thrown away and the whole commit fetched again.
#[test]
fn more_than_two_thousand_approved_blobs_still_come_in_one_request() {
    let repo = Repo::new();
    let names: Vec<String> = (0..33).map(|i| format!("bundle-{i:02}")).collect();
    for name in &names {
        repo.bundle(name, "");
        // 64 files, the default profile's bound per bundle: SKILL.md, the guide and 62 more.
        for f in 0..62 {
            repo.write(
                &format!("skills/{name}/references/part-{f:02}.md"),
                format!("# {name}, part {f}\n").as_bytes(),
            );
        }
    }
    let commit = repo.commit("33 bundles of 64 files");
    let server = HttpServer::serving(repo.tmp.path(), &filters());
    let dir = tempfile::tempdir().expect("tempdir");
    let url = server.url("remote.git");
    // At most 16 skills an agent: three agents, each a source of the one commit.
    let mut text = String::from("agents:\n");
    for (agent, chunk) in names.chunks(16).enumerate() {
        text.push_str(&format!(
            "  agent-{agent}:\n    skills:\n      - git:\n          source: {url}\n          revision: {commit}\n          directory: corpus-{agent}\n          root: skills\n          approved:\n"
        ));
        for name in chunk {
            text.push_str(&format!(
                "            - {{ name: {name}, version: '1.0.0', hash: {} }}\n",
                repo.digest(name)
            ));
        }
    }
    fs_err::write(dir.path().join("skillfold.yaml"), text).expect("write the descriptor");
    let posts = prepare_partially(dir.path(), &server);
    assert_eq!(posts.len(), 2, "trees, then blobs: no fallback");
    assert_eq!(wants(&posts[1]).len(), 33 * 64);
}

#[test]
fn without_filter_the_whole_commit_is_fetched_and_said_once() {
    let (repo, commit) = repository();
    let done = prepare_alpha(&repo, &commit, &Serve::default());
    done.assert_published("full");
    let (commits, blobs) = done.commands();
    assert_eq!((commits, blobs.len()), (1, 0));
    assert!(!done.server.posts()[0].contains("filter"));
    let err = stderr(&done.out);
    assert_eq!(
        err.matches("offers no partial fetch").count(),
        1,
        "said once:\n{err}"
    );
}

#[test]
fn a_refused_want_of_blobs_falls_back_to_the_whole_commit() {
    let (repo, commit) = repository();
    let refusing = Serve {
        allow_filter: true,
        refuse_blob_wants: true,
        ..Serve::default()
    };
    let done = prepare_alpha(&repo, &commit, &refusing);
    done.assert_published("full");
    let (commits, blobs) = done.commands();
    assert_eq!(
        (commits, blobs.len()),
        (2, 1),
        "trees, blobs refused, whole"
    );
    assert!(!done.server.posts()[2].contains("filter"));
    let err = stderr(&done.out);
    assert_eq!(
        err.matches("refused the approved files by id").count(),
        1,
        "said once:\n{err}"
    );
    assert!(err.contains("not our ref"), "{err}");
}

#[test]
fn a_server_that_refuses_the_filter_it_offers_gets_a_request_for_the_whole_commit() {
    let (repo, commit) = repository();
    let picky = Serve {
        allow_filter: true,
        refuse_blob_none: true,
        ..Serve::default()
    };
    let done = prepare_alpha(&repo, &commit, &picky);
    done.assert_published("full");
    let posts = done.server.posts();
    assert_eq!(posts.len(), 2, "{posts:#?}");
    assert!(posts[0].contains("filter blob:none") && !posts[1].contains("filter"));
    // The whole commit by id, not every branch and tag.
    assert!(
        !posts.iter().any(|p| p.contains("command=ls-refs")),
        "{posts:#?}"
    );
    let err = stderr(&done.out);
    assert_eq!(
        err.matches("refused the partial fetch it offers").count(),
        1,
        "said once:\n{err}"
    );
    assert!(err.contains("not supported"), "{err}");
}

#[test]
fn protocol_v0_fetches_in_part_too() {
    // `filter` is a capability of protocol v0 as well; over HTTP, upload-pack serves the
    // blobs reachable from its refs by id, and any with `uploadpack.allowAnySHA1InWant`.
    let (repo, commit) = repository();
    for allow_any_sha1 in [false, true] {
        let v0 = Serve {
            allow_filter: true,
            allow_any_sha1,
            v0: true,
            ..Serve::default()
        };
        let done = prepare_alpha(&repo, &commit, &v0);
        let posts = done.server.posts();
        assert!(!posts[0].contains("command=fetch"), "v0: {posts:#?}");
        done.assert_published("partial");
        let (commits, blobs) = done.commands();
        assert_eq!((commits, blobs.len()), (1, 1));
    }
}

#[test]
fn a_server_that_sends_the_blobs_anyway_needs_no_second_request() {
    let (repo, commit) = repository();
    let careless = Serve {
        allow_filter: true,
        ignore_filter: true,
        ..Serve::default()
    };
    let done = prepare_alpha(&repo, &commit, &careless);
    done.assert_published("partial");
    let (commits, blobs) = done.commands();
    assert_eq!(
        (commits, blobs.len()),
        (1, 0),
        "every blob came with the trees"
    );
}

#[test]
fn a_server_that_ignores_the_filter_is_bounded_like_the_whole_fetch() {
    // An object over the bound outside the bundles, sent although the filter asked for none:
    // refused from its header, as the whole fetch refuses it.
    let (repo, _) = repository();
    repo.write("assets/zeros.bin", &vec![0; 100 * 1024 * 1024 + 1]);
    let commit = repo.commit("zeros");
    let careless = Serve {
        allow_filter: true,
        ignore_filter: true,
        ..Serve::default()
    };
    let done = prepare_alpha(&repo, &commit, &careless);
    let err = stderr(&done.out);
    assert_eq!(done.out.status.code(), Some(2), "{err}");
    assert!(err.contains("[object_too_large]"), "{err}");
    assert!(!done.corpus.join("current").exists());
    // Asked for properly, it is never fetched.
    let done = prepare_alpha(&repo, &commit, &filters());
    done.assert_published("partial");
}

#[test]
fn a_server_that_leaves_out_a_requested_blob_fails_retryably_and_publishes_nothing() {
    let (repo, commit) = repository();
    let guide = blob_at(&repo, &commit, "skills/alpha/references/guide.md");
    let faulty = Serve {
        allow_filter: true,
        omit_want: Some(guide.clone()),
        ..Serve::default()
    };
    let done = prepare_alpha(&repo, &commit, &faulty);
    let err = stderr(&done.out);
    assert_eq!(done.out.status.code(), Some(1), "{err}");
    assert!(err.contains("[fetch_incomplete]"), "{err}");
    assert!(err.contains(&guide), "{err}");
    assert_eq!(
        done.report["sources"][0]["error"]["code"],
        "fetch_incomplete"
    );
    assert!(!done.corpus.join("current").exists(), "nothing published");
}

#[test]
fn an_answer_without_the_pinned_commit_fails_retryably_and_publishes_nothing() {
    // A cache that answers the fetch of the pinned commit with another commit's objects: not a
    // pin that names no commit (exit 2), a faulty answer (exit 1), with filters or without.
    let (repo, earlier) = repository();
    repo.write("skills/beta/references/more.md", b"# more\n");
    let pinned = repo.commit("more");
    for allow_filter in [true, false] {
        let mixed_up = Serve {
            allow_filter,
            answer_for: Some(earlier.clone()),
            ..Serve::default()
        };
        let done = prepare_alpha(&repo, &pinned, &mixed_up);
        let err = stderr(&done.out);
        assert_eq!(done.out.status.code(), Some(1), "{err}");
        assert!(err.contains("with a pack that does not hold it"), "{err}");
        assert_eq!(
            done.report["sources"][0]["error"]["code"],
            "fetch_incomplete"
        );
        assert!(!done.corpus.join("current").exists(), "nothing published");
    }
}

#[test]
fn an_answer_with_more_objects_than_asked_for_is_cut_off_and_the_whole_commit_fetched() {
    let (repo, commit) = repository();
    let noise = blob_at(&repo, &commit, "assets/noise.bin");
    let generous = Serve {
        allow_filter: true,
        extra_want: Some(noise),
        ..Serve::default()
    };
    let done = prepare_alpha(&repo, &commit, &generous);
    done.assert_published("full");
    let err = stderr(&done.out);
    assert!(
        err.contains("answered a request for 2 blob(s) with a pack of 3 objects"),
        "{err}"
    );
    let (commits, blobs) = done.commands();
    assert_eq!(
        (commits, blobs.len()),
        (2, 1),
        "trees, blobs cut off, whole"
    );
}

#[test]
fn a_blob_over_the_profile_is_refused_as_on_the_whole_fetch() {
    // A supporting file over the chamvi bound: the blobs' pack breaks its bounds, the whole
    // commit is fetched, and the file is refused by name, with the code of the full path.
    let (repo, _) = repository();
    let big: Vec<u8> = (0..512 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    repo.write("skills/alpha/references/big.bin", &big);
    let commit = repo.commit("big");
    let digest = "0".repeat(64);
    let server = HttpServer::serving(repo.tmp.path(), &filters());
    let dir = tempfile::tempdir().expect("tempdir");
    let url = server.url("remote.git");
    write_descriptor(
        dir.path(),
        &[(&url, &commit, "corpus", vec![("alpha", digest)])],
    );
    let (out, report) = prepare_json(dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("file_too_large"), "{err}");
    assert!(err.contains("references/big.bin"), "{err}");
    assert_eq!(report["sources"][0]["fetch"], "full", "{report}");
    assert!(err.contains("broke their bounds"), "{err}");
}

// --- hostile trees through the partial path --------------------------------------------------

/// A tree object holding `entries` (`(mode, name, id)`) exactly as given, written into `bare`.
fn raw_tree(bare: &Path, entries: &[(&str, &[u8], &str)]) -> String {
    let mut raw = Vec::new();
    for (mode, name, id) in entries {
        raw.extend_from_slice(mode.as_bytes());
        raw.push(b' ');
        raw.extend_from_slice(name);
        raw.push(0);
        raw.extend(
            (0..40)
                .step_by(2)
                .map(|i| u8::from_str_radix(&id[i..i + 2], 16).expect("hex")),
        );
    }
    git_input(
        bare,
        &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
        &raw,
    )
}

/// A commit of `tree` in `repo`'s bare repository, at `refs/heads/main`.
fn raw_commit(repo: &Repo, tree: &str) -> String {
    let commit = git(&repo.bare, &["commit-tree", "-m", "hostile", tree]);
    git(&repo.bare, &["update-ref", "refs/heads/main", &commit]);
    commit
}

#[track_caller]
fn assert_refused(done: &Prepared, code: &str, needle: &str) {
    let err = stderr(&done.out);
    assert_eq!(done.out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("[{code}]")), "no [{code}]:\n{err}");
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    assert!(
        !done.corpus.join("current").exists(),
        "something was published"
    );
    let (commits, blobs) = done.commands();
    assert_eq!(
        (commits, blobs.len()),
        (1, 0),
        "refused from the trees alone"
    );
}

#[test]
fn hostile_trees_are_refused_from_the_trees_with_the_codes_of_the_full_path() {
    let (repo, good) = repository();
    let skills = git(&repo.bare, &["rev-parse", &format!("{good}:skills")]);
    let leaf = git_input(&repo.bare, &["hash-object", "-w", "--stdin"], b"x\n");

    // A symbolic link outside the bundles.
    repo.symlink("../../etc/passwd", "assets/link");
    let linked = repo.commit("a link");
    let done = prepare_alpha(&repo, &linked, &filters());
    assert_refused(&done, "symlink_in_tree", "assets/link");

    // A name `..` beside `skills/`.
    let sub = raw_tree(&repo.bare, &[("100644", b"leaf.md", &leaf)]);
    let dots = raw_tree(
        &repo.bare,
        &[("40000", b"..", &sub), ("40000", b"skills", &skills)],
    );
    let done = prepare_alpha(&repo, &raw_commit(&repo, &dots), &filters());
    assert_refused(&done, "tree_malformed", "is named `.` or `..`");

    // A tree bomb: 16 levels of two 1,000-byte names.
    let (a, b) = ("a".repeat(1000), "b".repeat(1000));
    let mut bomb = sub;
    for _ in 0..16 {
        bomb = raw_tree(
            &repo.bare,
            &[
                ("40000", a.as_bytes(), &bomb),
                ("40000", b.as_bytes(), &bomb),
            ],
        );
    }
    let bombed = raw_tree(
        &repo.bare,
        &[("40000", b"bomb", &bomb), ("40000", b"skills", &skills)],
    );
    let done = prepare_alpha(&repo, &raw_commit(&repo, &bombed), &filters());
    assert_refused(&done, "tree_path_too_long", "over the bound of 4096");
}

#[test]
fn pin_fetches_in_part_too_the_named_bundles_or_every_bundle() {
    let (repo, commit) = repository();
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&[&str], &[&str]); 2] = [
        (&["alpha"], &["alpha"]),
        (&["--all"], &["alpha", "beta", "gamma"]),
    ];
    for (names, bundles) in cases {
        let server = HttpServer::serving(repo.tmp.path(), &filters());
        let url = server.url("remote.git");
        let mut args = vec![
            "pin",
            "--source",
            &url,
            "--revision",
            &commit,
            "--root",
            "skills",
        ];
        args.extend_from_slice(names);
        let out = skillfold_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let posts = server.posts();
        assert_eq!(posts.len(), 2, "{posts:#?}");
        assert!(posts[0].contains("filter blob:none"));
        let mut asked = wants(&posts[1]);
        asked.sort();
        let mut needed: Vec<String> = bundles
            .iter()
            .flat_map(|name| {
                [
                    blob_at(&repo, &commit, &format!("skills/{name}/SKILL.md")),
                    blob_at(
                        &repo,
                        &commit,
                        &format!("skills/{name}/references/guide.md"),
                    ),
                ]
            })
            .collect();
        needed.sort();
        assert_eq!(
            asked, needed,
            "{names:?}: the bundles' blobs, not the assets"
        );
    }
}
