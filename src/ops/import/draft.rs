//! The descriptor draft `import` prints: one `git:` source per repository, commit and root,
//! written like `skillfold pin` writes an entry (every value from the lock or a server as a
//! quoted YAML string, every comment escaped, so no value can end a line or add a key), with a
//! comment per bundle saying where its commit and version came from, each content-hash
//! mismatch, and the entries left out with their reasons. It passes `skillfold check`.

use std::fmt::Write as _;

use crate::format::version::VersionLabel;
use crate::ops::pin::{corpus_name, yaml_string};
use crate::support::escape;

use super::entry::LeftOut;
use super::resolve::Resolved;

/// The draft for the `resolved` entries of a lock (`lock` names it, escaped, with its
/// format), listing the `left_out` ones in comments.
pub fn draft(lock: &str, resolved: &[Resolved], left_out: &[LeftOut]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# A descriptor draft imported by `skillfold import` from {lock}."
    );
    let _ = writeln!(
        out,
        "# Review every bundle at its commit before adopting it: a pin is only as good as the"
    );
    let _ = writeln!(
        out,
        "# review of the bytes it names. Versions come from the bundle, else the lock, else the commit."
    );
    if resolved.is_empty() {
        let _ = writeln!(out, "skills: []");
    } else {
        let _ = writeln!(out, "skills:");
    }
    let mut directories: Vec<String> = Vec::new();
    for group in groups(resolved) {
        let first = group[0];
        let mut directory = corpus_name(&first.url);
        let base = directory.clone();
        let mut n = 1;
        while directories.contains(&directory) {
            n += 1;
            directory = format!("{base}-{n}");
        }
        directories.push(directory.clone());
        let _ = writeln!(out, "  - git:");
        let _ = writeln!(out, "      source: {}", yaml_string(&first.url));
        // One ref for the whole source is named beside the revision, else beside each bundle.
        let shared = group.iter().all(|e| e.from_ref == first.from_ref);
        let from = match (&first.from_ref, shared) {
            (Some(r), true) => format!("  # resolved from {r}"),
            _ => String::new(),
        };
        let _ = writeln!(out, "      revision: {}{from}", first.commit);
        let _ = writeln!(
            out,
            "      directory: /var/lib/skillfold/{directory}  # the corpus `prepare` manages"
        );
        if let Some(root) = &first.root {
            let _ = writeln!(out, "      root: {}", yaml_string(root.as_str()));
        }
        let _ = writeln!(out, "      approved:");
        for entry in &group {
            write_bundle(&mut out, entry);
            if let (false, Some(r)) = (shared, &entry.from_ref) {
                let _ = writeln!(out, "          # resolved from {r}");
            }
        }
    }
    if !left_out.is_empty() {
        let _ = writeln!(out, "# Left out ({}):", left_out.len());
        for entry in left_out {
            let _ = writeln!(
                out,
                "#   - `{}`: {} [{}]",
                entry.key, entry.reason, entry.code
            );
        }
    }
    out
}

/// One approved pin, with its comments.
fn write_bundle(out: &mut String, entry: &Resolved) {
    let bundle = &entry.bundle;
    let (version, note) = version(entry);
    let _ = writeln!(out, "        - name: {}", bundle.name());
    let _ = writeln!(out, "          hash: {}", bundle.digest());
    let _ = writeln!(
        out,
        "          version: {}  # {note}",
        yaml_string(&version)
    );
    if bundle.name().as_str() != entry.key {
        let _ = writeln!(out, "          # the lock names it `{}`", entry.key);
    }
    if let Some(mismatch) = &entry.mismatch {
        let _ = writeln!(
            out,
            "          # MISMATCH: {mismatch}: review before adopting"
        );
    }
    if let Some(uncompared) = &entry.uncompared {
        let _ = writeln!(out, "          # {uncompared}");
    }
}

/// The version label of a pin and where it came from: the bundle's own, else the lock's, else
/// one made from the commit (every label checked as `check` checks it).
fn version(entry: &Resolved) -> (String, String) {
    let valid = |v: &str| VersionLabel::parse(v).is_ok();
    if let Some(declared) = entry.bundle.declared_version() {
        if valid(declared) {
            return (declared.to_owned(), "declared by the bundle".to_owned());
        }
        let made = from_commit(entry);
        return (
            made,
            format!(
                "the bundle declares `{}`, which is not a version label: `prepare` will refuse it",
                escape::text(declared)
            ),
        );
    }
    if let Some(locked) = entry.lock_version.as_deref().filter(|v| valid(v)) {
        return (locked.to_owned(), "from the lock".to_owned());
    }
    (
        from_commit(entry),
        "no version declared: the commit's; replace it with the reviewed release".to_owned(),
    )
}

fn from_commit(entry: &Resolved) -> String {
    format!("commit-{}", &entry.commit.as_str()[..12])
}

/// The resolved entries grouped by repository, commit and root, in the order first seen.
fn groups(resolved: &[Resolved]) -> Vec<Vec<&Resolved>> {
    let mut groups: Vec<Vec<&Resolved>> = Vec::new();
    for entry in resolved {
        let same = |g: &&mut Vec<&Resolved>| {
            let first = g[0];
            first.url == entry.url && first.commit == entry.commit && first.root == entry.root
        };
        match groups.iter_mut().find(same) {
            Some(group) => group.push(entry),
            None => groups.push(vec![entry]),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::SkillSource;
    use crate::format::bundle::Bundle;
    use crate::format::file_set::FileSetBuilder;
    use crate::format::pin::CommitId;
    use crate::format::root_path::RootPath;
    use crate::ops::pin::PinnedBundle;

    fn bundle(name: &str, version: Option<&str>) -> PinnedBundle {
        let declared = version
            .map(|v| format!("version: {v}\n"))
            .unwrap_or_default();
        let mut files = FileSetBuilder::new();
        files.insert(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: d\n{declared}---\nbody\n").into_bytes(),
        );
        let (files, problems) = files.finish();
        PinnedBundle::from(&Bundle::check(files, problems).expect("a valid bundle"))
    }

    fn resolved(url: &str, commit: char, root: &str, bundle: PinnedBundle) -> Resolved {
        Resolved {
            key: bundle.name().to_string(),
            url: url.to_owned(),
            commit: CommitId::parse(&commit.to_string().repeat(40)).expect("commit"),
            from_ref: None,
            root: Some(RootPath::parse(root).expect("root")),
            bundle,
            lock_version: None,
            mismatch: None,
            uncompared: None,
        }
    }

    #[test]
    fn the_draft_reads_back_as_written_and_nothing_from_the_lock_adds_a_line() {
        let url = "https://git.example.com/acme/skills.git";
        let mut a = resolved(url, 'a', "skills/.x #: x", bundle("pdf", Some("1.2.0")));
        // Text from a lock reaches the draft escaped, as the readers and `resolve` escape it.
        let esc = |t: &str| escape::text(t).to_string();
        a.key = esc("pdf\n  - git: {}\u{1b}[8m");
        a.from_ref = Some(format!("`{}` (refs/heads/main)", esc("main\nrevision: 0")));
        a.mismatch = Some(esc("differs\nskills: []"));
        let mut b = resolved(url, 'b', "skills", bundle("csv", Some("latest")));
        b.lock_version = Some("2.0.0".to_owned());
        let mut c = resolved(url, 'b', "skills", bundle("md", None));
        c.lock_version = Some("^1.0".to_owned());
        let left = [LeftOut::new(
            "bad\nkey",
            crate::ops::import::code::ImportCode::LockLocalPath,
            esc("why\nnot"),
        )];
        let draft = draft("`lock`", &[a, b, c], &left);
        assert!(!draft.contains('\u{1b}'), "{draft}");
        for line in draft.lines() {
            assert!(
                line.starts_with('#') || line.starts_with("skills") || line.starts_with("  "),
                "a line a lock value made: {line:?}\n{draft}"
            );
        }
        let parsed = crate::descriptor::parse(&draft).expect("a descriptor");
        assert_eq!(parsed.skills.len(), 2, "{draft}");
        let SkillSource::Git(first) = &parsed.skills[0] else {
            panic!("git")
        };
        assert_eq!(first.root.as_deref(), Some("skills/.x #: x"));
        assert_eq!(first.approved[0].version, "1.2.0");
        let SkillSource::Git(second) = &parsed.skills[1] else {
            panic!("git")
        };
        // Two sources of one repository get distinct corpora.
        assert_ne!(first.directory, second.directory);
        // A declared version that is not a label is not used; the lock's is, when it is one.
        assert_eq!(
            second.approved[0].version,
            format!("commit-{}", "b".repeat(12))
        );
        assert_eq!(
            second.approved[1].version,
            format!("commit-{}", "b".repeat(12))
        );
        assert!(draft.contains("the bundle declares `latest`"), "{draft}");
    }

    #[test]
    fn the_lock_version_is_taken_when_the_bundle_declares_none() {
        let mut r = resolved("https://h/a/b.git", 'c', "skills", bundle("pdf", None));
        r.lock_version = Some("2.0.0".to_owned());
        let draft = draft("`lock`", &[r], &[]);
        let parsed = crate::descriptor::parse(&draft).expect("a descriptor");
        let SkillSource::Git(git) = &parsed.skills[0] else {
            panic!("git")
        };
        assert_eq!(git.approved[0].version, "2.0.0", "{draft}");
        let empty = super::draft("`lock`", &[], &[]);
        assert!(
            crate::descriptor::parse(&empty)
                .expect("a descriptor")
                .skills
                .is_empty()
        );
    }
}
