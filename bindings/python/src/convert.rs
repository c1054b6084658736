//! JSON values between Python and Rust: tool arguments in (a `dict` or a JSON string, as model
//! APIs hand them over), tool outputs, records and definitions out. Only JSON's types cross:
//! anything else is a `TypeError` naming the type and where it was found.
//!
//! Arguments are bounded before they cost anything: at most [`MAX_DEPTH`] levels of nesting (the
//! native stack), [`MAX_NODES`] values in all (a list that holds itself twice, twenty times over,
//! is 2^20 values from a few objects: it is counted as such, and refused), and [`MAX_JSON_BYTES`]
//! of text (a JSON string's length; the strings and keys of Python objects added up). The top
//! level is an object: tool arguments are named, never positional.
//!
//! Only the exact built-in containers are read (`dict`, `list`, `tuple`); a subclass is refused,
//! because reading it could run its code (`__iter__`, `__len__`, `items`) in the middle of the
//! conversion. Scalars of `str`, `int` and `float` subclasses (`enum.StrEnum`, `enum.IntEnum`)
//! are read by value, which runs none of their code. A `dict` is read from a snapshot of its items
//! taken in one step, so nothing that runs meanwhile can change it under the reader.
//!
//! Error messages name where the value was (`arguments["name"][3]`) with every quoted key
//! clipped, so an error never repeats a large input back.

use std::fmt;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// The deepest nesting accepted from Python (tool inputs are two levels deep).
pub const MAX_DEPTH: usize = 64;

/// The most values (objects, arrays, strings, numbers, booleans, nulls) one argument may hold,
/// counting a value as often as it is reached (a tool input holds a few dozen).
pub const MAX_NODES: usize = 10_000;

/// The longest JSON text accepted as arguments, in bytes, and the most UTF-8 bytes the strings
/// and keys of a Python argument may hold in all (a tool input is far smaller).
pub const MAX_JSON_BYTES: usize = 1 << 20;

/// The most characters of an input an error message quotes.
pub const MAX_QUOTED_CHARS: usize = 64;

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

/// Tool arguments from Python: a `dict`, or a `str` holding the JSON text of an object (what
/// OpenAI's `function.arguments` is). Both are held to the same bounds.
pub fn arguments(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(text) = obj.cast::<PyString>() {
        // An exact `str` tells its length without running code: refuse a long text uncopied.
        if obj.is_exact_instance_of::<PyString>() && obj.len()? > MAX_JSON_BYTES {
            return Err(PyValueError::new_err(format!(
                "arguments: JSON text over the bound of {MAX_JSON_BYTES} bytes"
            )));
        }
        let text: String = text.extract()?;
        if text.len() > MAX_JSON_BYTES {
            return Err(PyValueError::new_err(format!(
                "arguments: {} bytes of JSON text, over the bound of {MAX_JSON_BYTES}",
                text.len()
            )));
        }
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| PyValueError::new_err(format!("arguments: not JSON: {e}")))?;
        if !value.is_object() {
            return Err(PyValueError::new_err(format!(
                "arguments: the JSON text holds {}, not an object of named arguments",
                kind(&value)
            )));
        }
        let mut nodes = MAX_NODES;
        check_bounds(&value, &At::root(), 0, &mut nodes)?;
        return Ok(value);
    }
    if !obj.is_exact_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "arguments: {}, not a dict of named arguments (or the JSON text of an object)",
            described(obj)
        )));
    }
    from_python(obj)
}

/// A Python object as a JSON value, held to the bounds of the module doc.
pub fn from_python(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let mut budget = Budget {
        nodes: MAX_NODES,
        bytes: MAX_JSON_BYTES,
    };
    convert(obj, &At::root(), 0, &mut budget)
}

/// What is left of the bounds while one argument is converted.
struct Budget {
    nodes: usize,
    bytes: usize,
}

impl Budget {
    /// Takes one value from the budget, or refuses at `at` before it is converted.
    fn take_node(&mut self, at: &At<'_>) -> PyResult<()> {
        self.nodes = self.nodes.checked_sub(1).ok_or_else(|| too_many(at))?;
        Ok(())
    }

    /// Refuses a container of `len` items at `at` before any is read, when they alone are over
    /// what is left.
    fn fits(&self, len: usize, at: &At<'_>) -> PyResult<()> {
        if len > self.nodes {
            return Err(too_many(at));
        }
        Ok(())
    }

    /// Takes `n` bytes of text from the budget, or refuses at `at`.
    fn take_bytes(&mut self, n: usize, at: &At<'_>) -> PyResult<()> {
        self.bytes = self.bytes.checked_sub(n).ok_or_else(|| too_long(at))?;
        Ok(())
    }
}

fn too_long(at: &At<'_>) -> PyErr {
    PyValueError::new_err(format!(
        "{}: the strings and keys of the arguments hold more than {MAX_JSON_BYTES} bytes",
        at.shown()
    ))
}

fn too_many(at: &At<'_>) -> PyErr {
    PyValueError::new_err(format!(
        "{}: the arguments hold more than {MAX_NODES} values (a value reached twice counts twice)",
        at.shown()
    ))
}

fn too_deep(at: &At<'_>) -> PyErr {
    PyValueError::new_err(format!(
        "{}: nested deeper than {MAX_DEPTH} levels",
        at.shown()
    ))
}

fn convert(
    obj: &Bound<'_, PyAny>,
    at: &At<'_>,
    depth: usize,
    budget: &mut Budget,
) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(too_deep(at));
    }
    budget.take_node(at)?;
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
            PyValueError::new_err(format!(
                "{}: integer out of JSON's 64-bit range",
                at.shown()
            ))
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{}: {} is not a JSON number",
                    at.shown(),
                    f.value()
                ))
            });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(text(s, at, budget)?));
    }
    if let Ok(list) = obj.cast_exact::<PyList>() {
        // Refused before a single item is read when the items alone are over the bound.
        budget.fits(list.len(), at)?;
        let mut items = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            items.push(convert(&item, &at.index(i), depth + 1, budget)?);
        }
        return Ok(Value::Array(items));
    }
    if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
        budget.fits(tuple.len(), at)?;
        let mut items = Vec::with_capacity(tuple.len());
        for (i, item) in tuple.iter().enumerate() {
            items.push(convert(&item, &at.index(i), depth + 1, budget)?);
        }
        return Ok(Value::Array(items));
    }
    if let Ok(dict) = obj.cast_exact::<PyDict>() {
        budget.fits(dict.len(), at)?;
        let mut map = Map::new();
        // One step (`PyDict_Items`) copies the pairs out; the dict itself is never iterated.
        for pair in dict.items().iter() {
            let (key, item): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
            let Ok(key) = key.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{}: keys must be str, not {}",
                    at.shown(),
                    described(&key)
                )));
            };
            let key = text(key, at, budget)?;
            let value = convert(&item, &at.key(&key), depth + 1, budget)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    let hint = if obj.cast::<PyList>().is_ok()
        || obj.cast::<PyTuple>().is_ok()
        || obj.cast::<PyDict>().is_ok()
    {
        " (only the exact built-in containers are read: pass a plain dict, list or tuple)"
    } else {
        " (dict, list, tuple, str, int, float, bool or None)"
    };
    Err(PyTypeError::new_err(format!(
        "{}: {} is not a JSON value{hint}",
        at.shown(),
        described(obj)
    )))
}

/// A `str` as Rust text, its bytes taken from the budget (an exact `str` is measured before it
/// is copied).
fn text(s: &Bound<'_, PyString>, at: &At<'_>, budget: &mut Budget) -> PyResult<String> {
    // Every character is at least one byte.
    if s.is_exact_instance_of::<PyString>() && s.len()? > budget.bytes {
        return Err(too_long(at));
    }
    let text: String = s.extract()?;
    budget.take_bytes(text.len(), at)?;
    Ok(text)
}

/// Checks a parsed JSON text against the depth and value bounds (its bytes were bounded as
/// text).
fn check_bounds(value: &Value, at: &At<'_>, depth: usize, nodes: &mut usize) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(too_deep(at));
    }
    *nodes = nodes.checked_sub(1).ok_or_else(|| too_many(at))?;
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_bounds(item, &at.index(i), depth + 1, nodes)?;
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                check_bounds(item, &at.key(key), depth + 1, nodes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Where a value is: the chain of keys and indices from the argument's top, kept on the stack
/// and rendered only into an error.
struct At<'a> {
    parent: Option<&'a At<'a>>,
    step: Step<'a>,
}

enum Step<'a> {
    Root,
    Index(usize),
    Key(&'a str),
}

impl<'a> At<'a> {
    fn root() -> At<'static> {
        At {
            parent: None,
            step: Step::Root,
        }
    }

    fn index(&'a self, i: usize) -> At<'a> {
        At {
            parent: Some(self),
            step: Step::Index(i),
        }
    }

    fn key(&'a self, key: &'a str) -> At<'a> {
        At {
            parent: Some(self),
            step: Step::Key(key),
        }
    }
}

impl At<'_> {
    /// The place as an error shows it: at most 64 steps of at most [`MAX_QUOTED_CHARS`] each,
    /// clipped again as a whole.
    fn shown(&self) -> String {
        clip_to(&self.to_string(), 4 * MAX_QUOTED_CHARS)
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.fmt(f)?;
        }
        match self.step {
            Step::Root => f.write_str("arguments"),
            Step::Index(i) => write!(f, "[{i}]"),
            Step::Key(key) => write!(f, "[{}]", quoted(key)),
        }
    }
}

/// `s` as a quoted literal (Rust's `Debug`: controls escaped), clipped to
/// [`MAX_QUOTED_CHARS`] characters, with how much was left out.
pub fn quoted(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        None => format!("{s:?}"),
        Some((end, _)) => format!("{:?}… ({} more bytes)", &s[..end], s.len() - end),
    }
}

/// What an object is, for an error: its type's name (clipped, a class may be named anything),
/// and the base it subclasses when it is a subclass of a container.
fn described(obj: &Bound<'_, PyAny>) -> String {
    let name = obj
        .get_type()
        .name()
        .map_or_else(|_| "an object".to_owned(), |n| clip(&n.to_string()));
    for (base, is) in [
        (
            "dict",
            obj.cast::<PyDict>().is_ok() && !obj.is_exact_instance_of::<PyDict>(),
        ),
        (
            "list",
            obj.cast::<PyList>().is_ok() && !obj.is_exact_instance_of::<PyList>(),
        ),
        (
            "tuple",
            obj.cast::<PyTuple>().is_ok() && !obj.is_exact_instance_of::<PyTuple>(),
        ),
        (
            "str",
            obj.cast::<PyString>().is_ok() && !obj.is_exact_instance_of::<PyString>(),
        ),
    ] {
        if is {
            return format!("{name} (a {base} subclass)");
        }
    }
    name
}

/// `s` clipped to [`MAX_QUOTED_CHARS`] characters, with how much was left out.
pub fn clip(s: &str) -> String {
    clip_to(s, MAX_QUOTED_CHARS)
}

/// `s` clipped to `max` characters, with how much was left out.
pub fn clip_to(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((end, _)) => format!("{}… ({} more bytes)", &s[..end], s.len() - end),
    }
}
