//! The one-line summary recorded with a verdict, from what the scanner printed: for SARIF
//! (`runs[].results`) the number of results; for other JSON the first count a common key gives
//! (`findings`, `issues`, `results`, `vulnerabilities` as arrays, or `total_findings`,
//! `findings_count`, `issue_count` as numbers, at the top or under `summary`); otherwise the
//! first non-empty line of stdout (else stderr). Always escaped ([`crate::support::escape`]) and
//! cut to [`MAX_SUMMARY_CHARS`] characters, so it is one line a person can read safely.

use crate::descriptor::scanners::MAX_SUMMARY_CHARS;
use crate::support::escape;

/// The keys whose array holds the findings.
const LIST_KEYS: &[&str] = &["findings", "issues", "results", "vulnerabilities"];
/// The keys whose number counts them.
const COUNT_KEYS: &[&str] = &[
    "total_findings",
    "findings_count",
    "finding_count",
    "issue_count",
    "total_issues",
];

/// The summary of a run that printed `stdout` and `stderr` and exited with `code`.
pub fn summary(stdout: &[u8], stderr: &[u8], code: i32) -> String {
    let text = if let Some(count) = json_count(stdout) {
        count
    } else {
        let first = |bytes: &[u8]| {
            String::from_utf8_lossy(bytes)
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_owned)
        };
        first(stdout)
            .or_else(|| first(stderr))
            .unwrap_or_else(|| format!("exit status {code}, no output"))
    };
    bounded(&escape::text(&text).to_string())
}

/// `text` cut to [`MAX_SUMMARY_CHARS`] characters (the last one `…` when cut).
fn bounded(text: &str) -> String {
    if text.chars().count() <= MAX_SUMMARY_CHARS {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    out.push('…');
    out
}

/// The count a JSON or SARIF report gives, as a phrase.
fn json_count(stdout: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    if let Some(runs) = value.get("runs").and_then(|r| r.as_array()) {
        let results: usize = runs
            .iter()
            .filter_map(|run| run.get("results").and_then(|r| r.as_array()))
            .map(Vec::len)
            .sum();
        return Some(format!("{results} result(s) (SARIF)"));
    }
    let scopes = [Some(&value), value.get("summary")];
    for scope in scopes.into_iter().flatten() {
        for key in COUNT_KEYS {
            if let Some(n) = scope.get(*key).and_then(serde_json::Value::as_u64) {
                return Some(format!("{n} finding(s) (`{key}`)"));
            }
        }
        for key in LIST_KEYS {
            if let Some(list) = scope.get(*key).and_then(|v| v.as_array()) {
                return Some(format!("{} finding(s) (`{key}`)", list.len()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_come_from_sarif_json_or_the_first_line() {
        let sarif = br#"{"version":"2.1.0","runs":[{"results":[{},{}]},{"results":[{}]}]}"#;
        assert_eq!(summary(sarif, b"", 1), "3 result(s) (SARIF)");
        assert_eq!(
            summary(br#"{"summary":{"total_findings":4}}"#, b"", 1),
            "4 finding(s) (`total_findings`)"
        );
        assert_eq!(
            summary(br#"{"findings":[]}"#, b"", 0),
            "0 finding(s) (`findings`)"
        );
        assert_eq!(summary(b"\n  all clean\nmore", b"", 0), "all clean");
        assert_eq!(summary(b"", b"warn\n", 0), "warn");
        assert_eq!(summary(b"", b"", 0), "exit status 0, no output");
    }

    #[test]
    fn a_summary_is_escaped_and_bounded() {
        let hostile = "x\u{1b}[2J\u{202e}y";
        let got = summary(hostile.as_bytes(), b"", 0);
        assert!(
            !got.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{got:?}"
        );
        let long = "y".repeat(500);
        let got = summary(long.as_bytes(), b"", 0);
        assert_eq!(got.chars().count(), MAX_SUMMARY_CHARS);
        assert!(got.ends_with('…'));
    }
}
