//! What changed in one bundle between the pinned commit and the target, for the reviewer: the
//! files added, removed and changed, and a unified diff (three lines of context) of the text
//! files. Binary files are named with their sizes and SHA-256s, never dumped. File content is
//! shown as written except for the characters that rewrite a terminal or a rendered page
//! (controls other than tab, bidi overrides, zero-width marks), which are escaped; the diff of
//! one bundle stops after [`MAX_DIFF_LINES`] lines and each file's comparison has a deadline, so
//! a hostile or huge bundle cannot flood the review.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use crate::format::bundle::is_binary;
use crate::format::file_set::FileSet;
use crate::support::escape;
use crate::support::hex::sha256_hex;

/// At most this many lines of diff are shown per bundle.
pub const MAX_DIFF_LINES: usize = 2_000;

/// How long the line diff of one file may take before a coarser one is shown.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// The changes of one bundle's files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileChanges {
    /// Files only at the target.
    pub added: Vec<String>,
    /// Files only at the pin.
    pub removed: Vec<String>,
    /// Files at both whose bytes differ.
    pub changed: Vec<String>,
    /// The unified diff (paths `a/<name>/<path>` and `b/<name>/<path>`).
    pub diff: String,
    /// Whether the diff stopped at [`MAX_DIFF_LINES`].
    pub truncated: bool,
}

impl FileChanges {
    /// Whether any file differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Compares bundle `name`'s files at the pin (`old`; `None` when the pin cannot be read) with
/// its files at the target (`new`).
pub fn compare(name: &str, old: Option<&FileSet>, new: &FileSet) -> FileChanges {
    let empty = FileSet::default();
    let old = old.unwrap_or(&empty);
    let paths: BTreeSet<&str> = old
        .iter()
        .chain(new.iter())
        .map(|(path, _)| path.as_str())
        .collect();
    let mut changes = FileChanges::default();
    let mut out = DiffText::default();
    for path in paths {
        let (before, after) = (old.get(path), new.get(path));
        match (before, after) {
            (None, Some(_)) => changes.added.push(path.to_owned()),
            (Some(_), None) => changes.removed.push(path.to_owned()),
            (Some(a), Some(b)) if a != b => changes.changed.push(path.to_owned()),
            _ => continue,
        }
        file_diff(&mut out, name, path, before, after);
    }
    changes.truncated = out.dropped > 0;
    if out.dropped > 0 {
        let _ = writeln!(
            out.text,
            "... {} more line(s) of diff not shown (at most {MAX_DIFF_LINES} per bundle)",
            out.dropped
        );
    }
    changes.diff = out.text;
    changes
}

/// The diff text, bounded.
#[derive(Default)]
struct DiffText {
    text: String,
    shown: usize,
    dropped: usize,
}

impl DiffText {
    fn push(&mut self, line: std::fmt::Arguments<'_>) {
        if self.shown < MAX_DIFF_LINES {
            let _ = writeln!(self.text, "{line}");
            self.shown += 1;
        } else {
            self.dropped += 1;
        }
    }
}

fn file_diff(
    out: &mut DiffText,
    name: &str,
    path: &str,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
) {
    let shown = escape::text(path);
    let (a, b) = (
        before.map_or_else(|| "/dev/null".to_owned(), |_| format!("a/{name}/{shown}")),
        after.map_or_else(|| "/dev/null".to_owned(), |_| format!("b/{name}/{shown}")),
    );
    let (Some(old), Some(new)) = (as_text(before), as_text(after)) else {
        let describe = |b: &[u8]| format!("{} bytes, sha256 {}", b.len(), sha256_hex(b));
        match (before, after) {
            (Some(a), Some(b)) => out.push(format_args!(
                "Binary file {name}/{shown} differs: {} -> {}",
                describe(a),
                describe(b)
            )),
            (None, Some(b)) => out.push(format_args!(
                "Binary file {name}/{shown} added: {}",
                describe(b)
            )),
            (Some(a), None) => out.push(format_args!(
                "Binary file {name}/{shown} removed: {}",
                describe(a)
            )),
            (None, None) => {}
        }
        return;
    };
    out.push(format_args!("--- {a}"));
    out.push(format_args!("+++ {b}"));
    let diff = TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(old, new);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push(format_args!("{}", hunk.header()));
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let line = change.value();
            let (line, ended) = match line.strip_suffix('\n') {
                Some(line) => (line, true),
                None => (line, false),
            };
            out.push(format_args!("{sign}{}", Content(line)));
            if !ended {
                out.push(format_args!("\\ No newline at end of file"));
            }
        }
    }
}

/// A file's content as text for the line diff (an absent file is empty); `None` when binary.
fn as_text(bytes: Option<&[u8]>) -> Option<&str> {
    match bytes {
        None => Some(""),
        Some(bytes) if is_binary(bytes) => None,
        Some(bytes) => std::str::from_utf8(bytes).ok(),
    }
}

/// A line of file content as shown in a diff: as written, except that characters which rewrite
/// a terminal or hide text are escaped (`\r` as `\r`, others as `\u{XX}`); tab and backslash
/// stay as they are, so source code reads as itself.
struct Content<'a>(&'a str);

impl std::fmt::Display for Content<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in self.0.chars() {
            match c {
                '\t' | '\\' => f.write_char(c)?,
                '\r' => f.write_str("\\r")?,
                c if escape::needs_escape(c) => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::file_set::FileSetBuilder;

    fn files(entries: &[(&str, &[u8])]) -> FileSet {
        let mut builder = FileSetBuilder::new();
        for (path, bytes) in entries {
            builder.insert(path, bytes.to_vec());
        }
        builder.finish().0
    }

    #[test]
    fn added_removed_and_changed_files_are_listed_and_text_is_diffed() {
        let old = files(&[
            ("SKILL.md", b"---\nname: a\n---\none\ntwo\nthree\n"),
            ("old.md", b"gone\n"),
            ("same.md", b"kept\n"),
            ("logo.bin", b"\0\x01"),
        ]);
        let new = files(&[
            ("SKILL.md", b"---\nname: a\n---\none\n2\nthree\n"),
            ("new.md", b"fresh"),
            ("same.md", b"kept\n"),
            ("logo.bin", b"\0\x02"),
        ]);
        let changes = compare("a", Some(&old), &new);
        assert_eq!(changes.added, ["new.md"]);
        assert_eq!(changes.removed, ["old.md"]);
        assert_eq!(changes.changed, ["SKILL.md", "logo.bin"]);
        assert!(!changes.truncated);
        let diff = &changes.diff;
        assert!(
            diff.contains("--- a/a/SKILL.md\n+++ b/a/SKILL.md\n@@ -2,5 +2,5 @@\n name: a\n ---\n one\n-two\n+2\n three\n"),
            "{diff}"
        );
        assert!(
            diff.contains("--- /dev/null\n+++ b/a/new.md\n@@ -0,0 +1 @@\n+fresh\n\\ No newline at end of file\n"),
            "{diff}"
        );
        assert!(diff.contains("--- a/a/old.md\n+++ /dev/null\n"), "{diff}");
        assert!(
            diff.contains("Binary file a/logo.bin differs: 2 bytes, sha256 "),
            "{diff}"
        );
        assert!(!diff.contains("same.md"), "{diff}");
    }

    #[test]
    fn content_that_rewrites_a_terminal_is_escaped_and_code_is_not() {
        let old = files(&[("a.md", b"x\n")]);
        let new = files(&[("a.md", "say \\n\there\u{1b}[8m\u{202e}\r\n".as_bytes())]);
        let diff = compare("a", Some(&old), &new).diff;
        assert!(
            diff.contains("+say \\n\there\\u{1b}[8m\\u{202e}\\r\n"),
            "{diff}"
        );
    }

    #[test]
    fn a_huge_diff_is_cut_and_says_so() {
        let big: String = (0..3 * MAX_DIFF_LINES).map(|i| format!("{i}\n")).collect();
        let new = files(&[("a.md", big.as_bytes())]);
        let changes = compare("a", None, &new);
        assert!(changes.truncated);
        assert_eq!(changes.diff.lines().count(), MAX_DIFF_LINES + 1);
        assert!(
            changes.diff.ends_with("(at most 2000 per bundle)\n"),
            "{}",
            changes.diff
        );
    }
}
