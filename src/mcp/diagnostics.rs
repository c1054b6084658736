//! The server's diagnostic lines (warnings at start, reloads, ignored messages). The library
//! prints nothing itself: the host sets a sink once with [`set_diagnostics`] (the `skillfold`
//! binary writes to stderr), and without one the lines are dropped. Every value that came from
//! input is escaped ([`crate::support::escape::text`]) before it reaches a line.

use crate::support::escape;

use super::live::Served;

/// Where the server's diagnostic lines go, set once by the host with [`set_diagnostics`]. The
/// library prints nothing itself: without a sink the lines are dropped.
type DiagnosticsSink = Box<dyn Fn(&str) + Send + Sync>;
static DIAGNOSTICS: std::sync::OnceLock<DiagnosticsSink> = std::sync::OnceLock::new();

/// Sends the server's diagnostic lines (warnings at start, reloads, ignored messages) to `sink`
/// (the `skillfold` binary writes them to stderr). Lines hold no raw input: every value from
/// outside is already escaped. The sink must not panic or block for long. Returns `false` when a
/// sink was set before (the first one stays).
pub fn set_diagnostics(sink: impl Fn(&str) + Send + Sync + 'static) -> bool {
    DIAGNOSTICS.set(Box::new(sink)).is_ok()
}

/// Hands one diagnostic line to the host's sink, if it set one. Values from input must be passed
/// through [`crate::support::escape::text`] by the caller.
pub(crate) fn diag(line: std::fmt::Arguments<'_>) {
    if let Some(sink) = DIAGNOSTICS.get() {
        sink(&line.to_string());
    }
}

/// Names on stderr the skills left out of the Skills extension's listing.
pub(crate) fn warn_unlisted(served: &Served) {
    for line in served.index().unlisted() {
        diag(format_args!(
            "skillfold serve: warning: {}",
            escape::text(line)
        ));
    }
}
