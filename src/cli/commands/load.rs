//! `skillfold load`: call `load_skill` from the command line.

use clap::Args;

use super::runtime_args::{AgentArgs, call_and_print, catalogue};
use crate::cli::exit::Exit;

/// Load a skill as an agent would: print the `load_skill` result as JSON.
///
/// Without REFERENCE, the skill's instructions (the body of its SKILL.md); with it, that
/// supporting file. The JSON is `{name, version, hash, reference, content, references}`.
/// A refusal prints `{"error": {code, message, valid}}` on stderr.
///
/// Exit status: 0 loaded; 2 refused (unknown skill or reference, bad descriptor, unknown agent).
#[derive(Debug, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    agent: AgentArgs,

    /// The skill.
    name: String,

    /// A supporting file of the skill (exact relative path).
    reference: Option<String>,
}

pub fn run(args: LoadArgs) -> Exit {
    let catalogue = match catalogue(&args.agent) {
        Ok(c) => c,
        Err(exit) => return exit,
    };
    let input = serde_json::json!({ "name": args.name, "reference": args.reference });
    call_and_print(&catalogue, crate::runtime::tools::load_skill::NAME, &input)
}
