//! `write_all` beside its code: a planted temporary name is never reused and a failure leaves
//! no temporary file behind. (Moved from `tests/it/schemas.rs`: the temporary name depends on
//! the writing process's id, so the test writes in-process; the binary's `schema --out` is
//! tested there.)

use std::path::Path;

use super::write_all;

/// The names of `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn schema_out_never_reuses_a_planted_temporary_name_and_cleans_up_after_a_failure() {
    use std::os::unix::fs::symlink;

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    fs_err::create_dir_all(&out).unwrap();
    let victim = tmp.path().join("victim");
    fs_err::write(&victim, "precious\n").unwrap();
    // The first temporary name this process would pick, planted as a link.
    let planted = format!(".skillfold.schema.json.{}.0.tmp", std::process::id());
    symlink(&victim, out.join(&planted)).unwrap();
    // A schema's name taken by a directory: the rename fails, and the file is named.
    fs_err::create_dir_all(out.join("tool-error.schema.json/inside")).unwrap();

    let err = write_all(&out).unwrap_err();
    assert!(err.to_string().contains("tool-error.schema.json"), "{err}");
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), "precious\n");
    let names = names_in(&out);
    assert!(
        names.iter().all(|n| !n.ends_with(".tmp") || *n == planted),
        "a temporary file was left behind: {names:?}"
    );
    assert!(names.contains(&planted));
    // The schemas before the failing one were written, through no link.
    let descriptor = out.join("skillfold.schema.json");
    assert!(
        fs_err::symlink_metadata(&descriptor)
            .unwrap()
            .file_type()
            .is_file()
    );
}
