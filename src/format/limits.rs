//! The bounds of the bundle format (DESIGN §2). They belong to the format, not to the host: a
//! bundle that fits here fits everywhere, and a bundle over any bound is refused, never truncated.
//!
//! | bound | maximum |
//! | --- | --- |
//! | approved bundles per catalogue | 16, unique names |
//! | YAML frontmatter | 4 KiB |
//! | Markdown body | 64 KiB |
//! | each supporting file | 128 KiB |
//! | regular files, `SKILL.md` included | 64 |
//! | total file bytes | 1 MiB |
//! | inventory entries, root and directories included | 1,024 |
//! | nested directory levels | 64 |
//!
//! The digest, the reader and the validator all take their numbers from here.

/// Approved bundles one agent's catalogue may hold (unique names).
pub const MAX_BUNDLES_PER_CATALOGUE: usize = 16;
/// Bytes of YAML between the two `---` fence lines of `SKILL.md`.
pub const MAX_FRONTMATTER_BYTES: u64 = 4 * 1024;
/// Bytes of Markdown after the closing fence line of `SKILL.md`.
pub const MAX_BODY_BYTES: u64 = 64 * 1024;
/// Bytes of each supporting file (every file but `SKILL.md`).
pub const MAX_SUPPORTING_FILE_BYTES: u64 = 128 * 1024;
/// Regular files in a bundle, `SKILL.md` included.
pub const MAX_FILES: usize = 64;
/// Bytes of all files of a bundle added up.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024;
/// Inventory entries: the root, every directory, every file, and anything else found.
pub const MAX_ENTRIES: usize = 1024;
/// Nesting of directories below the bundle root (a directory directly under the root is level 1).
pub const MAX_DEPTH: usize = 64;
/// Characters of the trimmed `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Longest fence line: `---\r\n`.
const MAX_FENCE_LINE_BYTES: u64 = 5;

/// Bytes of a whole `SKILL.md`: two fence lines, the frontmatter and the body at their bounds.
/// Reading stops past this; the frontmatter and body bounds are then checked exactly.
pub const MAX_SKILL_MD_BYTES: u64 =
    2 * MAX_FENCE_LINE_BYTES + MAX_FRONTMATTER_BYTES + MAX_BODY_BYTES;

/// The name of the one required file, at the bundle root.
pub const SKILL_MD: &str = "SKILL.md";

/// The most bytes the file at `path` may hold.
pub fn max_file_bytes(path: &str) -> u64 {
    if path == SKILL_MD {
        MAX_SKILL_MD_BYTES
    } else {
        MAX_SUPPORTING_FILE_BYTES
    }
}
