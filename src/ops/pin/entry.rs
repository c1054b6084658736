//! The descriptor entry `pin` prints and `pin --write` appends: one `git:` source naming the
//! commit (with the branch or tag it was resolved from, in a comment), the corpus directory, the
//! root, the limits and links policy when they are not the defaults, the key files when the
//! signature was checked, and each bundle's name, hash and version (the `"<version>"`
//! placeholder unless `--version` gave one). Every value from the command line or the commit is
//! written as a YAML double-quoted string, so none can end a line or add a key; what a bundle
//! declares is only a comment, escaped.
//!
//! The default corpus directory is `/var/lib/skillfold/<owner>-<repo>[-<root>]`
//! ([`corpus_name_under`]): two repositories named `skills` under different owners, or two
//! roots of one repository, never share one.

use std::fmt::Write as _;
use std::path::Path;

use crate::descriptor::Links;
use crate::descriptor::VERSION_PLACEHOLDER;
use crate::format::limits::Limits;
use crate::format::root_path::RootPath;
use crate::format::version::VersionLabel;
use crate::support::{escape, json_text};
use crate::trust::commit::policy::Signer;

use super::PinnedBundle;
use super::revision::Revision;

/// The folder the default corpus directories are made in (`prepare` runs as a service user that
/// owns it).
pub const CORPUS_BASE: &str = "/var/lib/skillfold";

/// What an entry says of its source.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The repository URL.
    pub url: &'a str,
    /// The commit, and the ref it was resolved from.
    pub revision: &'a Revision,
    /// The folder holding the bundles' folders.
    pub root: Option<&'a RootPath>,
    /// The bounds the bundles were checked under.
    pub limits: Limits,
    /// The links policy the commit was checked under.
    pub links: Links,
    /// The key files (`verify` keys and paths) and who signed the commit, when its signature
    /// was checked.
    pub trust: Option<(&'a [(&'a str, &'a Path)], &'a Signer)>,
    /// The corpus directory, as written.
    pub directory: &'a str,
    /// The label of every bundle (`--version`); the placeholder when absent.
    pub version: Option<&'a VersionLabel>,
}

/// The default corpus directory of `url` under `root`: [`CORPUS_BASE`]`/<owner>-<repo>[-<root>]`.
pub fn default_directory(url: &str, root: Option<&RootPath>) -> String {
    format!("{CORPUS_BASE}/{}", corpus_name_under(url, root))
}

/// The descriptor entry for the pinned `bundles`, with a reminder of what a pin is worth.
pub fn descriptor_entry(entry: &Entry<'_>, bundles: &[PinnedBundle]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# A pin is only as good as the review of the bytes it names: read every file of"
    );
    if entry.version.is_some() {
        let _ = writeln!(out, "# these bundles at this commit before adopting it.");
    } else {
        let _ = writeln!(
            out,
            "# these bundles at this commit, then replace each `{VERSION_PLACEHOLDER}` with the reviewed release."
        );
    }
    out.push_str(&source_item(entry, bundles));
    out
}

/// The `- git:` item of the entry (its `-` in the first column), without the reminder.
pub fn source_item(entry: &Entry<'_>, bundles: &[PinnedBundle]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "- git:");
    let _ = writeln!(out, "    source: {}", yaml_string(entry.url));
    let _ = writeln!(
        out,
        "    revision: {}{}",
        entry.revision.commit,
        entry.revision.comment()
    );
    let _ = writeln!(
        out,
        "    directory: {}  # the corpus `prepare` manages",
        path_yaml(entry.directory)
    );
    if let Some(root) = entry.root {
        let _ = writeln!(out, "    root: {}", yaml_string(root.as_str()));
    }
    let limits = entry.limits;
    if !limits.is_default() {
        let _ = writeln!(
            out,
            "    limits: {}  # approves bounds beyond the chamvi default{}",
            limits_yaml(limits),
            if limits.binary() {
                " and binary files"
            } else {
                ""
            }
        );
    }
    if !entry.links.is_refuse() {
        let _ = writeln!(
            out,
            "    links: {}  # symbolic links outside the approved bundles are skipped",
            entry.links.as_str()
        );
    }
    if let Some((files, signer)) = entry.trust {
        let _ = writeln!(
            out,
            "    verify:  # signed by {} ({})",
            escape::text(&signer.principal),
            signer.fingerprint
        );
        for (key, path) in files {
            let _ = writeln!(out, "      {key}: {}", yaml_string(&path.to_string_lossy()));
        }
    }
    let _ = writeln!(out, "    approved:");
    out.push_str(&approved_items(entry.version, bundles, "      "));
    out
}

/// The approved items of `bundles` (each `- name:` after `indent`), each labelled `version` or
/// the placeholder.
pub fn approved_items(
    version: Option<&VersionLabel>,
    bundles: &[PinnedBundle],
    indent: &str,
) -> String {
    let mut out = String::new();
    for bundle in bundles {
        let declared = bundle
            .declared_version()
            .map(|v| format!("  # the bundle declares `{}`", escape::text(v)))
            .unwrap_or_default();
        let label = version.map_or(VERSION_PLACEHOLDER, VersionLabel::as_str);
        let _ = writeln!(out, "{indent}- name: {}", bundle.name());
        let _ = writeln!(out, "{indent}  hash: {}", bundle.digest());
        let _ = writeln!(out, "{indent}  version: {}{declared}", yaml_string(label));
        if !bundle.scans().is_empty() {
            let _ = writeln!(out, "{indent}  scans:");
        }
        for scan in bundle.scans() {
            let _ = writeln!(
                out,
                "{indent}    - {{ scanner: {}, digest: {}, verdict: {}, hash: {}, at: {}, summary: {} }}",
                yaml_string(&scan.scanner),
                yaml_string(&scan.digest),
                scan.verdict.as_str(),
                scan.hash,
                yaml_string(&scan.at),
                yaml_string(&scan.summary)
            );
        }
    }
    out
}

/// A directory as a descriptor value: plain when it is an absolute path of plain characters
/// (what the defaults are), otherwise a YAML string.
fn path_yaml(path: &str) -> String {
    let plain = path.starts_with('/')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
    if plain {
        path.to_owned()
    } else {
        yaml_string(path)
    }
}

/// A profile as a descriptor value: its name, or a flow mapping of every key.
fn limits_yaml(limits: Limits) -> String {
    match limits.name() {
        Some(name) => name.to_owned(),
        None => {
            let pairs: Vec<String> = limits
                .to_string()
                .split(',')
                .map(|pair| pair.replacen('=', ": ", 1))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
    }
}

/// `text` as a YAML double-quoted scalar: JSON's string escapes are a subset of YAML's, and
/// [`json_text`] escapes the controls and invisible characters YAML would take raw.
pub(crate) fn yaml_string(text: &str) -> String {
    json_text::string(text)
}

/// A directory name for the corpus of `url`: [`corpus_name_under`] without a root.
pub(crate) fn corpus_name(url: &str) -> String {
    corpus_name_under(url, None)
}

/// The longest corpus directory name derived from a URL, in bytes (well under a file name's
/// 255).
const MAX_CORPUS_NAME: usize = 96;

/// A directory name for the corpus of `url` under `root`: `<owner>-<repo>[-<root>]`, from the
/// last two segments of the URL's path (`.git` dropped) and the root's segments, so that two
/// repositories of one name under different owners (`anthropics/skills`, `openai/skills`), or
/// two roots of one repository, get different directories. Every run of characters outside
/// `A-Z a-z 0-9 _ -` becomes one `-`, so the name is one path segment, never `.` or `..`, and
/// stays inside the folder it is joined to; `skills` when nothing is left.
pub(crate) fn corpus_name_under(url: &str, root: Option<&RootPath>) -> String {
    // The path after `scheme://host` or scp-like `host:`; a plain path as it is.
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, path)| path),
        None => match url.split_once(':') {
            Some((host, path)) if !host.contains('/') => path,
            _ => url,
        },
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let mut segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if let Some(last) = segments.last_mut() {
        *last = last.strip_suffix(".git").unwrap_or(last);
    }
    let owner_repo = &segments[segments.len().saturating_sub(2)..];
    let parts = owner_repo
        .iter()
        .copied()
        .chain(root.into_iter().flat_map(|r| r.as_str().split('/')));
    let mut name = String::new();
    for part in parts {
        let part = sanitized(part);
        if part.is_empty() {
            continue;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&part);
    }
    if name.len() > MAX_CORPUS_NAME {
        // Every character is ASCII: any byte is a character boundary.
        name.truncate(MAX_CORPUS_NAME);
        name.truncate(name.trim_end_matches('-').len());
    }
    if name.is_empty() {
        "skills".to_owned()
    } else {
        name
    }
}

/// `part` with every run of characters outside `A-Z a-z 0-9 _ -` made one `-`, and no `-` at
/// either end.
fn sanitized(part: &str) -> String {
    let mut out = String::new();
    for c in part.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::bundle::Bundle;
    use crate::format::file_set::FileSetBuilder;
    use crate::format::pin::CommitId;

    #[test]
    fn the_entry_quotes_what_it_prints_so_nothing_adds_a_line_or_a_key() {
        let url = "https://example.com/s.git\n    directory: /\n# x: \"y\" \\";
        let root = RootPath::parse("skills/.x #: x").expect("a root");
        let mut files = FileSetBuilder::new();
        files.insert(
            "SKILL.md",
            b"---\nname: demo\ndescription: d\nversion: \"1\\n        hash: 0\\u001b[8m\"\n---\nbody\n"
                .to_vec(),
        );
        let (files, problems) = files.finish();
        let bundle = Bundle::check(files, problems).expect("a valid bundle");
        let digest = bundle.digest().to_string();
        let commit = CommitId::parse(&"a".repeat(40)).expect("commit");
        let revision = Revision::commit(commit);
        let entry = descriptor_entry(
            &Entry {
                url,
                revision: &revision,
                root: Some(&root),
                limits: Limits::default(),
                links: Links::Refuse,
                trust: None,
                directory: &default_directory(url, Some(&root)),
                version: None,
            },
            &[PinnedBundle::from(&bundle)],
        );
        assert!(!entry.contains('\u{1b}'), "{entry}");
        let parsed: serde_yaml::Value = serde_yaml::from_str(&entry).expect("YAML");
        let git = &parsed[0]["git"];
        assert_eq!(git["source"].as_str(), Some(url));
        assert_eq!(git["root"].as_str(), Some("skills/.x #: x"));
        let approved = git["approved"].as_sequence().expect("approved");
        assert_eq!(approved.len(), 1);
        assert_eq!(approved[0]["version"].as_str(), Some(VERSION_PLACEHOLDER));
        assert_eq!(approved[0]["hash"].as_str(), Some(digest.as_str()));
        assert!(
            entry.contains("declares `1\\n        hash: 0\\u{1b}[8m`"),
            "{entry}"
        );
        assert!(
            !entry.contains("limits"),
            "the default is not written: {entry}"
        );
    }

    #[test]
    fn the_entry_names_a_raised_profile_so_the_descriptor_reads_it_back() {
        for spec in ["extended", "file_bytes=1MiB,binary=true"] {
            let limits = Limits::parse(spec).expect("a profile");
            let commit = CommitId::parse(&"a".repeat(40)).expect("commit");
            let revision = Revision::commit(commit);
            let entry = descriptor_entry(
                &Entry {
                    url: "https://example.com/s.git",
                    revision: &revision,
                    root: None,
                    limits,
                    links: Links::Refuse,
                    trust: None,
                    directory: "/c",
                    version: None,
                },
                &[],
            );
            let parsed: crate::descriptor::Descriptor =
                serde_yaml::from_str(&format!("skills:\n{entry}")).expect("a descriptor");
            let crate::descriptor::SkillSource::Git(git) = &parsed.skills[0] else {
                panic!("a git source");
            };
            let written = git.limits.as_ref().expect("limits written");
            let read = written.resolve().expect("a valid profile");
            assert_eq!(read, limits, "{entry}");
        }
    }

    #[test]
    fn default_directories_differ_by_owner_and_root_and_stay_one_segment() {
        let root = |r: &str| RootPath::parse(r).expect("a root");
        for (url, root, name) in [
            (
                "https://github.com/anthropics/skills.git",
                None,
                "anthropics-skills",
            ),
            ("https://github.com/openai/skills", None, "openai-skills"),
            (
                "https://github.com/openai/skills.git",
                Some(root("skills/.curated")),
                "openai-skills-skills-curated",
            ),
            ("git@github.com:acme/skills.git", None, "acme-skills"),
            ("ssh://git@host:2222/acme/skills.git/", None, "acme-skills"),
            ("https://host/skills.git", None, "skills"),
            ("https://host/a/b/c%2e%2e/..", None, "c-2e-2e"),
            ("https://host/../..", None, "skills"),
            ("https://host/x/y.git?ref=main#frag", None, "x-y"),
            ("file:///tmp/repos/remote.git", None, "repos-remote"),
            ("/srv/git/team/skills.git", None, "team-skills"),
            ("https://host/ä ö/s k", None, "s-k"),
        ] {
            let got = corpus_name_under(url, root.as_ref());
            assert_eq!(got, name, "{url}");
            assert!(!got.contains(['/', '.']) && !got.is_empty(), "{got}");
        }
        let long = format!("https://host/{}/{}", "o".repeat(90), "r".repeat(90));
        assert!(corpus_name_under(&long, None).len() <= MAX_CORPUS_NAME);
        assert_eq!(
            default_directory("https://github.com/openai/skills", None),
            "/var/lib/skillfold/openai-skills"
        );
    }
}
