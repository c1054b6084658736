//! The hint of a refusal: what would accept it (or repair it), and the page that explains it
//! (DESIGN §10: every refusal that an option would accept names the option).
//!
//! This is the one table from an error code to its hint; every command's human output prints it
//! as a `hint:` line after the refusal, and every `--json` report that carries the refusal
//! carries it as a `hint` field. It lives in the format layer, the lowest one every report can
//! reach, and is keyed by the code's spelling, so it names codes of the layers above without
//! importing them (a unit test checks every spelling against the registry).
//!
//! The option is named as the reader of the refusal can give it: a key of `skillfold.yaml` for
//! the commands that read the descriptor ([`Via::Descriptor`]), a flag for `pin` and `hash`
//! ([`Via::Flags`]).
//!
//! | codes | hint | page |
//! | --- | --- | --- |
//! | bounds a profile raises, binary files | `limits: extended` / `--limits extended` | `docs/limits.md` |
//! | `symlink_in_tree` | `links: outside-bundles` / `--links outside-bundles` | `docs/links.md` |
//! | `installed_drift` | the `skillfold install` that repairs the folder | `docs/install.md` |
//! | `scan_missing` | `skillfold pin --scan NAME --write`, which records a verdict | `docs/scanners.md` |
//! | `no_bundles` with bundles in hidden folders | `--root` naming such a folder | `docs/cli.md` |

use std::fmt;

/// How the reader of a refusal gives an option: in the descriptor or on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// A key of the source in `skillfold.yaml` (`prepare`, `check`, `outdated`, `install`, …).
    Descriptor,
    /// A flag of the command (`pin`, `hash`).
    Flags,
}

/// What to do about a refusal, and the page that explains it. Shown as `TEXT (see PAGE)`, in a
/// report as that one string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    text: String,
    doc: &'static str,
}

/// The page about limits profiles.
const LIMITS_DOC: &str = "docs/limits.md";
/// The page about links outside the bundles.
const LINKS_DOC: &str = "docs/links.md";
/// The page about agent folders.
const INSTALL_DOC: &str = "docs/install.md";
/// The page about scanners and their verdicts.
const SCANNERS_DOC: &str = "docs/scanners.md";
/// The page of every command and flag.
#[cfg(feature = "git")]
const CLI_DOC: &str = "docs/cli.md";

/// The bundle codes a limits profile accepts: the bounds it raises, and binary files.
const LIMITS_CODES: &[&str] = &[
    "file_too_large",
    "bundle_too_large",
    "too_many_files",
    "too_many_entries",
    "body_too_large",
    "not_utf8",
    "nul_byte",
];

impl Hint {
    /// The hint of a refusal with `code` (its spelling), if an option accepts it or a command
    /// repairs it.
    pub fn of(code: &str, via: Via) -> Option<Hint> {
        let option = |key: &str, flag: &str| match via {
            Via::Descriptor => format!("`{key}` on the source in `skillfold.yaml`"),
            Via::Flags => format!("`{flag}`"),
        };
        let (text, doc) = match code {
            c if LIMITS_CODES.contains(&c) => (
                format!(
                    "{} accepts larger bundles and binary supporting files; review them first",
                    option("limits: extended", "--limits extended")
                ),
                LIMITS_DOC,
            ),
            "symlink_in_tree" => (
                format!(
                    "{} accepts symbolic links outside the approved bundles (skipped, never \
                     followed; a link inside one is always refused)",
                    option("links: outside-bundles", "--links outside-bundles")
                ),
                LINKS_DOC,
            ),
            "installed_drift" => (
                "`skillfold install` into the same folder, with the same `--config` and \
                 `--agent`, repairs it; review what changed first"
                    .to_owned(),
                INSTALL_DOC,
            ),
            "scan_missing" => (
                "review the findings, then `skillfold pin --scan NAME --write` runs the scanner \
                 on a read-only copy of the pinned bytes and records its verdict beside the hash"
                    .to_owned(),
                SCANNERS_DOC,
            ),
            _ => return None,
        };
        Some(Hint { text, doc })
    }

    /// The hint of the first of `lines` whose code has one: each line of a report ends with its
    /// code in brackets (`path: message [code]`), written by skillfold after any untrusted text,
    /// so the last bracket of a line is its code.
    pub fn of_lines<'a>(lines: impl IntoIterator<Item = &'a str>, via: Via) -> Option<Hint> {
        lines
            .into_iter()
            .filter_map(code_of_line)
            .find_map(|code| Hint::of(code, via))
    }

    /// The hint of a refusal with `code` whose details are `lines`: the code's own, or else the
    /// first the details have.
    pub fn of_refusal(code: &str, lines: &[String], via: Via) -> Option<Hint> {
        Hint::of(code, via).or_else(|| Hint::of_lines(lines.iter().map(String::as_str), via))
    }

    /// `installed_drift` with the command that repairs the folder, as the reader can run it.
    pub fn repair(command: &str) -> Hint {
        Hint {
            text: format!("`{command}` repairs it; review what changed first"),
            doc: INSTALL_DOC,
        }
    }

    /// `no_bundles` of `pin --all` when the bundles sit in hidden folders under the root
    /// (`skills/.curated`): those are not searched unless the root names them. `folders` are
    /// the hidden folders, already escaped, as `--root` would take them.
    #[cfg(feature = "git")]
    pub fn hidden_roots(folders: &[String]) -> Option<Hint> {
        let first = folders.first()?;
        let listed: Vec<String> = folders.iter().map(|f| format!("`{f}`")).collect();
        Some(Hint {
            text: format!(
                "bundles sit in the hidden folder(s) {}, which `pin --all` does not search: \
                 give `--root {first}` (`root: {first}` in the descriptor)",
                listed.join(", ")
            ),
            doc: CLI_DOC,
        })
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (see {})", self.text, self.doc)
    }
}

impl serde::Serialize for Hint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The code a report line ends with (`… [code]`), if it ends with one.
fn code_of_line(line: &str) -> Option<&str> {
    let inner = line.trim_end().strip_suffix(']')?;
    let code = &inner[inner.rfind('[')? + 1..];
    let snake = !code.is_empty()
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    snake.then_some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_the_table_names_is_a_code() {
        let registry: Vec<&str> = crate::codes::registry()
            .into_iter()
            .map(|c| c.as_str())
            .collect();
        for code in LIMITS_CODES.iter().chain(&[
            "symlink_in_tree",
            "installed_drift",
            "no_bundles",
            "scan_missing",
        ]) {
            assert!(registry.contains(code), "{code} is not a code");
        }
    }

    #[test]
    fn an_option_is_named_as_the_reader_gives_it() {
        let flag = Hint::of("file_too_large", Via::Flags).expect("a hint");
        assert!(flag.to_string().contains("`--limits extended`"), "{flag}");
        assert!(flag.to_string().ends_with("(see docs/limits.md)"), "{flag}");
        let key = Hint::of("symlink_in_tree", Via::Descriptor).expect("a hint");
        assert!(
            key.to_string()
                .contains("`links: outside-bundles` on the source"),
            "{key}"
        );
        assert_eq!(Hint::of("invalid_hash", Via::Descriptor), None);
    }

    #[test]
    fn a_line_s_last_bracket_is_its_code() {
        let line = "pdf/a [file_too_large].bin: binary content [nul_byte]";
        assert_eq!(code_of_line(line), Some("nul_byte"));
        assert_eq!(code_of_line("no code here"), None);
        assert_eq!(code_of_line("x [Not A Code]"), None);
        let hint = Hint::of_lines(["x [invalid_name]", line], Via::Descriptor).expect("a hint");
        assert!(
            hint.to_string()
                .contains("`limits: extended` on the source")
        );
        assert!(hint.to_string().ends_with("(see docs/limits.md)"), "{hint}");
    }
}
