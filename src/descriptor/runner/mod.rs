//! The configuration of the allowlisted script runner behind `skill_run_script`: only helper
//! bytes the operator approved by SHA-256 ever run.
//!
//! - [`policy`]: the approvals (`{skill, script, sha256}`), failing closed as a whole.
//! - [`blocklist`]: names of irreversible actions refused even when approved.
//! - [`crate::runtime::runner`]: the execution itself — isolated Python, bytes on stdin, reduced environment, own
//!   process group, timeout, output cap.
//!
//! The checks, in order, each with its code: input shape (`invalid_args`), path rules
//! (`invalid_path`, `unknown_skill`, `not_found`), blocklist (`blocked_tool`), replay guard
//! (`replay_blocked`), approval by hash (`not_approved`), then execution (`timeout`,
//! `output_limit`, `script_failed`, `spawn_failed`, `workdir_missing`, `unsupported_platform`).
//! The code lives in
//! [`crate::runtime::tools::run_script`]; this module holds the configuration.

pub mod blocklist;
pub mod policy;

use std::path::PathBuf;
use std::time::Duration;

pub use blocklist::Blocklist;
pub use policy::{ApprovalSpec, ScriptPolicy};

/// The replay guard: when set to anything but `off`, no helper runs (recorded sessions are
/// replayed without touching live systems).
pub const REPLAY_ENV: &str = "SKILLFOLD_REPLAY";
/// Overrides the interpreter.
pub const PYTHON_ENV: &str = "SKILLFOLD_PYTHON";

/// The longest a helper may run.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of stdout and stderr together.
pub const OUTPUT_CAP: usize = 256 * 1024;
/// The largest helper read for hashing.
pub const MAX_SCRIPT_BYTES: usize = 1024 * 1024;
/// How much of stderr a `script_failed` error carries (characters, from the end).
pub const STDERR_TAIL_CHARS: usize = 4000;
/// At most this many arguments…
pub const MAX_ARGS: usize = 32;
/// …of at most this many bytes each.
pub const MAX_ARG_BYTES: usize = 4096;

/// How the runner is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerConfig {
    /// The approvals.
    pub policy: ScriptPolicy,
    /// Names refused even when approved.
    pub blocklist: Blocklist,
    /// The interpreter.
    pub python: PathBuf,
    /// Wall-clock limit (at most [`MAX_TIMEOUT`]).
    pub timeout: Duration,
    /// Output cap.
    pub output_cap: usize,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            policy: ScriptPolicy::default(),
            blocklist: Blocklist::default(),
            python: std::env::var_os(PYTHON_ENV)
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("python3")),
            timeout: MAX_TIMEOUT,
            output_cap: OUTPUT_CAP,
        }
    }
}

impl RunnerConfig {
    /// A runner with `policy` and the defaults otherwise.
    pub fn with_policy(policy: ScriptPolicy) -> RunnerConfig {
        RunnerConfig {
            policy,
            ..RunnerConfig::default()
        }
    }
}

/// Whether the replay guard blocks helpers now.
pub fn replay_blocked() -> bool {
    std::env::var_os(REPLAY_ENV).is_some_and(|v| v != "off")
}
