//! A Git server's answers, bounded before the fetcher holds them and cut off at the fetch's
//! deadline: raw HTTP servers on 127.0.0.1 ([`Scripted`]) that flood the capability
//! advertisement, the ref listing or the `shallow-info` of a fetch, or announce a pack of more
//! objects than a commit may have; and `git http-backend` ([`HttpServer`]) answering a partial
//! fetch with a few objects too many, or without a tree. Each run is measured with
//! `/usr/bin/time -v`: it must end with the code of the bound that applies (an answer's bound
//! before the deadline, or the deadline), in bounded memory; the time it took is printed.
//! `SKILLFOLD_MEASURE_BIN` runs another build (e.g. main's) to compare.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use super::support::bin::stderr;
use super::support::git::{Repo, git, write_descriptor};
use super::support::git_server::{Answer, HttpServer, Scripted, Serve};

/// The bound on the peak RSS of every refused run, whatever the server sent.
const RSS_CAP_KIB: u64 = 64 * 1024;

/// The fetch's deadline in these runs (`--fetch-timeout`).
const TIMEOUT_S: u64 = 3;

/// `payload` as one pkt-line.
fn pkt(payload: &str) -> String {
    format!("{:04x}{payload}", payload.len() + 4)
}

/// A `200` of `kind` (`advertisement` or `result`) holding `body`, closing the connection.
fn ok(kind: &str, body: String) -> Answer {
    Answer::Now(format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-{kind}\r\nConnection: close\r\n\r\n{body}"
    ))
}

/// Protocol v2's capability advertisement of a server that offers `ls-refs` and a `fetch` with
/// `shallow` and `filter`, then `extra` before its flush.
fn capabilities(extra: &str) -> String {
    [
        pkt("version 2\n"),
        pkt("agent=git/2.43.0\n"),
        pkt("ls-refs=unborn\n"),
        pkt("fetch=shallow wait-for-done filter\n"),
        pkt("object-format=sha1\n"),
        extra.to_owned(),
        "0000".to_owned(),
    ]
    .concat()
}

/// `count` pkt-lines made by `line`, as one string.
fn lines(count: usize, line: impl Fn(usize) -> String) -> String {
    (0..count).map(|i| pkt(&line(i))).collect()
}

/// One run of `skillfold` in `dir` (its `skillfold.yaml`) under `/usr/bin/time -v`, with
/// `--fetch-timeout` [`TIMEOUT_S`].
struct Run {
    out: Output,
    peak_kib: u64,
}

impl Run {
    fn new(dir: &Path, args: &[&str]) -> Run {
        let binary = std::env::var("SKILLFOLD_MEASURE_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_skillfold").to_owned());
        let started = Instant::now();
        // A data segment of 1 GiB and 120 s at most: a run without the bounds fails instead of
        // taking the machine's memory.
        let out = Command::new("/usr/bin/time")
            .args(["-v", "sh", "-c"])
            .arg("ulimit -d 1048576 && exec timeout -s KILL 120 \"$0\" \"$@\"")
            .arg(binary)
            .args(args)
            .args([
                "-c",
                "skillfold.yaml",
                "--fetch-timeout",
                &TIMEOUT_S.to_string(),
            ])
            .current_dir(dir)
            .env_remove("SKILLFOLD_CONFIG")
            .env_remove("SKILLFOLD_FAILPOINT")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run skillfold under /usr/bin/time");
        let took = started.elapsed();
        let peak_kib = stderr(&out)
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("Maximum resident set size (kbytes): ")
            })
            .and_then(|v| v.trim().parse().ok())
            .expect("a peak");
        eprintln!(
            "skillfold {args:?}: {took:?}, peak RSS {} MiB",
            peak_kib / 1024
        );
        Run { out, peak_kib }
    }

    /// Asserts exit `status` with `[code]` and every `needle` on stderr (which bound ended the
    /// fetch: a bound on the answer, or the deadline), within [`RSS_CAP_KIB`]. The time taken is
    /// printed, not asserted (a busy machine stretches it).
    #[track_caller]
    fn assert_refused(&self, status: i32, code: &str, needles: &[&str]) {
        let err = stderr(&self.out);
        assert_eq!(self.out.status.code(), Some(status), "{err}");
        assert!(err.contains(&format!("[{code}]")), "no [{code}]:\n{err}");
        for needle in needles {
            assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
        }
        self.assert_bounded();
    }

    #[track_caller]
    fn assert_bounded(&self) {
        assert!(
            self.peak_kib < RSS_CAP_KIB,
            "peak RSS {} KiB, over {RSS_CAP_KIB} KiB",
            self.peak_kib
        );
    }
}

/// A repository of one bundle `alpha`: the repository, its commit and the bundle's digest.
fn one_bundle() -> (Repo, String, String) {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    let commit = repo.commit("alpha");
    let digest = repo.digest("alpha");
    (repo, commit, digest)
}

/// A folder with a descriptor of `alpha` at `commit` from `url`.
fn descriptor(repo: &Repo, label: &str, url: &str, commit: &str, digest: &str) -> PathBuf {
    let dir = repo.tmp.path().join(label);
    fs_err::create_dir(&dir).expect("mkdir");
    write_descriptor(
        &dir,
        &[(url, commit, "corpus", vec![("alpha", digest.to_owned())])],
    );
    dir
}

/// `prepare` of `alpha` from a server answering its connections with `answers`.
fn prepare_from(label: &str, answers: Vec<Answer>) -> Run {
    let (repo, commit, digest) = one_bundle();
    let server = Scripted::start(answers);
    let dir = descriptor(&repo, label, &server.url("remote.git"), &commit, &digest);
    let run = Run::new(&dir, &["prepare"]);
    assert!(
        !dir.join("corpus").join("current").exists(),
        "something was published"
    );
    run
}

// The capability advertisement (the first answer of every fetch) is bounded in bytes and in
// lines: 9 MiB of capabilities, or 100,001 short ones, are refused as soon as the bound is
// crossed (`fetch_invalid`, exit 2), in bounded memory. gix held them whole: 100 MiB took
// 212 MiB of RSS.
#[test]
fn a_flood_of_capabilities_is_refused_at_its_bound() {
    let long = capabilities(&lines(9 * 1024, |i| format!("x{i}={}\n", "v".repeat(1000))));
    let run = prepare_from("long", vec![ok("advertisement", long)]);
    run.assert_refused(
        2,
        "fetch_invalid",
        &[
            "its ref advertisement",
            "more than 8388608 bytes of protocol lines",
        ],
    );
    let many = capabilities(&lines(100_001, |_| "x\n".to_owned()));
    let run = prepare_from("many", vec![ok("advertisement", many)]);
    run.assert_refused(2, "fetch_invalid", &["more than 100000 protocol lines"]);
}

// The ref listing (`ls-refs`, which `outdated` asks for) is bounded the same way: 9 MiB of refs
// are refused (gix held them whole: 100 MiB took 259 MiB of RSS).
#[test]
fn a_flood_of_refs_is_refused_at_its_bound() {
    let (repo, commit, digest) = one_bundle();
    let refs = lines(9 * 1024 * 1024 / 100, |i| {
        format!("{:040x} refs/heads/{i:0>46}\n", i + 1)
    }) + "0000";
    let server = Scripted::start(vec![
        ok("advertisement", capabilities("")),
        ok("result", refs),
    ]);
    let dir = descriptor(&repo, "refs", &server.url("remote.git"), &commit, &digest);
    let run = Run::new(&dir, &["outdated"]);
    let err = stderr(&run.out);
    assert!(err.contains("[fetch_invalid]"), "{err}");
    assert!(
        err.contains("its answer to a ref listing or a fetch")
            && err.contains("more than 8388608 bytes"),
        "{err}"
    );
    run.assert_bounded();
}

/// A `200` of `kind` holding `head`, then `line` over and over for as long as the client reads.
fn flood(kind: &str, head: &str, line: &str) -> Answer {
    Answer::Flood(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-{kind}\r\nConnection: close\r\n\r\n{head}"
        ),
        line.to_owned(),
    )
}

// The lines of a fetch answer before its pack are bounded: an endless `shallow-info` is refused
// once 100,000 lines have come (gix worked through them as they came, at 1 MiB/s, past any
// deadline: 12 MiB took 12.8 s with `--fetch-timeout 3`, 200 MiB held 1 GiB of RSS).
#[test]
fn an_endless_shallow_info_is_refused_at_its_bound() {
    let line = pkt(&format!("shallow {:040x}\n", 1));
    let run = prepare_from(
        "shallow",
        vec![
            ok("advertisement", capabilities("")),
            flood("result", &pkt("shallow-info\n"), &line),
        ],
    );
    run.assert_refused(2, "fetch_invalid", &["more than 100000 protocol lines"]);
}

// The pack's side-band is not counted as lines, but every read of it checks the deadline: an
// endless stream of progress messages after the `packfile` header ends at the deadline
// (`fetch_deadline`, exit 1).
#[test]
fn endless_progress_after_the_pack_header_is_cut_off_at_the_deadline() {
    let line = pkt(&format!("\u{2}Counting objects: {}\r", "9".repeat(60)));
    let run = prepare_from(
        "progress",
        vec![
            ok("advertisement", capabilities("")),
            flood("result", &pkt("packfile\n"), &line),
        ],
    );
    run.assert_refused(1, "fetch_deadline", &["within its deadline of 3 s"]);
}

// A pack is refused from its header when it announces more objects than the commit fetched at
// depth 1 may have (one per entry of the largest tree allowed, the commit and its root tree),
// saying so: it was refused as holding "an object larger than 104857600 bytes".
#[test]
fn a_pack_of_too_many_objects_is_refused_for_its_count() {
    // 0x00202020 objects: each byte of the header is ASCII, as the scripted answer is text.
    let header = "\u{1}PACK\0\0\0\u{2}\0   ";
    let answer = pkt("packfile\n") + &pkt(header) + &pkt(&format!("\u{1}{}", "x".repeat(1000)));
    let run = prepare_from(
        "count",
        vec![ok("advertisement", capabilities("")), ok("result", answer)],
    );
    run.assert_refused(
        2,
        "tree_too_large",
        &["with a pack of 2105376 objects, more than the 1000002"],
    );
}

/// `prepare` of `alpha` from `repo` served by `git http-backend` as `serve` says.
fn prepare_served(repo: &Repo, commit: &str, serve: &Serve, label: &str) -> (Output, PathBuf) {
    let server = HttpServer::serving(repo.tmp.path(), serve);
    let dir = descriptor(
        repo,
        label,
        &server.url("remote.git"),
        commit,
        &repo.digest("alpha"),
    );
    let out = super::support::bin::skillfold_in(&dir, &["prepare", "-c", "skillfold.yaml"]);
    (out, dir)
}

// The blobs' pack is held to the count asked for even when it is small: 3 objects for 2 blobs
// were taken as the partial answer when the whole pack came in one read (8 KiB would hold 42).
// Whether `git upload-pack` sends it in one side-band packet depends on timing, so the unit tests
// of `partial` hold the one-read case; this one holds the outcome against a real server.
#[test]
fn a_small_pack_of_more_blobs_than_asked_for_is_cut_off_and_the_whole_commit_fetched() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let commit = repo.commit("alpha and beta");
    let beta = git(
        &repo.bare,
        &["rev-parse", &format!("{commit}:skills/beta/SKILL.md")],
    );
    let generous = Serve {
        allow_filter: true,
        extra_want: Some(beta),
        ..Serve::default()
    };
    let (out, dir) = prepare_served(&repo, &commit, &generous, "extra");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("answered a request for 2 blob(s) with a pack of 3 objects"),
        "{err}"
    );
    assert!(dir.join("corpus/current/alpha/SKILL.md").is_file(), "{err}");
}

// An answer to the fetch of the commit's trees that leaves out a tree is an incomplete answer
// (`fetch_incomplete`, exit 1, retryable) as one without a requested blob or the commit is: it
// was `object_unreadable`, exit 2.
#[test]
fn a_trees_answer_without_a_tree_fails_retryably() {
    let (repo, commit, _) = one_bundle();
    let shallow_trees = Serve {
        allow_filter: true,
        filter_instead: Some("tree:1"),
        ..Serve::default()
    };
    let (out, dir) = prepare_served(&repo, &commit, &shallow_trees, "no-tree");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("[fetch_incomplete]"), "{err}");
    assert!(err.contains("left out its tree"), "{err}");
    assert!(!dir.join("corpus/current").exists(), "{err}");
}

// --- packs ---------------------------------------------------------------------------------------

/// `payload` (not text) as one pkt-line.
fn pkt_bytes(payload: &[u8]) -> Vec<u8> {
    let mut line = format!("{:04x}", payload.len() + 4).into_bytes();
    line.extend_from_slice(payload);
    line
}

/// The head of a `200` of `kind`, closing the connection.
fn head(kind: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-{kind}\r\nConnection: close\r\n\r\n"
    )
    .into_bytes()
}

/// A pack header announcing `count` objects, and the type and size of a blob of `size` bytes
/// (`size` < 2^11), as a pack writes them.
fn pack_head(count: u32, size: u16) -> Vec<u8> {
    let mut bytes = b"PACK\0\0\0\x02".to_vec();
    bytes.extend_from_slice(&count.to_be_bytes());
    let low = (3 << 4) | (size & 0x0f) as u8;
    if size < 16 {
        bytes.push(low);
    } else {
        bytes.extend([0x80 | low, (size >> 4) as u8]);
    }
    bytes
}

/// The answer to a v2 `fetch` of a pack whose one blob declares 1 KiB, then streams stored
/// deflate blocks of 65,000 bytes for as long as the client reads.
fn endless_pack() -> Answer {
    let mut first = head("result");
    first.extend(pkt_bytes(b"packfile\n"));
    let mut start = vec![1];
    start.extend(pack_head(1, 1024));
    start.extend([0x78, 0x01]);
    first.extend(pkt_bytes(&start));
    let len: u16 = 65_000;
    let mut block = vec![1, 0];
    block.extend(len.to_le_bytes());
    block.extend((!len).to_le_bytes());
    block.resize(block.len() + usize::from(len), b'a');
    Answer::Endless(first, pkt_bytes(&block))
}

/// Protocol v2's capability advertisement of a server whose `fetch` offers no `filter`: the
/// whole commit is asked for.
fn capabilities_without_filter() -> String {
    [
        pkt("version 2\n"),
        pkt("ls-refs\n"),
        pkt("fetch=shallow\n"),
        pkt("object-format=sha1\n"),
        "0000".to_owned(),
    ]
    .concat()
}

/// The bytes a hostile server may have written before the client stopped reading: the socket
/// buffers on both sides (a few MiB on loopback) and what the client read up to the bound.
const SENT_CAP: u64 = 32 * 1024 * 1024;

// A pack whose first object declares 1 KiB and then streams deflate blocks without end is
// refused as soon as that object runs past what deflate makes of 1 KiB (`pack_too_large`, exit
// 2), in bounded memory and having read little: the trees' pack of `prepare` and `outdated` (the
// review path), and the whole commit's pack of a server without `filter`. gix held every byte
// until the deadline: 150 MiB sent, 163 MiB of RSS; 1,000 MiB, 1,015 MiB.
#[test]
fn an_endless_pack_is_refused_at_its_object_bound_for_prepare_and_outdated() {
    let needles = ["[pack_too_large]", "declares 1024 bytes"];
    for (label, advertisement) in [
        ("trees", capabilities("")),
        ("whole", capabilities_without_filter()),
    ] {
        let (repo, commit, digest) = one_bundle();
        let server = Scripted::start(vec![ok("advertisement", advertisement), endless_pack()]);
        let dir = descriptor(&repo, label, &server.url("remote.git"), &commit, &digest);
        let run = Run::new(&dir, &["prepare"]);
        run.assert_refused(2, "pack_too_large", &needles);
        let sent = server.sent();
        eprintln!("{label}: the server wrote {sent} bytes");
        assert!(sent < SENT_CAP, "{sent} bytes read from an endless pack");
        assert_eq!(server.heads().len(), 2, "{:?}", server.heads());
    }
    // `outdated`: the ref listing names another commit, whose fetch is the endless pack.
    let (repo, commit, digest) = one_bundle();
    let listing = pkt(&format!("{} HEAD\n", "1".repeat(40))) + "0000";
    let server = Scripted::start(vec![
        ok("advertisement", capabilities("")),
        ok("result", listing),
        ok("advertisement", capabilities("")),
        endless_pack(),
    ]);
    let dir = descriptor(
        &repo,
        "outdated",
        &server.url("remote.git"),
        &commit,
        &digest,
    );
    let run = Run::new(&dir, &["outdated"]);
    let err = stderr(&run.out);
    for needle in needles {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    run.assert_bounded();
    let sent = server.sent();
    assert!(sent < SENT_CAP, "{sent} bytes read from an endless pack");
}

// The fetch of every branch and tag, after a server refused the commit by id, holds its pack to
// the same bounds: an endless object is refused at its bound (`pack_too_large`), in bounded
// memory. gix's own fetch of the refs read it until the deadline.
#[test]
fn an_endless_pack_after_a_refused_id_is_refused_at_its_object_bound() {
    let (repo, commit, digest) = one_bundle();
    let refused = pkt(&format!("ERR upload-pack: not our ref {commit}\n"));
    let listing = pkt(&format!("{commit} refs/heads/main\n")) + "0000";
    let server = Scripted::start(vec![
        ok("advertisement", capabilities("")),
        ok("result", refused),
        ok("advertisement", capabilities("")),
        ok("result", listing),
        endless_pack(),
    ]);
    let dir = descriptor(
        &repo,
        "history",
        &server.url("remote.git"),
        &commit,
        &digest,
    );
    let run = Run::new(&dir, &["prepare"]);
    run.assert_refused(2, "pack_too_large", &["declares 1024 bytes"]);
    let sent = server.sent();
    assert!(sent < SENT_CAP, "{sent} bytes read from an endless pack");
    let heads = server.heads();
    assert_eq!(heads.len(), 5, "{heads:?}");
    assert!(heads[4].starts_with("POST "), "{heads:?}");
}

/// `prepare` from a server that answers its handshake with `capabilities` and the fetch with
/// `answer`: the run, and every request the server saw.
fn prepare_answered(label: &str, answer: Answer) -> (Run, Vec<String>) {
    let (repo, commit, digest) = one_bundle();
    let server = Scripted::start(vec![ok("advertisement", capabilities("")), answer]);
    let dir = descriptor(&repo, label, &server.url("remote.git"), &commit, &digest);
    let run = Run::new(&dir, &["prepare"]);
    (run, server.heads())
}

// A malformed answer to the fetch by id is `fetch_invalid` (exit 2), never a refusal of the id:
// no request for every branch and tag follows (the server sees the handshake and the fetch
// only). A `0003` length (no pkt-line is shorter than its own length) and a pack whose header
// announces more objects than it holds were both taken for "the server refused the commit by
// id" and answered with a fetch of every branch and tag.
#[test]
fn a_malformed_answer_is_refused_without_a_fallback() {
    let (run, heads) = prepare_answered("0003", ok("result", "0003".to_owned()));
    run.assert_refused(2, "fetch_invalid", &["malformed", "length `0003`"]);
    assert_eq!(heads.len(), 2, "{heads:?}");

    let mut body = pkt_bytes(b"packfile\n");
    let mut pack = vec![1];
    // Two objects announced, one sent: a blob of 5 bytes, then the trailing checksum.
    pack.extend(pack_head(2, 5));
    pack.extend([0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xff]);
    pack.extend(b"hello");
    pack.extend([0x06, 0x2c, 0x02, 0x15]);
    pack.extend([0x5a; 20]);
    body.extend(pkt_bytes(&pack));
    body.extend(b"0000");
    let mut answer = head("result");
    answer.extend(body);
    let (run, heads) = prepare_answered("count", Answer::Raw(answer));
    run.assert_refused(2, "fetch_invalid", &["malformed"]);
    assert_eq!(heads.len(), 2, "{heads:?}");
}

// An error the server reports on side-band channel 3 stops the fetch at once and is shown,
// escaped (`fetch_failed`, exit 1): gix passed it to the progress and read on, here through
// endless progress messages until the deadline.
#[test]
fn a_side_band_error_stops_the_fetch_and_is_shown_escaped() {
    let fatal = pkt("\u{3}fatal: the disk \u{1b}[31mburned\n");
    let progress = pkt(&format!("\u{2}Counting objects: {}\r", "9".repeat(60)));
    let (run, _) = prepare_answered(
        "fatal",
        flood("result", &(pkt("packfile\n") + &fatal), &progress),
    );
    run.assert_refused(
        1,
        "fetch_failed",
        &["reported an error", "fatal: the disk \\u{1b}[31mburned"],
    );
    let err = stderr(&run.out);
    assert!(!err.contains('\u{1b}'), "{err}");
    assert!(!err.contains("[fetch_deadline]"), "{err}");
}
