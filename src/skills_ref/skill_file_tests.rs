//! The spec tooling's bound on `SKILL.md` at the reader: a file at the bound is read, one byte
//! past it is refused with its code. (Moved from `tests/it/spec_bounds.rs`, which keeps what the
//! commands do with huge files.)

use std::path::Path;

use super::{MAX_SKILL_MD_BYTES, SkillMdError};
use crate::skills_ref::skill_file;

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
