//! The JSON Schemas skillfold publishes — the descriptor, each tool's input and output, the
//! refusal a tool returns and the host record — generated with `schemars` from the Rust types that
//! read and write the documents, and committed under `schemas/` so editors and other tools can use
//! them. A test fails when the committed files are stale; `skillfold schema --out schemas`
//! rewrites them.
//!
//! Every schema is made portable by [`make_portable`], so that a validator in its strict mode
//! (Ajv's default) takes it as it is: `schemars` writes integer widths as `format` values
//! (`uint32`, `int32`, `uint64`, …) that JSON Schema does not define, and nullable values as
//! `"type": [T, "null"]`, which strict validators and the strict tool modes of model APIs refuse or
//! warn about. The widths become `minimum`/`maximum`; a nullable value becomes
//! `anyOf: [{T…}, {"type": "null"}]`. The tool input schemas follow the stricter rules of
//! [`crate::runtime::tools`] on top of this.
//!
//! [`write_all`] writes them into a directory without following a link anywhere below it: the
//! directory is opened once, never through a link ([`untrusted_fs::open_root`]); each schema is
//! written to a new temporary file created beneath that open directory (`O_CREAT | O_EXCL |
//! O_NOFOLLOW`: never an existing file, never through a link) and renamed over its name, so a
//! link planted at a schema's name is replaced, its target never written.

use std::ffi::CString;
use std::io::Write as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use serde_json::Value;

use crate::format::untrusted_fs;
use crate::support::json_schema::make_portable;

use crate::runtime::tools::{Record, ToolError, load_skill, read_reference, run_script};

/// Every published schema: its file name under `schemas/` and its content.
pub fn all() -> Vec<(&'static str, Value)> {
    let mut descriptor = crate::descriptor::json_schema();
    make_portable(&mut descriptor);
    vec![
        ("skillfold.schema.json", descriptor),
        ("load_skill.input.schema.json", load_skill::input_schema()),
        ("load_skill.output.schema.json", load_skill::output_schema()),
        (
            "skill_run_script.input.schema.json",
            run_script::input_schema(),
        ),
        (
            "skill_run_script.output.schema.json",
            run_script::output_schema(),
        ),
        (
            "skill_read_reference.input.schema.json",
            read_reference::input_schema(),
        ),
        (
            "skill_read_reference.output.schema.json",
            read_reference::output_schema(),
        ),
        ("tool-error.schema.json", ToolError::wire_schema()),
        (
            "record.schema.json",
            crate::runtime::tools::output_schema(
                crate::runtime::tools::serialized_schema::<Record>(),
            ),
        ),
    ]
}

/// A schema as written to disk: pretty JSON with a final newline.
pub fn render(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes every schema of [`all`] into `dir` (created when missing), beneath it without
/// following links (see the module doc); returns the paths written, in order. The first failure
/// stops the writing and names the file.
pub fn write_all(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    fs_err::create_dir_all(dir)?;
    let root = untrusted_fs::open_root(dir).map_err(|e| {
        let message = format!("`{}`: {e}", dir.display());
        std::io::Error::new(e.into_io().kind(), message)
    })?;
    let mut written = Vec::new();
    for (name, schema) in all() {
        let path = dir.join(name);
        write_beneath(&root, name, render(&schema).as_bytes()).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write `{}`: {e}", path.display()))
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Writes `bytes` as the file `name` (one component) of the open directory `dir`: a new
/// temporary file beside it, then a rename over `name`. The temporary file is removed when any
/// step fails.
fn write_beneath(dir: &OwnedFd, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target =
        untrusted_fs::component(name).map_err(untrusted_fs::UntrustedOpenError::into_io)?;
    let (temp_name, file) = create_temp(dir, name)?;
    let result = (|| {
        let mut file = std::fs::File::from(file);
        file.write_all(bytes)?;
        file.sync_all()?;
        rustix::fs::renameat(dir, temp_name.as_c_str(), dir, &*target)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp_name.as_c_str(), AtFlags::empty());
    }
    result
}

/// A new file `.NAME.PID.N.tmp` in `dir`, created exclusively, never through a link.
fn create_temp(dir: &OwnedFd, name: &str) -> std::io::Result<(CString, OwnedFd)> {
    const FLAGS: OFlags = OFlags::WRONLY
        .union(OFlags::CREATE)
        .union(OFlags::EXCL)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let temp = CString::new(format!(".{name}.{pid}.{attempt}.tmp"))
            .map_err(|_| std::io::Error::from(Errno::INVAL))?;
        match rustix::fs::openat(
            dir.as_fd(),
            temp.as_c_str(),
            FLAGS,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => return Ok((temp, fd)),
            // Left by a run that was killed, or planted: never reused, never followed.
            Err(Errno::EXIST) if attempt < 100 => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod boundary_tests;
