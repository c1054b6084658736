//! The `skillfold` Python package's native module (`skillfold._skillfold`): verified Agent
//! Skills for Python hosts, on the same runtime as the Rust library — the same checks, the same
//! verification against pins, the same tools and records. The Python package
//! (`python/skillfold/`) re-exports it with type stubs.
//!
//! - [`runtime`]: `Runtime.load`, `Runtime.builder()` and the builders.
//! - [`catalogue`]: `Catalogue` — prompt block, tool definitions per model API, tool calls.
//! - [`policy`]: a Python callable as the policy hook.
//! - [`convert`]: JSON values across the boundary, bounded.
//! - [`errors`]: the exception types, each carrying the stable error code.

mod catalogue;
mod convert;
mod errors;
mod policy;
mod runtime;

use pyo3::prelude::*;

/// Rust's allocations in this module come from mimalloc, not the interpreter's glibc heap. A call
/// that serves a 64 KiB body makes short-lived Rust copies of it beside the Python `str` it
/// returns; on the shared heap those frees left more than glibc's trim threshold free at the top,
/// so every call gave memory back to the kernel (`brk`) and faulted it in again — measured at
/// ~20 µs of a 30 µs call (benches/python_call.py). With its own allocator the copies recycle
/// their memory and the interpreter's heap sees only its own objects.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _skillfold(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<runtime::Runtime>()?;
    m.add_class::<runtime::RuntimeBuilder>()?;
    m.add_class::<runtime::AgentBuilder>()?;
    m.add_class::<catalogue::Catalogue>()?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
