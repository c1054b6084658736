//! Python virtual environments under the target directory holding exactly the packages a
//! requirements file pins: made on first use, kept between runs, made again when the file
//! changes (a stamp beside the venv holds the file it was made from).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::bin::target_dir;

/// The Python of the venv `target/<name>` holding the packages `requirements` (relative to the
/// crate) pins.
pub fn python_with(requirements: &str, name: &str) -> PathBuf {
    // One set-up at a time in this process: two tests asking for one venv at once would remove
    // and install it under each other.
    static SETTING_UP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = SETTING_UP
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let requirements = Path::new(env!("CARGO_MANIFEST_DIR")).join(requirements);
    let wanted = fs_err::read(&requirements).expect("the requirements file");
    let venv = target_dir().join(name);
    let python = venv.join("bin/python");
    let stamp = venv.join("skillfold-requirements.txt");
    if fs_err::read(&stamp).ok().as_deref() == Some(wanted.as_slice()) && python.exists() {
        return python;
    }
    if venv.exists() {
        fs_err::remove_dir_all(&venv).expect("remove the stale venv");
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "-r",
        ])
        .arg(&requirements));
    fs_err::write(&stamp, &wanted).expect("write the venv stamp");
    python
}

/// Runs a set-up step (a venv, a package install), failing the test with its output if it fails.
pub fn run(command: &mut Command) {
    let out = command.output().expect("run a venv setup step");
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
