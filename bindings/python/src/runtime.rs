//! `skillfold.Runtime` and its builder, mirroring the Rust API: `Runtime.load(path)` reads a
//! descriptor; `Runtime.builder()` registers bundles in code (`local`, `git_corpus`, `agent`,
//! `runner`, `policy`) and `build()` applies exactly a descriptor's checks and verification.
//! Loading, reading and hashing run with the Python thread state detached.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use skillfold::ApprovalSpec;
use skillfold::{
    AgentBuilder as RustAgentBuilder, GitCorpus, RuntimeBuilder as RustRuntimeBuilder,
};

use crate::catalogue::Catalogue;
use crate::errors::{build_error, catalogue_error, open_error};
use crate::policy;

/// Verified skills loaded from a descriptor or a builder.
#[pyclass(name = "Runtime", module = "skillfold", frozen)]
pub struct Runtime {
    inner: skillfold::Runtime,
    refused: Vec<skillfold::LoadFailure>,
}

#[pymethods]
impl Runtime {
    /// Reads the descriptor at `path`, checks it and loads every approved bundle, verified
    /// against its pin. Raises `ConfigurationError` for a descriptor that breaks a rule; bundles
    /// that fail verification are left out and listed in `refused`.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Runtime> {
        let built = py
            .detach(|| skillfold::Runtime::open(&path))
            .map_err(|e| open_error(py, &e))?;
        Ok(Runtime {
            inner: built.runtime,
            refused: built.refused,
        })
    }

    /// A builder for a runtime configured in code.
    #[staticmethod]
    fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            inner: Mutex::new(Some(skillfold::Runtime::builder())),
        }
    }

    /// The catalogue of `agent` (`None`: the defaults every agent gets). Raises
    /// `CatalogueError` for an unknown agent.
    #[pyo3(signature = (agent = None))]
    fn catalogue(&self, py: Python<'_>, agent: Option<&str>) -> PyResult<Catalogue> {
        self.inner
            .catalogue(agent)
            .map(|inner| Catalogue { inner })
            .map_err(|e| catalogue_error(py, &e))
    }

    /// The agents with their own skills.
    #[getter]
    fn agents(&self) -> Vec<String> {
        self.inner.agents().map(str::to_owned).collect()
    }

    /// The bundles that did not verify: a list of `{name, location, code, reason, details,
    /// transient}`. They are never served.
    #[getter]
    fn refused<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for failure in &self.refused {
            let d = PyDict::new(py);
            d.set_item("name", &failure.name)?;
            d.set_item("location", &failure.location)?;
            d.set_item("code", failure.code.as_str())?;
            d.set_item("reason", &failure.reason)?;
            d.set_item("details", &failure.details)?;
            d.set_item("transient", failure.transient())?;
            list.append(d)?;
        }
        Ok(list)
    }

    fn __repr__(&self) -> String {
        format!(
            "<skillfold.Runtime skills={} refused={}>",
            self.inner.snapshots().count(),
            self.refused.len()
        )
    }
}

/// The most approvals one `git_corpus` or `runner` call reads: an iterable that never ends is
/// refused at this bound instead of growing the builder until memory runs out.
pub const MAX_APPROVALS: usize = 10_000;

/// The items of `approvals`, at most [`MAX_APPROVALS`] of them.
fn approvals_of<'py>(approvals: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut items = Vec::new();
    for item in approvals.try_iter()? {
        if items.len() == MAX_APPROVALS {
            return Err(PyValueError::new_err(format!(
                "more than {MAX_APPROVALS} approvals in one call"
            )));
        }
        items.push(item?);
    }
    Ok(items)
}

/// One approval: `(name, version, hash)` or `{"name", "version", "hash"}`.
fn pin_of(item: &Bound<'_, PyAny>) -> PyResult<(String, String, String)> {
    if let Ok(d) = item.cast::<PyDict>() {
        let field = |key: &str| -> PyResult<String> {
            d.get_item(key)?
                .ok_or_else(|| PyTypeError::new_err(format!("an approval needs `{key}`")))?
                .extract()
        };
        if d.len() != 3 {
            return Err(PyTypeError::new_err(
                "an approval has exactly `name`, `version` and `hash`",
            ));
        }
        return Ok((field("name")?, field("version")?, field("hash")?));
    }
    item.extract().map_err(|_| {
        PyTypeError::new_err("an approval is a (name, version, hash) tuple or a dict of those keys")
    })
}

fn git_corpus(
    source: String,
    revision: String,
    directory: PathBuf,
    approved: &Bound<'_, PyAny>,
    root: Option<String>,
    limits: Option<String>,
) -> PyResult<GitCorpus> {
    let mut corpus = GitCorpus::new(source, revision, directory);
    for item in approvals_of(approved)? {
        let (name, version, hash) = pin_of(&item)?;
        corpus = corpus.approve(name, version, hash);
    }
    if let Some(root) = root {
        corpus = corpus.root(root);
    }
    if let Some(limits) = limits {
        corpus = corpus.limits(limits);
    }
    Ok(corpus)
}

/// What an agent's extras hold until `build()`.
enum Extra {
    Local(String, String, PathBuf, String),
    Git(GitCorpus),
}

impl Extra {
    fn apply(self, a: RustAgentBuilder) -> RustAgentBuilder {
        match self {
            Extra::Local(name, version, directory, hash) => a.local(name, version, directory, hash),
            Extra::Git(corpus) => a.git_corpus(corpus),
        }
    }
}

/// The extras of one agent, filled by the callable given to `RuntimeBuilder.agent`.
#[pyclass(name = "AgentBuilder", module = "skillfold", frozen)]
pub struct AgentBuilder {
    extras: Mutex<Vec<Extra>>,
}

impl AgentBuilder {
    fn push(slf: &Bound<'_, Self>, extra: Extra) {
        slf.get()
            .extras
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(extra);
    }
}

#[pymethods]
impl AgentBuilder {
    /// A deployed bundle only this agent gets.
    fn local<'py>(
        slf: Bound<'py, Self>,
        name: String,
        version: String,
        directory: PathBuf,
        hash: String,
    ) -> Bound<'py, Self> {
        Self::push(&slf, Extra::Local(name, version, directory, hash));
        slf
    }

    /// A prepared Git corpus only this agent gets.
    #[pyo3(signature = (source, revision, directory, approved, root = None, limits = None))]
    fn git_corpus<'py>(
        slf: Bound<'py, Self>,
        source: String,
        revision: String,
        directory: PathBuf,
        approved: &Bound<'py, PyAny>,
        root: Option<String>,
        limits: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        let corpus = git_corpus(source, revision, directory, approved, root, limits)?;
        Self::push(&slf, Extra::Git(corpus));
        Ok(slf)
    }
}

/// Builds a `Runtime` in code; every method returns the builder, so calls chain.
#[pyclass(name = "RuntimeBuilder", module = "skillfold", frozen)]
pub struct RuntimeBuilder {
    inner: Mutex<Option<RustRuntimeBuilder>>,
}

impl RuntimeBuilder {
    /// Replaces the Rust builder by `step(builder)`; refuses a builder already built.
    fn step(
        slf: &Bound<'_, Self>,
        step: impl FnOnce(RustRuntimeBuilder) -> RustRuntimeBuilder,
    ) -> PyResult<()> {
        let mut inner = slf
            .get()
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let builder = inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this builder was already built"))?;
        *inner = Some(step(builder));
        Ok(())
    }
}

#[pymethods]
impl RuntimeBuilder {
    /// The folder relative directories resolve against (default: the current directory).
    fn base<'py>(slf: Bound<'py, Self>, base: PathBuf) -> PyResult<Bound<'py, Self>> {
        Self::step(&slf, |b| b.base(base))?;
        Ok(slf)
    }

    /// A deployed bundle every agent gets, verified against `hash`.
    fn local<'py>(
        slf: Bound<'py, Self>,
        name: String,
        version: String,
        directory: PathBuf,
        hash: String,
    ) -> PyResult<Bound<'py, Self>> {
        Self::step(&slf, |b| b.local(name, version, directory, hash))?;
        Ok(slf)
    }

    /// A prepared Git corpus every agent gets: `approved` lists `(name, version, hash)`.
    #[pyo3(signature = (source, revision, directory, approved, root = None, limits = None))]
    fn git_corpus<'py>(
        slf: Bound<'py, Self>,
        source: String,
        revision: String,
        directory: PathBuf,
        approved: &Bound<'py, PyAny>,
        root: Option<String>,
        limits: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        let corpus = git_corpus(source, revision, directory, approved, root, limits)?;
        Self::step(&slf, |b| b.git_corpus(corpus))?;
        Ok(slf)
    }

    /// The extras of agent `name`: `extras` is called with an `AgentBuilder` to fill.
    fn agent<'py>(
        slf: Bound<'py, Self>,
        name: String,
        extras: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let agent = Bound::new(
            py,
            AgentBuilder {
                extras: Mutex::new(Vec::new()),
            },
        )?;
        extras.call1((agent.clone(),))?;
        let filled = std::mem::take(
            &mut *agent
                .get()
                .extras
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        Self::step(&slf, |b| {
            b.agent(name, |mut a| {
                for extra in filled {
                    a = extra.apply(a);
                }
                a
            })
        })?;
        Ok(slf)
    }

    /// The helpers that may run: a list of `{"skill", "script", "sha256"}`.
    fn runner<'py>(
        slf: Bound<'py, Self>,
        approvals: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let mut specs = Vec::new();
        for item in approvals_of(approvals)? {
            let d = item.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err("an approval is a dict of `skill`, `script`, `sha256`")
            })?;
            let field = |key: &str| -> PyResult<String> {
                d.get_item(key)?
                    .ok_or_else(|| PyTypeError::new_err(format!("an approval needs `{key}`")))?
                    .extract()
            };
            specs.push(ApprovalSpec {
                skill: field("skill")?,
                script: field("script")?,
                sha256: field("sha256")?,
            });
        }
        Self::step(&slf, |b| b.runner(specs))?;
        Ok(slf)
    }

    /// A policy callable every catalogue applies before serving a call (see the package docs).
    fn policy<'py>(
        slf: Bound<'py, Self>,
        callable: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        if !callable.is_callable() {
            return Err(PyTypeError::new_err("the policy must be callable"));
        }
        let hook = policy::hook(callable.unbind());
        Self::step(&slf, |b| b.policy(hook))?;
        Ok(slf)
    }

    /// Checks the configuration as `skillfold check` checks a descriptor, then loads and
    /// verifies every bundle. Raises `ConfigurationError` listing every problem.
    fn build(&self, py: Python<'_>) -> PyResult<Runtime> {
        let builder = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this builder was already built"))?;
        let built = py
            .detach(|| builder.build())
            .map_err(|e| build_error(py, &e))?;
        Ok(Runtime {
            inner: built.runtime,
            refused: built.refused,
        })
    }
}
