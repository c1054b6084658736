//! Scans the three kinds of scalar, block (`|`, `>`), quoted (`'…'`, `"…"`, with escapes)
//! and plain, into a scalar token holding the folded value, for the parser.

use super::{BREAKS, END_OR_SPACE, Scanner, THE_END, THE_END_SPACE_TAB, Token, TokenKind, is_in};
use crate::skills_ref::strict_yaml::errors::{Fail, MarkedError, YamlResult, err};
use crate::skills_ref::strict_yaml::reader::Mark;

impl Scanner {
    pub(super) fn scan_block_scalar(&mut self, folded: bool) -> YamlResult<Token> {
        let mut chunks = String::new();
        let start = self.mark();
        self.reader.forward(1);
        let (chomping, increment) = self.scan_block_scalar_indicators(start)?;
        self.scan_block_scalar_ignored_line(start)?;
        let mut min_indent = self.indent + 1;
        let indent;
        let (mut breaks, mut end_mark);
        match increment {
            None => {
                let (b, max_indent, e) = self.scan_block_scalar_indentation();
                breaks = b;
                end_mark = e;
                indent = min_indent.max(max_indent as i64);
            }
            Some(increment) => {
                if min_indent < 1 {
                    min_indent = 1;
                }
                indent = min_indent + increment - 1;
                (breaks, end_mark) = self.scan_block_scalar_breaks(indent);
            }
        }
        let mut line_break = String::new();
        while self.reader.column as i64 == indent && self.reader.peek(0) != '\0' {
            chunks.push_str(&breaks.concat());
            let leading_non_space = !is_in(self.reader.peek(0), " \t");
            let mut length = 0;
            while !is_in(self.reader.peek(length), THE_END) {
                length += 1;
            }
            chunks.push_str(&self.reader.prefix(length));
            self.reader.forward(length);
            line_break = self.scan_line_break(false);
            (breaks, end_mark) = self.scan_block_scalar_breaks(indent);
            if min_indent == 0
                && (self.check_document_indicator("---") || self.check_document_indicator("..."))
            {
                break;
            }
            if self.reader.column as i64 == indent && self.reader.peek(0) != '\0' {
                if folded
                    && line_break == "\n"
                    && leading_non_space
                    && !is_in(self.reader.peek(0), " \t")
                {
                    if breaks.is_empty() {
                        chunks.push(' ');
                    }
                } else {
                    chunks.push_str(&line_break);
                }
            } else {
                break;
            }
        }
        if chomping != Some(false) {
            chunks.push_str(&line_break);
        }
        let trailing = if chomping == Some(true) {
            chunks.push_str(&breaks.concat());
            false
        } else {
            !breaks.is_empty()
        };
        let mut token = Token::new(TokenKind::Scalar, start, end_mark);
        token.value = chunks;
        if trailing {
            // The round-trip scanner swallows the comments and blank lines that follow.
            while self.scan_to_next_token().is_some() {}
        }
        Ok(token)
    }

    fn scan_block_scalar_indicators(
        &mut self,
        start: Mark,
    ) -> YamlResult<(Option<bool>, Option<i64>)> {
        let context = Some("while scanning a block scalar");
        let mut chomping = None;
        let mut increment = None;
        let zero = "expected indentation indicator in the range 1-9, but found 0";
        let ch = self.reader.peek(0);
        if ch == '+' || ch == '-' {
            chomping = Some(ch == '+');
            self.reader.forward(1);
            let ch = self.reader.peek(0);
            if let Some(d) = ch.to_digit(10) {
                if d == 0 {
                    return err(context, Some(start), zero.into(), self.mark());
                }
                increment = Some(i64::from(d));
                self.reader.forward(1);
            }
        } else if let Some(d) = ch.to_digit(10) {
            if d == 0 {
                return err(context, Some(start), zero.into(), self.mark());
            }
            increment = Some(i64::from(d));
            self.reader.forward(1);
            let ch = self.reader.peek(0);
            if ch == '+' || ch == '-' {
                chomping = Some(ch == '+');
                self.reader.forward(1);
            }
        }
        let ch = self.reader.peek(0);
        if !is_in(ch, END_OR_SPACE) {
            let p = format!(
                "expected chomping or indentation indicators, but found {}",
                self.found(ch)
            );
            return err(context, Some(start), p, self.mark());
        }
        Ok((chomping, increment))
    }

    fn scan_block_scalar_ignored_line(&mut self, start: Mark) -> YamlResult<()> {
        while self.reader.peek(0) == ' ' {
            self.reader.forward(1);
        }
        if self.reader.peek(0) == '#' {
            while !is_in(self.reader.peek(0), THE_END) {
                self.reader.forward(1);
            }
        }
        let ch = self.reader.peek(0);
        if !is_in(ch, THE_END) {
            let p = format!(
                "expected a comment or a line break, but found {}",
                self.found(ch)
            );
            return err(
                Some("while scanning a block scalar"),
                Some(start),
                p,
                self.mark(),
            );
        }
        self.scan_line_break(false);
        Ok(())
    }

    fn scan_block_scalar_indentation(&mut self) -> (Vec<String>, usize, Mark) {
        let mut chunks = Vec::new();
        let mut max_indent = 0;
        let mut end = self.mark();
        while is_in(self.reader.peek(0), " \r\n\u{85}\u{2028}\u{2029}") {
            if self.reader.peek(0) != ' ' {
                chunks.push(self.scan_line_break(false));
                end = self.mark();
            } else {
                self.reader.forward(1);
                max_indent = max_indent.max(self.reader.column);
            }
        }
        (chunks, max_indent, end)
    }

    fn scan_block_scalar_breaks(&mut self, indent: i64) -> (Vec<String>, Mark) {
        let mut chunks = Vec::new();
        let mut end = self.mark();
        while (self.reader.column as i64) < indent && self.reader.peek(0) == ' ' {
            self.reader.forward(1);
        }
        while is_in(self.reader.peek(0), BREAKS) {
            chunks.push(self.scan_line_break(false));
            end = self.mark();
            while (self.reader.column as i64) < indent && self.reader.peek(0) == ' ' {
                self.reader.forward(1);
            }
        }
        (chunks, end)
    }

    pub(super) fn scan_flow_scalar(&mut self, double: bool) -> YamlResult<Token> {
        let mut chunks = String::new();
        let start = self.mark();
        let quote = self.reader.peek(0);
        self.reader.forward(1);
        self.scan_flow_scalar_non_spaces(double, start, &mut chunks)?;
        while self.reader.peek(0) != quote {
            self.scan_flow_scalar_spaces(start, &mut chunks)?;
            self.scan_flow_scalar_non_spaces(double, start, &mut chunks)?;
        }
        self.reader.forward(1);
        let mut token = Token::new(TokenKind::Scalar, start, self.mark());
        token.value = chunks;
        Ok(token)
    }

    fn scan_flow_scalar_non_spaces(
        &mut self,
        double: bool,
        start: Mark,
        out: &mut String,
    ) -> YamlResult<()> {
        let context = Some("while scanning a double-quoted scalar");
        loop {
            let mut length = 0;
            while !is_in(
                self.reader.peek(length),
                " \n'\"\\\0\t\r\u{85}\u{2028}\u{2029}",
            ) {
                length += 1;
            }
            if length != 0 {
                out.push_str(&self.reader.prefix(length));
                self.reader.forward(length);
            }
            let ch = self.reader.peek(0);
            if !double && ch == '\'' && self.reader.peek(1) == '\'' {
                out.push('\'');
                self.reader.forward(2);
            } else if (double && ch == '\'') || (!double && is_in(ch, "\"\\")) {
                out.push(ch);
                self.reader.forward(1);
            } else if double && ch == '\\' {
                self.reader.forward(1);
                let ch = self.reader.peek(0);
                if let Some(replacement) = escape_replacement(ch) {
                    out.push(replacement);
                    self.reader.forward(1);
                } else if let Some(length) = escape_code_length(ch) {
                    self.reader.forward(1);
                    for k in 0..length {
                        let c = self.reader.peek(k);
                        if !c.is_ascii_hexdigit() {
                            let p = format!(
                                "expected escape sequence of {length} hexdecimal numbers, but found {}",
                                self.found(c)
                            );
                            return err(context, Some(start), p, self.mark());
                        }
                    }
                    let code =
                        u32::from_str_radix(&self.reader.prefix(length), 16).unwrap_or(u32::MAX);
                    let Some(c) = char::from_u32(code) else {
                        return Err(Fail::Crash(format!(
                            "the escape `\\{}{}` on line {} is not a Unicode scalar value (a surrogate or beyond U+10FFFF)",
                            ch,
                            self.reader.prefix(length),
                            self.reader.line + 1
                        )));
                    };
                    out.push(c);
                    self.reader.forward(length);
                } else if is_in(ch, BREAKS) {
                    self.scan_line_break(false);
                    let breaks = self.scan_flow_scalar_breaks(start)?;
                    out.push_str(&breaks.concat());
                } else {
                    let p = format!("found unknown escape character {}", self.found(ch));
                    return err(context, Some(start), p, self.mark());
                }
            } else {
                return Ok(());
            }
        }
    }

    fn scan_flow_scalar_spaces(&mut self, start: Mark, out: &mut String) -> YamlResult<()> {
        let mut length = 0;
        while is_in(self.reader.peek(length), " \t") {
            length += 1;
        }
        let whitespaces = self.reader.prefix(length);
        self.reader.forward(length);
        let ch = self.reader.peek(0);
        if ch == '\0' {
            return err(
                Some("while scanning a quoted scalar"),
                Some(start),
                "found unexpected end of stream".into(),
                self.mark(),
            );
        }
        if is_in(ch, BREAKS) {
            let line_break = self.scan_line_break(false);
            let breaks = self.scan_flow_scalar_breaks(start)?;
            if line_break != "\n" {
                out.push_str(&line_break);
            } else if breaks.is_empty() {
                out.push(' ');
            }
            out.push_str(&breaks.concat());
        } else {
            out.push_str(&whitespaces);
        }
        Ok(())
    }

    fn scan_flow_scalar_breaks(&mut self, start: Mark) -> YamlResult<Vec<String>> {
        let mut chunks = Vec::new();
        loop {
            let prefix = self.reader.prefix(3);
            if (prefix == "---" || prefix == "...") && is_in(self.reader.peek(3), THE_END_SPACE_TAB)
            {
                return err(
                    Some("while scanning a quoted scalar"),
                    Some(start),
                    "found unexpected document separator".into(),
                    self.mark(),
                );
            }
            while is_in(self.reader.peek(0), " \t") {
                self.reader.forward(1);
            }
            if is_in(self.reader.peek(0), BREAKS) {
                chunks.push(self.scan_line_break(false));
            } else {
                return Ok(chunks);
            }
        }
    }

    pub(super) fn scan_plain(&mut self) -> YamlResult<Token> {
        let mut chunks = String::new();
        let start = self.mark();
        let mut end = start;
        let indent = self.indent + 1;
        let mut spaces: Option<Vec<String>> = Some(Vec::new());
        let flow = self.flow_level() > 0;
        loop {
            let mut length = 0;
            if self.reader.peek(0) == '#' {
                break;
            }
            let mut ch;
            loop {
                ch = self.reader.peek(length);
                let next = self.reader.peek(length + 1);
                let part_of_scalar = (ch == ':' && !is_in(next, THE_END_SPACE_TAB))
                    || (ch == '?' && self.version() != (1, 1));
                if !part_of_scalar
                    && (is_in(ch, THE_END_SPACE_TAB)
                        || (!flow && ch == ':' && is_in(next, THE_END_SPACE_TAB))
                        || (flow && is_in(ch, ",:?[]{}")))
                {
                    break;
                }
                length += 1;
            }
            if flow
                && ch == ':'
                && !is_in(
                    self.reader.peek(length + 1),
                    "\0 \t\r\n\u{85}\u{2028}\u{2029},[]{}",
                )
            {
                self.reader.forward(length);
                return Err(Fail::Marked(MarkedError {
                    context: Some("while scanning a plain scalar".into()),
                    context_mark: Some(start),
                    problem: "found unexpected ':'".into(),
                    problem_mark: self.mark(),
                    note: Some(
                        "Please check http://pyyaml.org/wiki/YAMLColonInFlowContext for details.",
                    ),
                }));
            }
            if length == 0 {
                break;
            }
            self.allow_simple_key = false;
            if let Some(spaces) = &spaces {
                chunks.push_str(&spaces.concat());
            }
            chunks.push_str(&self.reader.prefix(length));
            self.reader.forward(length);
            end = self.mark();
            spaces = self.scan_plain_spaces();
            if spaces.as_ref().is_none_or(Vec::is_empty)
                || self.reader.peek(0) == '#'
                || (!flow && (self.reader.column as i64) < indent)
            {
                break;
            }
        }
        let mut token = Token::new(TokenKind::Scalar, start, end);
        token.value = chunks;
        token.plain = true;
        Ok(token)
    }

    fn scan_plain_spaces(&mut self) -> Option<Vec<String>> {
        let mut chunks = Vec::new();
        let mut length = 0;
        while self.reader.peek(length) == ' ' {
            length += 1;
        }
        let whitespaces = self.reader.prefix(length);
        self.reader.forward(length);
        let ch = self.reader.peek(0);
        let separator = |s: &Scanner| {
            let prefix = s.reader.prefix(3);
            (prefix == "---" || prefix == "...") && is_in(s.reader.peek(3), THE_END_SPACE_TAB)
        };
        if is_in(ch, BREAKS) {
            let line_break = self.scan_line_break(false);
            self.allow_simple_key = true;
            if separator(self) {
                return None;
            }
            let mut breaks = Vec::new();
            while is_in(self.reader.peek(0), " \r\n\u{85}\u{2028}\u{2029}") {
                if self.reader.peek(0) == ' ' {
                    self.reader.forward(1);
                } else {
                    breaks.push(self.scan_line_break(false));
                    if separator(self) {
                        return None;
                    }
                }
            }
            if line_break != "\n" {
                chunks.push(line_break);
            } else if breaks.is_empty() {
                chunks.push(" ".into());
            }
            chunks.extend(breaks);
        } else if !whitespaces.is_empty() {
            chunks.push(whitespaces);
        }
        Some(chunks)
    }
}

fn escape_replacement(c: char) -> Option<char> {
    Some(match c {
        '0' => '\0',
        'a' => '\u{07}',
        'b' => '\u{08}',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\u{0b}',
        'f' => '\u{0c}',
        'r' => '\r',
        'e' => '\u{1b}',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        _ => return None,
    })
}

fn escape_code_length(c: char) -> Option<usize> {
    match c {
        'x' => Some(2),
        'u' => Some(4),
        'U' => Some(8),
        _ => None,
    }
}
