//! The exceptions the module raises, each carrying the stable code skillfold gives the refusal
//! (the codes of `docs/error-codes.md`), so Python hosts branch on `err.code`, never on message
//! text. `SkillfoldError` is the base of all of them.
//!
//! A message quotes what the caller passed (an unknown skill's name, a bad path): every message
//! the module raises, and every message inside `problems` and `error`, is clipped to
//! [`MAX_MESSAGE_CHARS`] characters, so an error never hands a large input back whole.

use pyo3::prelude::*;
use serde_json::json;
use skillfold::CatalogueError as RustCatalogueError;
use skillfold::ToolError as RustToolError;
use skillfold::{BuildError, OpenError};

use crate::convert::{clip_to, to_python};

/// The most characters of a message an exception carries (the rest is cut, and the cut said).
pub const MAX_MESSAGE_CHARS: usize = 1_000;

/// `message` clipped to [`MAX_MESSAGE_CHARS`].
pub fn clipped(message: &str) -> String {
    clip_to(message, MAX_MESSAGE_CHARS)
}

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
        OpenError::Invalid(invalid) => build_error(py, invalid),
        // Unreadable, too large, too deep, not a descriptor (`OpenError::Read`), or a kind of
        // failure a later version adds (the enum is non-exhaustive): one problem, its code.
        other => {
            let message = clipped(&other.to_string());
            let code = other.code();
            let problems = json!([{ "code": code.as_str(), "location": null, "message": message }]);
            configuration(py, message, code.as_str(), &problems)
        }
    }
}

/// A configuration the builder's checks refused.
pub fn build_error(py: Python<'_>, e: &BuildError) -> PyErr {
    let problems: Vec<_> = e
        .problems
        .iter()
        .map(|p| json!({ "code": p.code.as_str(), "location": clipped(&p.location), "message": clipped(&p.message) }))
        .collect();
    let code = e.problems.first().map_or("invalid", |p| p.code.as_str());
    configuration(
        py,
        clipped(&e.to_string()),
        code,
        &serde_json::Value::Array(problems),
    )
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
        CatalogueError::new_err(clipped(&e.to_string())),
        e.code().as_str(),
        &[],
    )
}

/// A refused tool call: `error` holds the `{code, message, valid, …}` object of the wire format.
pub fn tool_error(py: Python<'_>, e: &RustToolError) -> PyErr {
    let message = clipped(&e.message);
    let mut object = serde_json::to_value(e).unwrap_or_default();
    if let Some(field) = object.get_mut("message") {
        *field = message.clone().into();
    }
    let extra = match to_python(py, &object) {
        Ok(error) => vec![("error", error)],
        Err(failed) => return failed,
    };
    with_attributes(py, ToolError::new_err(message), e.code.as_str(), &extra)
}

/// The policy callable raised `cause`: an `Exception` becomes a `PolicyError` whose cause it is;
/// anything else (`KeyboardInterrupt`, `SystemExit`, `GeneratorExit`) propagates as it was
/// raised, as Python code expects of them.
pub fn policy_error(py: Python<'_>, cause: PyErr) -> PyErr {
    if !cause.is_instance_of::<pyo3::exceptions::PyException>(py) {
        return cause;
    }
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
