//! The spec tooling's bound on `SKILL.md` (8 MiB): a huge or sparse file is refused after
//! reading one byte past the bound, quickly and in bounded memory, by `validate`,
//! `read-properties` and `to-prompt` alike, with exit status 1; a file at the bound is read.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const GIB: u64 = 1024 * 1024 * 1024;
/// The documented bound on a `SKILL.md` the spec tooling reads (8 MiB), as its messages name it.
const MAX_SKILL_MD_BYTES: u64 = 8 * 1024 * 1024;
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
