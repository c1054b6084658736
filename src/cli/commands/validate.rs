//! `skillfold validate SKILL_PATH`: prints what skills-ref 0.1.1's `validate` prints.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use crate::skills_ref::{python, validate};

use crate::cli::exit::{self, Exit};
use crate::cli::output::echo;
use crate::cli::sarif::SKILL_ROOT;
use crate::format::sarif::{Base, Entry, Level, Log, Place};
use crate::skills_ref::code::SpecCode;
use crate::support::escape;

/// Runs the command on an argument that exists (click checked); returns the exit status.
pub fn run(arg: &[u8]) -> u8 {
    let dir = skill_dir_of(arg);
    let shown = String::from_utf8_lossy(&dir).into_owned();
    let errors = validate::validate(Path::new(OsStr::from_bytes(&dir)));
    if errors.is_empty() {
        echo(false, &format!("Valid skill: {shown}"));
        return Exit::Ok as u8;
    }
    echo(true, &format!("Validation failed for {shown}:"));
    for error in errors {
        echo(true, &format!("  - {error}"));
    }
    exit::of(SpecCode::ValidationFailed) as u8
}

/// `validate --format sarif`: the same check, the text on stderr, a SARIF log of each error on
/// stdout (each at `SKILL.md` under the skill folder: skills-ref's messages name no line).
pub fn run_sarif(arg: &[u8]) -> u8 {
    let dir = skill_dir_of(arg);
    let shown = String::from_utf8_lossy(&dir).into_owned();
    let path = Path::new(OsStr::from_bytes(&dir));
    let errors = validate::validate(path);
    let mut log = Log::new();
    log.base(Base::folder(
        SKILL_ROOT,
        path,
        format!("the skill folder `{}`", escape::bytes(&dir)),
    ));
    let code = SpecCode::ValidationFailed;
    if errors.is_empty() {
        echo(true, &format!("Valid skill: {shown}"));
    } else {
        echo(true, &format!("Validation failed for {shown}:"));
    }
    for error in &errors {
        echo(true, &format!("  - {error}"));
        let entry = Entry::new(code, Level::Error, escape::text(error).to_string());
        log.push(entry.at(Place::file(SKILL_ROOT, "SKILL.md")));
    }
    let exit = if errors.is_empty() {
        Exit::Ok
    } else {
        exit::of(code)
    };
    exit.worse(crate::cli::sarif::print(&log)) as u8
}

/// `Path(arg)`, or its parent when it names a regular file called `SKILL.md` in any letter
/// case (skills-ref's `_is_skill_md_file`); spelled as `str()` of the `pathlib` path.
pub fn skill_dir_of(arg: &[u8]) -> Vec<u8> {
    let path = python::pure_path(arg);
    let spelled = path.to_bytes();
    let is_file = fs_err::metadata(OsStr::from_bytes(&spelled)).is_ok_and(|m| m.is_file());
    if is_file && python::lower(&String::from_utf8_lossy(path.name())) == "skill.md" {
        path.parent().to_bytes()
    } else {
        spelled
    }
}
