//! The `skillfold` command line: parses arguments and calls one library operation per command.
//! Every behaviour lives in the rest of the library (`crate::ops`, `crate::skills_ref`); this module only
//! dispatches and prints, data on stdout and diagnostics on stderr, through [`output`]: a write
//! error never becomes a panic or another exit status, and no diagnostic line carries a raw
//! control character. It is the top layer: it may use every module below it, and only
//! `src/bin/skillfold.rs` (through [`crate::run_cli`]) uses it.
//!
//! `validate`, `read-properties` and `to-prompt` reproduce skills-ref 0.1.1's `agentskills`
//! byte for byte, argument errors included, so they are parsed click-style ([`agentskills`]) before
//! clap sees the command line. Run under the name `agentskills` (a link to this binary), the
//! whole program is that reference CLI.

#[macro_use]
mod output;
mod agentskills;
mod commands;
mod exit;
mod sarif;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli::exit::Exit;

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

/// Arguments of a skills-ref compatible command (parsed click-style before clap runs).
#[derive(Debug, clap::Args)]
struct SpecArgs {
    /// Arguments, as `agentskills` 0.1.1 takes them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

#[derive(Debug, Subcommand)]
enum Command {
    Hash(commands::hash::HashArgs),
    Check(commands::check::CheckArgs),
    Prepare(commands::prepare::PrepareArgs),
    Install(commands::install::InstallArgs),
    #[cfg(feature = "git")]
    Pin(commands::pin::PinArgs),
    #[cfg(feature = "git")]
    Import(commands::import::ImportArgs),
    #[cfg(feature = "git")]
    Outdated(commands::outdated::OutdatedArgs),
    #[cfg(feature = "git")]
    Update(commands::update::UpdateArgs),
    Verify(commands::verify::VerifyArgs),
    Sbom(commands::sbom::SbomArgs),
    Push(commands::push::PushArgs),
    Prompt(commands::prompt::PromptArgs),
    Load(commands::load::LoadArgs),
    RunScript(commands::run_script::RunScriptArgs),
    #[cfg(feature = "mcp")]
    Serve(Box<commands::serve::ServeArgs>),
    Schema(commands::schema::SchemaArgs),
    #[cfg(feature = "http")]
    Token(commands::token::TokenArgs),
    /// Validate a skill directory, exactly as skills-ref 0.1.1 (`agentskills validate`) does.
    #[command(disable_help_flag = true)]
    Validate(SpecArgs),
    /// Print a skill's properties as JSON, exactly as `agentskills read-properties` does.
    #[command(disable_help_flag = true)]
    ReadProperties(SpecArgs),
    /// Print the `<available_skills>` block, exactly as `agentskills to-prompt` does.
    #[command(disable_help_flag = true)]
    ToPrompt(SpecArgs),
}

pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let invoked_as = args
        .first()
        .map(|a| {
            a.as_bytes()
                .rsplit(|&b| b == b'/')
                .next()
                .unwrap_or_default()
                .to_vec()
        })
        .unwrap_or_default();
    if invoked_as == agentskills::PROG.as_bytes() {
        return ExitCode::from(agentskills::group(&args[1..]));
    }
    if let Some(cmd) = args
        .get(1)
        .and_then(|a| agentskills::Cmd::from_name(a.as_bytes()))
    {
        if cmd == agentskills::Cmd::Validate
            && let Some(code) = agentskills::validate_with_format(&args[2..])
        {
            return ExitCode::from(code);
        }
        return ExitCode::from(agentskills::command_args(cmd, &args[2..]));
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let code = match cli.command {
        Command::Hash(args) => commands::hash::run(args) as u8,
        Command::Check(args) => commands::check::run(args) as u8,
        Command::Prepare(args) => commands::prepare::run(args) as u8,
        Command::Install(args) => commands::install::run(args) as u8,
        #[cfg(feature = "git")]
        Command::Pin(args) => commands::pin::run(args) as u8,
        #[cfg(feature = "git")]
        Command::Import(args) => commands::import::run(args) as u8,
        #[cfg(feature = "git")]
        Command::Outdated(args) => commands::outdated::run(args) as u8,
        #[cfg(feature = "git")]
        Command::Update(args) => commands::update::run(args) as u8,
        Command::Verify(args) => commands::verify::run(args) as u8,
        Command::Sbom(args) => commands::sbom::run(args) as u8,
        Command::Push(args) => commands::push::run(args) as u8,
        Command::Prompt(args) => commands::prompt::run(args) as u8,
        Command::Load(args) => commands::load::run(args) as u8,
        Command::RunScript(args) => commands::run_script::run(args) as u8,
        #[cfg(feature = "mcp")]
        Command::Serve(args) => commands::serve::run(*args) as u8,
        Command::Schema(args) => commands::schema::run(args) as u8,
        #[cfg(feature = "http")]
        Command::Token(args) => commands::token::run(args) as u8,
        Command::Validate(a) => agentskills::command_args(agentskills::Cmd::Validate, &a.args),
        Command::ReadProperties(a) => {
            agentskills::command_args(agentskills::Cmd::ReadProperties, &a.args)
        }
        Command::ToPrompt(a) => agentskills::command_args(agentskills::Cmd::ToPrompt, &a.args),
    };
    ExitCode::from(code)
}

/// Prints clap's error (or help, or version) without panicking on a closed stream, and returns
/// its exit status (2 for a usage error, 0 for help and version). A usage error may quote the
/// argument it refuses, so it is printed plain, each line through the output guard.
fn usage_error(e: &clap::Error) -> ExitCode {
    // Help and version are not failures; a usage error is `invalid_usage`'s status (clap's 2).
    let code = if e.use_stderr() {
        exit::of(crate::codes::CommandCode::InvalidUsage) as u8
    } else {
        Exit::Ok as u8
    };
    if !e.use_stderr() {
        // Help or version on stdout: our own text, with clap's colours on a terminal.
        let _ = e.print();
        return ExitCode::from(code);
    }
    for line in e.render().to_string().lines() {
        diag!("{line}");
    }
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
