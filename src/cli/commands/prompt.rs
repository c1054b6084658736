//! `skillfold prompt`: the catalogue block for an agent's system prompt.

use clap::Args;

use super::runtime_args::{AgentArgs, catalogue};
use crate::cli::exit::Exit;

/// Print the catalogue prompt of an agent: the `<available_skills>` block of the skills it may
/// load (in the format of skills-ref `to-prompt`) and how to use the `load_skill` tool.
///
/// Only verified bundles are listed; a bundle that fails verification is named on stderr and
/// left out. An agent with no skills gets no block (empty output).
///
/// Exit status: 0 printed; 2 a bad descriptor or an unknown agent.
#[derive(Debug, Args)]
pub struct PromptArgs {
    #[command(flatten)]
    agent: AgentArgs,
}

pub fn run(args: PromptArgs) -> Exit {
    match catalogue(&args.agent) {
        Ok(catalogue) => match catalogue.prompt() {
            Some(prompt) => crate::cli::output::print(&prompt),
            None => Exit::Ok,
        },
        Err(exit) => exit,
    }
}
