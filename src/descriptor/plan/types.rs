//! The checked plan: what [`check`](super::check) makes of a descriptor. A [`Plan`] holds every
//! [`Source`] once (a [`GitSource`], an [`OciSource`] or a [`LocalSource`], each resolved to
//! absolute directories, with its bounds and where it is written) and which agent gets which; a
//! Git or OCI source's corpus is seen through [`CorpusRef`]. What the checker refuses is a list of
//! [`DescriptorProblem`]s.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::ImageReference;
use crate::descriptor::code::DescriptorCode;
use crate::descriptor::redact::RedactedUrl;
use crate::descriptor::runner::RunnerConfig;
use crate::format::limits::Limits;
use crate::format::pin::{CommitId, Pin};
use crate::format::root_path::RootPath;
use crate::support::error_code::{ErrorCode, ExitClass};
use crate::support::escape;
use crate::trust::commit::policy::TrustPolicy;

/// One problem in the descriptor, with where it is.
///
/// ```
/// let refused = skillfold::Runtime::builder().local("x", "1", "/nowhere", "bad").build().unwrap_err();
/// let problem: &skillfold::DescriptorProblem = &refused.problems[0];
/// assert_eq!((problem.code, problem.location.as_str()), (skillfold::DescriptorCode::InvalidHash, "skills[0].local.hash"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DescriptorProblem {
    /// Stable code.
    pub code: DescriptorCode,
    /// Where in the file, e.g. `skills[0].git.approved[1].hash`.
    pub location: String,
    /// What is wrong.
    pub message: String,
    /// The 1-based line of `location` in the file, when the checker was given its text (the
    /// scanner rules' problems).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl DescriptorProblem {
    /// The problem `code` at `location`, saying `message`, its line not looked up.
    pub fn new(
        code: DescriptorCode,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> DescriptorProblem {
        DescriptorProblem {
            code,
            location: location.into(),
            message: message.into(),
            line: None,
        }
    }
}

impl fmt::Display for DescriptorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The location may name an agent as written; the message escaped its values.
        write!(
            f,
            "{}: {} [{}]",
            escape::text(&self.location),
            self.message,
            self.code
        )
    }
}

/// The code of a descriptor refused for `problems`: the worst problem's (each is listed with its
/// own), `descriptor_syntax` when there are none.
pub fn worst_code(problems: &[DescriptorProblem]) -> ErrorCode {
    problems
        .iter()
        .map(|p| ErrorCode::from(p.code))
        .max_by_key(|c| c.exit() == ExitClass::Invalid)
        .unwrap_or_else(|| DescriptorCode::DescriptorSyntax.into())
}

/// A checked Git source.
#[derive(Debug, Clone)]
pub struct GitSource {
    /// The URL as written (may be needed to fetch; never print it — use `shown`).
    pub url: String,
    /// The URL safe to print.
    pub shown: RedactedUrl,
    /// The pinned commit.
    pub revision: CommitId,
    /// The managed corpus directory (absolute).
    pub directory: PathBuf,
    /// Folder in the repository holding the bundles; `None` for the root.
    pub root: Option<RootPath>,
    /// The approved bundles, in the order written.
    pub approved: Vec<Pin>,
    /// The bounds its bundles are checked against.
    pub limits: Limits,
    /// The branch `outdated` follows (`None`: the remote's `HEAD`).
    // Only `outdated` (the Git fetcher) reads it; every build checks it.
    #[cfg_attr(
        not(feature = "git"),
        expect(dead_code, reason = "only `outdated` (the Git fetcher) reads it")
    )]
    pub track: Option<String>,
    /// Which symbolic links the commit may hold.
    pub links: crate::descriptor::Links,
    /// Who may sign the pinned commit (`verify`); `None`: signatures are not checked.
    pub trust: Option<std::sync::Arc<TrustPolicy>>,
    /// Where it is written in the descriptor.
    pub location: String,
}

/// A checked OCI image source.
#[derive(Debug, Clone)]
pub struct OciSource {
    /// The image, pinned by digest.
    pub reference: ImageReference,
    /// HTTP instead of HTTPS.
    pub plain_http: bool,
    /// The managed corpus directory (absolute).
    pub directory: PathBuf,
    /// The approved bundles, in the order written.
    pub approved: Vec<Pin>,
    /// The bounds its bundles are checked against.
    pub limits: Limits,
    /// The tag of the same repository `outdated` and `update` follow (`None`: not tracked).
    // Only `outdated` and `update` (built with the Git fetcher) follow it, through the registry
    // client (`oci`); every build checks it, and a Git build reads it even without `oci`.
    #[cfg_attr(
        not(feature = "git"),
        expect(dead_code, reason = "only `outdated` and `update` follow a tag")
    )]
    pub track: Option<String>,
    /// Who may publish the image (`verify`); `None`: the publisher is not checked.
    pub publisher: Option<std::sync::Arc<crate::trust::image::policy::PublisherPolicy>>,
    /// Where it is written in the descriptor.
    pub location: String,
}

/// What every corpus source — Git or OCI — has: a managed corpus directory that must hold the
/// approved pins, prepared from one immutable id (a commit, a manifest digest).
#[derive(Debug, Clone, Copy)]
pub struct CorpusRef<'a> {
    /// `git` or `oci`.
    pub kind: crate::descriptor::kind::SourceKind,
    /// Where it is written in the descriptor.
    pub location: &'a str,
    /// The corpus directory.
    pub directory: &'a Path,
    /// The approved bundles.
    pub approved: &'a [Pin],
    /// The bounds its bundles are checked against.
    pub limits: Limits,
    /// The commit id or manifest digest the published generation must come from.
    pub revision: &'a str,
}

impl GitSource {
    /// Its corpus.
    pub fn corpus(&self) -> CorpusRef<'_> {
        CorpusRef {
            kind: crate::descriptor::kind::SourceKind::Git,
            location: &self.location,
            directory: &self.directory,
            approved: &self.approved,
            limits: self.limits,
            revision: self.revision.as_str(),
        }
    }
}

impl OciSource {
    /// Its corpus.
    pub fn corpus(&self) -> CorpusRef<'_> {
        CorpusRef {
            kind: crate::descriptor::kind::SourceKind::Oci,
            location: &self.location,
            directory: &self.directory,
            approved: &self.approved,
            limits: self.limits,
            revision: &self.reference.digest,
        }
    }

    /// `REGISTRY/REPOSITORY`, the "URL" recorded in its corpus manifest.
    pub fn repository(&self) -> String {
        format!("{}/{}", self.reference.registry, self.reference.repository)
    }
}

/// A checked local bundle.
#[derive(Debug, Clone)]
pub struct LocalSource {
    /// Its pin.
    pub pin: Pin,
    /// The bundle directory (absolute).
    pub directory: PathBuf,
    /// The bounds the bundle is checked against.
    pub limits: Limits,
    /// Where it is written in the descriptor.
    pub location: String,
}

/// A checked source.
#[derive(Debug, Clone)]
pub enum Source {
    /// From a pinned Git commit.
    Git(GitSource),
    /// From an OCI image pinned by digest.
    Oci(OciSource),
    /// A deployed directory.
    Local(LocalSource),
}

impl Source {
    /// The pins this source provides.
    pub fn pins(&self) -> Vec<&Pin> {
        match self {
            Source::Git(g) => g.approved.iter().collect(),
            Source::Oci(o) => o.approved.iter().collect(),
            Source::Local(l) => vec![&l.pin],
        }
    }
}

/// A checked descriptor: every source once, and which agent gets which.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Every source, defaults first, then each agent's extras.
    pub sources: Vec<Source>,
    /// Indices into `sources` of the defaults.
    pub defaults: Vec<usize>,
    /// Per agent, indices into `sources` of its extras.
    pub agents: BTreeMap<String, Vec<usize>>,
    /// The script runner as the descriptor configures it (the environment may still replace
    /// its allowlist; see [`crate::descriptor::runner::ScriptPolicy::effective`]).
    pub runner: RunnerConfig,
    /// The folder of discovered skills, if the descriptor names one.
    pub guides: Option<PathBuf>,
    /// The most unique skills one effective selection may hold: 16 (the contract's bound), or
    /// the descriptor's `selection.max_skills` (at most [`MAX_SKILLS_CEILING`]). Every catalogue
    /// built from this plan is held to it.
    pub max_skills: usize,
}

/// The most `selection.max_skills` may raise the bound on one selection to.
pub const MAX_SKILLS_CEILING: usize = 1024;

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            sources: Vec::new(),
            defaults: Vec::new(),
            agents: BTreeMap::new(),
            runner: RunnerConfig::default(),
            guides: None,
            max_skills: crate::format::limits::MAX_BUNDLES_PER_CATALOGUE,
        }
    }
}

impl Plan {
    /// The Git sources.
    pub fn git_sources(&self) -> impl Iterator<Item = &GitSource> {
        self.sources.iter().filter_map(|s| match s {
            Source::Git(g) => Some(g),
            Source::Oci(_) | Source::Local(_) => None,
        })
    }

    /// The corpus of every Git and OCI source.
    pub fn corpora(&self) -> impl Iterator<Item = CorpusRef<'_>> {
        self.sources.iter().filter_map(|s| match s {
            Source::Git(g) => Some(g.corpus()),
            Source::Oci(o) => Some(o.corpus()),
            Source::Local(_) => None,
        })
    }

    /// Every OCI source.
    pub fn oci_sources(&self) -> impl Iterator<Item = &OciSource> {
        self.sources.iter().filter_map(|s| match s {
            Source::Oci(o) => Some(o),
            Source::Git(_) | Source::Local(_) => None,
        })
    }

    /// Indices into `sources` of what `agent` sees: the defaults, then its extras (`None`: the
    /// defaults alone). `None` for an agent the descriptor does not name.
    pub fn source_indices(&self, agent: Option<&str>) -> Option<Vec<usize>> {
        let extras = match agent {
            Some(agent) => self.agents.get(agent)?.as_slice(),
            None => &[],
        };
        Some(self.defaults.iter().chain(extras).copied().collect())
    }

    /// [`source_indices`](Self::source_indices), or the refusal of an agent the descriptor
    /// does not name (every caller words it so).
    pub fn agent_indices(&self, agent: Option<&str>) -> Result<Vec<usize>, super::UnknownAgent> {
        self.source_indices(agent)
            .ok_or_else(|| super::UnknownAgent::new(agent.unwrap_or_default(), self.agents.keys()))
    }

    /// The sources an agent sees: the defaults, then its extras (`None` for the defaults alone;
    /// the defaults alone too for an agent the descriptor does not name).
    #[cfg(test)]
    pub fn sources_for(&self, agent: Option<&str>) -> Vec<&Source> {
        self.source_indices(agent)
            .unwrap_or_else(|| self.defaults.clone())
            .into_iter()
            .map(|i| &self.sources[i])
            .collect()
    }
}
