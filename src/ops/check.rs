//! `skillfold check`: load the descriptor and run every static check. Also the first step of
//! every command that reads the descriptor.

use std::path::{Path, PathBuf};

use crate::descriptor::code::DescriptorCode;
use crate::descriptor::{self, DescriptorProblem, Loaded, Plan};
use crate::support::escape;

/// Why the descriptor cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// Unreadable or not a descriptor.
    #[error(transparent)]
    Load(#[from] descriptor::DescriptorError),
    /// Parsed, but with problems (all of them listed).
    #[error("{} problem(s) in `{}`", .problems.len(), escape::path(.path))]
    Problems {
        /// The descriptor's path.
        path: PathBuf,
        /// Every problem.
        problems: Vec<DescriptorProblem>,
    },
}

impl CheckError {
    /// Every problem as one line: `PATH: LOCATION: MESSAGE [CODE]` (`PATH:LINE: …` when the
    /// problem knows its line).
    pub fn lines(&self) -> Vec<String> {
        match self {
            CheckError::Load(e) => vec![format!("{e} [{}]", e.code())],
            CheckError::Problems { path, problems } => problems
                .iter()
                .map(|p| match p.line {
                    Some(line) => format!("{}:{line}: {p}", escape::path(path)),
                    None => format!("{}: {p}", escape::path(path)),
                })
                .collect(),
        }
    }
}

impl CheckError {
    /// Under a syntax error, the offending line and a caret under its column (none otherwise).
    pub fn excerpt_lines(&self) -> Vec<String> {
        match self {
            CheckError::Load(e) => e.excerpt_lines(),
            CheckError::Problems { .. } => Vec::new(),
        }
    }
}

impl crate::support::error_code::Coded for CheckError {
    /// The descriptor's code: the loader's, or the worst of the problems' (each is listed with
    /// its own in [`CheckError::lines`]).
    fn error_code(&self) -> crate::support::error_code::ErrorCode {
        match self {
            CheckError::Load(e) => e.code().into(),
            CheckError::Problems { problems, .. } => crate::descriptor::plan::worst_code(problems),
        }
    }
}

/// Loads and checks the descriptor at `path`.
pub fn load_plan(path: &Path) -> Result<(Loaded, Plan), CheckError> {
    check_loaded(descriptor::load(path)?)
}

/// Checks a loaded descriptor.
pub fn check_loaded(loaded: Loaded) -> Result<(Loaded, Plan), CheckError> {
    let plan = descriptor::check(&loaded.descriptor, &loaded.base).map_err(|mut problems| {
        // The scanner rules name the line too: a verdict is reviewed where it is written.
        for p in &mut problems {
            if matches!(
                p.code,
                DescriptorCode::ScanMissing
                    | DescriptorCode::InvalidScan
                    | DescriptorCode::InvalidScanner
            ) {
                p.line = descriptor::line::line_of(&loaded.text, &p.location);
            }
        }
        CheckError::Problems {
            path: loaded.path.clone(),
            problems,
        }
    })?;
    Ok((loaded, plan))
}

/// [`check_loaded`] without the scan policy ([`descriptor::plan::without_scan_policy`]): what
/// `update` reviews and rewrites under, since a new hash has no verdict until it is scanned.
#[cfg(feature = "git")]
pub fn check_loaded_for_review(mut loaded: Loaded) -> Result<(Loaded, Plan), CheckError> {
    let full = loaded.descriptor.clone();
    loaded.descriptor = descriptor::plan::without_scan_policy(&full);
    let (mut loaded, plan) = check_loaded(loaded)?;
    loaded.descriptor = full;
    Ok((loaded, plan))
}

/// A one-paragraph summary of a checked plan.
pub fn summary(plan: &Plan) -> String {
    let gits = plan.git_sources().count();
    let images = plan.oci_sources().count();
    let locals = plan.sources.len() - gits - images;
    // Distinct pins: two agents' own bundles under one name are two skills.
    let names: std::collections::BTreeSet<&crate::format::pin::Pin> = plan
        .sources
        .iter()
        .flat_map(crate::descriptor::plan::Source::pins)
        .collect();
    let agents: Vec<&str> = plan.agents.keys().map(String::as_str).collect();
    let images = if images > 0 {
        format!("{images} oci source(s), ")
    } else {
        String::new()
    };
    // A raised bound is said: it is what each agent's prompt block may now grow to.
    let bound = if plan.max_skills == crate::format::limits::MAX_BUNDLES_PER_CATALOGUE {
        String::new()
    } else {
        format!("; at most {} skills per selection", plan.max_skills)
    };
    format!(
        "{gits} git source(s), {images}{locals} local bundle(s), {} unique skill(s); agents: {}{bound}",
        names.len(),
        if agents.is_empty() {
            "none (defaults only)".to_owned()
        } else {
            agents.join(", ")
        }
    )
}
