//! Bundles in memory: the path grammar, and a whole bundle from a fuzzed file set (its
//! builder's bounds, its check and its digest against the grammar's oracle).

use sha2::{Digest as _, Sha256};

use crate::format::bundle::Bundle;
use crate::format::bundle_path::{self, BundlePath};
use crate::format::digest::{self, BundleDigest};
use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits;
use crate::format::problem::{ProblemCode, Problems};

use super::common::{assert_refusal_explained, matches_name_pattern};

/// A bundle path: an accepted path displays as itself, re-parses to itself and rebuilds from its
/// segments; a refused one names a rule one of its segments (or its leading `/`) breaks.
pub fn bundle_path(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match BundlePath::parse(&text) {
        Ok(path) => {
            let shown = path.to_string();
            assert_eq!(shown, text);
            assert_eq!(path.as_str(), text);
            assert_eq!(BundlePath::parse(&shown).as_ref(), Ok(&path));
            let segments: Vec<&str> = text.split('/').collect();
            assert_eq!(path.depth(), segments.len());
            assert_eq!(Some(&path.file_name()), segments.last());
            assert!(!text.contains('\\') && !text.chars().any(char::is_control));
            let mut rebuilt = BundlePath::top(segments[0]).expect("a checked segment");
            for segment in &segments[1..] {
                rebuilt = rebuilt.join(segment).expect("a checked segment");
            }
            assert_eq!(rebuilt, path);
            for segment in segments {
                assert!(!matches!(segment, "" | "." | ".."));
                assert!(!segment.starts_with('.'));
            }
        }
        Err(refusal) => {
            let broken = text.starts_with('/')
                || text
                    .split('/')
                    .any(|s| bundle_path::check_segment(s).is_err_and(|r| r.code == refusal.code));
            assert!(broken, "`{text:?}` refused for no rule: {refusal:?}");
            assert!(matches!(
                refusal.code,
                ProblemCode::PathEscapes
                    | ProblemCode::HiddenPath
                    | ProblemCode::BackslashInPath
                    | ProblemCode::ControlCharInPath
            ));
        }
    }
}

/// Entries of an in-memory file set: alternating path and content, separated by the byte `0xFF`
/// (never part of UTF-8), so content can still hold any other byte, NUL and invalid UTF-8
/// included. A trailing path without content gets empty content.
pub fn file_entries(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut parts = data.split(|&b| b == 0xFF);
    let mut entries = Vec::new();
    while let Some(path) = parts.next() {
        let content = parts.next().unwrap_or_default();
        entries.push((String::from_utf8_lossy(path).into_owned(), content.to_vec()));
    }
    entries
}

/// Encodes entries in the format [`file_entries`] reads (for writing seeds).
pub fn encode_entries<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (path, content)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(0xFF);
        }
        out.extend_from_slice(path.as_bytes());
        out.push(0xFF);
        out.extend_from_slice(content);
    }
    out
}

fn build(entries: &[(String, Vec<u8>)]) -> (FileSet, Problems) {
    let mut builder = FileSetBuilder::new();
    for (path, content) in entries {
        builder.insert(path, content.clone());
    }
    builder.finish()
}

/// The digest grammar of [`crate::format::digest`], written out again as the oracle.
fn oracle_digest(files: &FileSet) -> [u8; 32] {
    let mut sorted: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (p.as_str(), c)).collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hasher = Sha256::new();
    hasher.update(digest::DOMAIN);
    for (path, content) in sorted {
        hasher.update(format!("{}:{path}{}:", path.len(), content.len()));
        hasher.update(content);
    }
    hasher.finalize().into()
}

/// A whole bundle from an in-memory file set (see [`file_entries`]): the builder's bounds, the
/// bundle check, and a digest that is stable, order-independent and equal to the grammar's.
pub fn bundle(data: &[u8]) {
    let entries = file_entries(data);
    let (files, problems) = build(&entries);
    assert!(files.len() <= limits::MAX_FILES);
    for (path, content) in files.iter() {
        assert_eq!(BundlePath::parse(path.as_str()).as_ref(), Ok(path));
        assert!(content.len() as u64 <= limits::CHAMVI.max_file_bytes(path.as_str()));
    }
    if !problems.has_errors() {
        assert!(files.total_bytes() <= limits::MAX_TOTAL_BYTES);
        assert!(!files.is_partial());
    }
    let digest = BundleDigest::of(&files);
    assert_eq!(digest.as_bytes(), &oracle_digest(&files));
    assert_eq!(digest.to_string().parse::<BundleDigest>(), Ok(digest));
    let (files_again, problems_again) = build(&entries);
    assert_eq!(BundleDigest::of(&files_again), digest, "digest not stable");
    assert_eq!(problems_again, problems);
    if problems.as_slice().is_empty() {
        // Nothing refused, so the order entries arrive in cannot matter.
        let reversed: Vec<_> = entries.iter().rev().cloned().collect();
        let (files_rev, problems_rev) = build(&reversed);
        assert!(problems_rev.as_slice().is_empty(), "{problems_rev:?}");
        assert_eq!(
            BundleDigest::of(&files_rev),
            digest,
            "digest depends on order"
        );
    }
    match Bundle::check(files, problems) {
        Ok(bundle) => {
            assert_eq!(bundle.digest(), digest);
            assert!(matches_name_pattern(bundle.name().as_str()));
            assert!(bundle.warnings().iter().all(|w| !w.is_error()));
            for (_, content) in bundle.files().iter() {
                assert!(std::str::from_utf8(content).is_ok() && !content.contains(&0));
            }
            let skill_md = bundle.files().get(limits::SKILL_MD).expect("SKILL.md");
            assert!(
                std::str::from_utf8(skill_md)
                    .expect("text")
                    .ends_with(bundle.body())
            );
        }
        Err(invalid) => assert_refusal_explained(&invalid.problems),
    }
}
