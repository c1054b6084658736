//! The record of an install, `DIR/.skillfold-install.json`: which bundles `install` wrote into
//! the folder (name, version, hash, where each came from, every file's `{path, size, sha256}`
//! and whether it was installed executable), so `install` can prove by content which folders it
//! wrote and `verify --installed` can name the files (and modes) that changed. Format
//! [`FORMAT`]; a [`FORMAT_V1`] record (no `executable`) is still read.
//!
//! The record is read as untrusted input: opened beneath the folder without following a link,
//! at most [`MAX_RECORD_BYTES`], JSON of the format [`FORMAT`] with no unknown field, every name
//! a valid skill name (so a record can never point outside the folder, or at a hidden entry),
//! no name twice. Anything else is refused with `install_record_invalid` and nothing is
//! changed: the operator looks at it, removes it, and runs `install` again.
//!
//! It is written with [`untrusted_fs::replace_file`]: a temporary file beside it, synced, renamed
//! into place, the folder synced — and only when its bytes change, so an install that changes
//! nothing writes nothing.

use std::os::fd::AsFd;

use serde::{Deserialize, Serialize};

use super::code::InstallCode;
use super::error::InstallError;
use crate::corpus::manifest::FileRecord;
use crate::format::skill_name::SkillName;
use crate::format::untrusted_fs::{self, UntrustedOpenError};

/// The file name of the record in the target folder.
pub const RECORD_NAME: &str = ".skillfold-install.json";

/// The format of the record written; another is never read as this one, except [`FORMAT_V1`].
pub const FORMAT: &str = "skillfold-install-v2";

/// The format before each file's `executable` was recorded: read (its files' execute bits are
/// unknown, so `verify --installed` does not check them), and written as [`FORMAT`] next time.
pub const FORMAT_V1: &str = "skillfold-install-v1";

/// The largest record read: 1,024 bundles (the ceiling of `selection.max_skills`) of 64 files
/// each take about 11 MiB.
pub const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// The record of an install.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// [`FORMAT`].
    pub format: String,
    /// The agent whose selection was installed (`None`: the defaults alone).
    pub agent: Option<String>,
    /// Every bundle installed, sorted by name.
    pub bundles: Vec<RecordBundle>,
}

/// One bundle of the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordBundle {
    /// Its name: the folder `DIR/<name>`.
    pub name: String,
    /// The pinned version.
    pub version: String,
    /// The pinned hash (`chamvi-skill-bundle-v1`).
    pub hash: String,
    /// Where it came from.
    pub source: RecordSource,
    /// Every file, in digest order.
    pub files: Vec<FileRecord>,
}

/// Where a recorded bundle came from: the fields of its origin that do not change from one
/// preparation to the next (no generation), so the record changes only when the install does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSource {
    /// `git`, `oci` or `local`.
    pub kind: String,
    /// Where it is configured in the descriptor.
    pub location: String,
    /// The repository URL without credentials (git), or `REGISTRY/REPOSITORY` (oci).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The pinned commit (git) or manifest digest (oci).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl Record {
    /// A record of `bundles` (sorted here) for `agent`.
    pub fn new(agent: Option<&str>, mut bundles: Vec<RecordBundle>) -> Record {
        bundles.sort_by(|a, b| a.name.cmp(&b.name));
        Record {
            format: FORMAT.to_owned(),
            agent: agent.map(str::to_owned),
            bundles,
        }
    }

    /// The recorded bundle `name`.
    pub fn get(&self, name: &str) -> Option<&RecordBundle> {
        self.bundles.iter().find(|b| b.name == name)
    }

    /// Whether each file's `executable` is recorded (not in a [`FORMAT_V1`] record).
    pub fn records_modes(&self) -> bool {
        self.format == FORMAT
    }

    /// The bytes written to disk.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text.into_bytes()
    }
}

/// Reads the record of the folder open at `dir` (`shown`, for messages): `None` when there is
/// none, with the bytes read (to write nothing when they would not change).
pub fn read(dir: impl AsFd, shown: &str) -> Result<Option<(Record, Vec<u8>)>, InstallError> {
    let invalid = |why: String| {
        InstallError::new(
            InstallCode::InstallRecordInvalid,
            format!(
                "the install record `{shown}/{RECORD_NAME}` {why}; it is not trusted: look at it, remove it and run `install` again"
            ),
        )
    };
    let name = untrusted_fs::component(RECORD_NAME).map_err(|e| invalid(e.to_string()))?;
    let (fd, stat) = match untrusted_fs::open_file(&dir, &name) {
        Ok(opened) => opened,
        Err(UntrustedOpenError::NotFound) => return Ok(None),
        Err(UntrustedOpenError::Io(errno)) => {
            return Err(InstallError::io(
                &format!("{shown}/{RECORD_NAME}"),
                &errno.into(),
            ));
        }
        Err(e) => return Err(invalid(e.to_string())),
    };
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    let bytes = untrusted_fs::read_capped(fd, MAX_RECORD_BYTES, size).map_err(|e| match e {
        untrusted_fs::UntrustedReadError::TooLarge { cap } => {
            invalid(format!("is larger than {cap} bytes"))
        }
        untrusted_fs::UntrustedReadError::Io(e) => {
            InstallError::io(&format!("{shown}/{RECORD_NAME}"), &e)
        }
    })?;
    let record: Record =
        serde_json::from_slice(&bytes).map_err(|e| invalid(format!("is not a record ({e})")))?;
    if record.format != FORMAT && record.format != FORMAT_V1 {
        return Err(invalid(format!(
            "has the format `{}`, not `{FORMAT}`",
            crate::support::escape::text(&record.format)
        )));
    }
    let mut seen: Vec<&str> = Vec::new();
    for bundle in &record.bundles {
        if SkillName::parse(&bundle.name).is_err() {
            return Err(invalid(format!(
                "names `{}`, which is not a skill name",
                crate::support::escape::text(&bundle.name)
            )));
        }
        if seen.contains(&bundle.name.as_str()) {
            return Err(invalid(format!("names `{}` twice", bundle.name)));
        }
        seen.push(&bundle.name);
    }
    Ok(Some((record, bytes)))
}

/// Writes `record` into the folder open at `dir`, unless `before` already holds its bytes.
pub fn write(
    dir: impl AsFd,
    shown: &str,
    record: &Record,
    before: Option<&[u8]>,
) -> Result<bool, InstallError> {
    let bytes = record.to_bytes();
    if before == Some(bytes.as_slice()) {
        return Ok(false);
    }
    let name = untrusted_fs::component(RECORD_NAME)
        .map_err(|e| InstallError::io(RECORD_NAME, &e.into_io()))?;
    untrusted_fs::replace_file(dir, &name, &bytes, 0o644)
        .map_err(|e| InstallError::io(&format!("{shown}/{RECORD_NAME}"), &e))?;
    Ok(true)
}
