//! Oracles the areas share: the skill name pattern and the shape of a refusal's codes, written
//! out independently of the parsers they judge.

use crate::format::problem::Problems;

/// Whether `name` matches `^[a-z][a-z0-9-]{0,63}$`, written out independently of
/// [`crate::format::skill_name`] so the two can disagree.
pub(super) fn matches_name_pattern(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// Whether a stable code is snake_case ASCII.
pub(super) fn is_code(code: &str) -> bool {
    !code.is_empty()
        && !code.starts_with('_')
        && !code.ends_with('_')
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

pub(super) fn assert_refusal_explained(problems: &Problems) {
    assert!(problems.has_errors(), "refused without an error problem");
    for p in problems.as_slice() {
        assert!(is_code(p.code.as_str()), "bad problem code {:?}", p.code);
        assert!(
            !p.message.is_empty(),
            "problem {} without a message",
            p.code
        );
    }
}
