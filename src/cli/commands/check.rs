//! `skillfold check`: static checks of the descriptor.

use crate::ops::check;
use crate::support::escape;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;
use crate::format::sarif::Log;

/// Check the descriptor without network or corpus access.
///
/// Parses `skillfold.yaml` (unknown keys are errors) and checks everything that can be known
/// statically: full commit ids (40 or 64 hex digits), hashes (64 lowercase hex digits), version
/// labels (no ranges, no `latest`), skill names, credentials kept out of URLs, distinct corpus
/// directories, one pin per name, at most 16 unique skills per agent (or the descriptor's
/// `selection.max_skills`, up to 1,024). Every problem is listed, those of each entry and those
/// across entries in one run; a YAML error shows its line and a caret.
///
/// With `--format sarif`, stdout holds a SARIF 2.1.0 log of the problems instead (empty when
/// there are none) and the summary goes to stderr.
///
/// Exit status: 0 the descriptor is sound; 2 it is not (or cannot be read).
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// What stdout holds: `text` (the summary) or `sarif` (a SARIF 2.1.0 log of the problems).
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    format: CheckFormat,
}

/// The formats of `check --format` (it has no JSON report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckFormat {
    /// The summary line.
    Text,
    /// A SARIF 2.1.0 log of the problems.
    Sarif,
}

pub fn run(args: CheckArgs) -> Exit {
    let sarif = args.format == CheckFormat::Sarif;
    match check::load_plan(&args.config.path) {
        Ok((_, plan)) => {
            let summary = format!(
                "{}: ok: {}",
                escape::path(&args.config.path),
                check::summary(&plan)
            );
            if sarif {
                diag!("{summary}");
                return crate::cli::sarif::print(&Log::new());
            }
            crate::cli::output::print(&(summary + "\n"))
        }
        Err(e) => {
            crate::cli::output::check_error(&e);
            let exit = Exit::of(&e);
            if !sarif {
                return exit;
            }
            let mut log = Log::new();
            crate::cli::sarif::check_error(&mut log, &args.config.path, &e);
            exit.worse(crate::cli::sarif::print(&log))
        }
    }
}
