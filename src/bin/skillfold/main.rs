//! The `skillfold` command line: parses arguments and calls one library operation per command.
//! Every behaviour lives in the library (`skillfold::ops`); this binary only dispatches and
//! prints, data on stdout and diagnostics on stderr.

mod commands;
mod exit;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Verified, immutable Agent Skills bundles for LLM agents.
///
/// A bundle is a skill directory: `SKILL.md` (YAML frontmatter + Markdown body) and passive
/// supporting files. skillfold checks bundles against strict rules and bounds and names their
/// exact bytes with one digest (`chamvi-skill-bundle-v1`) that operators pin after review.
#[derive(Debug, Parser)]
#[command(name = "skillfold", version, about, long_about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Hash(commands::hash::HashArgs),
    Check(commands::check::CheckArgs),
    Prepare(commands::prepare::PrepareArgs),
    #[cfg(feature = "git")]
    Pin(commands::pin::PinArgs),
    Verify(commands::verify::VerifyArgs),
    Prompt(commands::prompt::PromptArgs),
    Load(commands::load::LoadArgs),
    Schema(commands::schema::SchemaArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Hash(args) => commands::hash::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Prepare(args) => commands::prepare::run(args),
        #[cfg(feature = "git")]
        Command::Pin(args) => commands::pin::run(args),
        Command::Verify(args) => commands::verify::run(args),
        Command::Prompt(args) => commands::prompt::run(args),
        Command::Load(args) => commands::load::run(args),
        Command::Schema(args) => commands::schema::run(args),
    };
    ExitCode::from(code as u8)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
