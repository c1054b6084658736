//! Wall-clock times for records and messages: seconds since the Unix epoch, shown as RFC 3339
//! UTC without a date library, and durations shown to a tenth of a second ([`seconds`]).

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time.
pub fn format_unix(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

/// `d` for a message, in seconds to the nearest tenth without a trailing `.0`: `2 s`, `2.5 s`;
/// the remainder of a deadline, 1.981742794 s, is `2 s`. A duration under a twentieth of a
/// second but not zero is `0.1 s`, never `0 s`.
// The Git fetcher and the registry client show their deadlines.
#[cfg(any(feature = "git", feature = "oci"))]
pub fn seconds(d: std::time::Duration) -> String {
    let tenths = (d.as_millis() + 50) / 100;
    let tenths = if d.is_zero() { 0 } else { tenths.max(1) };
    match tenths % 10 {
        0 => format!("{} s", tenths / 10),
        t => format!("{}.{t} s", tenths / 10),
    }
}

#[cfg(test)]
mod tests {
    #[cfg(any(feature = "git", feature = "oci"))]
    #[test]
    fn durations_are_shown_to_a_tenth() {
        use std::time::Duration;
        for (d, shown) in [
            (Duration::from_nanos(1_981_742_794), "2 s"),
            (Duration::from_secs(30), "30 s"),
            (Duration::from_millis(2_500), "2.5 s"),
            (Duration::from_millis(2_449), "2.4 s"),
            (Duration::from_millis(2_450), "2.5 s"),
            (Duration::from_millis(1), "0.1 s"),
            (Duration::ZERO, "0 s"),
        ] {
            assert_eq!(super::seconds(d), shown, "{d:?}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(super::format_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::format_unix(1_798_675_200), "2026-12-31T00:00:00Z");
    }
}
