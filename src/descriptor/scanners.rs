//! Scanners and their verdicts, as the descriptor writes them (docs/scanners.md).
//!
//! ```yaml
//! scanners:                       # the root only
//!   skill-audit: { command: [skill-audit, --offline], timeout: 120 }
//! skills:
//!   - git:
//!       require_scan: [skill-audit]     # also per agent, for every bundle the agent gets
//!       approved:
//!         - name: pdf
//!           version: 1.0.0
//!           hash: <64 hex>
//!           scans:
//!             - { scanner: skill-audit, digest: "sha256:<64 hex>", verdict: pass,
//!                 hash: <64 hex>, at: 2026-12-07T23:00:00Z, summary: "0 findings" }
//! ```
//!
//! A verdict is bound to the bundle hash it judged: one whose `hash` is not the entry's
//! current `hash` is void. `check` (and so `prepare`, `install` and the runtime, which run it
//! first) refuses a bundle a policy requires a scanner for without a `pass` verdict by that
//! scanner for its current hash (`scan_missing`); nothing but `pin --scan` and `update --scan`
//! ever runs a scanner. This module owns the shapes, the checked [`Scanner`] and what a verdict
//! satisfies ([`missing`]); the rules `check` applies to them are the plan's
//! ([`crate::descriptor::plan::resolve_scanners`] and the rest of `plan/scans.rs`).

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Longest recorded `summary`, in characters.
pub const MAX_SUMMARY_CHARS: usize = 200;
/// The longest `timeout` of a scanner, in seconds.
pub const MAX_SCAN_TIMEOUT_SECONDS: u32 = 3600;
/// A scanner's `timeout` when none is written, in seconds.
pub const DEFAULT_SCAN_TIMEOUT_SECONDS: u32 = 120;
/// The most arguments a scanner's `command` may hold (its executable included).
pub const MAX_COMMAND_ARGS: usize = 64;

/// One scanner: the command `pin --scan NAME` runs on a read-only copy of each bundle.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScannerSpec {
    /// The executable and its arguments, no shell; the bundle folder's path is appended as the
    /// last argument. A bare executable name is looked up on PATH; a path holding `/` is
    /// relative to the descriptor's folder. Its SHA-256 is recorded with each verdict.
    #[schemars(length(min = 1, max = 64))]
    pub command: Vec<String>,
    /// Wall-clock limit of one run, in seconds: 1 to 3,600 (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout: Option<u32>,
}

/// What a scanner said of a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// It found nothing (exit status 0).
    Pass,
    /// It reported findings (exit status 1).
    Findings,
}

impl Verdict {
    /// The value as the descriptor and a bill of materials write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Findings => "findings",
        }
    }
}

/// A recorded verdict, in an approved entry's `scans`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanSpec {
    /// The scanner's name in `scanners`.
    pub scanner: String,
    /// `sha256:<64 hex>`: the SHA-256 of the scanner's executable when it ran.
    #[schemars(regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pub digest: String,
    /// `pass` or `findings`.
    pub verdict: Verdict,
    /// The bundle hash it judged; the verdict is void unless it is the entry's `hash`.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub hash: String,
    /// When it ran: an RFC 3339 UTC date-time, `YYYY-MM-DDTHH:MM:SSZ`.
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))]
    pub at: String,
    /// What it said, on one line: at most 200 characters, no control character.
    #[schemars(length(max = 200))]
    pub summary: String,
}

/// A declared scanner, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanner {
    /// Its name.
    pub name: String,
    /// The executable as written (a bare name, or a path resolved against the descriptor).
    pub program: PathBuf,
    /// The arguments before the bundle folder.
    pub args: Vec<String>,
    /// Wall-clock limit of one run.
    pub timeout: Duration,
}

/// Whether `name` may name a scanner: 1-64 characters of `a-z 0-9 _ -`, starting with a letter.
pub fn valid_scanner_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

/// Whether `at` is `YYYY-MM-DDTHH:MM:SSZ` with a month, day, hour, minute and second in range.
pub fn is_utc_date_time(at: &str) -> bool {
    let b = at.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = at.get(range)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    b.len() == 20
        && (b[4], b[7], b[10], b[13], b[16], b[19]) == (b'-', b'-', b'T', b':', b':', b'Z')
        && digits(0..4).is_some()
        && digits(5..7).is_some_and(|m| (1..=12).contains(&m))
        && digits(8..10).is_some_and(|d| (1..=31).contains(&d))
        && digits(11..13).is_some_and(|h| h < 24)
        && digits(14..16).is_some_and(|m| m < 60)
        && digits(17..19).is_some_and(|s| s < 61)
}

/// The required scanners of `required` that have no `pass` verdict for `hash` in `scans`
/// (a verdict for another hash is void).
pub fn missing<'r>(required: &'r [String], scans: &[ScanSpec], hash: &str) -> Vec<&'r str> {
    required
        .iter()
        .filter(|name| {
            !scans
                .iter()
                .any(|s| s.scanner == **name && s.hash == hash && s.verdict == Verdict::Pass)
        })
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
#[path = "scanners_tests.rs"]
mod tests;
