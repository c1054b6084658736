//! `skillfold.Catalogue`: one agent's verified skills, the prompt block, the tool definitions in
//! the shape a model API wants, and tool calls. The Python thread state is detached while a call
//! is served (reading, hashing, running a helper), so other Python threads run meanwhile.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use skillfold::ToolFormat;

use crate::convert::{self, to_python};
use crate::errors::{policy_error, tool_error};
use crate::policy::take_raised;

/// One agent's skills and the tools that serve them.
#[pyclass(name = "Catalogue", module = "skillfold", frozen)]
pub struct Catalogue {
    pub(crate) inner: skillfold::Catalogue,
}

#[pymethods]
impl Catalogue {
    /// The agent this catalogue serves (`None` for the defaults).
    #[getter]
    fn agent(&self) -> Option<&str> {
        self.inner.agent()
    }

    /// The skills: a list of `{name, version, hash, description}`.
    fn skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for snapshot in self.inner.skills() {
            let pin = snapshot.pin();
            let d = PyDict::new(py);
            d.set_item("name", pin.name.as_str())?;
            d.set_item("version", pin.version.to_string())?;
            d.set_item("hash", pin.hash.to_string())?;
            d.set_item("description", snapshot.description())?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The block for the system prompt (`None` when the agent has no skills).
    fn prompt(&self) -> Option<String> {
        self.inner.prompt()
    }

    /// The tool definitions in the shape of `format`: `"openai"` (Chat Completions),
    /// `"openai-responses"`, `"anthropic"` or `"mcp"`.
    #[pyo3(signature = (format = "openai"))]
    fn tools<'py>(&self, py: Python<'py>, format: &str) -> PyResult<Bound<'py, PyAny>> {
        let Some(format) = ToolFormat::from_name(format) else {
            let names: Vec<&str> = ToolFormat::ALL.iter().map(|(n, _)| *n).collect();
            return Err(PyValueError::new_err(format!(
                "unknown tool format {}; one of: {}",
                convert::quoted(format),
                names.join(", ")
            )));
        };
        to_python(py, &format.tools(&self.inner.tools()))
    }

    /// Serves one tool call. `arguments` is a `dict` (or the JSON text of an object, as OpenAI
    /// returns it), held to the bounds of [`convert`]; a `KeyboardInterrupt` or `SystemExit`
    /// raised by the policy callable propagates as it is.
    /// Returns `(output, record)`: the JSON output for the model and the record of exactly what
    /// was served, for the host. Raises `ToolError` (with `.code` and `.error`) when refused.
    fn call<'py>(
        &self,
        py: Python<'py>,
        tool: &str,
        arguments: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let input = convert::arguments(arguments)?;
        let catalogue = &self.inner;
        let outcome = py.detach(|| catalogue.call(tool, &input));
        if let Some(raised) = take_raised() {
            return Err(policy_error(py, raised));
        }
        match outcome {
            Ok((output, record)) => {
                let record = serde_json::to_value(&record).unwrap_or_default();
                PyTuple::new(py, [to_python(py, &output)?, to_python(py, &record)?])
            }
            Err(refused) => Err(tool_error(py, &refused)),
        }
    }

    fn __repr__(&self) -> String {
        let names: Vec<String> = self
            .inner
            .skills()
            .map(|s| s.pin().name.to_string())
            .collect();
        format!(
            "<skillfold.Catalogue agent={:?} skills={names:?}>",
            self.inner.agent()
        )
    }
}
