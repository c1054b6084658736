//! `skillfold run-script`: call `skill_run_script` from the command line.

use clap::Args;

use super::runtime_args::{AgentArgs, call_and_print, catalogue};
use crate::cli::exit::Exit;

/// Run an approved Python helper of a skill, as an agent would, and print the result as JSON.
///
/// Only helpers whose exact bytes are approved in the descriptor (`scripts.allowlist`) or in
/// `SKILLFOLD_SKILL_SCRIPT_ALLOWLIST` run: with `python3 -I`, the verified bytes on stdin, the
/// skill's directory as working directory, a reduced environment, a 30 s timeout and a 256 KiB
/// output cap, in a process group that is killed afterwards. The result is `{skill, script,
/// exit_code, stdout, stderr}`; a refusal prints `{"error": {code, message, ...}}` on stderr.
///
/// Exit status: 0 the helper ran and exited 0; 2 refused or failed (see the error code).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  skillfold run-script --agent data-analyst csv-profiler \
    scripts/profile_csv.py assets/example.csv"
)]
pub struct RunScriptArgs {
    #[command(flatten)]
    agent: AgentArgs,

    /// The skill.
    skill: String,

    /// The helper, e.g. `scripts/fetch.py`.
    script: String,

    /// Arguments passed to the helper.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

pub fn run(args: RunScriptArgs) -> Exit {
    let catalogue = match catalogue(&args.agent) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    let input =
        serde_json::json!({ "skill": args.skill, "script": args.script, "args": args.args });
    call_and_print(&catalogue, crate::runtime::tools::run_script::NAME, &input)
}
