//! `skillfold read-properties SKILL_PATH`: the frontmatter properties as skills-ref's JSON.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use crate::skills_ref::properties;

use crate::cli::exit::Exit;
use crate::cli::output::echo;

/// Runs the command on an argument that exists (click checked); returns the exit status.
pub fn run(arg: &[u8]) -> u8 {
    let dir = super::validate::skill_dir_of(arg);
    let shown = String::from_utf8_lossy(&dir).into_owned();
    match properties::read_properties(Path::new(OsStr::from_bytes(&dir)), &shown)
        .and_then(|p| p.to_json())
    {
        Ok(json) => {
            echo(false, &json);
            Exit::Ok as u8
        }
        Err(e) => {
            echo(true, &format!("Error: {e}"));
            Exit::of(&e) as u8
        }
    }
}
