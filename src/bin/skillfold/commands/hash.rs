//! `skillfold hash DIR...`: check bundles and print their digests.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;
use skillfold::bundle::{Bundle, LoadError};
use skillfold::digest::BundleDigest;
use skillfold::ops::hash::{self, HashReport};

use crate::exit::Exit;

/// Check bundle directories and print their `chamvi-skill-bundle-v1` digests.
///
/// Every rule of the bundle format is checked: `SKILL.md` frontmatter (strict YAML, `name`,
/// `description`), UTF-8 text files without NUL bytes, no symlinks, special files or hidden
/// paths, and every size bound. All problems are printed on stderr, one per line, as
/// `error: DIR/PATH: what is wrong [code]`.
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
    skillfold hash --expect 8a531fcd...b9f9e examples/skills/csv-profiler"
)]
pub struct HashArgs {
    /// Bundle directories (each holds `SKILL.md` at its root).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,

    /// Print a JSON report instead: `{name, description, hash, ignored_fields, files: [{path,
    /// size, sha256}], warnings}`; an array of them for several directories.
    #[arg(long)]
    json: bool,

    /// Exit 2 unless the digest equals HASH (64 lowercase hex digits). One directory only.
    #[arg(long, value_name = "HASH", value_parser = parse_digest)]
    expect: Option<BundleDigest>,
}

fn parse_digest(s: &str) -> Result<BundleDigest, String> {
    s.parse()
        .map_err(|e: skillfold::digest::DigestParseError| e.to_string())
}

pub fn run(args: HashArgs) -> Exit {
    if args.expect.is_some() && args.dirs.len() != 1 {
        eprintln!(
            "error: --expect takes exactly one DIR (got {})",
            args.dirs.len()
        );
        return Exit::Invalid;
    }
    let results = hash::check_dirs(&args.dirs);
    let mut exit = Exit::Ok;
    let mut reports = Vec::new();
    let mut lines = String::new();
    for (dir, result) in args.dirs.iter().zip(results) {
        let shown = dir.display().to_string();
        match result {
            Ok(bundle) => {
                print_warnings(&shown, &bundle);
                if let Some(expected) = args.expect
                    && expected != bundle.digest()
                {
                    eprintln!(
                        "error: {shown}: digest mismatch: expected {expected}, computed {} [digest_mismatch]",
                        bundle.digest()
                    );
                    exit = Exit::Invalid;
                    continue;
                }
                if args.json {
                    reports.push(HashReport::of(&bundle));
                } else if args.dirs.len() == 1 {
                    lines.push_str(&format!("{}\n", bundle.digest()));
                } else {
                    lines.push_str(&format!("{}  {shown}\n", bundle.digest()));
                }
            }
            Err(LoadError::Invalid(invalid)) => {
                for problem in invalid.problems.as_slice() {
                    let level = if problem.is_error() {
                        "error"
                    } else {
                        "warning"
                    };
                    eprintln!("{level}: {}", problem.display_under(&shown));
                }
                exit = Exit::Invalid;
            }
            Err(LoadError::Read(e)) => {
                eprintln!("error: {e} [{}]", e.code());
                exit = worse(
                    exit,
                    if e.code() == "io_error" {
                        Exit::Retryable
                    } else {
                        Exit::Invalid
                    },
                );
            }
            Err(other) => {
                eprintln!("error: {shown}: {other} [{}]", other.code());
                exit = Exit::Invalid;
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        let json = if args.dirs.len() == 1 {
            reports.first().map(serde_json::to_string_pretty)
        } else {
            Some(serde_json::to_string_pretty(&reports))
        };
        match json {
            Some(Ok(text)) => writeln!(out, "{text}"),
            Some(Err(e)) => Err(std::io::Error::other(e)),
            None => Ok(()),
        }
    } else {
        out.write_all(lines.as_bytes())
    };
    if written.and_then(|()| out.flush()).is_err() {
        return worse(exit, Exit::Retryable);
    }
    exit
}

fn print_warnings(shown: &str, bundle: &Bundle) {
    for w in bundle.warnings() {
        eprintln!("warning: {}", w.display_under(shown));
    }
}

/// Invalid input outranks a transient failure: rerunning would not fix it.
fn worse(a: Exit, b: Exit) -> Exit {
    if a == Exit::Invalid || b == Exit::Invalid {
        Exit::Invalid
    } else if a == Exit::Retryable || b == Exit::Retryable {
        Exit::Retryable
    } else {
        Exit::Ok
    }
}
