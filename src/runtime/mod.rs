//! The runtime (DESIGN §4): every source of a checked descriptor loaded as verified snapshots, and
//! the catalogue of each agent built from them. It may use the layers below it:
//! [`crate::support`], [`crate::format`], [`crate::descriptor`], [`crate::source`],
//! [`crate::corpus`] (the generations it reads and the pin check) and [`crate::skills_ref`] (the
//! prompt block).
//!
//! - [`snapshot`]: verified bundles in memory, from a corpus, a local directory or a host's own
//!   source — every pin checked again.
//! - [`catalogue`]: one agent's skills, its prompt block (rendered by [`crate::skills_ref::prompt`]) and
//!   its tools, with a policy hook.
//! - [`tools`]: the tools served to models (`load_skill`, `skill_run_script`,
//!   `skill_read_reference`), their schemas, errors and records.
//! - [`runner`]: isolated execution of an approved helper — bytes on stdin, reduced environment,
//!   own process group, timeout, output cap (its configuration is [`crate::descriptor::runner`]).
//! - [`guides`]: discovered (unpinned) skill folders, scanned without following links.
//! - [`builder`]: a runtime built in code, with a descriptor's checks and verification.
//! - [`offload`]: blocking work (a helper script) awaited from any async executor.
//!
//! Sources load in parallel. A bundle that fails verification is reported as a
//! [`LoadFailure`] and left out; every other bundle is still served, and nothing replaces the
//! one that failed. [`Runtime::load_for`] loads only what one agent needs (the CLI's `prompt` and
//! `load`); [`Runtime::load`] loads everything (`verify`, servers).

pub mod builder;
pub mod catalogue;
pub mod code;
pub mod guides;
pub mod offload;
pub mod runner;
pub mod snapshot;
pub mod tools;

use std::sync::Arc;

use crate::descriptor::Plan;
use crate::runtime::catalogue::{Catalogue, CatalogueError};
use crate::runtime::guides::Discovery;
use snapshot::{BundleLoad, LoadFailure, Snapshot};

/// Loaded snapshots, per source of the plan.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
///     .build()
///     .unwrap();
/// let runtime: skillfold::Runtime = built.runtime;
/// assert_eq!(runtime.snapshots().count(), 1);
/// assert!(runtime.catalogue(Some("nobody")).is_err());
/// ```
pub struct Runtime {
    plan: Plan,
    /// Per source index: `None` when not loaded (not needed), else its bundles.
    loaded: Vec<Option<Vec<BundleLoad>>>,
    /// The discovered skills, when a guides folder is configured (or why it could not be read).
    // A String: why is only shown (a warning of the commands that load a runtime); any failure
    // means no guides.
    guides: Option<Result<Discovery, String>>,
    /// The bundles of a host's own sources, each for an agent (`None`: every agent).
    custom: Vec<(Option<String>, Vec<BundleLoad>)>,
    /// The policy hook every catalogue applies (set by the builder).
    policy: Option<Arc<tools::Policy>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("plan", &self.plan)
            .field("loaded", &self.loaded)
            .field("guides", &self.guides)
            .field("custom", &self.custom)
            .field("policy", &self.policy.is_some())
            .finish()
    }
}

impl Runtime {
    /// Loads every source.
    pub(crate) fn load(plan: Plan) -> Runtime {
        let wanted: Vec<usize> = (0..plan.sources.len()).collect();
        Runtime::load_indices(plan, &wanted)
    }

    /// Loads the sources `agent` sees (the defaults alone for `None`). Fails for an unknown agent.
    pub(crate) fn load_for(plan: Plan, agent: Option<&str>) -> Result<Runtime, CatalogueError> {
        let wanted = indices_for(&plan, agent)?;
        Ok(Runtime::load_indices(plan, &wanted))
    }

    fn load_indices(plan: Plan, wanted: &[usize]) -> Runtime {
        let loaded_wanted =
            crate::support::parallel::map(wanted, crate::support::parallel::cores(), |&i| {
                snapshot::load_source(&plan.sources[i])
            });
        let mut loaded: Vec<Option<Vec<_>>> = (0..plan.sources.len()).map(|_| None).collect();
        for (&i, bundles) in wanted.iter().zip(loaded_wanted) {
            loaded[i] = Some(bundles);
        }
        let guides = crate::runtime::guides::effective_root(plan.guides.as_deref()).map(|root| {
            crate::runtime::guides::discover(&root)
                .map_err(|e| format!("the guides folder cannot be scanned: {e}"))
        });
        Runtime {
            plan,
            loaded,
            guides,
            custom: Vec::new(),
            policy: None,
        }
    }

    /// Adds the loaded bundles of a host's own source, for `agent` (`None`: every agent).
    pub(crate) fn add_custom(&mut self, agent: Option<String>, bundles: Vec<BundleLoad>) {
        self.custom.push((agent, bundles));
    }

    /// The policy hook every catalogue applies.
    pub(crate) fn set_policy(&mut self, policy: Option<Arc<tools::Policy>>) {
        self.policy = policy;
    }

    /// Every loaded bundle, verified or not: the plan's sources, then the host's own.
    fn all_loaded(&self) -> impl Iterator<Item = &BundleLoad> {
        self.loaded
            .iter()
            .flatten()
            .flatten()
            .chain(self.custom.iter().flat_map(|(_, bundles)| bundles))
    }

    /// The discovered skills (`None` when no guides folder is configured).
    // A String: see the field.
    pub(crate) fn guides(&self) -> Option<&Result<Discovery, String>> {
        self.guides.as_ref()
    }

    /// The agents the descriptor gives skills of their own, sorted (each has a
    /// [`Runtime::catalogue`] of its own; `None` is the default agent).
    pub fn agents(&self) -> impl Iterator<Item = &str> {
        self.plan.agents.keys().map(String::as_str)
    }

    /// The checked descriptor.
    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Every bundle that failed to load.
    pub fn failures(&self) -> impl Iterator<Item = &LoadFailure> {
        self.all_loaded().filter_map(|r| r.as_ref().err())
    }

    /// Every verified snapshot.
    pub fn snapshots(&self) -> impl Iterator<Item = &Arc<Snapshot>> {
        self.all_loaded().filter_map(|r| r.as_ref().ok())
    }

    /// The catalogue of `agent` (`None`: the defaults alone): its verified snapshots only.
    pub fn catalogue(&self, agent: Option<&str>) -> Result<Catalogue, CatalogueError> {
        let indices = indices_for(&self.plan, agent)?;
        let custom = self
            .custom
            .iter()
            .filter(|(only, _)| only.is_none() || only.as_deref() == agent)
            .flat_map(|(_, bundles)| bundles);
        let snapshots = indices
            .iter()
            .filter_map(|&i| self.loaded[i].as_ref())
            .flatten()
            .chain(custom)
            .filter_map(|r| r.as_ref().ok())
            .cloned();
        let runner = crate::descriptor::runner::RunnerConfig {
            policy: crate::descriptor::runner::ScriptPolicy::effective(&self.plan.runner.policy),
            ..self.plan.runner.clone()
        };
        let mut catalogue =
            Catalogue::bounded(agent, snapshots, self.plan.max_skills)?.with_runner(runner);
        if let Some(policy) = &self.policy {
            catalogue = catalogue.with_shared_policy(Arc::clone(policy));
        }
        if let Some(Ok(discovery)) = &self.guides {
            // Every pinned name stays reserved, loaded or not: a discovered skill never stands in
            // for a pinned one that failed verification.
            let pinned: Vec<String> = indices
                .iter()
                .flat_map(|&i| self.plan.sources[i].pins())
                .map(|p| p.name.to_string())
                .collect();
            let pinned: Vec<&str> = pinned.iter().map(String::as_str).collect();
            catalogue = catalogue.with_guides(discovery.clone().without(&pinned));
        }
        Ok(catalogue)
    }
}

/// The sources `agent` sees, or the error for an agent the descriptor does not name.
fn indices_for(plan: &Plan, agent: Option<&str>) -> Result<Vec<usize>, CatalogueError> {
    plan.agent_indices(agent)
        .map_err(|e| CatalogueError::UnknownAgent(e.to_string()))
}
