//! Small contracts of the format core (file sets, digests, bundle paths) that the reading tests
//! only reach indirectly, each pinned on its own. (Moved from `tests/it/format_contracts.rs`:
//! bundle paths and the bounds are not host API.)

use crate::format::bundle_path::BundlePath;
use crate::format::digest::BundleDigest;
use crate::format::file_set::FileSetBuilder;
use crate::format::limits;
use crate::format::problem::ProblemCode;

#[test]
fn a_file_set_says_whether_it_is_empty_and_how_big_it_is() {
    let mut b = FileSetBuilder::new();
    b.insert("SKILL.md", b"abc".to_vec());
    b.insert("references/a.md", b"de".to_vec());
    let (files, problems) = b.finish();
    assert!(!problems.has_errors());
    assert!(!files.is_empty());
    assert_eq!((files.len(), files.total_bytes()), (2, 5));
    assert!(!files.is_partial());
    let (empty, _) = FileSetBuilder::new().finish();
    assert!(empty.is_empty());
    assert_eq!((empty.len(), empty.total_bytes()), (0, 0));
}

#[test]
fn a_file_set_cut_short_by_the_entry_bound_says_so() {
    let mut b = FileSetBuilder::new();
    for i in 0..limits::MAX_ENTRIES {
        b.insert(&format!("f{i:04}"), Vec::new());
    }
    assert!(b.is_exhausted());
    let (files, problems) = b.finish();
    assert!(files.is_partial());
    assert!(problems.contains(ProblemCode::TooManyEntries));
}

#[test]
fn files_known_to_be_oversized_are_refused_and_counted_without_their_bytes() {
    let mut b = FileSetBuilder::new();
    let over = limits::MAX_SUPPORTING_FILE_BYTES + 1;
    b.insert_oversized("references/big.md", over);
    b.insert_oversized("SKILL.md", 2 * limits::MAX_TOTAL_BYTES);
    let (files, problems) = b.finish();
    assert!(files.is_empty());
    let found: Vec<_> = problems
        .as_slice()
        .iter()
        .map(|p| (p.code, p.path.as_deref(), p.limit, p.actual))
        .collect();
    assert_eq!(
        found,
        [
            (
                ProblemCode::FileTooLarge,
                Some("references/big.md"),
                Some(limits::MAX_SUPPORTING_FILE_BYTES),
                Some(over)
            ),
            (
                ProblemCode::FileTooLarge,
                Some("SKILL.md"),
                Some(limits::MAX_SKILL_MD_BYTES),
                Some(2 * limits::MAX_TOTAL_BYTES)
            ),
            (
                ProblemCode::BundleTooLarge,
                None,
                Some(limits::MAX_TOTAL_BYTES),
                Some(over + 2 * limits::MAX_TOTAL_BYTES)
            ),
        ]
    );
}

#[test]
fn a_too_large_file_is_named_for_what_it_is() {
    let mut b = FileSetBuilder::new();
    b.insert(
        "SKILL.md",
        vec![b'a'; limits::MAX_SKILL_MD_BYTES as usize + 1],
    );
    b.insert(
        "a.md",
        vec![b'a'; limits::MAX_SUPPORTING_FILE_BYTES as usize + 1],
    );
    b.insert_oversized("b.md", limits::MAX_SUPPORTING_FILE_BYTES + 1);
    b.insert_oversized("x/SKILL.md", limits::MAX_SUPPORTING_FILE_BYTES + 1);
    let (_, problems) = b.finish();
    let messages: Vec<(&str, &str)> = problems
        .as_slice()
        .iter()
        .filter(|p| p.code == ProblemCode::FileTooLarge)
        .map(|p| (p.path.as_deref().unwrap_or(""), p.message.as_str()))
        .collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    for (path, message) in messages {
        let want = if path == "SKILL.md" {
            "`SKILL.md` (fences, frontmatter and body together)"
        } else {
            "a supporting file"
        };
        assert!(message.ends_with(want), "{path}: {message}");
    }
}

#[test]
fn a_digest_shows_its_bytes_and_refuses_bad_text_with_a_code() {
    let text = "48faea5e726361bc139dea15c3b3bf69df48b4c944c4f0f6cc12ae7572ea189d";
    let digest: BundleDigest = text.parse().expect("digest");
    let hex: String = digest
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, text);
    let err = "nope".parse::<BundleDigest>().expect_err("refused");
    assert_eq!(err.code(), "invalid_digest");
    assert_eq!(err.value, "nope");
}

#[test]
fn a_digest_is_json_as_its_hex_text() {
    let text = "48faea5e726361bc139dea15c3b3bf69df48b4c944c4f0f6cc12ae7572ea189d";
    let digest: BundleDigest = text.parse().expect("digest");
    let json = serde_json::to_string(&digest).expect("serialize");
    assert_eq!(json, format!("\"{text}\""));
    let back: BundleDigest = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(back, digest);
    assert!(serde_json::from_str::<BundleDigest>("\"ABC\"").is_err());
}

#[test]
fn a_bundle_path_is_its_text_however_it_is_borrowed() {
    let p = BundlePath::parse("references/a.md").expect("path");
    assert_eq!(AsRef::<str>::as_ref(&p), "references/a.md");
    assert_eq!(std::borrow::Borrow::<str>::borrow(&p), "references/a.md");
    let joined = BundlePath::top("skills").expect("top").join_path(&p);
    assert_eq!(joined.as_str(), "skills/references/a.md");
    assert_eq!((joined.depth(), joined.file_name()), (3, "a.md"));
}
