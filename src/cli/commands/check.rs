//! `skillfold check`: static checks of the descriptor.

use crate::ops::check;
use crate::support::escape;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;

/// Check the descriptor without network or corpus access.
///
/// Parses `skillfold.yaml` (unknown keys are errors) and checks everything that can be known
/// statically: full commit ids (40 or 64 hex digits), hashes (64 lowercase hex digits), version
/// labels (no ranges, no `latest`), skill names, credentials kept out of URLs, distinct corpus
/// directories, one pin per name, at most 16 unique skills per agent (or the descriptor's
/// `selection.max_skills`, up to 1,024). Every problem is listed, those of each entry and those
/// across entries in one run; a YAML error shows its line and a caret.
///
/// Exit status: 0 the descriptor is sound; 2 it is not (or cannot be read).
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    config: ConfigArg,
}

pub fn run(args: CheckArgs) -> Exit {
    match check::load_plan(&args.config.path) {
        Ok((_, plan)) => crate::cli::output::print(&format!(
            "{}: ok: {}\n",
            escape::path(&args.config.path),
            check::summary(&plan)
        )),
        Err(e) => {
            crate::cli::output::check_error(&e);
            Exit::of(&e)
        }
    }
}
