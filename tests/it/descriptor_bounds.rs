//! The descriptor's bounds through the binary: its size is checked before it is read, the
//! nesting of its collections before it is deserialised; both refusals are configuration
//! errors (exit 2) with their own codes.

use std::process::Output;
use std::time::{Duration, Instant};

use skillfold::{MAX_DESCRIPTOR_BYTES, MAX_DESCRIPTOR_NESTING};

use super::support::bin::{assert_stderr_has, skillfold_in, stderr};

fn check(dir: &std::path::Path) -> (Output, Duration) {
    let started = Instant::now();
    let out = skillfold_in(dir, &["check", "-c", "skillfold.yaml"]);
    (out, started.elapsed())
}

#[test]
fn a_hundred_thousand_nested_brackets_are_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    for text in [
        format!("skills:\n  - {}\n", "[".repeat(100_000)),
        format!("skills:\n  - {}\n", "[ ".repeat(100_000)),
        format!("skills:\n  - {}\n", "{a: ".repeat(100_000)),
    ] {
        fs_err::write(dir.path().join("skillfold.yaml"), &text).expect("write");
        let (out, took) = check(dir.path());
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_stderr_has(&out, "[descriptor_too_deep]");
        assert_stderr_has(
            &out,
            &format!("collections nested deeper than {MAX_DESCRIPTOR_NESTING} levels"),
        );
        // Tens of milliseconds in fact (it took tens of seconds); the margin absorbs a loaded
        // test machine and the start of a debug binary.
        assert!(took < Duration::from_secs(2), "took {took:?}");
    }
}

#[test]
fn nesting_at_the_bound_is_only_checked_for_its_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 64 levels: the root mapping, `skills`, then 62 flow sequences.
    let inner = format!("{}{}", "[".repeat(62), "]".repeat(62));
    fs_err::write(
        dir.path().join("skillfold.yaml"),
        format!("skills:\n  - {inner}\n"),
    )
    .expect("write");
    let (out, _) = check(dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert_stderr_has(&out, "[descriptor_syntax]");
    let deeper = format!("skills:\n  - [{inner}]\n");
    fs_err::write(dir.path().join("skillfold.yaml"), deeper).expect("write");
    let (out, _) = check(dir.path());
    assert_stderr_has(&out, "[descriptor_too_deep]");
}

#[test]
fn a_descriptor_over_the_size_bound_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("skillfold.yaml");
    // At the bound: read (and only a comment).
    let at = format!(
        "#{}\nskills: []\n",
        "x".repeat(MAX_DESCRIPTOR_BYTES as usize - 13)
    );
    assert_eq!(at.len() as u64, MAX_DESCRIPTOR_BYTES);
    fs_err::write(&path, &at).expect("write");
    let (out, _) = check(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // One byte over.
    fs_err::write(&path, format!("{at}\n")).expect("write");
    let (out, _) = check(dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[descriptor_too_large]");
    // A sparse 64 GiB file is refused from its size: reading it would take minutes.
    let file = fs_err::File::create(&path).expect("create");
    file.set_len(64 << 30).expect("sparse");
    drop(file);
    let (out, took) = check(dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[descriptor_too_large]");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}
