//! The content hashes other tools record for a skill folder, computed from the files of the
//! bundle `import` fetched, so a lock's own record can be compared with what the draft pins:
//! the `skills` CLI's `computedHash`, ToolHive's `contentDigest` and APM's `content_hash`. (The global `skills` lock
//! records a Git tree id, which the fetched commit gives directly.)

use sha2::{Digest, Sha256};

use crate::format::file_set::FileSet;
use crate::support::hex;

/// The `skills` CLI's `computedHash`: SHA-256 over, for each file in the order of JavaScript's
/// `localeCompare` on the relative paths, the path's UTF-8 bytes then the file's bytes. `None`
/// when a path is not ASCII: the order then depends on the Unicode collation of the machine
/// that wrote the lock, which this reproduces only for ASCII ([`collation_key`]).
pub fn skills_folder_hash(files: &FileSet) -> Option<String> {
    let mut listed: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b)).collect();
    if listed.iter().any(|(path, _)| !path.is_ascii()) {
        return None;
    }
    listed.sort_by_cached_key(|(path, _)| collation_key(path));
    let mut hash = Sha256::new();
    for (path, bytes) in listed {
        hash.update(path.as_bytes());
        hash.update(bytes);
    }
    Some(hex::encode(&hash.finalize()))
}

/// ToolHive's `contentDigest`: `sha256:` and the SHA-256 over, for each file in byte order of
/// its relative path, the path, a NUL byte, the SHA-256 of its bytes and a newline.
pub fn toolhive_content_digest(files: &FileSet) -> String {
    let mut listed: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b)).collect();
    listed.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hash = Sha256::new();
    for (path, bytes) in listed {
        hash.update(path.as_bytes());
        hash.update([0]);
        hash.update(Sha256::digest(bytes));
        hash.update(b"\n");
    }
    format!("sha256:{}", hex::encode(&hash.finalize()))
}

/// APM's `content_hash`: `sha256:` and the SHA-256 over, for each file in byte order of its
/// relative path (the order of Python's `sorted` on the paths), the path then the file's bytes.
/// APM leaves out files below a `.git` or `__pycache__` folder and a top-level `.apm-pin` (its
/// own marker); so does this.
pub fn apm_content_hash(files: &FileSet) -> String {
    let mut listed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b))
        .filter(|(path, _)| {
            *path != ".apm-pin"
                && !path
                    .split('/')
                    .any(|segment| segment == ".git" || segment == "__pycache__")
        })
        .collect();
    listed.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut hash = Sha256::new();
    for (path, bytes) in listed {
        hash.update(path.as_bytes());
        hash.update(bytes);
    }
    format!("sha256:{}", hex::encode(&hash.finalize()))
}

/// The order of the Unicode root collation (what `localeCompare` uses without a locale) on
/// ASCII text: punctuation and symbols first in their collation order, then digits, then
/// letters ignoring case; among texts equal so far, lowercase before uppercase.
fn collation_key(text: &str) -> (Vec<u8>, Vec<u8>) {
    const SYMBOLS: &[u8] = b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    let primary = text
        .bytes()
        .map(|b| match b {
            b'0'..=b'9' => 64 + (b - b'0'),
            b'a'..=b'z' => 80 + (b - b'a'),
            b'A'..=b'Z' => 80 + (b - b'A'),
            _ => SYMBOLS
                .iter()
                .position(|s| *s == b)
                .map_or(0, |i| 1 + i as u8),
        })
        .collect();
    let tertiary = text
        .bytes()
        .map(|b| u8::from(b.is_ascii_uppercase()))
        .collect();
    (primary, tertiary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::file_set::FileSetBuilder;

    fn files(list: &[(&str, &str)]) -> FileSet {
        let mut b = FileSetBuilder::new();
        for (path, text) in list {
            b.insert(path, text.as_bytes().to_vec());
        }
        b.finish().0
    }

    #[test]
    fn the_skills_hash_orders_paths_as_locale_compare_does() {
        // localeCompare: `references/…` before `SKILL.md` (r < s ignoring case), `a-b` before `a_b`?
        // No: `_` sorts before `-` in the root collation.
        let mut paths = vec![
            "SKILL.md",
            "references/a.md",
            "README.md",
            "a_b.md",
            "a-b.md",
            "a.md",
            "B.md",
            "b.md",
            "1.md",
        ];
        paths.sort_by_cached_key(|p| collation_key(p));
        assert_eq!(
            paths,
            [
                "1.md",
                "a_b.md",
                "a-b.md",
                "a.md",
                "b.md",
                "B.md",
                "README.md",
                "references/a.md",
                "SKILL.md"
            ]
        );
        let set = files(&[("SKILL.md", "s"), ("references/a.md", "r")]);
        let mut expected = Sha256::new();
        expected.update(b"references/a.mdrSKILL.mds");
        assert_eq!(
            skills_folder_hash(&set),
            Some(hex::encode(&expected.finalize()))
        );
        assert_eq!(
            skills_folder_hash(&files(&[("SKILL.md", "s"), ("ré.md", "x")])),
            None
        );
    }

    #[test]
    fn the_toolhive_digest_hashes_each_file_hash_in_byte_order() {
        let set = files(&[("SKILL.md", "s"), ("references/a.md", "r")]);
        let mut expected = Sha256::new();
        for (path, text) in [("SKILL.md", "s"), ("references/a.md", "r")] {
            expected.update(path.as_bytes());
            expected.update([0]);
            expected.update(Sha256::digest(text.as_bytes()));
            expected.update(b"\n");
        }
        assert_eq!(
            toolhive_content_digest(&set),
            format!("sha256:{}", hex::encode(&expected.finalize()))
        );
    }
}
