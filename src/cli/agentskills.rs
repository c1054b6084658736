//! Argument handling of the skills-ref compatible commands, reproducing what click 8.5.1 prints
//! for skills-ref 0.1.1's `agentskills` program: help texts, usage errors (stderr, exit 2),
//! `--version`, help on stderr when the program gets no arguments, and click's echo (a trailing
//! newline; ANSI CSI sequences stripped when the stream is not a terminal), which
//! [`crate::cli::output::echo`] writes.
//!
//! The three commands keep the program name `agentskills` in their usage and help text so that
//! `skillfold validate …` prints byte for byte what `agentskills validate …` prints. Invoked
//! under the name `agentskills` (a link to the binary), the whole program is the reference CLI.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;

use crate::cli::output::echo;
use crate::skills_ref::python;

/// The reference program's name, which click puts into every usage line.
pub const PROG: &str = "agentskills";

const GROUP_USAGE: &str = "Usage: agentskills [OPTIONS] COMMAND [ARGS]...";

const GROUP_HELP: &str = "Usage: agentskills [OPTIONS] COMMAND [ARGS]...

  Reference library for Agent Skills.

Options:
  --version  Show the version and exit.
  --help     Show this message and exit.

Commands:
  read-properties  Read and print skill properties as JSON.
  to-prompt        Generate <available_skills> XML for agent prompts.
  validate         Validate a skill directory.";

/// The three commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    /// `validate SKILL_PATH`
    Validate,
    /// `read-properties SKILL_PATH`
    ReadProperties,
    /// `to-prompt SKILL_PATHS...`
    ToPrompt,
}

impl Cmd {
    /// The command for a name.
    pub fn from_name(name: &[u8]) -> Option<Cmd> {
        match name {
            b"validate" => Some(Cmd::Validate),
            b"read-properties" => Some(Cmd::ReadProperties),
            b"to-prompt" => Some(Cmd::ToPrompt),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Cmd::Validate => "validate",
            Cmd::ReadProperties => "read-properties",
            Cmd::ToPrompt => "to-prompt",
        }
    }

    fn metavar(self) -> &'static str {
        match self {
            Cmd::ToPrompt => "SKILL_PATHS...",
            _ => "SKILL_PATH",
        }
    }

    fn usage(self) -> String {
        format!("Usage: {PROG} {} [OPTIONS] {}", self.name(), self.metavar())
    }

    fn help(self) -> String {
        let body = match self {
            Cmd::Validate => {
                "  Validate a skill directory.\n\n  Checks that the skill has a valid SKILL.md with proper frontmatter, correct\n  naming conventions, and required fields.\n\n  Exit codes:     0: Valid skill     1: Validation errors found"
            }
            Cmd::ReadProperties => {
                "  Read and print skill properties as JSON.\n\n  Parses the YAML frontmatter from SKILL.md and outputs the properties as\n  JSON.\n\n  Exit codes:     0: Success     1: Parse error"
            }
            Cmd::ToPrompt => {
                "  Generate <available_skills> XML for agent prompts.\n\n  Accepts one or more skill directories.\n\n  Exit codes:     0: Success     1: Error"
            }
        };
        format!(
            "{}\n\n{body}\n\nOptions:\n  --help  Show this message and exit.",
            self.usage()
        )
    }
}

/// A usage error: usage line, hint, `Error: …`, exit 2.
fn usage_error(usage: &str, command_path: &str, message: &str) -> u8 {
    echo(
        true,
        &format!("{usage}\nTry '{command_path} --help' for help.\n"),
    );
    echo(true, &format!("Error: {message}"));
    crate::cli::exit::of(crate::codes::CommandCode::InvalidUsage) as u8
}

fn lossy(arg: &OsString) -> String {
    String::from_utf8_lossy(arg.as_bytes()).into_owned()
}

/// click's `NoSuchOption` message, with difflib suggestions for long options.
fn no_such_option(name: &str, long_options: &[&str]) -> String {
    let mut message = format!("No such option {}.", python::repr(name));
    if name.starts_with("--") {
        message.push_str(&possibilities(name, long_options));
    }
    message
}

fn possibilities(word: &str, candidates: &[&str]) -> String {
    let mut close = get_close_matches(word, candidates);
    if close.is_empty() {
        return String::new();
    }
    close.sort_unstable();
    let list: Vec<String> = close.iter().map(|c| python::repr(c)).collect();
    if list.len() == 1 {
        format!(" Did you mean {}?", list[0])
    } else {
        format!(" (Did you mean one of: {}?)", list.join(", "))
    }
}

/// `difflib.get_close_matches(word, candidates)` (n 3, cutoff 0.6), best first.
fn get_close_matches<'a>(word: &str, candidates: &[&'a str]) -> Vec<&'a str> {
    let b: Vec<char> = word.chars().collect();
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| (ratio(&c.chars().collect::<Vec<_>>(), &b), *c))
        .filter(|(r, _)| *r >= 0.6)
        .collect();
    scored.sort_by(|x, y| {
        y.0.partial_cmp(&x.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| y.1.cmp(x.1))
    });
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// `SequenceMatcher(None, a, b).ratio()`: twice the matched characters over the total length,
/// matches found by recursive longest common blocks.
fn ratio(a: &[char], b: &[char]) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    let mut matched = 0;
    let mut queue = vec![(0, a.len(), 0, b.len())];
    while let Some((alo, ahi, blo, bhi)) = queue.pop() {
        let (i, j, k) = longest_match(a, b, alo, ahi, blo, bhi);
        if k > 0 {
            matched += k;
            if alo < i && blo < j {
                queue.push((alo, i, blo, j));
            }
            if i + k < ahi && j + k < bhi {
                queue.push((i + k, ahi, j + k, bhi));
            }
        }
    }
    2.0 * matched as f64 / total as f64
}

fn longest_match(
    a: &[char],
    b: &[char],
    alo: usize,
    ahi: usize,
    blo: usize,
    bhi: usize,
) -> (usize, usize, usize) {
    let (mut besti, mut bestj, mut best) = (alo, blo, 0);
    let mut prev = vec![0usize; b.len() + 1];
    for (i, ca) in a.iter().enumerate().take(ahi).skip(alo) {
        let mut next = vec![0usize; b.len() + 1];
        for (j, cb) in b.iter().enumerate().take(bhi).skip(blo) {
            if ca == cb {
                let k = if j > 0 { prev[j - 1] } else { 0 } + 1;
                next[j] = k;
                if k > best {
                    (besti, bestj, best) = (i + 1 - k, j + 1 - k, k);
                }
            }
        }
        prev = next;
    }
    (besti, bestj, best)
}

/// The `agentskills` program itself (when the binary runs under that name).
pub fn group(args: &[OsString]) -> u8 {
    const LONG: [&str; 2] = ["--version", "--help"];
    if args.is_empty() {
        echo(true, GROUP_HELP);
        return 2;
    }
    let mut i = 0;
    let mut eager: Option<&str> = None;
    let mut command: Option<&OsString> = None;
    while i < args.len() {
        let arg = args[i].as_bytes();
        i += 1;
        if arg == b"--" {
            command = args.get(i);
            i += 1;
            break;
        }
        if arg.len() > 1 && arg[0] == b'-' {
            let text = lossy(&args[i - 1]);
            if let Some(long) = text.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (format!("--{n}"), Some(v)),
                    None => (text.clone(), None),
                };
                if !LONG.contains(&name.as_str()) {
                    return usage_error(GROUP_USAGE, PROG, &no_such_option(&name, &LONG));
                }
                if value.is_some() {
                    let message = format!("Option {} does not take a value.", python::repr(&name));
                    return usage_error(GROUP_USAGE, PROG, &message);
                }
                eager.get_or_insert(if name == "--help" { "help" } else { "version" });
            } else {
                let short: String = text.chars().take(2).collect();
                return usage_error(GROUP_USAGE, PROG, &no_such_option(&short, &LONG));
            }
        } else {
            command = Some(&args[i - 1]);
            break;
        }
    }
    match eager {
        Some("help") => {
            echo(false, GROUP_HELP);
            return 0;
        }
        Some(_) => {
            echo(false, "agentskills, version 0.1.1");
            return 0;
        }
        None => {}
    }
    let Some(name) = command else {
        return usage_error(GROUP_USAGE, PROG, "Missing command.");
    };
    match Cmd::from_name(name.as_bytes()) {
        Some(cmd) => command_args(cmd, &args[i..]),
        None => {
            let text = lossy(name);
            if text.len() > 1 && text.starts_with('-') {
                let short: String = if text.starts_with("--") {
                    text.split('=').next().unwrap_or_default().to_owned()
                } else {
                    text.chars().take(2).collect()
                };
                return usage_error(GROUP_USAGE, PROG, &no_such_option(&short, &LONG));
            }
            let mut message = format!("No such command {}.", python::repr(&text));
            message.push_str(&possibilities(
                &text,
                &["validate", "read-properties", "to-prompt"],
            ));
            usage_error(GROUP_USAGE, PROG, &message)
        }
    }
}

/// One command's arguments, parsed as click parses them; runs the command.
pub fn command_args(cmd: Cmd, args: &[OsString]) -> u8 {
    command_args_as(cmd, args, false)
}

/// `skillfold validate --format sarif|text …`: the same command, its findings as a SARIF log on
/// stdout with `sarif` (an option skills-ref does not have, so only `skillfold validate` takes
/// it, before any `--`); `None` when the arguments do not give `--format`.
pub fn validate_with_format(args: &[OsString]) -> Option<u8> {
    let mut rest = Vec::with_capacity(args.len());
    let mut format = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_bytes();
        if arg == b"--" {
            rest.extend_from_slice(&args[i..]);
            break;
        }
        let value = match arg.strip_prefix(b"--format") {
            Some(b"") => {
                i += 1;
                args.get(i).map(|v| v.as_bytes())
            }
            Some(v) => v.strip_prefix(b"="),
            None => {
                rest.push(args[i].clone());
                i += 1;
                continue;
            }
        };
        match value {
            Some(b"sarif") => format = Some(true),
            Some(b"text") => format = Some(false),
            // Left to click, which refuses the option as skills-ref does.
            _ => return None,
        }
        i += 1;
    }
    format.map(|sarif| command_args_as(Cmd::Validate, &rest, sarif))
}

fn command_args_as(cmd: Cmd, args: &[OsString], sarif: bool) -> u8 {
    let path = format!("{PROG} {}", cmd.name());
    let usage = cmd.usage();
    let mut positional: Vec<&OsString> = Vec::new();
    let mut help = false;
    let mut only_args = false;
    for arg in args {
        let bytes = arg.as_bytes();
        if only_args || bytes.len() < 2 || bytes[0] != b'-' {
            positional.push(arg);
            continue;
        }
        if bytes == b"--" {
            only_args = true;
            continue;
        }
        let text = lossy(arg);
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v)),
                None => (text.clone(), None),
            };
            if name != "--help" {
                return usage_error(&usage, &path, &no_such_option(&name, &["--help"]));
            }
            if value.is_some() {
                let message = format!("Option {} does not take a value.", python::repr(&name));
                return usage_error(&usage, &path, &message);
            }
            help = true;
        } else {
            let short: String = text.chars().take(2).collect();
            return usage_error(&usage, &path, &no_such_option(&short, &["--help"]));
        }
    }
    if help {
        echo(false, &cmd.help());
        return 0;
    }
    let hint = format!("'{}'", cmd.metavar());
    if positional.is_empty() {
        return usage_error(&usage, &path, &format!("Missing argument {hint}."));
    }
    let take = if cmd == Cmd::ToPrompt {
        positional.len()
    } else {
        1
    };
    for arg in &positional[..take] {
        if fs_err::metadata(arg).is_err() {
            let message = format!(
                "Invalid value for {hint}: Path {} does not exist.",
                python::repr(&lossy(arg))
            );
            return usage_error(&usage, &path, &message);
        }
    }
    let extra = &positional[take..];
    if !extra.is_empty() {
        let list: Vec<String> = extra.iter().map(|a| lossy(a)).collect();
        let s = if list.len() == 1 { "" } else { "s" };
        let message = format!("Got unexpected extra argument{s} ({})", list.join(" "));
        return usage_error(&usage, &path, &message);
    }
    let paths: Vec<Vec<u8>> = positional[..take]
        .iter()
        .map(|a| a.as_bytes().to_vec())
        .collect();
    match cmd {
        Cmd::Validate if sarif => crate::cli::commands::validate::run_sarif(&paths[0]),
        Cmd::Validate => crate::cli::commands::validate::run(&paths[0]),
        Cmd::ReadProperties => crate::cli::commands::read_properties::run(&paths[0]),
        Cmd::ToPrompt => crate::cli::commands::to_prompt::run(&paths),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difflib_ratio() {
        let r = |a: &str, b: &str| {
            ratio(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert!((r("--help", "--hel") - 10.0 / 11.0).abs() < 1e-9);
        assert_eq!(get_close_matches("--json", &["--help"]), Vec::<&str>::new());
        assert_eq!(
            get_close_matches("valdate", &["validate", "to-prompt"]),
            ["validate"]
        );
    }
}
