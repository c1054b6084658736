//! The spec tooling's bound on `SKILL.md` (8 MiB): a huge or sparse file is refused after
//! reading one byte past the bound, quickly and in bounded memory, by `validate`,
//! `read-properties` and `to-prompt` alike, with exit status 1; a file at the bound is read.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use skillfold::skills_ref::skill_file::{self, MAX_SKILL_MD_BYTES, SkillMdError};

const GIB: u64 = 1024 * 1024 * 1024;
/// The address space the command may use: far below the files it is given.
const ADDRESS_SPACE_KIB: u64 = 1024 * 1024;

/// A skill directory `name` whose `SKILL.md` is valid frontmatter followed by NUL bytes up to
/// `len` bytes (sparse: nothing is written past the frontmatter).
fn skill_of_len(parent: &Path, name: &str, len: u64) -> std::path::PathBuf {
    let dir = parent.join(name);
    fs_err::create_dir(&dir).expect("mkdir");
    let path = dir.join("SKILL.md");
    fs_err::write(
        &path,
        format!("---\nname: {name}\ndescription: A big skill.\n---\n"),
    )
    .expect("write");
    fs_err::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open")
        .set_len(len)
        .expect("set_len");
    dir
}

/// Runs `skillfold ARGS` in `cwd` with its address space limited to [`ADDRESS_SPACE_KIB`].
fn skillfold_bounded(cwd: &Path, args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_skillfold"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run skillfold");
    (output, started.elapsed())
}

#[test]
fn sparse_3_and_10_gib_skill_md_are_refused_quickly_in_bounded_memory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bound = format!(
        "`SKILL.md` is larger than {MAX_SKILL_MD_BYTES} bytes (8 MiB), the most skillfold reads \
         for a skill file [file_too_large]"
    );
    for (name, len) in [("three", 3 * GIB), ("ten", 10 * GIB)] {
        skill_of_len(tmp.path(), name, len);
        let cases = [
            (
                "validate",
                format!("Validation failed for {name}:\n  - {bound}\n"),
            ),
            ("read-properties", format!("Error: {bound}\n")),
            ("to-prompt", format!("Error: {bound}\n")),
        ];
        for (command, want) in cases {
            let (out, took) = skillfold_bounded(tmp.path(), &[command, name]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{command} {name}: {stderr}");
            assert_eq!(stderr, want, "{command} {name}");
            assert!(out.stdout.is_empty(), "{command} {name}");
            assert!(
                took < Duration::from_secs(10),
                "{command} {name} took {took:?}"
            );
        }
    }
}

#[test]
fn skill_md_at_the_bound_is_read_and_one_byte_past_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let at = skill_of_len(tmp.path(), "at", MAX_SKILL_MD_BYTES);
    let dir = skill_file::open_dir(&at).expect("open");
    let md = skill_file::read(&dir).expect("read").expect("found");
    assert_eq!(md.text.len() as u64, MAX_SKILL_MD_BYTES);
    assert_eq!(skill_file::parse(&md.text).expect("parse").len(), 2);

    let past = skill_of_len(tmp.path(), "past", MAX_SKILL_MD_BYTES + 1);
    let dir = skill_file::open_dir(&past).expect("open");
    let err = skill_file::read(&dir).expect_err("too large");
    assert!(
        matches!(
            err,
            SkillMdError::TooLarge {
                name: "SKILL.md",
                cap: MAX_SKILL_MD_BYTES
            }
        ),
        "{err}"
    );
    assert_eq!(err.code(), "file_too_large");
    assert!(!err.is_reference_error(), "a deviation from skills-ref");
}

#[test]
fn the_bound_is_the_documented_8_mib() {
    assert_eq!(MAX_SKILL_MD_BYTES, 8 * 1024 * 1024);
}
