//! Writing what a command prints, so that no write error turns into a panic or a wrong exit
//! status, and no line reaches a terminal with a raw control character in it.
//!
//! - **Data** goes to stdout with [`print`]. A reader that went away (`skillfold … | head -c1`,
//!   EPIPE) ends the output quietly and the command keeps its own exit status; any other write
//!   error (a full disk) loses the output, so it is reported and the command exits 1
//!   (retryable). Rust ignores SIGPIPE, so a closed pipe is an error value here, never a signal.
//! - **Diagnostics** go to stderr with [`diag!`], one line at a time. A write error there is
//!   ignored: stderr closed, full, or a pipe nobody reads any more (a log collector that went
//!   away) must change neither what the command does nor how it exits.
//! - **click's echo** ([`echo`]) is the one writer of the skills-ref compatible commands
//!   (`validate`, `read-properties`, `to-prompt` and their argument errors), which print what
//!   skills-ref prints byte for byte: no escaping, ANSI sequences stripped off a terminal, and
//!   any write error ignored, as click does.
//!
//! **JSON** goes to stdout with [`print_json`], the one writer of every `--json` report: it is
//! [`json_text`]'s, which writes the C1 controls, the bidi and zero-width characters and the line
//! separators as `\uXXXX`, so a report parses to the same strings and shows none of them raw.
//!
//! Messages escape the untrusted values they show where they are built
//! ([`crate::support::escape`]). Every diagnostic line also passes [`guard`], the last line of
//! defence for text built elsewhere (an I/O error that names a path, a dependency's message):
//! a control or reordering character still raw in it is written with the same escaping.
//!
//! `println!` and `eprintln!` panic when a write fails; this binary does not use them.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::{IsTerminal as _, Write as _};

use crate::skills_ref::python;
use crate::support::{escape, json_text};

use crate::cli::exit::Exit;
use crate::codes::CommandCode;

/// Writes one diagnostic line on stderr, like `eprintln!`, but never panics (see the module doc).
macro_rules! diag {
    ($($arg:tt)*) => {
        $crate::cli::output::diag_line(format_args!($($arg)*))
    };
}

/// Writes `line` and a newline on stderr after [`guard`]; write errors are ignored.
pub fn diag_line(line: fmt::Arguments<'_>) {
    let text = line.to_string();
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(guard(&text).as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

/// Writes `text` on stderr without a newline (a status line rewritten in place on a terminal),
/// after [`guard`]; `control` is written first, as it is (the sequence that clears the line).
pub fn status(control: &str, text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(control.as_bytes())
        .and_then(|()| err.write_all(guard(text).as_bytes()))
        .and_then(|()| err.flush());
}

/// Writes `text` on stdout and flushes. Returns the exit status the write adds: `Ok` when it was
/// written or the reader went away, `output_failed`'s (retryable, after saying so on stderr)
/// when it was lost.
#[must_use = "a lost output makes the command retryable"]
pub fn print(text: &str) -> Exit {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Exit::Ok,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::Ok,
        Err(e) => {
            let code = CommandCode::OutputFailed;
            diag!("error: cannot write to stdout: {e} [{code}]");
            Exit::of(&code)
        }
    }
}

/// Writes `report` as pretty JSON and a newline on stdout, escaped by [`json_text`] (every
/// command's JSON goes through here). Returns the exit status it adds, as [`print`] does
/// (`output_failed` too when the report cannot be rendered).
#[must_use = "a lost report makes the command retryable"]
pub fn print_json(report: &(impl serde::Serialize + ?Sized)) -> Exit {
    match json_text::pretty(report) {
        Ok(text) => print(&(text + "\n")),
        Err(e) => {
            let code = CommandCode::OutputFailed;
            diag!("error: cannot render the report: {e} [{code}]");
            Exit::of(&code)
        }
    }
}

/// The end of a command with a report: `exit`, made worse by printing `report` as JSON when
/// `json` asks for it.
pub fn finish(exit: Exit, json: bool, report: &impl serde::Serialize) -> Exit {
    if json {
        exit.worse(print_json(report))
    } else {
        exit
    }
}

/// The detail lines a refusal shows on stderr; `--json` reports hold them all.
pub const MAX_DETAILS: usize = 10;

/// Writes the details of a refusal on stderr, each after `indent`: the first [`MAX_DETAILS`],
/// then how many more there are and where to find them (``… N more (`--json` for all)``), then the
/// hint, when there is one, as a `hint:` line (the one rendering of
/// [`Hint`](crate::format::hint::Hint) for every command).
pub fn details(indent: &str, lines: &[String], hint: Option<&crate::format::hint::Hint>) {
    details_with(indent, lines, "`--json` for all", hint);
}

/// [`details`], saying how to see them all with `all` (for a command whose `--json` does not
/// report this refusal).
pub fn details_with(
    indent: &str,
    lines: &[String],
    all: &str,
    hint: Option<&crate::format::hint::Hint>,
) {
    for line in lines.iter().take(MAX_DETAILS) {
        diag!("{indent}{line}");
    }
    if lines.len() > MAX_DETAILS {
        diag!("{indent}… {} more ({all})", lines.len() - MAX_DETAILS);
    }
    if let Some(hint) = hint {
        diag!("{indent}hint: {hint}");
    }
}

/// The lines of a descriptor that cannot be used, as every command prints them: `error: ` and
/// each problem, under a syntax error the offending line with a caret, and the hint of the first
/// problem that has one (`scan_missing`: `pin --scan`). Returns what was
/// printed (the termination log of `prepare` keeps it too).
pub fn check_error(e: &crate::ops::check::CheckError) -> Vec<String> {
    let mut printed = Vec::new();
    for line in e.lines() {
        printed.push(format!("error: {line}"));
    }
    printed.extend(e.excerpt_lines());
    let lines = e.lines();
    if let Some(hint) = crate::format::hint::Hint::of_lines(
        lines.iter().map(String::as_str),
        crate::format::hint::Via::Descriptor,
    ) {
        printed.push(format!("hint: {hint}"));
    }
    for line in &printed {
        diag!("{line}");
    }
    printed
}

/// click's `echo` to stdout or stderr, for the skills-ref compatible commands
/// ([`crate::cli::agentskills`]): `text` and a newline, ANSI CSI sequences stripped when the
/// stream is not a terminal; like click, a failed write is not reported.
pub fn echo(err: bool, text: &str) {
    let strip = if err {
        !std::io::stderr().is_terminal()
    } else {
        !std::io::stdout().is_terminal()
    };
    let text = if strip {
        python::strip_ansi(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let mut bytes = text.into_owned().into_bytes();
    bytes.push(b'\n');
    // Like click, a failed write (a closed pipe) is not reported.
    let _ = if err {
        std::io::stderr().lock().write_all(&bytes)
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes).and_then(|()| out.flush())
    };
}

/// `line` with every control or reordering character that is still raw written as
/// [`escape::text`] writes it. A backslash is left alone: in text that was escaped where it was
/// built it already starts an escape, and doubling it would garble the message.
pub fn guard(line: &str) -> Cow<'_, str> {
    let raw = |c: char| c != '\\' && escape::needs_escape(c);
    if !line.chars().any(raw) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if raw(c) {
            let _ = write!(out, "{}", escape::text(c.encode_utf8(&mut [0; 4])));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::guard;

    #[test]
    fn guard_escapes_what_was_left_raw_and_keeps_what_was_escaped() {
        let hostile = "error: `x\nok: forged\u{1b}[8m`: no such directory";
        assert_eq!(
            guard(hostile),
            "error: `x\\nok: forged\\u{1b}[8m`: no such directory"
        );
        let escaped = crate::support::escape::text("a\\b\n").to_string();
        assert_eq!(
            guard(&escaped),
            escaped,
            "already escaped text is unchanged"
        );
        assert_eq!(guard("\u{202e}\u{9b}\t"), "\\u{202e}\\u{9b}\\t");
    }
}
