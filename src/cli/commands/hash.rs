//! `skillfold hash DIR...`: check bundles and print their digests.

use std::path::{Path, PathBuf};

use crate::format::bundle::{Bundle, BundleError};
use crate::format::code::PinCode;
use crate::format::digest::BundleDigest;
use crate::format::limits::Limits;
use crate::ops::hash::{self, HashRefusal, HashReport};
use crate::support::escape;
use clap::Args;

use crate::cli::exit::{self, Exit};
use crate::codes::CommandCode;

/// Check bundle directories and print their `chamvi-skill-bundle-v1` digests.
///
/// Every rule of the bundle format is checked: `SKILL.md` frontmatter (strict YAML, `name`,
/// `description`), UTF-8 text files without NUL bytes, no symlinks, special files or hidden
/// paths, and every size bound of the limits profile (`chamvi` unless `--limits` names
/// another; the digest never depends on it). Problems are printed on stderr, one per line, as
/// `error: DIR/PATH: what is wrong [code]`: the first ten, then how many more (`--json` lists
/// them all), and a `hint:` line when `--limits extended` would accept them.
///
/// With one directory the digest alone is printed; with several, `DIGEST  DIR` per line, as
/// `sha256sum` does. Pin the digest in `skillfold.yaml` after reviewing the bundle's bytes.
///
/// Exit status: 0 every bundle is valid (and matches `--expect`); 2 a bundle is invalid, a
/// directory is missing, or the digest differs from `--expect`; 1 an I/O error.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skillfold hash examples/skills/csv-profiler\n  \
    skillfold hash examples/skills/*\n  skillfold hash --json examples/skills/csv-profiler\n  \
    skillfold hash --expect 8a531fcd...b9f9e examples/skills/csv-profiler\n  \
    skillfold hash --limits extended skills/docx\n  \
    skillfold hash --limits file_bytes=1MiB,binary=true skills/theme-factory"
)]
pub struct HashArgs {
    /// Bundle directories (each holds `SKILL.md` at its root).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,

    /// Print a JSON report instead: `{name, description, hash, ignored_fields, files: [{path,
    /// size, sha256}], warnings}`, or `{directory, code, message, problems, hint}` for a refused
    /// directory; an array of them for several directories.
    #[arg(long)]
    json: bool,

    /// Exit 2 unless the digest equals HASH (64 lowercase hex digits). One directory only.
    #[arg(long, value_name = "HASH", value_parser = parse_digest)]
    expect: Option<BundleDigest>,

    /// Review under a limits profile: `chamvi` (the default contract), `extended` (256 KiB
    /// `SKILL.md`, 8 MiB files, 32 MiB and 1,024 files a bundle, binary files), or
    /// `key=value,…` of `skill_md_bytes`, `file_bytes`, `bundle_bytes`, `files`, `binary`
    /// (between the chamvi values and the hard ceilings). Write the same `limits:` on the
    /// source in `skillfold.yaml`.
    #[arg(long, value_name = "PROFILE", default_value = "chamvi", value_parser = parse_limits)]
    limits: Limits,
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
pub(crate) fn parse_limits(s: &str) -> Result<Limits, String> {
    Limits::parse(s).map_err(|e| e.to_string())
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_digest(s: &str) -> Result<BundleDigest, String> {
    s.parse()
        .map_err(|e: crate::format::digest::DigestParseError| e.to_string())
}

pub fn run(args: HashArgs) -> Exit {
    if args.expect.is_some() && args.dirs.len() != 1 {
        let code = CommandCode::InvalidUsage;
        diag!(
            "error: --expect takes exactly one DIR (got {}) [{code}]",
            args.dirs.len()
        );
        return exit::of(code);
    }
    let results = hash::check_dirs(&args.dirs, args.limits);
    let mut exit = Exit::Ok;
    let mut reports = Vec::new();
    let mut lines = String::new();
    for (dir, result) in args.dirs.iter().zip(results) {
        let shown = escape::path(dir);
        match result {
            Ok(bundle) => {
                print_warnings(dir, &bundle);
                if let Some(expected) = args.expect
                    && expected != bundle.digest()
                {
                    let code = PinCode::DigestMismatch;
                    diag!(
                        "error: {shown}: digest mismatch: expected {expected}, computed {} [{code}]",
                        bundle.digest()
                    );
                    exit = exit.worse(exit::of(code));
                    continue;
                }
                if args.json {
                    reports.push(Report::Valid(HashReport::of(&bundle)));
                } else if args.dirs.len() == 1 {
                    lines.push_str(&format!("{}\n", bundle.digest()));
                } else {
                    // `sha256sum` style; a name that needs escaping is shown escaped here too.
                    lines.push_str(&format!("{}  {shown}\n", bundle.digest()));
                }
            }
            Err(error) => {
                if let BundleError::Invalid(invalid) = &error {
                    let problems = invalid.problems.as_slice();
                    let lines: Vec<String> = problems
                        .iter()
                        .map(|problem| {
                            let level = if problem.is_error() {
                                "error"
                            } else {
                                "warning"
                            };
                            format!("{level}: {}", problem.display_under(dir))
                        })
                        .collect();
                    let hint = hash::hint(problems);
                    crate::cli::output::details("", &lines, hint.as_ref());
                } else {
                    diag!("error: {error} [{}]", error.code());
                }
                exit = exit.worse(exit::of(error.code()));
                if args.json {
                    reports.push(Report::Refused(HashRefusal::of(dir, &error)));
                }
            }
        }
    }
    if args.json {
        let printed = if args.dirs.len() == 1 {
            reports.first().map(crate::cli::output::print_json)
        } else {
            Some(crate::cli::output::print_json(&reports))
        };
        return printed.map_or(exit, |printed| exit.worse(printed));
    }
    if lines.is_empty() {
        return exit;
    }
    exit.worse(crate::cli::output::print(&lines))
}

/// One directory of `hash --json`: its report, or why it is refused.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Report {
    Valid(HashReport),
    Refused(HashRefusal),
}

fn print_warnings(dir: &Path, bundle: &Bundle) {
    for w in bundle.warnings() {
        diag!("warning: {}", w.display_under(dir));
    }
}
