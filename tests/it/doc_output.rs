//! The output the pages show is the binary's.
//!
//! A fenced `console` block right after the line `<!-- output checked -->` (or
//! `<!-- output checked in DIR -->`) is run: each `$ skillfold …` line (a `# comment` after it
//! dropped) by `sh -c` with the built binary, stdout and stderr together, in a copy of the
//! repository's `examples/` next to the Git repository `scripts/demo` builds from them (its
//! commit is the one `examples/skillfold.yaml` pins), with no corpus prepared yet; `DIR` is
//! where the commands run, relative to that copy's root. The blocks of one page share one copy,
//! in page order. What follows a command, up to the next `$` line, is its output, compared line
//! by line after normalising what changes from run to run: the copy's root is written
//! `/srv/skillfold`, and a duration `in 583 ms` is `in N ms`. Step lines (`skillfold: LOCATION:
//! STEP`) are left out of the comparison: without a terminal and without `-v` they appear only
//! when a run takes 2 seconds, which a busy machine decides.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::bin::{stderr, stdout};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const MARK: &str = "<!-- output checked";
/// The copy's root as the pages show it.
const SHOWN_ROOT: &str = "/srv/skillfold";

/// One checked block: its page, line, folder, and each command with the lines it prints.
struct Block {
    page: String,
    line: usize,
    dir: String,
    commands: Vec<(String, Vec<String>)>,
}

fn blocks(page: &Path) -> Vec<Block> {
    let text = fs_err::read_to_string(page).expect("read a page");
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix(MARK) else {
            continue;
        };
        let dir = rest
            .trim()
            .strip_suffix("-->")
            .expect("a closed marker")
            .trim()
            .strip_prefix("in ")
            .unwrap_or_default()
            .trim()
            .to_owned();
        assert_eq!(
            lines.get(i + 1).map(|l| l.trim()),
            Some("```console"),
            "{}:{}: the marker must stand right before a ```console fence",
            page.display(),
            i + 1
        );
        let mut commands: Vec<(String, Vec<String>)> = Vec::new();
        for body in lines[i + 2..].iter().take_while(|l| l.trim() != "```") {
            match body.strip_prefix("$ ") {
                Some(command) => {
                    let command = command.split(" #").next().unwrap_or(command).trim();
                    commands.push((command.to_owned(), Vec::new()));
                }
                None => commands
                    .last_mut()
                    .expect("a block starts with a command")
                    .1
                    .push((*body).to_owned()),
            }
        }
        found.push(Block {
            page: page.display().to_string(),
            line: i + 1,
            dir,
            commands,
        });
    }
    found
}

/// A copy of `examples/` and `scripts/demo`, the demo's Git repository built, nothing prepared.
fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = Path::new(ROOT);
    let copy = Command::new("cp")
        .arg("-R")
        .arg(root.join("examples"))
        .arg(tmp.path().join("examples"))
        .status()
        .expect("cp");
    assert!(copy.success());
    fs_err::create_dir(tmp.path().join("scripts")).expect("mkdir");
    fs_err::copy(root.join("scripts/demo"), tmp.path().join("scripts/demo")).expect("copy");
    let out = Command::new("bash")
        .arg(tmp.path().join("scripts/demo"))
        .env("SKILLFOLD_BIN", env!("CARGO_BIN_EXE_skillfold"))
        .current_dir(tmp.path())
        .output()
        .expect("run scripts/demo");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    // The pages start from nothing prepared and nothing installed.
    for made in ["corpus", "project"] {
        fs_err::remove_dir_all(tmp.path().join("target/demo").join(made)).expect("clean");
    }
    tmp
}

/// What changes from run to run, written as the pages write it.
fn normalise(line: &str, root: &Path) -> String {
    let line = line.replace(&*root.to_string_lossy(), SHOWN_ROOT);
    match line.rfind(" in ").zip(line.strip_suffix(" ms")) {
        Some((at, _))
            if line[at + 4..line.len() - 3]
                .bytes()
                .all(|b| b.is_ascii_digit()) =>
        {
            format!("{} in N ms", &line[..at])
        }
        _ => line,
    }
}

fn run(root: &Path, dir: &str, command: &str) -> Vec<String> {
    let rest = command
        .strip_prefix("skillfold ")
        .unwrap_or_else(|| panic!("`{command}`: a checked block runs only skillfold"));
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("\"$SKILLFOLD\" {rest} 2>&1"))
        .env("SKILLFOLD", env!("CARGO_BIN_EXE_skillfold"))
        .env_remove("SKILLFOLD_CONFIG")
        .current_dir(root.join(dir))
        .output()
        .expect("run a shown command");
    stdout(&out)
        .lines()
        .filter(|l| !l.starts_with("skillfold: "))
        .map(|l| normalise(l, root))
        .collect()
}

fn checked_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::iter::once(Path::new(ROOT).join("README.md"))
        .chain(
            fs_err::read_dir(Path::new(ROOT).join("docs"))
                .expect("docs")
                .map(|e| e.expect("entry").path()),
        )
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn shown_output_is_what_the_binary_prints() {
    let mut checked = 0;
    let mut differences = Vec::new();
    for page in checked_pages() {
        let blocks = blocks(&page);
        if blocks.is_empty() {
            continue;
        }
        let copy = fixture();
        for block in blocks {
            for (command, shown) in &block.commands {
                let printed = run(copy.path(), &block.dir, command);
                let shown: Vec<String> = shown.iter().map(|l| normalise(l, copy.path())).collect();
                if printed != shown {
                    differences.push(format!(
                        "{}:{}: `{command}` prints\n{}\nbut the page shows\n{}",
                        block.page,
                        block.line,
                        printed.join("\n"),
                        shown.join("\n")
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
    assert!(checked >= 5, "only {checked} shown commands are checked");
}

#[test]
fn normalising_keeps_what_is_meant_and_drops_what_varies() {
    let root = Path::new("/tmp/.tmpAbc");
    assert_eq!(
        normalise("prepared 4 source(s) with 1 fetch(es) in 583 ms", root),
        "prepared 4 source(s) with 1 fetch(es) in N ms"
    );
    assert_eq!(
        normalise("ok: x: /tmp/.tmpAbc/examples/skills/a: a@1 verified", root),
        "ok: x: /srv/skillfold/examples/skills/a: a@1 verified"
    );
    assert_eq!(normalise("kept in 3 ms or so", root), "kept in 3 ms or so");
}
