//! `skillfold to-prompt SKILL_PATH...`: the `<available_skills>` block of skills-ref.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use crate::skills_ref::{prompt, skill_file::DirError};
use crate::support::escape;

use crate::cli::agentskills::echo;

/// Runs the command on arguments that exist (click checked); returns the exit status.
pub fn run(args: &[Vec<u8>]) -> u8 {
    let mut dirs: Vec<PathBuf> = Vec::with_capacity(args.len());
    for arg in args {
        let dir = super::validate::skill_dir_of(arg);
        let dir = Path::new(OsStr::from_bytes(&dir));
        // Deviation: a skill directory that is a symbolic link is refused, not resolved.
        if fs_err::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            echo(
                true,
                &format!("Error: {}", DirError::Symlink(dir.to_owned())),
            );
            return 1;
        }
        match fs_err::canonicalize(dir) {
            Ok(resolved) => dirs.push(resolved),
            Err(e) => {
                // Deviation (skills-ref resolves the path): ours, so the path is escaped.
                echo(
                    true,
                    &format!("Error: {} [io_error]", escape::text(&e.to_string())),
                );
                return 1;
            }
        }
    }
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    match prompt::to_prompt(&refs) {
        Ok(block) => {
            echo(false, &block);
            0
        }
        Err(e) => {
            echo(true, &format!("Error: {e}"));
            1
        }
    }
}
