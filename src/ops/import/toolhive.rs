//! ToolHive's project lock, `toolhive.lock.yaml` (version 1): a list of skills, each with
//! `name`, `source` (a registry name, an OCI reference or `git://host/owner/repo[@ref][#path]`),
//! `resolvedReference`, `digest` (the commit, or an OCI manifest digest) and `contentDigest`.
//! docs/import.md lists the fields relied on and where the format is defined.

use serde_json::Value;

use crate::format::pin::CommitId;

use super::code::ImportCode;
use super::entry::{At, Folder, LeftOut, LockEntry, Recorded, Rewrite, check_url, rewrite, shown};

/// Reads the entries of a ToolHive lock (`skills` is its `skills` list).
pub fn entries(skills: &[Value], rewrites: &[Rewrite]) -> Vec<Result<LockEntry, LeftOut>> {
    skills
        .iter()
        .enumerate()
        .map(|(i, value)| entry(i, value, rewrites))
        .collect()
}

fn entry(index: usize, value: &Value, rewrites: &[Rewrite]) -> Result<LockEntry, LeftOut> {
    let text = |name: &str| super::entry::text(value, name);
    let key = text("name").map_or_else(|| format!("skills[{index}]"), str::to_owned);
    let refuse = |code: ImportCode, reason: String| LeftOut::new(&key, code, reason);
    if !value.is_object() {
        return Err(refuse(
            ImportCode::LockInvalidEntry,
            "the entry is not a mapping".to_owned(),
        ));
    }
    if text("name").is_none() {
        return Err(refuse(
            ImportCode::LockInvalidEntry,
            "the entry has no `name`".to_owned(),
        ));
    }
    // The reference the source resolved to names the repository, the ref and the folder.
    let reference = [text("resolvedReference"), text("source")]
        .into_iter()
        .flatten()
        .find(|r| r.starts_with("git://"));
    let Some(reference) = reference else {
        let source = text("source").unwrap_or("");
        return Err(refuse(
            ImportCode::LockUnsupportedSource,
            format!(
                "`{}` is a registry or OCI skill; skillfold pins ToolHive's `git://` skills \
                 (its OCI sources read skillfold's own image layout)",
                shown(source)
            ),
        ));
    };
    let (url, reference_ref, path) = parse_git_reference(reference)
        .map_err(|reason| refuse(ImportCode::LockInvalidEntry, reason))?;
    let url = rewrite(&url, rewrites);
    check_url(&url).map_err(|(code, reason)| refuse(code, reason))?;
    let Some(path) = path else {
        return Err(refuse(
            ImportCode::LockUnsupportedSource,
            "the skill is the repository's root folder; skillfold takes a bundle from a folder \
             named after it"
                .to_owned(),
        ));
    };
    let at = match text("digest") {
        Some(digest) => match CommitId::parse(digest) {
            Ok(commit) => At::Commit(commit, reference_ref),
            Err(_) => {
                return Err(refuse(
                    ImportCode::LockInvalidEntry,
                    format!("`digest` `{}` is not a full commit id", shown(digest)),
                ));
            }
        },
        None => reference_ref.map_or(At::Head, At::Ref),
    };
    Ok(LockEntry {
        key: shown(&key),
        url,
        at,
        folder: Folder::Path(path),
        recorded: text("contentDigest").map(|d| Recorded::ToolhiveContent(d.to_owned())),
        version: text("version").map(str::to_owned),
    })
}

/// `git://host/owner/repo[@ref][#path]` as its HTTPS URL, ref and folder (as ToolHive reads it).
/// An `@` in the host part is user information, kept in the URL for [`check_url`] to refuse
/// (`lock_credentials`), never taken for a ref.
fn parse_git_reference(
    reference: &str,
) -> Result<(String, Option<String>, Option<String>), String> {
    let rest = reference.strip_prefix("git://").unwrap_or(reference);
    let (rest, path) = match rest.split_once('#') {
        Some((rest, path)) => (
            rest,
            Some(path.trim_matches('/').to_owned()).filter(|p| !p.is_empty()),
        ),
        None => (rest, None),
    };
    let Some((host, rest)) = rest.split_once('/') else {
        return Err(not_a_reference(reference));
    };
    let (repo, git_ref) = match rest.split_once('@') {
        Some((repo, r)) => (repo, Some(r.to_owned()).filter(|r| !r.is_empty())),
        None => (rest, None),
    };
    if host.is_empty() || !repo.contains('/') {
        return Err(not_a_reference(reference));
    }
    Ok((format!("https://{host}/{repo}"), git_ref, path))
}

fn not_a_reference(reference: &str) -> String {
    format!(
        "`{}` is not a `git://` reference (HOST/OWNER/REPO, then `@REF` and `#PATH` if any)",
        shown(reference)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::error_code::ErrorCode;

    fn read(yaml: &str) -> Vec<Result<LockEntry, LeftOut>> {
        let tree = super::super::tree::yaml(yaml).expect("yaml");
        entries(tree["skills"].as_array().expect("skills"), &[])
    }

    #[test]
    fn git_entries_resolve_oci_and_registry_ones_are_left_out() {
        let got = read(
            "version: 1\nskills:\n\
             - name: pdf\n  version: 1.2.0\n  source: git://github.com/acme/skills@v1#skills/pdf\n  \
               digest: 0123456789abcdef0123456789abcdef01234567\n  contentDigest: sha256:ab\n\
             - name: moving\n  source: git://github.com/acme/skills@main#skills/moving\n\
             - name: oci\n  source: ghcr.io/acme/skill:1\n  digest: sha256:00\n\
             - name: whole\n  source: git://github.com/acme/whole\n  \
               digest: 0123456789abcdef0123456789abcdef01234567\n\
             - name: odd\n  source: git://host-only\n",
        );
        let pdf = got[0].as_ref().expect("pdf");
        assert_eq!(pdf.url, "https://github.com/acme/skills");
        let At::Commit(_, Some(r)) = &pdf.at else {
            panic!("a commit with its ref")
        };
        assert_eq!(r, "v1");
        assert_eq!(pdf.folder, Folder::Path("skills/pdf".to_owned()));
        assert_eq!(
            pdf.recorded,
            Some(Recorded::ToolhiveContent("sha256:ab".to_owned()))
        );
        assert_eq!(pdf.version.as_deref(), Some("1.2.0"));
        assert_eq!(
            got[1].as_ref().expect("moving").at,
            At::Ref("main".to_owned())
        );
        assert_eq!(
            got[2].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockUnsupportedSource)
        );
        assert_eq!(
            got[3].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockUnsupportedSource)
        );
        assert_eq!(
            got[4].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockInvalidEntry)
        );
    }
}
