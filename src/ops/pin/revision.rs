//! `pin --revision`: a full commit id as given, or a branch or tag resolved once, at review time,
//! from the server's ref listing — the look-up `update --to` and `import` use
//! ([`refs::resolve_ref`], a branch before a tag, an annotated tag peeled to its commit). What
//! the entry records is the full id, with what it was resolved from and when, in a comment: the
//! descriptor still holds only commit ids.

use std::time::SystemTime;

use crate::descriptor::redact::RedactedUrl;
use crate::format::pin::CommitId;
use crate::source::git::candidate::CandidateTarget;
use crate::source::git::refs::{self, RefQuery};
use crate::support::escape;

use super::{PinError, Stop};

/// The commit a pin names, and where it came from.
#[derive(Debug, Clone)]
pub struct Revision {
    /// The full commit id.
    pub commit: CommitId,
    /// The branch or tag it was resolved from, when `--revision` named one.
    pub from: Option<ResolvedRef>,
}

/// A branch or tag resolved to a commit.
#[derive(Debug, Clone)]
pub struct ResolvedRef {
    /// The name given (`main`, `v1.2.0`).
    pub name: String,
    /// The ref the server listed for it (`refs/heads/main`, `refs/tags/v1.2.0`).
    pub full: String,
    /// When it was resolved.
    pub at: SystemTime,
}

impl Revision {
    /// A full commit id as given: nothing to resolve.
    pub fn commit(commit: CommitId) -> Revision {
        Revision { commit, from: None }
    }

    /// The comment the entry writes beside the id: what it was resolved from, and when (UTC, to
    /// the second); empty for an id given as it is.
    pub fn comment(&self) -> String {
        match &self.from {
            None => String::new(),
            Some(from) => format!(
                "  # resolved from `{}` ({}) on {}",
                escape::text(&from.name),
                escape::text(&from.full),
                utc(from.at)
            ),
        }
    }
}

/// The commit `target` (`--revision` as parsed: a full id, or a branch or tag name) names on
/// `url`: an id as it is, a name resolved once from the server's ref listing (nothing is
/// fetched). A name the listing does not resolve is refused with [`PinError::Ref`], whose hint
/// names the command that lists the server's refs.
pub fn resolve(url: &str, target: &CandidateTarget, stop: Stop<'_>) -> Result<Revision, PinError> {
    let name = match target {
        CandidateTarget::Commit(commit) => return Ok(Revision::commit(commit.clone())),
        CandidateTarget::Named(name) => name,
        // `--revision` is never parsed as the tracked branch; the remote's `HEAD` is its
        // nearest meaning.
        CandidateTarget::Tracked => "HEAD",
    };
    let shown = RedactedUrl::new(url);
    if shown.had_credentials() {
        return Err(PinError::CredentialsInUrl(shown));
    }
    let temp = tempfile::tempdir().map_err(PinError::Temp)?;
    let query = match target {
        CandidateTarget::Tracked => RefQuery::Head,
        _ => RefQuery::BranchOrTag(name),
    };
    let refused = |error| PinError::Ref {
        name: escape::text(name).to_string(),
        url: shown.clone(),
        error: Box::new(error),
    };
    let (object, full) = refs::resolve_ref(
        url,
        query,
        &temp.path().join("refs.git"),
        stop.interrupt,
        stop.deadline,
    )
    .map_err(refused)?;
    let commit = CommitId::parse(&object.to_string()).map_err(|e| {
        refused(crate::source::git::fetch_error::FetchError::Invalid {
            url: shown.clone(),
            detail: e.to_string(),
        })
    })?;
    Ok(Revision {
        commit,
        from: Some(ResolvedRef {
            name: name.to_owned(),
            full,
            at: SystemTime::now(),
        }),
    })
}

/// `time` in UTC as RFC 3339 to the second (`2026-12-07T09:30:00Z`).
fn utc(time: SystemTime) -> String {
    let seconds = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`,
/// for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_utc_to_the_second() {
        let at = |s: u64| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s);
        assert_eq!(utc(at(0)), "1970-01-01T00:00:00Z");
        assert_eq!(utc(at(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(utc(at(1_610_452_407)), "2021-01-12T11:53:27Z");
        assert_eq!(utc(at(4_102_444_799)), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn the_comment_names_the_ref_escaped() {
        let revision = Revision {
            commit: CommitId::parse(&"a".repeat(40)).expect("an id"),
            from: Some(ResolvedRef {
                name: "v1\n#x".to_owned(),
                full: "refs/tags/v1\n#x".to_owned(),
                at: SystemTime::UNIX_EPOCH,
            }),
        };
        let comment = revision.comment();
        assert_eq!(
            comment,
            "  # resolved from `v1\\n#x` (refs/tags/v1\\n#x) on 1970-01-01T00:00:00Z"
        );
        assert_eq!(Revision::commit(revision.commit.clone()).comment(), "");
    }
}
