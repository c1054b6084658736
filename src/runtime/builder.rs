//! A runtime built in code: [`Runtime::builder`]. Hosts register the approved bundles of each
//! agent with typed calls instead of writing a descriptor — and get exactly a descriptor's checks
//! and verification: the builder assembles a [`Descriptor`] value, checks it with
//! [`crate::descriptor::check`] (every rule and bound, every problem listed), loads it as
//! [`Runtime::load`] does (each bundle read with the safe reader and verified against its pin),
//! and adds the bundles of the host's own [`BundleSource`]s, which go through the same
//! verification. What fails to verify is returned beside the runtime, each with its reason;
//! nothing unverified is ever served.
//!
//! ```
//! use skillfold::Runtime;
//! # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
//! let built = Runtime::builder()
//!     .local(
//!         "commit-message",
//!         "1.0.0",
//!         skills.join("commit-message"),
//!         "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e",
//!     )
//!     .agent("writer", |a| {
//!         a.local(
//!             "changelog-writer",
//!             "1.0",
//!             skills.join("changelog-writer"),
//!             "e7393af7bb7c7bf3f4269983c78a83617e020853a8405cdabe465e464f64c0ce",
//!         )
//!     })
//!     .build()
//!     .expect("a valid configuration");
//! assert!(built.refused.is_empty());
//! let writer = built.runtime.catalogue(Some("writer")).expect("a catalogue");
//! assert_eq!(writer.skills().count(), 2);
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use crate::descriptor::plan::DescriptorProblem;
use crate::descriptor::runner::ApprovalSpec;
use crate::descriptor::{Descriptor, GitSpec, LocalSpec, PinSpec, ScriptsSpec, SkillSource};
use crate::runtime::Runtime;
use crate::runtime::snapshot::{BundleSource, LoadFailure};
use crate::runtime::tools::{Access, Policy};
use crate::support::error_code::ErrorCode;

/// Builds a [`Runtime`] in code; see the module documentation.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
///     .policy(|access| match access.reference {
///         Some(_) => Err("this host serves instructions only".to_owned()),
///         None => Ok(()),
///     })
///     .build()
///     .unwrap();
/// # let _ = built;
/// ```
#[must_use]
pub struct RuntimeBuilder {
    descriptor: Descriptor,
    base: PathBuf,
    custom: Vec<(Option<String>, Box<dyn BundleSource + Send>)>,
    policy: Option<Arc<Policy>>,
}

/// One agent's extras, built in [`RuntimeBuilder::agent`].
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .agent("writer", |a| a.local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e"))
///     .build()
///     .unwrap();
/// assert!(built.runtime.catalogue(None).unwrap().prompt().is_none()); // the defaults: nothing
/// assert!(built.runtime.catalogue(Some("writer")).unwrap().prompt().is_some());
/// ```
#[must_use]
pub struct AgentBuilder {
    skills: Vec<SkillSource>,
    custom: Vec<Box<dyn BundleSource + Send>>,
}

/// A prepared Git corpus and the bundles approved in it (what `skillfold prepare` published).
///
/// ```
/// use skillfold::GitCorpus;
/// let corpus = GitCorpus::new(
///     "https://git.example.com/acme/skills.git",
///     "0123456789abcdef0123456789abcdef01234567",
///     "/var/lib/skillfold/common",
/// )
/// .root("skills")
/// .approve("pdf", "1.0.0", "0".repeat(64));
/// let built = skillfold::Runtime::builder().git_corpus(corpus).build().unwrap();
/// // Not prepared here, so the bundle is refused, with the reason.
/// assert_eq!(built.refused[0].name, "pdf");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct GitCorpus {
    spec: GitSpec,
}

impl GitCorpus {
    /// The corpus `directory` prepared from `source` at the full commit id `revision`.
    pub fn new(
        source: impl Into<String>,
        revision: impl Into<String>,
        directory: impl Into<PathBuf>,
    ) -> GitCorpus {
        GitCorpus {
            spec: GitSpec {
                source: source.into(),
                revision: revision.into(),
                directory: directory.into(),
                root: None,
                approved: Vec::new(),
                limits: None,
                content: None,
                track: None,
                links: None,
                verify: None,
                require_scan: Vec::new(),
            },
        }
    }

    /// The folder of the repository holding `<name>/SKILL.md`.
    pub fn root(mut self, root: impl Into<String>) -> GitCorpus {
        self.spec.root = Some(root.into());
        self
    }

    /// Approves bundle `name` at `version` with the reviewed digest `hash`.
    pub fn approve(
        mut self,
        name: impl Into<String>,
        version: impl Into<String>,
        hash: impl Into<String>,
    ) -> GitCorpus {
        self.spec.approved.push(PinSpec {
            name: name.into(),
            version: version.into(),
            hash: hash.into(),
            scans: Vec::new(),
        });
        self
    }

    /// Checks the bundles under a limits profile (`chamvi`, `extended`, or a mapping as the
    /// descriptor writes it).
    pub fn limits(mut self, profile: impl Into<String>) -> GitCorpus {
        self.spec.limits = Some(crate::descriptor::LimitsSpec::Profile(profile.into()));
        self
    }
}

fn local_entry(name: String, version: String, directory: PathBuf, hash: String) -> SkillSource {
    SkillSource::Local(LocalSpec {
        name,
        version,
        directory,
        hash,
        limits: None,
        content: None,
        scans: Vec::new(),
        require_scan: Vec::new(),
    })
}

/// A built runtime and the bundles it refused.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built: skillfold::Built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), &"0".repeat(64))
///     .build()
///     .unwrap();
/// assert_eq!(built.refused[0].code.to_string(), "digest_mismatch"); // never served
/// assert_eq!(built.runtime.snapshots().count(), 0);
/// ```
#[derive(Debug)]
pub struct Built {
    /// The runtime: every bundle that verified.
    pub runtime: Runtime,
    /// Every bundle that did not verify, with its reason and code.
    pub refused: Vec<LoadFailure>,
}

impl From<Runtime> for Built {
    fn from(runtime: Runtime) -> Built {
        let refused = runtime.failures().cloned().collect();
        Built { runtime, refused }
    }
}

/// The configuration breaks the descriptor's rules: every problem, each naming where it is
/// (`skills[0].local`, `agents.writer.skills[1].git`) as `check` does.
///
/// ```
/// let refused = skillfold::Runtime::builder()
///     .local("Not A Name", "1", "/nowhere", "not-a-digest")
///     .build()
///     .unwrap_err();
/// let locations: Vec<&str> = refused.problems.iter().map(|p| p.location.as_str()).collect();
/// assert_eq!(locations, ["skills[0].local.name", "skills[0].local.hash"]);
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} problem(s): {}", .problems.len(), .problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct BuildError {
    /// Every problem.
    pub problems: Vec<DescriptorProblem>,
}

/// A descriptor file could not become a runtime: it could not be read or parsed, or it breaks
/// the descriptor's rules.
///
/// ```
/// match skillfold::Runtime::open("/nowhere/skillfold.yaml") {
///     Err(skillfold::OpenError::Read(e)) => assert_eq!(e.code().to_string(), "descriptor_unreadable"),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Unreadable, too large, too deep, or not a descriptor.
    #[error(transparent)]
    Read(#[from] crate::descriptor::DescriptorError),
    /// Read, but `check` refuses it.
    #[error(transparent)]
    Invalid(#[from] BuildError),
}

impl BuildError {
    /// The worst problem's code (each problem keeps its own).
    pub fn code(&self) -> ErrorCode {
        crate::descriptor::plan::worst_code(&self.problems)
    }
}

impl OpenError {
    /// The loader's code, or the worst problem's.
    pub fn code(&self) -> ErrorCode {
        match self {
            OpenError::Read(e) => e.code().into(),
            OpenError::Invalid(e) => e.code(),
        }
    }
}

crate::support::error_code::coded_by_code!(BuildError, OpenError);

impl Runtime {
    /// Reads the descriptor at `path`, checks it as `skillfold check` does and loads every bundle
    /// it approves, verified against its pin: one call from a descriptor file to a runtime.
    ///
    /// ```
    /// # let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skillfold.yaml");
    /// let built = skillfold::Runtime::open(&path)?;
    /// let not_served: Vec<String> = built.refused.iter().map(|r| format!("{} [{}]", r.name, r.code)).collect();
    /// # let _ = not_served;
    /// # Ok::<(), skillfold::OpenError>(())
    /// ```
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<Built, OpenError> {
        let loaded = crate::descriptor::load(path.as_ref())?;
        let plan = crate::descriptor::check(&loaded.descriptor, &loaded.base)
            .map_err(|problems| BuildError { problems })?;
        Ok(Built::from(Runtime::load(plan)))
    }

    /// Starts building a runtime in code (see [`RuntimeBuilder`]).
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            descriptor: Descriptor::default(),
            base: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            custom: Vec::new(),
            policy: None,
        }
    }
}

impl RuntimeBuilder {
    /// The folder relative directories are resolved against (default: the current directory).
    pub fn base(mut self, base: impl Into<PathBuf>) -> RuntimeBuilder {
        self.base = base.into();
        self
    }

    /// A deployed bundle every agent gets: `name` at `version` in `directory`, pinned to the
    /// reviewed digest `hash` (`skillfold hash DIR`).
    pub fn local(
        mut self,
        name: impl Into<String>,
        version: impl Into<String>,
        directory: impl Into<PathBuf>,
        hash: impl Into<String>,
    ) -> RuntimeBuilder {
        self.descriptor.skills.push(local_entry(
            name.into(),
            version.into(),
            directory.into(),
            hash.into(),
        ));
        self
    }

    /// A prepared Git corpus every agent gets.
    pub fn git_corpus(mut self, corpus: GitCorpus) -> RuntimeBuilder {
        self.descriptor.skills.push(SkillSource::Git(corpus.spec));
        self
    }

    /// A host's own source every agent gets; its bundles are verified like every other.
    pub fn source(mut self, source: impl BundleSource + Send + 'static) -> RuntimeBuilder {
        self.custom.push((None, Box::new(source)));
        self
    }

    /// The extras of agent `name` (on top of what every agent gets).
    pub fn agent(
        mut self,
        name: impl Into<String>,
        extras: impl FnOnce(AgentBuilder) -> AgentBuilder,
    ) -> RuntimeBuilder {
        let name = name.into();
        let built = extras(AgentBuilder {
            skills: Vec::new(),
            custom: Vec::new(),
        });
        self.descriptor
            .agents
            .entry(name.clone())
            .or_default()
            .skills
            .extend(built.skills);
        self.custom
            .extend(built.custom.into_iter().map(|s| (Some(name.clone()), s)));
        self
    }

    /// The script runner: which helpers (by SHA-256) may run.
    pub fn runner(mut self, approvals: Vec<ApprovalSpec>) -> RuntimeBuilder {
        self.descriptor.scripts = Some(ScriptsSpec {
            allowlist: approvals,
            blocklist: None,
            python: None,
            timeout_seconds: None,
        });
        self
    }

    /// Raises the bound on each agent's selection from the contract's 16 unique skills to
    /// `max_skills`, as a descriptor's `selection: { max_skills: N }` does (16 to 1,024, checked
    /// by [`RuntimeBuilder::build`]: `invalid_max_skills`, `max_skills_over_ceiling`). Each skill
    /// adds its name and description to the agent's prompt block.
    pub fn max_skills(mut self, max_skills: u64) -> RuntimeBuilder {
        self.descriptor.selection = Some(crate::descriptor::SelectionSpec {
            max_skills: Some(max_skills),
        });
        self
    }

    /// A policy hook every catalogue of the runtime applies before it serves a call.
    // A String: the host's own reason, passed on in the refusal; skillfold never matches it.
    pub fn policy(
        mut self,
        policy: impl Fn(&Access<'_>) -> Result<(), String> + Send + Sync + 'static,
    ) -> RuntimeBuilder {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Checks the configuration as `skillfold check` checks a descriptor, then loads and
    /// verifies every bundle.
    pub fn build(self) -> Result<Built, BuildError> {
        let plan = crate::descriptor::check(&self.descriptor, &self.base)
            .map_err(|problems| BuildError { problems })?;
        let mut runtime = Runtime::load(plan);
        for (agent, source) in &self.custom {
            runtime.add_custom(
                agent.clone(),
                crate::runtime::snapshot::load_custom(source.as_ref()),
            );
        }
        runtime.set_policy(self.policy);
        Ok(Built::from(runtime))
    }
}

impl AgentBuilder {
    /// A deployed bundle only this agent gets.
    pub fn local(
        mut self,
        name: impl Into<String>,
        version: impl Into<String>,
        directory: impl Into<PathBuf>,
        hash: impl Into<String>,
    ) -> AgentBuilder {
        self.skills.push(local_entry(
            name.into(),
            version.into(),
            directory.into(),
            hash.into(),
        ));
        self
    }

    /// A prepared Git corpus only this agent gets.
    pub fn git_corpus(mut self, corpus: GitCorpus) -> AgentBuilder {
        self.skills.push(SkillSource::Git(corpus.spec));
        self
    }

    /// A host's own source only this agent gets.
    pub fn source(mut self, source: impl BundleSource + Send + 'static) -> AgentBuilder {
        self.custom.push(Box::new(source));
        self
    }
}
