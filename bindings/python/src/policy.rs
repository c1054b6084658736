//! A Python callable as the runtime's policy hook. It receives a `dict` describing the call
//! (`agent`, `tool`, `skill`, `pinned`, `version`, `hash`, `reference`) and allows it by returning
//! `None` or `True`; `False` refuses it, a `str` refuses it with that reason. If the callable
//! raises, the call is refused and `Catalogue.call` raises `PolicyError` with the callable's
//! exception as its cause — or, for a `BaseException` that is not an `Exception`
//! (`KeyboardInterrupt`, `SystemExit`), raises that exception itself: the exception is parked in a thread-local slot by the hook (which runs
//! on the calling thread, inside `call`) and taken back out when `call` returns.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};
use skillfold::Access;

thread_local! {
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The exception the policy raised during the last call on this thread, if any.
pub fn take_raised() -> Option<PyErr> {
    RAISED.with(|slot| slot.borrow_mut().take())
}

/// The hook that calls `callable`.
pub fn hook(
    callable: Py<PyAny>,
) -> impl Fn(&Access<'_>) -> Result<(), String> + Send + Sync + 'static {
    move |access| {
        Python::attach(|py| {
            let verdict = describe(py, access).and_then(|d| callable.bind(py).call1((d,)));
            match verdict {
                Ok(v) if v.is_none() => Ok(()),
                Ok(v) => judge(&v),
                Err(raised) => {
                    RAISED.with(|slot| *slot.borrow_mut() = Some(raised));
                    Err("the policy callable raised an exception".to_owned())
                }
            }
        })
    }
}

fn judge(verdict: &Bound<'_, PyAny>) -> Result<(), String> {
    if let Ok(allowed) = verdict.cast::<PyBool>() {
        return if allowed.is_true() {
            Ok(())
        } else {
            Err("refused by the host's policy".to_owned())
        };
    }
    if let Ok(reason) = verdict.cast::<PyString>() {
        return Err(reason
            .extract::<String>()
            .unwrap_or_else(|_| "refused by the host's policy".to_owned()));
    }
    Err("the policy callable returned neither None, a bool nor a str: refused".to_owned())
}

fn describe<'py>(py: Python<'py>, access: &Access<'_>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("agent", access.agent)?;
    d.set_item("tool", access.tool)?;
    d.set_item("skill", access.skill.name())?;
    let pin = access.skill.snapshot().map(skillfold::Snapshot::pin);
    d.set_item("pinned", pin.is_some())?;
    d.set_item("version", pin.map(|p| p.version.to_string()))?;
    d.set_item("hash", pin.map(|p| p.hash.to_string()))?;
    d.set_item("reference", access.reference)?;
    Ok(d)
}
