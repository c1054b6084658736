//! Bad input on disk: every refusal of the safe reader and the bundle rules, each with its code,
//! and every bound at its maximum (accepted) and one past it (refused). (Moved from
//! `tests/it/safe_read.rs`: the reader, bundle paths and the bounds are not host API.)

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use crate::format::bundle::{Bundle, BundleError};
use crate::format::bundle_path::BundlePath;
use crate::format::limits;
use crate::format::problem::ProblemCode::{self, *};
use crate::format::safe_read::{self, BeneathError, BundleReadError, Moment, ReadOutcome};
use crate::format::untrusted_fs;
use rustix::io::Errno;

use crate::testing::temp_bundle::{TempBundle, skill_md};

#[test]
fn valid_bundle_reads_every_file() {
    let b = TempBundle::new();
    b.write("references/guide.md", b"# Guide\n");
    b.write("scripts/run.py", b"print('hi')\n");
    b.write("assets/deep/er/x.txt", b"x");
    b.mkdir("empty/dirs/do/not/count");
    let bundle = Bundle::read_dir(b.root()).expect("valid");
    let paths: Vec<_> = bundle.files().iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(
        paths,
        [
            "SKILL.md",
            "assets/deep/er/x.txt",
            "references/guide.md",
            "scripts/run.py"
        ]
    );
}

#[test]
fn symlink_to_a_file_is_refused() {
    let b = TempBundle::new();
    b.write("references/real.md", b"x");
    b.symlink("real.md", "references/link.md");
    b.assert_refused(Symlink);
}

#[test]
fn symlink_to_a_directory_is_refused_and_not_followed() {
    let b = TempBundle::new();
    b.write("references/a.md", b"x");
    b.symlink("references", "refs");
    let codes = b.codes();
    assert_eq!(codes, [Symlink]);
}

#[test]
fn dangling_symlink_is_refused() {
    let b = TempBundle::new();
    b.symlink("does-not-exist", "gone.md");
    b.assert_refused(Symlink);
}

#[test]
fn symlink_pointing_outside_is_refused_and_never_read() {
    let b = TempBundle::new();
    let secret = b.outside().join("secret.txt");
    fs_err::write(&secret, b"TOP SECRET").expect("write");
    b.symlink(&secret, "leak.md");
    let err = Bundle::read_dir(b.root()).expect_err("refused");
    let BundleError::Invalid(invalid) = err else {
        panic!("{err}")
    };
    let text = format!("{:?}", invalid.problems);
    assert!(!text.contains("TOP SECRET"));
    assert_eq!(
        invalid.problems.as_slice()[0].path.as_deref(),
        Some("leak.md")
    );
}

#[test]
fn symlinked_skill_md_is_refused() {
    let b = TempBundle::empty();
    b.write("real/SKILL.md", skill_md("demo").as_bytes());
    b.symlink("real/SKILL.md", "SKILL.md");
    // The link is the problem; `SKILL.md` is not missing, so that is not said.
    assert_eq!(b.codes(), [Symlink]);
}

#[test]
fn a_skill_md_over_its_bound_is_reported_only_as_too_large() {
    let b = TempBundle::empty();
    let mut text = skill_md("demo");
    text.push_str(&"x".repeat(limits::MAX_SKILL_MD_BYTES as usize));
    b.write("SKILL.md", text.as_bytes());
    assert_eq!(b.codes(), [FileTooLarge]);
}

#[test]
fn symlinked_root_is_refused() {
    let b = TempBundle::new();
    let link = b.outside().join("link");
    std::os::unix::fs::symlink(b.root(), &link).expect("symlink");
    let err = safe_read::read_bundle_dir(&link).expect_err("refused");
    assert!(
        matches!(err, BundleReadError::RootIsSymlink { .. }),
        "{err}"
    );
    assert_eq!(err.code(), "root_is_symlink");
}

#[test]
fn missing_and_non_directory_roots_are_refused() {
    let b = TempBundle::new();
    let err = safe_read::read_bundle_dir(&b.path("nope")).expect_err("missing");
    assert_eq!(err.code(), "not_found");
    let err = safe_read::read_bundle_dir(&b.path("SKILL.md")).expect_err("file");
    assert_eq!(err.code(), "not_a_directory");
}

#[test]
fn fifo_is_refused_without_blocking() {
    let b = TempBundle::new();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        b.path("pipe.md"),
        rustix::fs::Mode::from(0o644),
    )
    .expect("mkfifo");
    // Nobody ever writes to it: opening it for reading would block forever.
    b.assert_refused(SpecialFile);
}

#[test]
fn socket_is_refused() {
    let b = TempBundle::new();
    let _listener = std::os::unix::net::UnixListener::bind(b.path("sock")).expect("bind");
    b.assert_refused(SpecialFile);
}

/// Reads the bundle at `b`, calling `attack` at every moment of every entry.
fn read_with(b: &TempBundle, mut attack: impl FnMut(Moment, &str)) -> ReadOutcome {
    safe_read::read_bundle_dir_with_hook(b.root(), Default::default(), &mut |moment, path| {
        attack(moment, path.as_str())
    })
    .expect("read")
}

/// The problems of an outcome as `(code, path, message)`.
fn problems(outcome: &ReadOutcome) -> Vec<(ProblemCode, String, String)> {
    outcome
        .problems
        .as_slice()
        .iter()
        .map(|p| {
            (
                p.code,
                p.path.clone().unwrap_or_default(),
                p.message.clone(),
            )
        })
        .collect()
}

/// Asserts the one problem of `outcome` is a change to `path` whose message says `why`.
#[track_caller]
fn assert_changed(outcome: &ReadOutcome, path: &str, why: &str) {
    let found = problems(outcome);
    assert!(
        matches!(found.as_slice(), [(ChangedDuringRead, p, m)] if p == path && m.contains(why)),
        "want one change to {path} ({why}), got {found:?}"
    );
    assert!(outcome.files.get(path).is_none(), "{path} was admitted");
}

#[test]
fn file_swapped_for_a_symlink_after_inventory_is_refused() {
    let b = TempBundle::new();
    b.write("references/a.md", b"original");
    let secret = b.outside().join("secret.txt");
    fs_err::write(&secret, b"TOP SECRET").expect("write");
    let target = b.path("references/a.md");
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "references/a.md" {
            fs_err::remove_file(&target).expect("rm");
            std::os::unix::fs::symlink(&secret, &target).expect("symlink");
        }
    });
    assert_changed(&outcome, "references/a.md", "by a link");
}

/// Swaps `a.md` for a link to a hard link of the very same file: the device, inode and size are
/// unchanged, so the identity check cannot see the swap; only the no-follow open refuses it.
fn swap_for_a_link_to_itself(b: &TempBundle) -> ReadOutcome {
    b.write("a.md", b"original");
    let (target, alias) = (b.path("a.md"), b.outside().join("alias"));
    read_with(b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "a.md" {
            fs_err::hard_link(&target, &alias).expect("link");
            fs_err::remove_file(&target).expect("rm");
            std::os::unix::fs::symlink(&alias, &target).expect("symlink");
        }
    })
}

#[test]
fn a_link_swapped_in_is_refused_by_the_no_follow_open_alone() {
    let b = TempBundle::new();
    assert_changed(&swap_for_a_link_to_itself(&b), "a.md", "by a link");
}

#[test]
fn a_link_swapped_in_is_refused_by_o_nofollow_alone_without_openat2() {
    for unavailable in [Errno::NOSYS, Errno::PERM] {
        let b = TempBundle::new();
        let outcome =
            untrusted_fs::with_openat2_failing(unavailable, || swap_for_a_link_to_itself(&b));
        assert_changed(&outcome, "a.md", "by a link");
    }
}

#[test]
fn a_directory_swapped_for_a_link_is_refused() {
    let b = TempBundle::new();
    b.write("refs/a.md", b"x");
    b.write("elsewhere/b.md", b"y");
    let (refs, elsewhere) = (b.path("refs"), b.path("elsewhere"));
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "refs" {
            fs_err::remove_dir_all(&refs).expect("rm");
            std::os::unix::fs::symlink(&elsewhere, &refs).expect("symlink");
        }
    });
    assert_changed(&outcome, "refs", "by a link");
    assert!(outcome.files.get("elsewhere/b.md").is_some());
}

/// Runs `read` on another thread; fails if it blocks (on the FIFO at `fifo`, which nobody
/// writes to), releasing it first so that the test never hangs.
fn without_blocking(
    fifo: &Path,
    read: impl FnOnce() -> ReadOutcome + Send + 'static,
) -> ReadOutcome {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(read());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(5)) {
        Ok(outcome) => {
            worker.join().expect("worker");
            outcome
        }
        Err(_) => {
            let _writer = rustix::fs::open(
                fifo,
                rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
                rustix::fs::Mode::empty(),
            );
            let _ = worker.join();
            panic!("reading blocked on a FIFO swapped in");
        }
    }
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from(0o644)).expect("mkfifo");
}

#[test]
fn a_directory_swapped_for_a_fifo_is_refused_without_blocking() {
    let b = TempBundle::new();
    b.write("refs/a.md", b"x");
    let refs = b.path("refs");
    let root = b.root().to_owned();
    let fifo = refs.clone();
    let outcome = without_blocking(&fifo, move || {
        safe_read::read_bundle_dir_with_hook(&root, Default::default(), &mut |moment, path| {
            if moment == Moment::BeforeOpen && path.as_str() == "refs" {
                fs_err::remove_dir_all(&refs).expect("rm");
                mkfifo(&refs);
            }
        })
        .expect("read")
    });
    assert_changed(&outcome, "refs", "replaced");
}

#[test]
fn a_file_swapped_for_a_fifo_is_refused_without_blocking() {
    let b = TempBundle::new();
    b.write("a.md", b"x");
    let target = b.path("a.md");
    let root = b.root().to_owned();
    let fifo = target.clone();
    let outcome = without_blocking(&fifo, move || {
        safe_read::read_bundle_dir_with_hook(&root, Default::default(), &mut |moment, path| {
            if moment == Moment::BeforeOpen && path.as_str() == "a.md" {
                fs_err::remove_file(&target).expect("rm");
                mkfifo(&target);
            }
        })
        .expect("read")
    });
    assert_changed(&outcome, "a.md", "replaced");
}

#[test]
fn a_same_size_replacement_is_refused_by_the_identity_check_alone() {
    let b = TempBundle::new();
    b.write("a.md", b"original");
    // Same size, same type, same device; only the inode differs.
    let impostor = b.outside().join("impostor");
    fs_err::write(&impostor, b"IMPOSTOR").expect("write");
    let target = b.path("a.md");
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "a.md" {
            fs_err::rename(&impostor, &target).expect("rename");
        }
    });
    assert_changed(&outcome, "a.md", "replaced by another object");
}

#[test]
fn a_directory_replaced_by_another_is_refused_by_the_identity_check() {
    let b = TempBundle::new();
    b.write("refs/a.md", b"x");
    let other = b.outside().join("other");
    fs_err::create_dir(&other).expect("mkdir");
    fs_err::write(other.join("b.md"), b"y").expect("write");
    let refs = b.path("refs");
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "refs" {
            fs_err::remove_dir_all(&refs).expect("rm");
            fs_err::rename(&other, &refs).expect("rename");
        }
    });
    assert_changed(&outcome, "refs", "replaced by another object");
}

#[test]
fn file_resized_after_inventory_is_refused() {
    let b = TempBundle::new();
    b.write("a.md", b"original");
    let target = b.path("a.md");
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "a.md" {
            append(&target, b" and more");
        }
    });
    assert_changed(&outcome, "a.md", "size changed");
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    fs_err::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open")
        .write_all(bytes)
        .expect("append");
}

#[test]
fn growth_past_the_bound_before_open_is_refused_by_the_size_check_alone() {
    // Grown past the bound, the read stops one byte over it and cannot compare lengths: only the
    // size check on the open descriptor says the file changed (else it is "too large").
    let b = TempBundle::new();
    b.write("a.md", b"small");
    let target = b.path("a.md");
    let grow = vec![b'x'; limits::MAX_SUPPORTING_FILE_BYTES as usize + 10];
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && path == "a.md" {
            append(&target, &grow);
        }
    });
    assert_changed(
        &outcome,
        "a.md",
        "its size changed between inventory and read",
    );
}

#[test]
fn growth_after_fstat_is_refused_by_the_long_read_check() {
    let b = TempBundle::new();
    b.write("a.md", b"original");
    let target = b.path("a.md");
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeRead && path == "a.md" {
            append(&target, b" and more");
        }
    });
    assert_changed(&outcome, "a.md", "(8 bytes listed, 17 read)");
}

#[test]
fn shrinking_after_fstat_is_refused_by_the_short_read_check() {
    let b = TempBundle::new();
    b.write("a.md", b"original");
    let target = b.path("a.md");
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeRead && path == "a.md" {
            fs_err::OpenOptions::new()
                .write(true)
                .open(&target)
                .expect("open")
                .set_len(3)
                .expect("truncate");
        }
    });
    assert_changed(&outcome, "a.md", "(8 bytes listed, 3 read)");
}

#[test]
fn growth_after_fstat_past_the_bound_is_too_large_not_read_whole() {
    let b = TempBundle::new();
    b.write("a.md", b"small");
    let target = b.path("a.md");
    let max = limits::MAX_SUPPORTING_FILE_BYTES;
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeRead && path == "a.md" {
            fs_err::OpenOptions::new()
                .write(true)
                .open(&target)
                .expect("open")
                .set_len(1 << 30)
                .expect("grow");
        }
    });
    let p = &outcome.problems.as_slice()[0];
    assert_eq!(
        (p.code, p.limit, p.actual),
        (FileTooLarge, Some(max), Some(max + 1))
    );
}

#[test]
fn every_moment_of_every_entry_is_offered_to_the_hook() {
    let b = TempBundle::new();
    b.write("refs/a.md", b"x");
    let mut seen = Vec::new();
    read_with(&b, |moment, path| seen.push((moment, path.to_owned())));
    let want = [
        (Moment::BeforeOpen, "SKILL.md"),
        (Moment::BeforeRead, "SKILL.md"),
        (Moment::BeforeOpen, "refs"),
        (Moment::BeforeOpen, "refs/a.md"),
        (Moment::BeforeRead, "refs/a.md"),
    ];
    let want: Vec<(Moment, String)> = want.iter().map(|(m, p)| (*m, (*p).to_owned())).collect();
    assert_eq!(seen, want);
}

#[test]
fn without_openat2_a_bundle_reads_the_same() {
    let b = TempBundle::new();
    b.write("references/guide.md", b"# Guide\n");
    b.write("deep/er/x.txt", b"x");
    let digest = || {
        Bundle::read_dir(b.root())
            .expect("valid")
            .digest()
            .to_string()
    };
    let with = digest();
    for unavailable in [Errno::NOSYS, Errno::PERM] {
        assert_eq!(
            untrusted_fs::with_openat2_failing(unavailable, digest),
            with
        );
    }
    b.symlink("references/guide.md", "link.md");
    let codes = untrusted_fs::with_openat2_failing(Errno::NOSYS, || b.codes());
    assert_eq!(codes, [Symlink]);
}

#[test]
fn read_file_beneath_refuses_a_hard_linked_file() {
    let b = TempBundle::new();
    b.write("references/a.md", b"mine");
    let rel = BundlePath::parse("references/a.md").unwrap();
    assert_eq!(
        safe_read::read_file_beneath(b.root(), &rel, 100).expect("one link"),
        b"mine"
    );
    fs_err::hard_link(b.path("references/a.md"), b.outside().join("other")).expect("link");
    let err = safe_read::read_file_beneath(b.root(), &rel, 100).expect_err("two links");
    assert!(matches!(err, BeneathError::HardLink), "{err}");
}

#[test]
fn read_file_beneath_refusals() {
    let b = TempBundle::new();
    b.write("references/a.md", b"0123456789");
    b.write("real/b.md", b"b");
    b.symlink("real", "linked");
    b.symlink("a.md", "references/link.md");
    b.mkdir("references/dir");
    let read = |rel: &str, cap: u64| {
        safe_read::read_file_beneath(b.root(), &BundlePath::parse(rel).unwrap(), cap)
    };
    assert_eq!(
        read("references/a.md", 10).expect("at the cap"),
        b"0123456789"
    );
    assert!(matches!(
        read("references/a.md", 9),
        Err(BeneathError::TooLarge(9))
    ));
    assert!(matches!(
        read("linked/b.md", 10),
        Err(BeneathError::Symlink)
    ));
    assert!(matches!(
        read("references/link.md", 10),
        Err(BeneathError::Symlink)
    ));
    assert!(matches!(
        read("references/dir", 10),
        Err(BeneathError::NotRegular)
    ));
    assert!(matches!(
        read("references/a.md/x", 10),
        Err(BeneathError::NotRegular)
    ));
    assert!(matches!(
        read("references/nope.md", 10),
        Err(BeneathError::NotFound)
    ));
    assert!(matches!(read("nope/a.md", 10), Err(BeneathError::NotFound)));
}

#[test]
fn hidden_file_and_directory_are_refused() {
    let b = TempBundle::new();
    b.write(".env", b"SECRET=1");
    b.assert_refused(HiddenPath);
    let c = TempBundle::new();
    c.write(".git/config", b"x");
    c.assert_refused(HiddenPath);
}

#[test]
fn backslash_and_control_characters_in_names_are_refused() {
    let b = TempBundle::new();
    b.write("a\\b.md", b"x");
    b.assert_refused(BackslashInPath);
    let c = TempBundle::new();
    c.write("new\nline.md", b"x");
    c.assert_refused(ControlCharInPath);
}

#[test]
fn non_utf8_name_is_refused() {
    let b = TempBundle::new();
    let name = OsStr::from_bytes(b"caf\xe9.md");
    fs_err::write(b.root().join(name), b"x").expect("write");
    b.assert_refused(PathNotUtf8);
}

#[test]
fn invalid_utf8_content_and_nul_are_refused() {
    let b = TempBundle::new();
    b.write("latin1.md", b"caf\xe9\n");
    b.assert_refused(NotUtf8);
    let c = TempBundle::new();
    c.write("nul.md", b"a\0b");
    c.assert_refused(NulByte);
    let d = TempBundle::new();
    d.write("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    // A binary file is one problem (a NUL byte), not two.
    let codes = d.codes();
    assert_eq!(codes, [NulByte], "{codes:?}");
}

#[test]
fn missing_skill_md_is_refused() {
    let b = TempBundle::empty();
    b.write("README.md", b"x");
    assert_eq!(b.codes(), [MissingSkillMd]);
}

#[test]
fn supporting_file_bound() {
    let max = limits::MAX_SUPPORTING_FILE_BYTES as usize;
    let b = TempBundle::new();
    b.write("references/big.md", &vec![b'a'; max]);
    b.assert_valid();
    b.write("references/big.md", &vec![b'a'; max + 1]);
    assert_eq!(b.codes(), [FileTooLarge]);
}

#[test]
fn frontmatter_and_body_bounds_on_disk() {
    let head = "name: demo\ndescription: d\n";
    let fm = |n: usize| {
        format!(
            "---\n{head}x: '{}'\n---\nbody\n",
            "y".repeat(n - head.len() - 6)
        )
    };
    let b = TempBundle::empty();
    b.write(
        "SKILL.md",
        fm(limits::MAX_FRONTMATTER_BYTES as usize).as_bytes(),
    );
    b.assert_valid();
    b.write(
        "SKILL.md",
        fm(limits::MAX_FRONTMATTER_BYTES as usize + 1).as_bytes(),
    );
    assert_eq!(b.codes(), [FrontmatterTooLarge]);
    let body = |n: usize| format!("---\n{head}---\n{}", "b".repeat(n));
    b.write("SKILL.md", body(limits::MAX_BODY_BYTES as usize).as_bytes());
    b.assert_valid();
    b.write(
        "SKILL.md",
        body(limits::MAX_BODY_BYTES as usize + 1).as_bytes(),
    );
    assert_eq!(b.codes(), [BodyTooLarge]);
}

/// SKILL.md plus `n - 1` files, `total` bytes in all.
fn fill(b: &TempBundle, n: usize, total: usize) {
    let skill = skill_md("demo");
    let rest = total - skill.len();
    let each = rest / (n - 1);
    for i in 0..n - 1 {
        let size = if i == 0 { each + rest % (n - 1) } else { each };
        b.write(&format!("files/f{i:02}.txt"), &vec![b'z'; size]);
    }
}

#[test]
fn file_count_and_total_bounds_at_maximum_and_one_past() {
    let b = TempBundle::new();
    fill(&b, limits::MAX_FILES, limits::MAX_TOTAL_BYTES as usize);
    b.assert_valid();
    let bundle = Bundle::read_dir(b.root()).expect("valid");
    assert_eq!(bundle.files().len(), limits::MAX_FILES);
    assert_eq!(bundle.files().total_bytes(), limits::MAX_TOTAL_BYTES);

    let over_count = TempBundle::new();
    fill(&over_count, limits::MAX_FILES, 64 * 1024);
    over_count.write("one-more.txt", b"x");
    assert_eq!(over_count.codes(), [TooManyFiles]);

    let over_total = TempBundle::new();
    fill(
        &over_total,
        limits::MAX_FILES,
        limits::MAX_TOTAL_BYTES as usize,
    );
    over_total.write(
        "files/f01.txt",
        &vec![
            b'z';
            fs_err::read(over_total.path("files/f01.txt"))
                .expect("read")
                .len()
                + 1
        ],
    );
    assert_eq!(over_total.codes(), [BundleTooLarge]);
}

#[test]
fn depth_bound_at_64_levels_and_65() {
    let b = TempBundle::new();
    let deep = "d/".repeat(limits::MAX_DEPTH);
    b.write(&format!("{deep}leaf.md"), b"x");
    b.assert_valid();
    let c = TempBundle::new();
    let deeper = "d/".repeat(limits::MAX_DEPTH + 1);
    c.write(&format!("{deeper}leaf.md"), b"x");
    assert_eq!(c.codes(), [TooDeep]);
}

#[test]
fn entry_bound_at_1024_and_1025() {
    // Root + SKILL.md + 1,022 directories = 1,024 entries.
    let b = TempBundle::new();
    for i in 0..limits::MAX_ENTRIES - 2 {
        b.mkdir(&format!("d{i:04}"));
    }
    b.assert_valid();
    b.mkdir("one-more");
    assert_eq!(b.codes(), [TooManyEntries]);
}

#[test]
fn an_entry_bound_hit_before_skill_md_is_not_reported_as_a_missing_skill_md() {
    // Upper-case names sort before `SKILL.md`: with the root, the listing's last name is one past
    // the bound, and that name is `SKILL.md`.
    let b = TempBundle::new();
    for i in 0..limits::MAX_ENTRIES - 1 {
        b.write(&format!("A{i:04}"), b"");
    }
    assert_eq!(b.codes(), [TooManyEntries]);
}

#[test]
fn nothing_is_opened_after_the_entry_bound_is_exceeded() {
    let b = TempBundle::new();
    for i in 0..limits::MAX_ENTRIES {
        b.write(&format!("a/f{i:04}"), b"");
    }
    b.write("b/x.md", b"x");
    let mut opened = Vec::new();
    let outcome = read_with(&b, |moment, path| {
        if moment == Moment::BeforeOpen && !path.starts_with("a/") {
            opened.push(path.to_owned());
        }
    });
    assert!(outcome.problems.contains(TooManyEntries));
    assert_eq!(opened, ["SKILL.md", "a"], "`b` is never opened");
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let b = TempBundle::empty();
    b.write("SKILL.md", b"---\nname: Bad_Name\ndescription: ok\n---\n");
    b.write(".hidden", b"x");
    b.write("bin.dat", b"\0");
    b.symlink("bin.dat", "link");
    let codes = b.codes();
    for want in [HiddenPath, Symlink, NulByte, NameInvalid] {
        assert!(codes.contains(&want), "{want:?} missing from {codes:?}");
    }
}

#[test]
fn frontmatter_rules_refuse_on_disk() {
    let cases: &[(&str, crate::format::problem::ProblemCode)] = &[
        ("---\nname: demo\ndescription: d\n", FrontmatterUnclosed),
        ("# no frontmatter\n", FrontmatterMissing),
        ("---\n- a\n- b\n---\n", FrontmatterNotMapping),
        (
            "---\nname: demo\nname: demo\ndescription: d\n---\n",
            DuplicateKey,
        ),
        ("---\nname: &a demo\ndescription: *a\n---\n", YamlAnchor),
        ("---\nname: demo\ndescription: *a\n---\n", YamlAlias),
        ("---\nname: !!str demo\ndescription: d\n---\n", YamlTag),
        (
            "---\nname: demo\ndescription: d\n42: x\n---\n",
            NonStringKey,
        ),
        ("---\nname: Demo\ndescription: d\n---\n", NameInvalid),
        (
            "---\nname: demo\ndescription: '  '\n---\n",
            DescriptionBlank,
        ),
        (
            "---\nname: demo\ndescription: \"line\\nbreak\"\n---\n",
            DescriptionControlChar,
        ),
    ];
    for (text, code) in cases {
        let b = TempBundle::empty();
        b.write("SKILL.md", text.as_bytes());
        let codes = b.codes();
        assert!(
            codes.contains(code),
            "{text:?}: want {code:?}, got {codes:?}"
        );
    }
    let long = TempBundle::empty();
    long.write(
        "SKILL.md",
        format!("---\nname: demo\ndescription: {}\n---\n", "x".repeat(1025)).as_bytes(),
    );
    assert_eq!(long.codes(), [DescriptionTooLong]);
    let at = TempBundle::empty();
    at.write(
        "SKILL.md",
        format!("---\nname: demo\ndescription: {}\n---\n", "x".repeat(1024)).as_bytes(),
    );
    at.assert_valid();
}
