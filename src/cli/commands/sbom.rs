//! `skillfold sbom`: the bill of materials of a descriptor's prepared corpora, or of an agent's
//! folder, as CycloneDX 1.6 or SPDX 2.3 JSON on stdout.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::config::ConfigArg;
use crate::cli::exit::Exit;
use crate::ops::sbom::{self, cyclonedx, spdx};

/// Print a software bill of materials of the verified bundles, as CycloneDX 1.6 or SPDX 2.3 JSON.
///
/// Lists every bundle of the descriptor's prepared Git and OCI corpora (from each published
/// generation's manifest), or with `--installed DIR` of the agent's folder `install` wrote (from
/// its record): name, version, bundle digest, source (repository URL and commit, or image and
/// manifest digest), every file's SHA-256, and the verified commit signer or image publisher.
/// It describes what was verified and checks nothing: run `verify` (or `verify --installed`)
/// first. The same corpus gives the same bytes; no wall-clock time is written without
/// `--timestamp`.
///
/// Exit status: 0 written; 1 an I/O error; 2 a corpus never prepared, an unreadable manifest, a
/// missing or invalid install record, or a bad descriptor.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skillfold sbom --format cyclonedx > skills.cdx.json\n  \
    skillfold sbom --format spdx --installed .claude/skills > skills.spdx.json"
)]
pub struct SbomArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// The document's format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: SbomFormat,

    /// Describe the folder `install` wrote (e.g. `.claude/skills`), from its record, instead of
    /// the corpora. No descriptor is read.
    #[arg(long, value_name = "DIR")]
    installed: Option<PathBuf>,

    /// Write the current time as the document's time (CycloneDX `metadata.timestamp`, SPDX
    /// `creationInfo.created`); the output then differs from one run to the next.
    #[arg(long)]
    timestamp: bool,
}

/// The formats of `--format`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SbomFormat {
    /// CycloneDX 1.6 JSON.
    Cyclonedx,
    /// SPDX 2.3 JSON.
    Spdx,
}

pub fn run(args: SbomArgs) -> Exit {
    let inventory = match &args.installed {
        Some(dir) => sbom::of_installed(dir),
        None => match args.config.loaded() {
            Ok((loaded, plan)) => sbom::of_corpora(&plan, &loaded.descriptor),
            Err(exit) => return exit,
        },
    };
    let mut inventory = match inventory {
        Ok(inventory) => inventory,
        Err(e) => {
            let code = e.code;
            diag!("error: {e} [{code}]");
            return Exit::of(&e);
        }
    };
    if args.timestamp {
        inventory.timestamp = Some(crate::support::time::format_unix(
            crate::support::time::now_unix(),
        ));
    }
    let document = match args.format {
        SbomFormat::Cyclonedx => cyclonedx::document(&inventory),
        SbomFormat::Spdx => spdx::document(&inventory),
    };
    crate::cli::output::print_json(&document)
}
