//! Running a scanner at review time (`pin --scan NAME`; docs/scanners.md): the verdict of one
//! declared scanner on one verified bundle, to be recorded beside its pin.
//!
//! The steps, in order, each with its own refusal:
//! 1. [`resolve`] the executable: `command[0]` as the descriptor resolves it, a bare name looked
//!    up on PATH now; its SHA-256 is the `digest` recorded, and that very path is what runs.
//! 2. [`stage::Staged`]: a read-only copy of exactly the bundle's verified bytes in a fresh
//!    temporary folder.
//! 3. Run it as the script runner runs a helper ([`crate::support::confined`]): no shell, the
//!    bundle folder appended as the last argument and as the working directory, a reduced
//!    environment, no descriptor of skillfold's, its own process group killed at the timeout,
//!    past [`OUTPUT_CAP`] bytes of output and when it exits.
//! 4. Judge the exit status: 0 is `pass`, 1 is `findings`; any other status, a signal, the
//!    timeout or the output cap is a failed scan ([`ScanError`], `scan_failed`): the scanner
//!    failed, not the bundle, and nothing is recorded.
//! 5. Check the copy is unchanged ([`stage::Staged::unchanged`]); a scanner that changed it
//!    gives no verdict.
//! 6. Summarise what it printed in one bounded, escaped line ([`summary`]).
//!
//! `prepare`, `install` and the runtime never come here: they only read recorded verdicts.

pub mod stage;
pub mod summary;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::descriptor::scanners::{ScanSpec, Scanner, Verdict};
use crate::format::bundle::Bundle;
use crate::source::code::PrepareCode;
use crate::support::confined::{self, RunError, RunLimits, RunOutcome};
use crate::support::error_code::ErrorCode;
use crate::support::escape;

/// Bytes of stdout and stderr together a scanner may print.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// A verdict, ready to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Scanned {
    /// The scanner's name.
    pub scanner: String,
    /// `pass` or `findings`.
    pub verdict: Verdict,
    /// The recorded entry (`scans:`), bound to the bundle's hash.
    pub record: ScanSpec,
}

/// Why a scanner gave no verdict.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The executable is not found (on PATH, for a bare name) or cannot be read.
    #[error("scanner `{scanner}`: cannot use `{}`: {why}", escape::path(.program))]
    Program {
        /// The scanner.
        scanner: String,
        /// The executable as configured.
        program: PathBuf,
        /// Why, escaped.
        why: String,
    },
    /// The read-only copy could not be made.
    #[error("scanner `{scanner}`: cannot stage the bundle: {}", escape::text(&.source.to_string()))]
    Stage {
        /// The scanner.
        scanner: String,
        /// Why.
        source: std::io::Error,
    },
    /// The scanner could not be started.
    #[error("scanner `{scanner}`: {}", escape::text(&.source.to_string()))]
    Start {
        /// The scanner.
        scanner: String,
        /// Why.
        source: RunError,
    },
    /// It ran past its timeout; its process group was killed.
    #[error("scanner `{scanner}` ran past its timeout of {seconds} s and was killed")]
    TimedOut {
        /// The scanner.
        scanner: String,
        /// The timeout.
        seconds: u64,
    },
    /// It printed more than [`OUTPUT_CAP`] bytes; its process group was killed.
    #[error("scanner `{scanner}` printed more than {OUTPUT_CAP} bytes and was killed")]
    OutputLimit {
        /// The scanner.
        scanner: String,
    },
    /// It exited with a status other than 0 (pass) or 1 (findings), or died by a signal.
    #[error("scanner `{scanner}` {} (0 is pass, 1 is findings): {summary}", status_text(*.code))]
    Status {
        /// The scanner.
        scanner: String,
        /// Its exit status (`-1` for a signal).
        code: i32,
        /// What it printed, in one bounded escaped line.
        summary: String,
    },
    /// The copy of the bundle it was given changed while it ran.
    #[error("scanner `{scanner}` changed its read-only copy of the bundle; no verdict is taken")]
    Changed {
        /// The scanner.
        scanner: String,
    },
}

fn status_text(code: i32) -> String {
    if code < 0 {
        "was killed by a signal".to_owned()
    } else {
        format!("exited with status {code}")
    }
}

impl ScanError {
    /// Stable error code: `scan_failed` (exit 1: the scanner failed, not the bundle).
    pub fn code(&self) -> ErrorCode {
        PrepareCode::ScanFailed.into()
    }
}

crate::support::error_code::coded_by_code!(ScanError);

/// Why `--scan NAME` names no usable scanner.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeclaredError {
    /// The descriptor cannot be read.
    #[error(transparent)]
    Load(#[from] crate::descriptor::DescriptorError),
    /// Its `scanners` break a rule (each problem listed).
    #[error("{}", .problems.iter().map(|p| format!("{}: {p}", escape::path(.path))).collect::<Vec<_>>().join("; "))]
    Problems {
        /// The descriptor.
        path: PathBuf,
        /// Every problem.
        problems: Vec<crate::descriptor::DescriptorProblem>,
    },
    /// It declares no scanner of that name.
    #[error(
        "`--scan {}`: `{}` declares no such scanner in `scanners` (declared: {})",
        escape::text(.name),
        escape::path(.path),
        if .declared.is_empty() { "none".to_owned() } else { .declared.join(", ") }
    )]
    Unknown {
        /// The name given.
        name: String,
        /// The descriptor.
        path: PathBuf,
        /// The names it declares.
        declared: Vec<String>,
    },
}

impl DeclaredError {
    /// Stable error code: the loader's, else `invalid_scanner`.
    pub fn code(&self) -> ErrorCode {
        match self {
            DeclaredError::Load(e) => e.code().into(),
            DeclaredError::Problems { .. } | DeclaredError::Unknown { .. } => {
                crate::descriptor::code::DescriptorCode::InvalidScanner.into()
            }
        }
    }
}

crate::support::error_code::coded_by_code!(DeclaredError);

/// The scanners `names` of the descriptor at `config`, in the order given. Only its `scanners`
/// are checked: a descriptor `check` refuses for a missing verdict is what a scan repairs.
pub fn declared(config: &Path, names: &[String]) -> Result<Vec<Scanner>, DeclaredError> {
    let loaded = crate::descriptor::load(config)?;
    let scanners =
        crate::descriptor::plan::resolve_scanners(&loaded.descriptor.scanners, &loaded.base)
            .map_err(|problems| DeclaredError::Problems {
                path: config.to_owned(),
                problems,
            })?;
    names
        .iter()
        .map(|name| {
            scanners
                .get(name)
                .cloned()
                .ok_or_else(|| DeclaredError::Unknown {
                    name: name.clone(),
                    path: config.to_owned(),
                    declared: scanners.keys().cloned().collect(),
                })
        })
        .collect()
}

/// The executable `scanner` runs, and its `sha256:` digest.
pub fn resolve(scanner: &Scanner) -> Result<(PathBuf, String), ScanError> {
    let refuse = |why: String| ScanError::Program {
        scanner: scanner.name.clone(),
        program: scanner.program.clone(),
        why,
    };
    let program = if scanner.program.components().count() > 1 {
        scanner.program.clone()
    } else {
        on_path(&scanner.program).ok_or_else(|| refuse("not found on PATH".to_owned()))?
    };
    let digest =
        sha256_file(&program).map_err(|e| refuse(escape::text(&e.to_string()).to_string()))?;
    Ok((program, format!("sha256:{digest}")))
}

/// The first executable file named `name` in a folder of PATH.
fn on_path(name: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            fs_err::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The SHA-256 of the file at `path` (following links: the bytes that run), in hex.
fn sha256_file(path: &Path) -> std::io::Result<String> {
    use sha2::Digest as _;
    let mut file = fs_err::File::open(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(crate::support::hex::encode(&hasher.finalize()))
}

/// Runs `scanner` on `bundle` (the steps of the module) and returns its verdict.
pub fn scan(scanner: &Scanner, bundle: &Bundle) -> Result<Scanned, ScanError> {
    let name = || scanner.name.clone();
    let (program, digest) = resolve(scanner)?;
    let staged = stage::Staged::new(bundle).map_err(|source| ScanError::Stage {
        scanner: name(),
        source,
    })?;
    let mut command = confined::command(program.as_os_str(), staged.folder(), &[]);
    command.args(&scanner.args).arg(staged.folder());
    let limits = RunLimits {
        timeout: scanner.timeout,
        output_cap: OUTPUT_CAP,
    };
    let outcome =
        confined::run(command, Vec::new(), limits).map_err(|source| ScanError::Start {
            scanner: name(),
            source,
        })?;
    let (code, stdout, stderr) = match outcome {
        RunOutcome::Exited {
            code,
            stdout,
            stderr,
        } => (code, stdout, stderr),
        RunOutcome::TimedOut => {
            return Err(ScanError::TimedOut {
                scanner: name(),
                seconds: scanner.timeout.as_secs(),
            });
        }
        RunOutcome::OutputLimit => return Err(ScanError::OutputLimit { scanner: name() }),
    };
    let summary = summary::summary(&stdout, &stderr, code);
    let verdict = match code {
        0 => Verdict::Pass,
        1 => Verdict::Findings,
        _ => {
            return Err(ScanError::Status {
                scanner: name(),
                code,
                summary,
            });
        }
    };
    if !staged.unchanged(bundle) {
        return Err(ScanError::Changed { scanner: name() });
    }
    let at = crate::support::time::format_unix(crate::support::time::now_unix());
    Ok(Scanned {
        scanner: name(),
        verdict,
        record: ScanSpec {
            scanner: name(),
            digest,
            verdict,
            hash: bundle.digest().to_string(),
            at,
            summary,
        },
    })
}
