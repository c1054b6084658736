//! Crash injection for tests: `SKILLFOLD_FAILPOINT=<name>` makes the process abort — as a crash
//! or a power loss would stop it — when it reaches the step called `<name>`. Tests use it to
//! prove that the published corpus is always either the old generation or the new one.
//!
//! The points are compiled in only with the `failpoints` feature (`scripts/test` builds the test
//! binaries with it); in every other build [`hit`] is an empty function, so a release binary
//! never looks at the variable.

/// The environment variable naming the step to crash at.
#[cfg(feature = "failpoints")]
pub const ENV: &str = "SKILLFOLD_FAILPOINT";

/// Aborts the process if `name` is the configured fail point (with the `failpoints` feature).
#[cfg(feature = "failpoints")]
pub fn hit(name: &str) {
    if std::env::var_os(ENV).is_some_and(|v| v == name) {
        std::process::abort();
    }
}

/// Does nothing: fail points are compiled only with the `failpoints` feature.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_name: &str) {}

/// How long [`pause`] holds the process at its step when the fail point names no duration.
#[cfg(feature = "failpoints")]
pub const PAUSE: std::time::Duration = std::time::Duration::from_millis(30);

/// The longest [`pause`] waits for its test's file (a test that never writes it has failed).
#[cfg(feature = "failpoints")]
pub const PAUSE_UNTIL_MAX: std::time::Duration = std::time::Duration::from_secs(120);

/// Holds the process if the configured fail point is `pause:<name>` (for [`PAUSE`]),
/// `pause:<name>:<milliseconds>`, or `pause:<name>:until:<path>` (with the `failpoints`
/// feature): tests widen a window between two steps that another process may act in, to show
/// that nothing it does there is misread. With `until`, the process creates `<path>.reached`
/// when it gets there and waits until `<path>` exists (at most [`PAUSE_UNTIL_MAX`]): the test
/// acts in the window and then lets it go, with no guess at how long anything takes.
#[cfg(feature = "failpoints")]
pub fn pause(name: &str) {
    let Some(value) = std::env::var_os(ENV).and_then(|v| v.into_string().ok()) else {
        return;
    };
    let Some(rest) = value.strip_prefix("pause:") else {
        return;
    };
    let (point, how) = rest.split_once(':').unwrap_or((rest, ""));
    if point != name {
        return;
    }
    if let Some(path) = how.strip_prefix("until:") {
        let go = std::path::Path::new(path);
        let _ = fs_err::write(format!("{path}.reached"), b"");
        let started = std::time::Instant::now();
        while !go.exists() && started.elapsed() < PAUSE_UNTIL_MAX {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        return;
    }
    let held = how.parse().map_or(PAUSE, std::time::Duration::from_millis);
    std::thread::sleep(held);
}

/// Does nothing: fail points are compiled only with the `failpoints` feature.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn pause(_name: &str) {}
