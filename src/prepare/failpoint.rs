//! Crash injection for tests: `SKILLFOLD_FAILPOINT=<name>` makes the process abort — as a crash
//! or a power loss would stop it — when it reaches the step called `<name>`. Tests use it to
//! prove that the published corpus is always either the old generation or the new one. Outside
//! tests the variable is unset and each point costs one environment lookup.

/// The environment variable naming the step to crash at.
pub const ENV: &str = "SKILLFOLD_FAILPOINT";

/// Aborts the process if `name` is the configured fail point.
pub fn hit(name: &str) {
    if std::env::var_os(ENV).is_some_and(|v| v == name) {
        eprintln!("skillfold: fail point `{name}` reached; aborting (test crash injection)");
        std::process::abort();
    }
}
