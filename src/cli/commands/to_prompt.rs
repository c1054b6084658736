//! `skillfold to-prompt SKILL_PATH...`: the `<available_skills>` block of skills-ref.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use crate::skills_ref::{prompt, skill_file::DirError};
use crate::support::escape;

use crate::cli::exit::{self, Exit};
use crate::cli::output::echo;
use crate::skills_ref::code::SpecCode;

/// Runs the command on arguments that exist (click checked); returns the exit status.
pub fn run(args: &[Vec<u8>]) -> u8 {
    let mut dirs: Vec<PathBuf> = Vec::with_capacity(args.len());
    for arg in args {
        let dir = super::validate::skill_dir_of(arg);
        let dir = Path::new(OsStr::from_bytes(&dir));
        // Deviation: a skill directory that is a symbolic link is refused, not resolved.
        if fs_err::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            let error = DirError::Symlink(dir.to_owned());
            echo(true, &format!("Error: {error}"));
            return Exit::of(&error) as u8;
        }
        match fs_err::canonicalize(dir) {
            Ok(resolved) => dirs.push(resolved),
            Err(e) => {
                // Deviation (skills-ref resolves the path): ours, so the path is escaped.
                let code = SpecCode::IoError;
                echo(
                    true,
                    &format!("Error: {} [{code}]", escape::text(&e.to_string())),
                );
                return exit::of(code) as u8;
            }
        }
    }
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    match prompt::to_prompt(&refs) {
        Ok(block) => {
            echo(false, &block);
            Exit::Ok as u8
        }
        Err(e) => {
            echo(true, &format!("Error: {e}"));
            Exit::of(&e) as u8
        }
    }
}
