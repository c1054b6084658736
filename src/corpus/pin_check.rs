//! Verifying a bundle against its pin: the one check that stands between bytes on disk (or from
//! a fetch) and anything that uses them.
//!
//! A bundle verifies when it passes every bundle rule, its frontmatter `name` equals the pin's
//! name, any version it declares equals the pin's version, and its digest equals the pin's hash.
//! When a manifest recorded the files at publication, a digest mismatch names the files that
//! changed.

use std::path::{Path, PathBuf};

use crate::corpus::manifest::{FileRecord, ManifestBundle, changed_files, file_records};
use crate::format::bundle::{Bundle, BundleError};
use crate::format::code::PinCode;
use crate::format::digest::BundleDigest;
use crate::format::limits::Limits;
use crate::format::pin::Pin;
use crate::format::safe_read;
use crate::support::error_code::ErrorCode;
use crate::support::escape;

/// Why a bundle does not verify.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The directory could not be read, or breaks the bundle rules.
    #[error("`{}`: {source}", escape::path(.dir))]
    Load {
        /// The bundle directory.
        dir: PathBuf,
        /// What failed.
        source: BundleError,
    },
    /// The frontmatter names another skill.
    #[error(
        "`{}`: the frontmatter names `{}`, but the pin is for `{}`",
        escape::path(.dir),
        escape::text(.found),
        escape::text(.expected)
    )]
    NameMismatch {
        /// The bundle directory.
        dir: PathBuf,
        /// The pinned name.
        expected: String,
        /// The frontmatter name.
        found: String,
    },
    /// The frontmatter declares another release.
    #[error(
        "`{}`: `{}` declares version `{}`, but the pin says `{}`",
        escape::path(.dir),
        escape::text(.name),
        escape::text(.found),
        escape::text(.expected)
    )]
    VersionMismatch {
        /// The bundle directory.
        dir: PathBuf,
        /// The skill.
        name: String,
        /// The pinned version.
        expected: String,
        /// The declared version.
        found: String,
    },
    /// The bytes are not the reviewed bytes.
    #[error("{0}")]
    DigestMismatch(Box<DigestMismatch>),
}

/// The details of a digest mismatch.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{}`: `{}` has digest {actual}, but the pin is {expected}{}",
    escape::path(.dir),
    escape::text(.name),
    if .changed.is_empty() { String::new() } else { format!("; changed since publication: {}", .changed.join(", ")) }
)]
pub struct DigestMismatch {
    /// The bundle directory.
    pub dir: PathBuf,
    /// The skill.
    pub name: String,
    /// The pinned digest.
    pub expected: BundleDigest,
    /// The digest of the bytes read.
    pub actual: BundleDigest,
    /// Files that differ from the manifest, when one was given.
    pub changed: Vec<String>,
}

impl DigestMismatch {
    /// Stable error code: always `digest_mismatch`.
    pub fn code(&self) -> PinCode {
        PinCode::DigestMismatch
    }
}

impl VerifyError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            VerifyError::Load { source, .. } => source.code().into(),
            VerifyError::NameMismatch { .. } => PinCode::NameMismatch.into(),
            VerifyError::VersionMismatch { .. } => PinCode::VersionMismatch.into(),
            VerifyError::DigestMismatch(e) => e.code().into(),
        }
    }
}

impl VerifyError {
    /// The bundle problems, errors and warnings with their places, when the bundle was read but
    /// is invalid; none otherwise.
    pub fn problems(&self) -> &[crate::format::problem::Problem] {
        match self {
            VerifyError::Load {
                source: crate::format::bundle::BundleError::Invalid(invalid),
                ..
            } => invalid.problems.as_slice(),
            _ => &[],
        }
    }

    /// Every bundle rule broken, one line each, when the bundle was read but is invalid (what a
    /// report lists as its details); none otherwise.
    pub fn problem_lines(&self) -> Vec<String> {
        match self {
            VerifyError::Load {
                source: crate::format::bundle::BundleError::Invalid(invalid),
                ..
            } => invalid
                .problems
                .as_slice()
                .iter()
                .map(ToString::to_string)
                .collect(),
            _ => Vec::new(),
        }
    }
}

crate::support::error_code::coded_by_code!(VerifyError, DigestMismatch);

/// Verifies every bundle a manifest records, each read from `<dir>/<name>` under `limits` (the
/// descriptor's profile) against its pin and recorded files: a published or previous
/// generation.
pub fn verify_recorded(
    dir: &Path,
    bundles: &[ManifestBundle],
    limits: Limits,
) -> Result<(), VerifyError> {
    for bundle in bundles {
        let bundle_dir = dir.join(bundle.pin.name.as_str());
        verify_dir(&bundle_dir, &bundle.pin, limits, Some(&bundle.files))?;
    }
    Ok(())
}

/// Verifies a copy of bundles that verified when they were taken (a staged generation): each,
/// read back from `<dir>/<name>` with the safe reader under `limits`, must hold exactly the
/// files of its pin — its digest, over every path and byte, equal to the pin's. The bundle rules
/// are not run a second time: bytes whose digest is the pin's are the bytes that passed them.
/// What the reader refuses (a link, a special file, a bound) is reported as [`verify_dir`]
/// reports it.
pub fn verify_copy(
    dir: &Path,
    bundles: &[ManifestBundle],
    limits: Limits,
) -> Result<(), VerifyError> {
    for bundle in bundles {
        let bundle_dir = dir.join(bundle.pin.name.as_str());
        let read = safe_read::read_bundle_dir_under(&bundle_dir, limits).map_err(|source| {
            VerifyError::Load {
                dir: bundle_dir.clone(),
                source: source.into(),
            }
        })?;
        if read.problems.has_errors() {
            verify_dir(&bundle_dir, &bundle.pin, limits, Some(&bundle.files))?;
            continue;
        }
        let actual = BundleDigest::of(&read.files);
        if actual != bundle.pin.hash {
            return Err(VerifyError::DigestMismatch(Box::new(DigestMismatch {
                name: bundle.pin.name.to_string(),
                expected: bundle.pin.hash,
                actual,
                changed: changed_files(&bundle.files, &file_records(&read.files)),
                dir: bundle_dir,
            })));
        }
    }
    Ok(())
}

/// Reads `dir` with the safe reader under `limits` and verifies it against `pin`.
pub fn verify_dir(
    dir: &Path,
    pin: &Pin,
    limits: Limits,
    recorded: Option<&[FileRecord]>,
) -> Result<Bundle, VerifyError> {
    let bundle = Bundle::read_dir_under(dir, limits).map_err(|source| VerifyError::Load {
        dir: dir.to_owned(),
        source,
    })?;
    verify_bundle(bundle, dir, pin, recorded)
}

/// Verifies a checked bundle (from any source) against `pin`; `dir` is only for messages.
pub fn verify_bundle(
    bundle: Bundle,
    dir: &Path,
    pin: &Pin,
    recorded: Option<&[FileRecord]>,
) -> Result<Bundle, VerifyError> {
    if bundle.name() != &pin.name {
        return Err(VerifyError::NameMismatch {
            dir: dir.to_owned(),
            expected: pin.name.to_string(),
            found: bundle.name().to_string(),
        });
    }
    if let Some(declared) = bundle.declared_version()
        && declared != pin.version.as_str()
    {
        return Err(VerifyError::VersionMismatch {
            dir: dir.to_owned(),
            name: pin.name.to_string(),
            expected: pin.version.as_str().to_owned(),
            found: declared.to_owned(),
        });
    }
    if bundle.digest() != pin.hash {
        let changed = recorded
            .map(|r| changed_files(r, &file_records(bundle.files())))
            .unwrap_or_default();
        return Err(VerifyError::DigestMismatch(Box::new(DigestMismatch {
            dir: dir.to_owned(),
            name: pin.name.to_string(),
            expected: pin.hash,
            actual: bundle.digest(),
            changed,
        })));
    }
    Ok(bundle)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::{VerifyError, verify_copy};
    use crate::corpus::manifest::ManifestBundle;
    use crate::format::bundle::Bundle;
    use crate::format::limits::Limits;
    use crate::format::pin::Pin;

    const SKILL: &[u8] = b"---\nname: hello\ndescription: Says hello.\n---\n# Hello\n";

    /// A copy of `hello` under `dir` and the record of what verified.
    fn copy(dir: &std::path::Path) -> ManifestBundle {
        let root = dir.join("hello");
        fs_err::create_dir_all(root.join("references")).expect("mkdir");
        fs_err::write(root.join("SKILL.md"), SKILL).expect("write");
        fs_err::write(root.join("references/notes.md"), b"notes\n").expect("write");
        let bundle = Bundle::read_dir(&root).expect("valid");
        let pin = Pin {
            name: "hello".parse().expect("name"),
            version: "1".parse().expect("version"),
            hash: bundle.digest(),
        };
        ManifestBundle::of(&pin, "hello".to_owned(), &bundle)
    }

    // The staged copy is held to its pin over every path and byte: an identical copy passes; a
    // changed file, an added file or a removed one is a digest mismatch naming the file; what the
    // reader refuses (a symbolic link) keeps the full check's code.
    #[test]
    fn a_copy_verifies_only_when_it_holds_exactly_the_pinned_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let record = copy(tmp.path());
        let limits = Limits::default();
        verify_copy(tmp.path(), std::slice::from_ref(&record), limits).expect("identical");
        let notes = tmp.path().join("hello/references/notes.md");
        let cases: [(&str, &dyn Fn()); 3] = [
            ("references/notes.md", &|| {
                fs_err::set_permissions(&notes, std::fs::Permissions::from_mode(0o644))
                    .expect("chmod");
                fs_err::write(&notes, b"changed\n").expect("write");
            }),
            ("references/extra.md", &|| {
                fs_err::write(tmp.path().join("hello/references/extra.md"), b"x\n").expect("write");
            }),
            ("references/notes.md", &|| {
                fs_err::remove_file(&notes).expect("rm")
            }),
        ];
        for (changed, change) in cases {
            let _ = fs_err::remove_dir_all(tmp.path().join("hello"));
            let record = copy(tmp.path());
            change();
            let err = verify_copy(tmp.path(), std::slice::from_ref(&record), limits)
                .expect_err("refused");
            let VerifyError::DigestMismatch(mismatch) = &err else {
                panic!("{err}");
            };
            assert!(
                mismatch.changed.iter().any(|c| c.contains(changed)),
                "{changed}: {err}"
            );
        }
        let _ = fs_err::remove_dir_all(tmp.path().join("hello"));
        let record = copy(tmp.path());
        std::os::unix::fs::symlink("SKILL.md", tmp.path().join("hello/link.md")).expect("link");
        let err =
            verify_copy(tmp.path(), std::slice::from_ref(&record), limits).expect_err("refused");
        assert!(matches!(err, VerifyError::Load { .. }), "{err}");
    }
}
