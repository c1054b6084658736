//! The options the pages (README.md, docs/*.md) name are the binary's, and the reference
//! describes them all.
//!
//! - Every `--flag` a page names exists in its command's `--help` (the built binary's). A flag is
//!   tied to a command when the same backticked span or code line names the command before it —
//!   `skillfold serve --listen`, or a span that starts with the command, `` `push --to` `` — and a
//!   flag standing alone in its own span to the command the paragraph (or list item, or table
//!   row) named last that way, or else, in `docs/cli.md`, to the command of its section
//!   (`` ## `skillfold serve` ``, or a `###` heading that names several commands). A span or code
//!   line that starts with another program (`git`, `cargo`, `glab`, `curl`) names that program's
//!   options, not ours, and so does a flag of [`OTHER_PROGRAMS`] standing alone; a flag tied to
//!   no command must be an option of some command. A code line indented under a `skillfold`
//!   line, or after its `\`, continues its command.
//! - Every option of every command's `--help` is described in `docs/cli.md`: named outside the
//!   code blocks, in that command's section, or in the page's preamble, which describes the
//!   options every command shares (`-c/--config`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use super::{ROOT, pages, relative};

const BIN: &str = env!("CARGO_BIN_EXE_skillfold");

/// Other programs' options that pages name alone, in backticks, with the program.
const OTHER_PROGRAMS: &[(&str, &str)] = &[
    ("--features", "cargo build"),
    ("--no-default-features", "cargo build"),
    ("--preserve-digests", "skopeo copy"),
    // The argument a helper is given in the blocklist's example (docs/security.md).
    ("--place-order", "a helper script"),
];

/// What every command has, which no page needs to describe.
const UNIVERSAL: &[&str] = &["--help", "--version"];

/// One flag a page names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    /// The command it is tied to; `None` when the page names none.
    command: Option<String>,
    /// `--flag`.
    flag: String,
    /// 1-based line.
    line: usize,
    /// Whether it stands in a code block.
    fenced: bool,
}

fn help(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .output()
        .expect("run the binary");
    assert!(out.status.success(), "{args:?} --help: {out:?}");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The lines of the `heading:` section of a help text (up to the next unindented line).
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

/// The long options a help text's `Options:` section lists.
fn options(text: &str) -> BTreeSet<String> {
    section(text, "Options:")
        .into_iter()
        .filter_map(|line| {
            let head = line.trim_start();
            // An option's own line is indented by at most 6; its description by more.
            (line.len() - head.len() <= 6 && head.starts_with('-')).then_some(head)
        })
        .flat_map(|head| flags_in(head.split("  ").next().unwrap_or(head)))
        .collect()
}

/// Every command of the binary (not `help`) and the long options of its `--help`; `""` holds
/// the top level's.
fn commands() -> BTreeMap<String, BTreeSet<String>> {
    let top = help(&[]);
    let mut commands = BTreeMap::from([(String::new(), options(&top))]);
    for line in section(&top, "Commands:") {
        let Some(name) = line
            .strip_prefix("  ")
            .filter(|l| !l.starts_with(' '))
            .and_then(|l| l.split_whitespace().next())
        else {
            continue;
        };
        if name != "help" {
            commands.insert(name.to_owned(), options(&help(&[name])));
        }
    }
    assert!(
        commands.len() > 10 && commands["serve"].contains("--listen"),
        "the help texts were not read: {commands:?}"
    );
    // `validate --help` is skills-ref's help, byte for byte; `skillfold validate` also takes
    // `--format` (docs/spec.md, the deviations), which that help cannot list.
    if let Some(validate) = commands.get_mut("validate") {
        validate.insert("--format".to_owned());
    }
    commands
}

/// The `--flag`s of a piece of text, in order.
fn flags_in(text: &str) -> Vec<String> {
    words(text).into_iter().filter_map(flag).collect()
}

/// The words of a span or line, split at white space and punctuation that is never part of a
/// flag or a file name (`[--json]`, `"--listen",`, `--to=X`).
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || "[](){}\"',=|;`\\".contains(c))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The long option `word` is, or holds (`--tls-cert/--tls-key`, `-c/--config`, `--listen.`).
fn flag(word: &str) -> Option<String> {
    word.split('/')
        .filter(|part| part.starts_with("--"))
        .map(|part| part.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
        .find(|part| {
            part.strip_prefix("--")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_lowercase()))
        })
        .map(str::to_owned)
}

/// Every long option `word` holds (both of `--tls-cert/--tls-key`).
fn flags_of(word: &str) -> Vec<String> {
    word.split('/').filter_map(flag).collect()
}

/// The flags of one span (a backticked span, or a line of code), each with the command named
/// before it: after `skillfold CMD`, `CMD`; after `skillfold` alone, the top level `""`; the
/// span's first word when `bare_command` allows it; `None` when the span names none. `None` when the span is another
/// program's: it begins with a word that is neither `skillfold`, nor an option, nor
/// (`bare_command`) one of our commands.
fn span_flags(
    span: &str,
    known: &BTreeMap<String, BTreeSet<String>>,
    bare_command: bool,
) -> Option<Vec<(Option<String>, String)>> {
    let words = words(span);
    let first = *words.first()?;
    let mut command: Option<String> = if first == "skillfold" || first.starts_with('-') {
        None
    } else if bare_command && known.contains_key(first) {
        Some(first.to_owned())
    } else {
        return None;
    };
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if *word == "skillfold" {
            let next = words.get(i + 1).copied().unwrap_or_default();
            command = Some(if known.contains_key(next) { next } else { "" }.to_owned());
        } else {
            found.extend(flags_of(word).into_iter().map(|f| (command.clone(), f)));
        }
    }
    Some(found)
}

/// The commands a heading of the reference names: `` `skillfold serve` ``, or several
/// (`` Options of `prompt`, `load` and `serve` ``).
fn heading_commands(heading: &str, known: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    heading
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|span| span.strip_prefix("skillfold ").unwrap_or(span))
        .filter(|c| !c.is_empty() && known.contains_key(*c))
        .map(str::to_owned)
        .collect()
}

/// Every flag `text` names. `sections`: the page is the reference, whose headings tie the flags
/// standing alone under them to the commands they name.
fn named(text: &str, known: &BTreeMap<String, BTreeSet<String>>, sections: bool) -> Vec<Named> {
    let mut found = Vec::new();
    let mut fenced = false;
    // The commands of the `##` section, and of the `###` one within it.
    let (mut section, mut subsection): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    // The command of the `skillfold` code line the next lines may continue, and its indent.
    let mut continued: Option<(Option<String>, usize)> = None;
    let mut open = false;
    // The command the current paragraph of prose named last.
    let mut paragraph: Option<String> = None;
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            (continued, open, paragraph) = (None, false, None);
            continue;
        }
        let mut flags: Vec<(Option<String>, String)> = Vec::new();
        if fenced {
            let indent = line.len() - line.trim_start().len();
            // A shell prompt is no part of the command.
            let code = line.trim_start().trim_start_matches("$ ");
            match &continued {
                Some((command, start)) if open || indent > *start => {
                    flags = flags_in(code)
                        .into_iter()
                        .map(|f| (command.clone(), f))
                        .collect();
                }
                _ if words(code).contains(&"skillfold") => {
                    // Only what follows `skillfold` is ours (`- run: skillfold update --write`).
                    let ours: Vec<&str> = words(code)
                        .into_iter()
                        .skip_while(|w| *w != "skillfold")
                        .collect();
                    flags = span_flags(&ours.join(" "), known, false).unwrap_or_default();
                    let command = flags.last().and_then(|(c, _)| c.clone()).or_else(|| {
                        let next = ours.get(1).copied().unwrap_or_default();
                        Some(if known.contains_key(next) { next } else { "" }.to_owned())
                    });
                    continued = Some((command, indent));
                }
                _ => continued = None,
            }
            open = continued.is_some() && line.trim_end().ends_with('\\');
        } else {
            if sections && let Some(heading) = line.strip_prefix("## ") {
                (section, subsection) = (heading_commands(heading, known), Vec::new());
                continue;
            }
            if sections && let Some(heading) = line.strip_prefix("### ") {
                subsection = heading_commands(heading, known);
                continue;
            }
            // A paragraph, or a row of a table, is where a command named once holds.
            let item = line.trim_start();
            if item.is_empty()
                || ["|", "#", "- ", "* "].iter().any(|p| item.starts_with(p))
                || item
                    .split_once(". ")
                    .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
            {
                paragraph = None;
            }
            let here = if subsection.is_empty() {
                &section
            } else {
                &subsection
            };
            for span in line.split('`').skip(1).step_by(2) {
                let Some(spanned) = span_flags(span, known, true) else {
                    continue;
                };
                if let Some(command) = spanned.iter().rev().find_map(|(c, _)| c.clone()) {
                    paragraph = Some(command).filter(|c| !c.is_empty());
                } else if let Some(command) = span.strip_prefix("skillfold ") {
                    // `skillfold serve` (`serve` alone may be a word of the prose).
                    paragraph = Some(command.to_owned()).filter(|c| known.contains_key(c));
                }
                for (command, flag) in spanned {
                    let other = OTHER_PROGRAMS.iter().any(|(f, _)| *f == flag);
                    match (command, &paragraph) {
                        (None, _) if other => flags.push((None, flag)),
                        (None, Some(command)) => flags.push((Some(command.clone()), flag)),
                        (None, None) if !here.is_empty() => {
                            flags.extend(here.iter().map(|c| (Some(c.clone()), flag.clone())));
                        }
                        (command, _) => flags.push((command, flag)),
                    }
                }
            }
        }
        found.extend(flags.into_iter().map(|(command, flag)| Named {
            command,
            flag,
            line: number + 1,
            fenced,
        }));
    }
    found
}

/// The pages whose flags are checked: the README and `docs/`.
fn checked_pages() -> Vec<std::path::PathBuf> {
    pages()
        .into_iter()
        .filter(|p| {
            let name = relative(p);
            name == "README.md" || name.starts_with("docs/")
        })
        .collect()
}

#[test]
fn every_flag_a_page_names_is_in_its_commands_help() {
    let known = commands();
    let any: BTreeSet<&String> = known.values().flatten().collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for page in checked_pages() {
        let name = relative(&page);
        let text = fs_err::read_to_string(&page).expect("read a page");
        for n in named(&text, &known, name == "docs/cli.md") {
            checked += 1;
            let other = OTHER_PROGRAMS.iter().any(|(f, _)| *f == n.flag);
            match &n.command {
                Some(command) if !known[command].contains(&n.flag) => wrong.push(format!(
                    "{name}:{}: `{}` is not an option of `skillfold {command}` (its --help: {:?})",
                    n.line, n.flag, known[command]
                )),
                None if !any.contains(&n.flag) && !other => wrong.push(format!(
                    "{name}:{}: `{}` is not an option of any command",
                    n.line, n.flag
                )),
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        checked > 100,
        "only {checked} flags found: is the scanner broken?"
    );
}

#[test]
fn every_flag_of_every_help_is_described_in_the_reference() {
    let known = commands();
    let page = Path::new(ROOT).join("docs/cli.md");
    let text = fs_err::read_to_string(&page).expect("read docs/cli.md");
    let named = named(&text, &known, true);
    let described = |command: &str, flag: &str| {
        named.iter().any(|n| {
            n.flag == flag
                && !n.fenced
                && (n.command.as_deref() == Some(command) || n.command.is_none())
        })
    };
    let mut missing = Vec::new();
    for (command, flags) in &known {
        for flag in flags {
            if !UNIVERSAL.contains(&flag.as_str()) && !described(command, flag) {
                missing.push(format!(
                    "`skillfold {command} {flag}` is not described in docs/cli.md"
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The scanner ties flags to the commands a page names, and leaves other programs' alone.
#[test]
fn flags_are_tied_to_their_commands() {
    let known: BTreeMap<String, BTreeSet<String>> = ["serve", "push", "prepare", "update"]
        .map(|c| (c.to_owned(), BTreeSet::new()))
        .into();
    let text = [
        "# Page",
        "run `skillfold serve --listen 0:0` or `push --to=R`, with `--tag`;",
        "",
        "see `--json`.",
        "- with `serve` `--watch` reloads",
        "## `skillfold prepare`",
        "| `--rollback` | back; `git fetch --depth 1` |",
        "```sh",
        "$ skillfold serve --tokens t.json \\",
        "    --oauth o.yaml",
        "cargo test --features failpoints",
        "skillfold prepare [--json]",
        "                  [--concurrency N]",
        "```",
        "### Options of `serve` and `push`",
        "| `--agent NAME` | also `skillfold --version` |",
        "```yaml",
        "  image: example/skillfold-ci   # skillfold, git and glab",
        "  script:",
        "    - skillfold update --write > review.md",
        "    - git diff --quiet skillfold.yaml",
        "```",
    ]
    .join("\n");
    let named = named(&text, &known, true);
    let found: Vec<(Option<&str>, &str, bool)> = named
        .iter()
        .map(|n| (n.command.as_deref(), n.flag.as_str(), n.fenced))
        .collect();
    assert_eq!(
        found,
        [
            (Some("serve"), "--listen", false),
            (Some("push"), "--to", false),
            (Some("push"), "--tag", false),
            (None, "--json", false),
            (None, "--watch", false),
            (Some("prepare"), "--rollback", false),
            (Some("serve"), "--tokens", true),
            (Some("serve"), "--oauth", true),
            (Some("prepare"), "--json", true),
            (Some("prepare"), "--concurrency", true),
            (Some("serve"), "--agent", false),
            (Some("push"), "--agent", false),
            (Some(""), "--version", false),
            (Some("update"), "--write", true),
        ]
    );
}
