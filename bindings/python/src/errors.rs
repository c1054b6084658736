//! The exceptions the module raises, each carrying the stable code skillfold gives the refusal
//! (the codes of `docs/error-codes.md`), so Python hosts branch on `err.code`, never on message
//! text. `SkillfoldError` is the base of all of them.

use pyo3::prelude::*;
use serde_json::json;
use skillfold::CatalogueError as RustCatalogueError;
use skillfold::ToolError as RustToolError;
use skillfold::{BuildError, OpenError};

use crate::convert::to_python;

pyo3::create_exception!(
    skillfold,
    SkillfoldError,
    pyo3::exceptions::PyException,
    "Base of every skillfold error; `code` is the stable error code."
);
pyo3::create_exception!(
    skillfold,
    ConfigurationError,
    SkillfoldError,
    "The descriptor or builder configuration breaks a rule; `problems` lists each with its code and location."
);
pyo3::create_exception!(
    skillfold,
    CatalogueError,
    SkillfoldError,
    "No catalogue for that agent (unknown agent, or over the skills bound)."
);
pyo3::create_exception!(
    skillfold,
    ToolError,
    SkillfoldError,
    "A tool call was refused; `error` is the object to hand back to the model."
);
pyo3::create_exception!(
    skillfold,
    PolicyError,
    SkillfoldError,
    "The host's policy callable raised; the original exception is the cause."
);

/// Sets `code`, `message` and the given extra attributes on a new exception instance.
fn with_attributes(
    py: Python<'_>,
    err: PyErr,
    code: &str,
    extra: &[(&str, Bound<'_, PyAny>)],
) -> PyErr {
    let value = err.value(py);
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    let set = || -> PyResult<()> {
        value.setattr("code", code)?;
        value.setattr("message", message)?;
        for (name, attribute) in extra {
            value.setattr(*name, attribute)?;
        }
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// A descriptor that could not be read or that `check` refused.
pub fn open_error(py: Python<'_>, e: &OpenError) -> PyErr {
    match e {
        OpenError::Read(read) => {
            let problems = json!([{ "code": read.code().as_str(), "location": null, "message": read.to_string() }]);
            configuration(py, read.to_string(), read.code().as_str(), &problems)
        }
        OpenError::Invalid(invalid) => build_error(py, invalid),
    }
}

/// A configuration the builder's checks refused.
pub fn build_error(py: Python<'_>, e: &BuildError) -> PyErr {
    let problems: Vec<_> = e
        .problems
        .iter()
        .map(|p| json!({ "code": p.code.as_str(), "location": p.location, "message": p.message }))
        .collect();
    let code = e.problems.first().map_or("invalid", |p| p.code.as_str());
    configuration(py, e.to_string(), code, &serde_json::Value::Array(problems))
}

fn configuration(
    py: Python<'_>,
    message: String,
    code: &str,
    problems: &serde_json::Value,
) -> PyErr {
    let extra = match to_python(py, problems) {
        Ok(list) => vec![("problems", list)],
        Err(failed) => return failed,
    };
    with_attributes(py, ConfigurationError::new_err(message), code, &extra)
}

/// No catalogue for the agent asked for.
pub fn catalogue_error(py: Python<'_>, e: &RustCatalogueError) -> PyErr {
    with_attributes(
        py,
        CatalogueError::new_err(e.to_string()),
        e.code().as_str(),
        &[],
    )
}

/// A refused tool call: `error` holds the `{code, message, valid, …}` object of the wire format.
pub fn tool_error(py: Python<'_>, e: &RustToolError) -> PyErr {
    let object = serde_json::to_value(e).unwrap_or_default();
    let extra = match to_python(py, &object) {
        Ok(error) => vec![("error", error)],
        Err(failed) => return failed,
    };
    with_attributes(
        py,
        ToolError::new_err(e.message.clone()),
        e.code.as_str(),
        &extra,
    )
}

/// The policy callable raised `cause`.
pub fn policy_error(py: Python<'_>, cause: PyErr) -> PyErr {
    let err = PolicyError::new_err("the policy callable raised an exception");
    err.set_cause(py, Some(cause));
    with_attributes(py, err, "policy_error", &[])
}

/// Adds the exception types to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SkillfoldError", py.get_type::<SkillfoldError>())?;
    m.add("ConfigurationError", py.get_type::<ConfigurationError>())?;
    m.add("CatalogueError", py.get_type::<CatalogueError>())?;
    m.add("ToolError", py.get_type::<ToolError>())?;
    m.add("PolicyError", py.get_type::<PolicyError>())?;
    Ok(())
}
