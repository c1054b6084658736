//! `skillfold import` through the binary: each lock format (the samples in
//! tests/fixtures/import/, filled with the commit and hashes of a repository served over smart
//! HTTP on 127.0.0.1, `github.com` mapped to it with `--rewrite`) resolved to a draft that
//! `check` accepts and `prepare` verifies; a branch resolved to a commit with the ref in a
//! comment; a recorded hash that differs, reported; the entries that cannot be imported left
//! out with their reasons; and hostile files refused with their codes, never fetched.

use std::path::{Path, PathBuf};
use std::process::Output;

use sha2::{Digest, Sha256};

use super::support::bin::{skillfold_in, stderr, stdout};
use super::support::git::{Repo, git};
use super::support::git_server::HttpServer;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name);
    fs_err::read_to_string(path).expect("fixture")
}

/// A repository with `skills/pdf`, `skills/csv` and `skills/broken` (a hidden file), served
/// over HTTP, and a folder to run in.
struct World {
    repo: Repo,
    commit: String,
    server: HttpServer,
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let repo = Repo::new();
        repo.bundle("pdf", "");
        repo.bundle("csv", "");
        repo.bundle("broken", "");
        repo.write("skills/broken/.env", b"TOKEN=x\n");
        let commit = repo.commit("three skills");
        // A server's `HEAD` names its default branch.
        git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        let server = HttpServer::start(repo.tmp.path());
        World {
            repo,
            commit,
            server,
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn url(&self) -> String {
        self.server.url("remote.git")
    }

    /// The fixture `name` with this world's values, written into the run folder.
    fn lock(&self, name: &str) -> PathBuf {
        let mut text = fixture(name)
            .replace("{COMMIT}", &self.commit)
            .replace("{URL}", &self.url());
        for skill in ["pdf", "csv"] {
            let upper = skill.to_uppercase();
            let files = self.files(skill);
            text = text
                .replace(&format!("{{{upper}_HASH}}"), &skills_hash(&files))
                .replace(&format!("{{{upper}_DIGEST}}"), &toolhive_digest(&files))
                .replace(&format!("{{{upper}_APM}}"), &apm_hash(&files))
                .replace(
                    &format!("{{{upper}_TREE}}"),
                    &git(
                        &self.repo.work,
                        &["rev-parse", &format!("HEAD:skills/{skill}")],
                    ),
                );
        }
        let path = self.dir.path().join(name);
        fs_err::write(&path, text).expect("write lock");
        path
    }

    /// The files of `skills/<name>`, by relative path.
    fn files(&self, name: &str) -> Vec<(String, Vec<u8>)> {
        let dir = self.repo.work.join("skills").join(name);
        ["SKILL.md", "references/guide.md"]
            .iter()
            .map(|p| (p.to_string(), fs_err::read(dir.join(p)).expect("read")))
            .collect()
    }

    /// `skillfold import LOCK` with `github.com/acme/skills` mapped to the server.
    fn import(&self, lock: &Path) -> Output {
        let url = self.url();
        skillfold_in(
            self.dir.path(),
            &[
                "import",
                lock.to_str().expect("utf8"),
                "--rewrite",
                &format!("https://github.com/acme/skills.git={url}"),
                "--rewrite",
                &format!("https://github.com/acme/skills={url}"),
            ],
        )
    }

    /// Asserts `draft` passes `check` as printed, and with `prepare` that it also prepares.
    fn assert_adoptable(&self, draft: &str, prepare: bool) {
        let runs: &[&str] = if prepare {
            &["check", "prepare"]
        } else {
            &["check"]
        };
        for command in runs {
            let out = self.on_draft(draft, &[command]);
            assert_eq!(code(&out), Some(0), "{command}: {}\n{draft}", stderr(&out));
        }
    }

    /// Writes `draft` as the run folder's descriptor (corpora inside the folder) and runs
    /// `args` on it.
    fn on_draft(&self, draft: &str, args: &[&str]) -> Output {
        let corpus = self.dir.path().join("corpus");
        let config = self.dir.path().join("skillfold.yaml");
        fs_err::write(
            &config,
            draft.replace("/var/lib/skillfold/", &format!("{}/", corpus.display())),
        )
        .expect("write draft");
        let mut all = args.to_vec();
        all.extend(["-c", config.to_str().expect("utf8")]);
        skillfold_in(self.dir.path(), &all)
    }
}

/// `content_hash` of APM, written from its definition: the files in byte order of their paths
/// (here `SKILL.md` before `references/…`), each path then its bytes.
fn apm_hash(files: &[(String, Vec<u8>)]) -> String {
    let mut hash = Sha256::new();
    for (path, bytes) in files {
        hash.update(path.as_bytes());
        hash.update(bytes);
    }
    format!("sha256:{}", hex(&hash.finalize()))
}

/// `computedHash` of the `skills` CLI, written from its definition: the files in the order of
/// `localeCompare` (here `references/…` before `SKILL.md`), each path then its bytes.
fn skills_hash(files: &[(String, Vec<u8>)]) -> String {
    let mut hash = Sha256::new();
    for (path, bytes) in files.iter().rev() {
        hash.update(path.as_bytes());
        hash.update(bytes);
    }
    hex(&hash.finalize())
}

/// ToolHive's `contentDigest`: byte order, path NUL sha256 newline.
fn toolhive_digest(files: &[(String, Vec<u8>)]) -> String {
    let mut hash = Sha256::new();
    for (path, bytes) in files {
        hash.update(path.as_bytes());
        hash.update([0]);
        hash.update(Sha256::digest(bytes));
        hash.update(b"\n");
    }
    format!("sha256:{}", hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// Asserts stderr `err` lists the entry `key` as left out, with `code` on its line.
fn assert_left_out(err: &str, key: &str, code: &str) {
    let line = err
        .lines()
        .find(|l| l.starts_with(&format!("left out: `{key}`")))
        .unwrap_or_else(|| panic!("{key} listed: {err}"));
    assert!(line.contains(code), "{line}");
}

#[test]
fn a_project_lock_becomes_a_draft_that_check_accepts_and_prepare_verifies() {
    let w = World::new();
    let out = w.import(&w.lock("skills-lock.json"));
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(0), "{err}\n{draft}");
    assert!(err.contains("the `skills` CLI's project lock"), "{err}");
    // Both entries from one commit share one source; the branch is named in a comment.
    assert_eq!(draft.matches("- git:").count(), 1, "{draft}");
    assert!(
        draft.contains(&format!("revision: {}", w.commit)),
        "{draft}"
    );
    assert!(draft.contains("root: \"skills\""), "{draft}");
    for name in ["pdf", "csv"] {
        assert!(
            draft.contains(&format!("hash: {}", w.repo.digest(name))),
            "{draft}"
        );
    }
    w.assert_adoptable(&draft, true);
}

#[test]
fn a_branch_is_resolved_once_and_written_as_its_commit_with_the_ref_named() {
    let w = World::new();
    let lock = w.lock("skills-lock.json");
    // `main` moves past the commit the lock pins for `csv`: `pdf` follows it.
    w.repo.write(
        "skills/pdf/references/guide.md",
        b"# Guide, second edition\n",
    );
    let head = w.repo.commit("a new guide");
    let out = w.import(&lock);
    let (draft, err) = (stdout(&out), stderr(&out));
    // `pdf`'s recorded hash is of the first commit's files: a mismatch, reported.
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    assert!(
        draft.contains(&format!(
            "revision: {head}  # resolved from `main` (refs/heads/main)"
        )),
        "{draft}"
    );
    assert!(
        draft.contains(&format!("revision: {}\n", w.commit)),
        "{draft}"
    );
    assert!(
        draft.contains("# MISMATCH: the lock's `computedHash`"),
        "{draft}"
    );
    assert!(err.contains("[lock_hash_mismatch]"), "{err}");
    w.assert_adoptable(&draft, false);
}

#[test]
fn a_global_lock_compares_folder_hashes_and_reports_the_one_that_differs() {
    let w = World::new();
    let out = w.import(&w.lock("skill-lock-global.json"));
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    assert!(err.contains("the `skills` CLI's global lock"), "{err}");
    let mismatch: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[lock_hash_mismatch]"))
        .collect();
    assert_eq!(mismatch.len(), 1, "{err}");
    assert!(
        mismatch[0].contains("`csv`") && mismatch[0].contains("skillFolderHash"),
        "{err}"
    );
    // Both stay in the draft: the mismatch is a comment to review, never a silent replacement.
    assert!(
        draft.contains("name: csv") && draft.contains("name: pdf"),
        "{draft}"
    );
    assert_eq!(draft.matches("# MISMATCH").count(), 1, "{draft}");
    assert!(
        draft.contains("0123456789abcdef0123456789abcdef01234567"),
        "{draft}"
    );
    w.assert_adoptable(&draft, false);
}

#[test]
fn a_toolhive_lock_pins_its_git_skills_and_lists_its_oci_one() {
    let w = World::new();
    let out = w.import(&w.lock("toolhive.lock.yaml"));
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    assert!(err.contains("ToolHive's lock"), "{err}");
    assert!(
        !err.contains("[lock_hash_mismatch]"),
        "the content digest agrees: {err}"
    );
    assert!(
        err.contains("left out: `diagram`") && err.contains("[lock_unsupported_source]"),
        "{err}"
    );
    assert!(
        draft.contains("#   - `diagram`: ") && draft.contains("[lock_unsupported_source]"),
        "{draft}"
    );
    assert!(
        draft.contains("resolved from the lock's ref `v2.1.0`"),
        "{draft}"
    );
    assert!(
        draft.contains("resolved from `main` (refs/heads/main)"),
        "{draft}"
    );
    assert!(
        draft.contains("version: \"2.1.0\"  # from the lock"),
        "{draft}"
    );
    assert!(
        draft.contains(&format!("hash: {}", w.repo.digest("pdf"))),
        "{draft}"
    );
    w.assert_adoptable(&draft, true);
}

#[test]
fn an_apm_lock_pins_its_git_skills_reports_a_hash_that_differs_and_leaves_out_a_local_one() {
    let w = World::new();
    let out = w.import(&w.lock("apm.lock.yaml"));
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    assert!(err.contains("Microsoft APM's lock"), "{err}");
    assert!(
        err.contains("left out: `notes`") && err.contains("[lock_local_path]"),
        "{err}"
    );
    // `pdf`'s content hash agrees; `csv`'s recorded one does not, and is reported, not replaced.
    assert_eq!(err.matches("[lock_hash_mismatch]").count(), 1, "{err}");
    assert!(err.contains("`csv`"), "{err}");
    assert!(
        draft.contains("resolved from the lock's ref `v2.1.0`"),
        "{draft}"
    );
    assert!(
        draft.contains("resolved from `main` (refs/heads/main)"),
        "{draft}"
    );
    assert!(
        draft.contains("version: \"2.1.0\"  # from the lock"),
        "{draft}"
    );
    for skill in ["pdf", "csv"] {
        assert!(
            draft.contains(&format!("hash: {}", w.repo.digest(skill))),
            "{skill}: {draft}"
        );
    }
    w.assert_adoptable(&draft, true);
}

#[test]
fn entries_that_cannot_be_resolved_are_listed_and_left_out() {
    let w = World::new();
    let out = w.import(&w.lock("skills-lock-mixed.json"));
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    for (key, code) in [
        ("broken", "[verification_failed]"),
        ("docs", "[lock_unsupported_source]"),
        ("notes", "[lock_local_path]"),
    ] {
        assert_left_out(&err, key, code);
        assert!(draft.contains(&format!("#   - `{key}`: ")), "{draft}");
    }
    assert!(
        err.contains("hidden_path"),
        "the broken rule is named: {err}"
    );
    // `broken` and `pdf` both follow `HEAD`: one ref listing, then one fetch for both.
    assert_eq!(w.server.fetches(), 2, "{:?}", w.server.requests());
    assert!(
        draft.contains("name: pdf") && !draft.contains("name: broken"),
        "{draft}"
    );
    assert!(
        err.contains("1 of 4 entries in the draft; 3 left out"),
        "{err}"
    );
    w.assert_adoptable(&draft, false);
}

#[test]
fn an_unreachable_host_is_retryable_and_the_draft_still_passes_check() {
    let w = World::new();
    let lock = w.dir.path().join("skills-lock.json");
    fs_err::write(
        &lock,
        r#"{"version": 1, "skills": {"pdf": {"source": "http://127.0.0.1:9/git/remote.git",
            "sourceType": "git", "ref": "main", "computedHash": "00"}}}"#,
    )
    .expect("write");
    let out = skillfold_in(w.dir.path(), &["import", lock.to_str().unwrap()]);
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(1), "{err}\n{draft}");
    assert!(
        err.contains("left out: `pdf`") && err.contains("[fetch_failed]"),
        "{err}"
    );
    assert!(draft.contains("skills: []"), "{draft}");
    w.assert_adoptable(&draft, false);
}

#[test]
fn local_paths_and_credentials_are_refused_never_fetched_never_echoed() {
    let w = World::new();
    let lock = w.lock("hostile-urls.json");
    let out = w.import(&lock);
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    for (key, code) in [
        ("creds", "[lock_credentials]"),
        ("etc", "[lock_local_path]"),
        ("ev\\u{1b}[31mil", "[lock_local_path]"),
        ("token", "[lock_credentials]"),
    ] {
        assert_left_out(&err, key, code);
    }
    for text in [&err, &draft] {
        assert!(
            !text.contains("ghp_SECRETTOKEN") && !text.contains("ghp_QUERYTOKEN"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "escaped: {text}"
        );
    }
    assert_eq!(w.server.fetches(), 0, "nothing fetched");
}

/// `import` of `lock` refused as a whole: exit 2, `code` on stderr, nothing on stdout.
fn assert_refused(dir: &Path, lock: &Path, code_text: &str) {
    let out = skillfold_in(dir, &["import", lock.to_str().unwrap()]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("[{code_text}]")),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn hostile_files_are_refused_with_their_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        fs_err::write(&path, bytes).expect("write");
        path
    };
    for name in [
        "hostile-duplicate-keys.json",
        "hostile-duplicate-keys.lock.yaml",
    ] {
        assert_refused(
            dir.path(),
            &write(name, fixture(name).as_bytes()),
            "lock_duplicate_key",
        );
    }
    // Over 1 MiB: refused from its size, before it is read.
    let mut huge = br#"{"version": 1, "skills": {}}"#.to_vec();
    huge.resize(1024 * 1024 + 1, b' ');
    assert_refused(
        dir.path(),
        &write("skills-lock.json", &huge),
        "lock_too_large",
    );
    let deep = format!(
        "{{\"version\": 1, \"skills\": {{\"a\": {}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_refused(
        dir.path(),
        &write("deep.json", deep.as_bytes()),
        "lock_too_deep",
    );
    // 40 levels: past import's bound, within the YAML reader's own; 50,000: past both.
    for levels in [40, 50_000] {
        let deep_yaml = format!("version: 1\nskills:\n{}x\n", "- ".repeat(levels));
        let lock = write("deep.lock.yaml", deep_yaml.as_bytes());
        assert_refused(dir.path(), &lock, "lock_too_deep");
    }
    // `gh skill` keeps its metadata in the frontmatter of each SKILL.md: not a lock file.
    let skill_md =
        b"---\nname: pdf\ndescription: d\nmetadata:\n  github-repo: acme/skills\n---\n# pdf\n";
    assert_refused(
        dir.path(),
        &write("SKILL.md", skill_md),
        "lock_unknown_format",
    );
    assert_refused(
        dir.path(),
        &write(
            "package-lock.json",
            br#"{"lockfileVersion": 3, "packages": {}}"#,
        ),
        "lock_unknown_format",
    );
    assert_refused(
        dir.path(),
        &dir.path().join("missing.json"),
        "lock_unreadable",
    );
    let fifo = dir.path().join("fifo.json");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
    assert_refused(dir.path(), &fifo, "lock_unreadable");
}

/// Asserts no text of `out` holds `ghp_` (every token of the credential fixtures starts so).
fn assert_no_token(out: &Output) {
    for text in [stderr(out), stdout(out)] {
        assert!(!text.contains("ghp_"), "a token printed:\n{text}");
    }
}

#[test]
fn credentials_are_never_printed_whatever_an_entry_is_left_out_for() {
    let w = World::new();
    // ToolHive: user information in a `git://` reference, an `https://` or `oci://` source,
    // and a malformed reference.
    let out = w.import(&w.lock("hostile-credentials.lock.yaml"));
    let err = stderr(&out);
    assert_eq!(code(&out), Some(2), "{err}");
    for (key, code) in [
        ("gitcreds", "[lock_credentials]"),
        ("httpscreds", "[lock_unsupported_source]"),
        ("ocicreds", "[lock_unsupported_source]"),
        ("malformed", "[lock_invalid_entry]"),
    ] {
        assert_left_out(&err, key, code);
    }
    assert!(err.contains("`oci://***@ghcr.io/"), "{err}");
    assert!(stdout(&out).contains("#   - `httpscreds`: `https://***@github.com/"));
    assert_no_token(&out);
    // The `skills` CLI: a local source, a source type and a key that hold a URL.
    let out = w.import(&w.lock("hostile-credentials.json"));
    let err = stderr(&out);
    assert_eq!(code(&out), Some(2), "{err}");
    assert_left_out(&err, "mine", "[lock_local_path]");
    assert_left_out(&err, "odd", "[lock_unsupported_source]");
    assert_left_out(&err, "https://***@git.example.com/me", "[lock_local_path]");
    assert_no_token(&out);
    assert_eq!(w.server.fetches(), 0, "nothing fetched");
}

#[test]
fn a_project_lock_skill_path_names_the_folder() {
    let w = World::new();
    // A plugin's skill, where the `skills` CLI 1.7.4 finds and records it.
    let folder = "plugins/x/skills/gamma";
    w.repo.write(
        &format!("{folder}/SKILL.md"),
        b"---\nname: gamma\ndescription: The gamma skill.\n---\n# gamma\n",
    );
    w.repo
        .write(&format!("{folder}/references/guide.md"), b"# Guide\n");
    let head = w.repo.commit("a plugin");
    let gamma: Vec<(String, Vec<u8>)> = ["SKILL.md", "references/guide.md"]
        .iter()
        .map(|p| {
            let bytes = fs_err::read(w.repo.work.join(folder).join(p)).expect("read");
            (p.to_string(), bytes)
        })
        .collect();
    let lock = w.lock("skills-lock-skill-path.json");
    let text = fs_err::read_to_string(&lock)
        .expect("read")
        .replace("{GAMMA_HASH}", &skills_hash(&gamma));
    fs_err::write(&lock, text).expect("write");
    let out = w.import(&lock);
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(0), "{err}\n{draft}");
    assert!(draft.contains("root: \"plugins/x/skills\""), "{draft}");
    assert!(
        draft.contains("name: gamma") && draft.contains("name: pdf"),
        "{draft}"
    );
    assert!(draft.contains(&format!("revision: {head}")), "{draft}");
    // `pdf`'s `sourceUrl` names the repository (its `git` source, as the CLI writes it).
    assert!(
        draft.contains(&format!("source: \"{}\"", w.url())),
        "{draft}"
    );
    w.assert_adoptable(&draft, true);
}

#[test]
fn a_global_lock_content_hash_is_compared_as_the_content_hash_it_is() {
    let w = World::new();
    // A `git` source: the CLI records its own content hash as `skillFolderHash` (64 hex
    // digits), not a tree id; `csv`'s is `pdf`'s, a real mismatch.
    let out = w.import(&w.lock("skill-lock-global-git.json"));
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    let mismatch: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[lock_hash_mismatch]"))
        .collect();
    assert_eq!(mismatch.len(), 1, "{err}");
    assert!(mismatch[0].contains("`csv`"), "{err}");
    assert!(
        mismatch[0].contains(&skills_hash(&w.files("csv"))),
        "the content hash of `csv` given: {err}"
    );
    assert_eq!(draft.matches("# MISMATCH").count(), 1, "{draft}");
    w.assert_adoptable(&draft, false);
}

#[test]
fn a_link_to_a_lock_is_refused_never_followed() {
    let w = World::new();
    let lock = w.dir.path().join("skills-lock.json");
    fs_err::write(&lock, r#"{"version": 1, "skills": {}}"#).expect("write");
    let link = w.dir.path().join("linked-skills-lock.json");
    std::os::unix::fs::symlink(&lock, &link).expect("symlink");
    assert_refused(w.dir.path(), &link, "lock_unreadable");
    let out = skillfold_in(w.dir.path(), &["import", link.to_str().unwrap()]);
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(w.server.fetches(), 0, "nothing fetched");
}

#[test]
fn yaml_flow_nesting_past_the_scanners_bound_is_too_deep() {
    let dir = tempfile::tempdir().expect("tempdir");
    for levels in [1_000, 100_000] {
        let deep = format!(
            "version: 1\nskills: {}{}\n",
            "[".repeat(levels),
            "]".repeat(levels)
        );
        let path = dir.path().join("deep-flow.lock.yaml");
        fs_err::write(&path, deep).expect("write");
        assert_refused(dir.path(), &path, "lock_too_deep");
    }
}

#[test]
fn a_ref_that_is_no_ref_name_is_a_configuration_error_told_before_any_connection() {
    let w = World::new();
    let lock = w.dir.path().join("skills-lock.json");
    fs_err::write(
        &lock,
        r#"{"version": 1, "skills": {"pdf": {"source": "acme/skills", "sourceType": "github",
            "ref": "nope\n# x"}}}"#,
    )
    .expect("write");
    let out = w.import(&lock);
    let (draft, err) = (stdout(&out), stderr(&out));
    assert_eq!(code(&out), Some(2), "{err}\n{draft}");
    assert_left_out(&err, "pdf", "[lock_invalid_entry]");
    assert!(err.contains("`nope\\n# x`"), "escaped: {err}");
    assert!(w.server.requests().is_empty(), "{:?}", w.server.requests());
    w.assert_adoptable(&draft, false);
}

#[test]
fn a_repository_named_only_by_dots_gets_a_corpus_of_its_own_and_check_refuses_dots() {
    let w = World::new();
    for name in ["..git", "...git"] {
        git(
            w.repo.tmp.path(),
            &["clone", "-q", "--bare", "remote.git", name],
        );
        let lock = w.dir.path().join("skills-lock.json");
        fs_err::write(
            &lock,
            format!(
                r#"{{"version": 1, "skills": {{"pdf": {{"source": "{}", "sourceType": "git",
                    "ref": "{}"}}}}}}"#,
                w.server.url(name),
                w.commit
            ),
        )
        .expect("write");
        let out = skillfold_in(w.dir.path(), &["import", lock.to_str().unwrap()]);
        let (draft, err) = (stdout(&out), stderr(&out));
        assert_eq!(code(&out), Some(0), "{name}: {err}\n{draft}");
        // Named after the owner's segment alone: the repository's dots name nothing.
        assert!(
            draft.contains("directory: /var/lib/skillfold/git "),
            "{name}: {draft}"
        );
        w.assert_adoptable(&draft, false);
    }
}

#[test]
fn check_refuses_a_corpus_directory_whose_last_component_is_dots() {
    let w = World::new();
    let out = w.import(&w.lock("skills-lock.json"));
    let draft = stdout(&out);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let directory = "/var/lib/skillfold/git-remote ";
    assert!(draft.contains(directory), "{draft}");
    // `..` last is the base's parent (`prepare` would manage `/var/lib`), `.` the base.
    for last in ["..", ".", "../", "./"] {
        let bad = draft.replace(directory, &format!("/var/lib/skillfold/{last} "));
        let out = w.on_draft(&bad, &["check"]);
        assert_eq!(code(&out), Some(2), "{last}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("invalid_directory"),
            "{last}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_dangling_link_on_the_way_to_the_install_folder_is_unsafe_not_an_io_error() {
    let w = World::new();
    let out = w.import(&w.lock("skills-lock.json"));
    let draft = stdout(&out);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let nowhere = w.dir.path().join("nowhere");
    std::os::unix::fs::symlink(&nowhere, w.dir.path().join("dangling")).expect("symlink");
    let into = w.dir.path().join("dangling/agent/skills");
    let out = w.on_draft(&draft, &["install", "--into", into.to_str().unwrap()]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("install_target_unsafe"),
        "{}",
        stderr(&out)
    );
    assert!(!nowhere.exists(), "nothing created where it points");
}
