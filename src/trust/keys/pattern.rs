//! Pattern lists, by OpenSSH's `match_pattern_list`: a comma-separated list of patterns, where
//! `*` matches any run of characters and `?` any one character; a pattern preceded by `!` is
//! negated and a string matching it fails the whole list; otherwise the list matches when one
//! pattern does (see [`match_pattern_list`]). An allowed-signers line's principals and its
//! `namespaces=` option are such lists.

/// What a pattern list says of a string (OpenSSH's `match_pattern_list`: 1, 0, -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternMatch {
    /// A pattern matches and no negated one does.
    Matched,
    /// No pattern matches (or a pattern is too long: 1023 bytes or more).
    NotMatched,
    /// A negated pattern (`!…`) matches: the list refuses the string whatever else matches.
    Negated,
}

/// The longest pattern of a list OpenSSH considers (its buffer is 1024 bytes with the NUL; a
/// longer one makes the whole list fail).
const MAX_PATTERN: usize = 1022;

/// `string` against the comma-separated pattern `list`, by OpenSSH's `match_pattern_list` rules
/// (case-sensitive): patterns are taken left to right; `!` negates the pattern after it; a
/// negated pattern that matches decides [`PatternMatch::Negated`] at once; a pattern longer
/// than [`MAX_PATTERN`] bytes decides [`PatternMatch::NotMatched`] at once; otherwise the list
/// matches when one of its patterns does. Empty patterns (`a,,b`) match only the empty string.
pub fn match_pattern_list(string: &str, list: &str) -> PatternMatch {
    let list = list.as_bytes();
    let mut matched = false;
    let mut i = 0;
    while i < list.len() {
        let negated = list[i] == b'!';
        if negated {
            i += 1;
        }
        let start = i;
        while i < list.len() && i - start < MAX_PATTERN + 1 && list[i] != b',' {
            i += 1;
        }
        if i - start > MAX_PATTERN {
            return PatternMatch::NotMatched;
        }
        let pattern = &list[start..i];
        if i < list.len() && list[i] == b',' {
            i += 1;
        }
        if match_pattern(string.as_bytes(), pattern) {
            if negated {
                return PatternMatch::Negated;
            }
            matched = true;
        }
    }
    if matched {
        PatternMatch::Matched
    } else {
        PatternMatch::NotMatched
    }
}

/// One pattern (`*`: any run of bytes, `?`: any one byte, anything else itself) against the
/// whole of `string`; linear backtracking to the last `*`, the same verdicts as OpenSSH's
/// recursive `match_pattern` without its exponential worst case.
fn match_pattern(string: &[u8], pattern: &[u8]) -> bool {
    let (mut s, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < string.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            p += 1;
            star = Some((p, s));
        } else if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == string[s]) {
            p += 1;
            s += 1;
        } else if let Some((after_star, from)) = star {
            p = after_star;
            s = from + 1;
            star = Some((after_star, from + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_lists_follow_openssh() {
        use PatternMatch::{Matched, Negated, NotMatched};
        for (string, list, expected) in [
            ("git", "git", Matched),
            ("git", "g*", Matched),
            ("git", "*", Matched),
            ("git", "gi?", Matched),
            ("git", "g?", NotMatched),
            ("git", "?it*", Matched),
            ("git", "**t", Matched),
            ("git", "file", NotMatched),
            ("git", "file,git", Matched),
            ("git", "!file,*", Matched),
            ("git", "!git,*", Negated),
            ("git", "*,!git", Negated),
            ("git", "!file", NotMatched),
            ("git", "", NotMatched),
            ("git", "file,,", NotMatched),
            ("", "file,,", Matched),
            ("git", "Git", NotMatched),
            ("a*b", "a*b", Matched),
            ("axxxb", "a*b", Matched),
            ("axxxbc", "a*b", NotMatched),
            ("aaab", "*a*a*b", Matched),
            ("alice@example.com", "*@example.com", Matched),
            ("alice@example.org", "*@example.com,bob", NotMatched),
        ] {
            assert_eq!(
                match_pattern_list(string, list),
                expected,
                "{string:?} against {list:?}"
            );
        }
        // A pattern of 1023 bytes or more fails the whole list, even after a match.
        let long = "*".repeat(1023);
        assert_eq!(
            match_pattern_list("git", &format!("git,{long}")),
            NotMatched
        );
        assert_eq!(
            match_pattern_list("git", &format!("git,{}", &long[1..])),
            Matched
        );
        // No exponential backtracking on hostile patterns.
        let hostile = format!("{}b", "*a".repeat(200));
        assert_eq!(match_pattern_list(&"a".repeat(1000), &hostile), NotMatched);
    }
}
