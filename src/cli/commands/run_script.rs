//! `skillfold run-script`: call `skill_run_script` from the command line.

use clap::Args;

use super::runtime_args::{AgentArgs, call_and_print, catalogue};
use crate::cli::exit::Exit;

/// Run an approved Python helper of a skill, as an agent would, and print the result as JSON.
///
/// Only helpers whose exact bytes are approved in the descriptor (`scripts.allowlist`) or in
/// `SKILLFOLD_SKILL_SCRIPT_ALLOWLIST` run: with `python3 -I`, the verified bytes on stdin, the
/// skill's directory as working directory (a private copy of its verified files once a later
/// `prepare` removed it), no descriptor but stdin, stdout and stderr, a reduced environment, a
/// 30 s timeout and a 256 KiB output cap, in a process group that is killed afterwards. The result is `{skill, script,
/// exit_code, stdout, stderr}`; a refusal prints `{"error": {code, message, ...}}` on stderr.
///
/// Exit status: 0 the helper ran and exited 0; 2 refused or failed (see the error code).
#[derive(Debug, Args)]
#[command(
    override_usage = "skillfold run-script [OPTIONS] <SKILL> <SCRIPT> [ARGS]...",
    after_help = "Example:\n  skillfold run-script --agent data-analyst csv-profiler \
    scripts/profile_csv.py assets/example.csv"
)]
pub struct RunScriptArgs {
    #[command(flatten)]
    agent: AgentArgs,

    /// The skill.
    skill: String,

    /// The helper, e.g. `scripts/fetch.py`, then its arguments: everything after the helper,
    /// dashes and `--` included, goes to the helper, never to skillfold.
    // One positional holds the helper and its arguments: clap ends option parsing only once a
    // trailing positional has its first value, so a separate `ARGS` would let an option right
    // after the helper (`-c other.yaml`, `--agent`, `--help`) be read as skillfold's own.
    #[arg(
        value_name = "SCRIPT",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    script_and_args: Vec<String>,
}

pub fn run(args: RunScriptArgs) -> Exit {
    let catalogue = match catalogue(&args.agent) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    let mut values = args.script_and_args.into_iter();
    let script = values.next().unwrap_or_default();
    let helper_args: Vec<String> = values.collect();
    let input = serde_json::json!({ "skill": args.skill, "script": script, "args": helper_args });
    call_and_print(&catalogue, crate::runtime::tools::run_script::NAME, &input)
}
