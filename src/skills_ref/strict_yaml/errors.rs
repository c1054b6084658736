//! The errors of every stage. A stage fails with [`Fail`]: a marked YAML error (ruamel's
//! `MarkedYAMLError`: context, problem, their marks and an optional note) or a crash of the
//! reference. [`MarkedError::render`] turns a marked error into `str(e)`, byte for byte, for
//! [`super::load`] to hand back.

use super::reader::Mark;

#[derive(Debug)]
pub(super) struct MarkedError {
    pub(super) context: Option<String>,
    pub(super) context_mark: Option<Mark>,
    pub(super) problem: String,
    pub(super) problem_mark: Mark,
    pub(super) note: Option<&'static str>,
}

#[derive(Debug)]
pub(super) enum Fail {
    Marked(MarkedError),
    Crash(String),
}

/// The result of every step of the pipeline.
pub(super) type YamlResult<T> = Result<T, Fail>;

pub(super) fn err<T>(
    context: Option<&str>,
    context_mark: Option<Mark>,
    problem: String,
    mark: Mark,
) -> YamlResult<T> {
    Err(Fail::Marked(MarkedError {
        context: context.map(str::to_owned),
        context_mark,
        problem,
        problem_mark: mark,
        note: None,
    }))
}

impl MarkedError {
    /// `MarkedYAMLError.__str__`.
    pub(super) fn render(&self, buf: &[char]) -> String {
        let mut lines = Vec::new();
        if let Some(context) = &self.context {
            lines.push(context.clone());
        }
        if let Some(cm) = self.context_mark
            && (cm.line != self.problem_mark.line || cm.column != self.problem_mark.column)
        {
            lines.push(render_mark(cm, buf));
        }
        lines.push(self.problem.clone());
        lines.push(render_mark(self.problem_mark, buf));
        if let Some(note) = self.note {
            lines.push(note.to_owned());
        }
        lines.join("\n")
    }
}

/// `StringMark.__str__`: the position, then a snippet of the line with a caret.
fn render_mark(mark: Mark, buf: &[char]) -> String {
    let is_break = |c: char| matches!(c, '\0' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}');
    let mut head = "";
    let mut start = mark.pointer;
    while start > 0 && !is_break(buf[start - 1]) {
        start -= 1;
        // max_length / 2 - 1 with max_length 75
        if 2 * (mark.pointer - start) > 73 {
            head = " ... ";
            start += 5;
            break;
        }
    }
    let mut tail = "";
    let mut end = mark.pointer;
    while end < buf.len() && !is_break(buf[end]) {
        end += 1;
        if 2 * (end - mark.pointer) > 73 {
            tail = " ... ";
            end -= 5;
            break;
        }
    }
    let snippet: String = buf[start.min(end)..end].iter().collect();
    let pad = 4 + mark.pointer - start + head.len();
    format!(
        "  in \"<unicode string>\", line {}, column {}:\n    {head}{snippet}{tail}\n{}^ (line: {})",
        mark.line + 1,
        mark.column + 1,
        " ".repeat(pad),
        mark.line + 1
    )
}
