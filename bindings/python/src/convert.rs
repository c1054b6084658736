//! JSON values between Python and Rust: tool arguments in (a `dict` or a JSON string, as model
//! APIs hand them over), tool outputs, records and definitions out. Only JSON's types cross:
//! anything else is a `TypeError` naming the type and where it was found; nesting is bounded so
//! that a hostile argument cannot exhaust the native stack.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// The deepest nesting accepted from Python (tool inputs are two levels deep).
pub const MAX_DEPTH: usize = 64;

/// The longest JSON text accepted as arguments, in bytes (a tool input is far smaller).
pub const MAX_JSON_BYTES: usize = 1 << 20;

/// A Rust JSON value as Python objects (`dict`, `list`, `str`, `int`, `float`, `bool`, `None`).
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            (None, None) => PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Tool arguments from Python: a JSON value, or a `str` holding JSON text (what OpenAI's
/// `function.arguments` is).
pub fn arguments(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(text) = obj.cast::<PyString>() {
        let text: String = text.extract()?;
        if text.len() > MAX_JSON_BYTES {
            return Err(PyValueError::new_err(format!(
                "arguments: {} bytes of JSON text, over the bound of {MAX_JSON_BYTES}",
                text.len()
            )));
        }
        return serde_json::from_str(&text)
            .map_err(|e| PyValueError::new_err(format!("arguments: not JSON: {e}")));
    }
    from_python(obj, "arguments", 0)
}

/// A Python object as a JSON value; `at` names where it is, for the error.
pub fn from_python(obj: &Bound<'_, PyAny>, at: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "{at}: nested deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        return obj.extract::<u64>().map(Value::from).map_err(|_| {
            PyValueError::new_err(format!("{at}: integer out of JSON's 64-bit range"))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| {
                PyValueError::new_err(format!("{at}: {} is not a JSON number", f.value()))
            });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.extract()?));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(from_python(&item?, &format!("{at}[{i}]"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{at}: keys must be str, not {}",
                    type_name(&key)
                )));
            };
            let key: String = key.extract()?;
            let value = from_python(&item, &format!("{at}[{key:?}]"), depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    Err(PyTypeError::new_err(format!(
        "{at}: {} is not a JSON value (dict, list, tuple, str, int, float, bool or None)",
        type_name(obj)
    )))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an object".to_owned(), |n| n.to_string())
}
