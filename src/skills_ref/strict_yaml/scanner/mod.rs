//! The scanner: turns the reader's code points into [`Token`]s, with ruamel's simple-key,
//! indentation and round-trip comment bookkeeping, and refuses tags, flow collections and
//! anchors when the parser asks for them (strictyaml's `check_token`). It hands the parser
//! tokens through [`Scanner::check`], [`Scanner::peek_token`] and [`Scanner::get_token`].
//! The long tokens are scanned in its children: [`directives`], [`properties`] (anchors,
//! aliases, tags) and [`scalars`]; [`tokens`] defines what it hands over, and [`simple_keys`]
//! keeps the possible simple keys and the indentation.

mod directives;
mod properties;
mod scalars;
mod simple_keys;
mod tokens;

use std::collections::VecDeque;

use super::errors::{YamlResult, err};
use super::reader::{Mark, Reader};
use crate::skills_ref::python;

pub(super) use tokens::{Token, TokenKind};

const THE_END: &str = "\n\0\r\u{85}\u{2028}\u{2029}";
const THE_END_SPACE_TAB: &str = " \n\0\t\r\u{85}\u{2028}\u{2029}";
const BREAKS: &str = "\r\n\u{85}\u{2028}\u{2029}";
const END_OR_SPACE: &str = "\0 \r\n\u{85}\u{2028}\u{2029}";

fn is_in(c: char, set: &str) -> bool {
    set.contains(c)
}

#[derive(Debug, Clone, Copy)]
struct SimpleKey {
    token_number: usize,
    required: bool,
    index: usize,
    line: usize,
    column: usize,
    mark: Mark,
}

pub(super) struct Scanner {
    pub(super) reader: Reader,
    done: bool,
    flow_context: Vec<char>,
    tokens: VecDeque<Token>,
    tokens_taken: usize,
    indent: i64,
    indents: Vec<i64>,
    allow_simple_key: bool,
    /// By flow level, in insertion order (a Python dict).
    possible_simple_keys: Vec<(usize, SimpleKey)>,
    yaml_version: Option<(u64, u64)>,
}

impl Scanner {
    pub(super) fn new(reader: Reader) -> Scanner {
        let mut s = Scanner {
            reader,
            done: false,
            flow_context: Vec::new(),
            tokens: VecDeque::new(),
            tokens_taken: 0,
            indent: -1,
            indents: Vec::new(),
            allow_simple_key: true,
            possible_simple_keys: Vec::new(),
            yaml_version: None,
        };
        let m = s.reader.mark();
        s.tokens.push_back(Token::new(TokenKind::StreamStart, m, m));
        s
    }

    pub(super) fn version(&self) -> (u64, u64) {
        self.yaml_version.unwrap_or((1, 2))
    }

    fn flow_level(&self) -> usize {
        self.flow_context.len()
    }

    pub(super) fn mark(&self) -> Mark {
        self.reader.mark()
    }

    // The public face, as the parser uses it. `check` is strictyaml's `check_token`, which
    // refuses tags, flow collections and anchors when the parser asks for them.
    pub(super) fn check(&mut self, choices: &[TokenKind]) -> YamlResult<bool> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        self.gather_comments()?;
        let Some(first) = self.tokens.front() else {
            return Ok(false);
        };
        for &choice in choices {
            if first.kind == choice {
                match first.kind {
                    TokenKind::Tag => {
                        return err(
                            Some("While scanning"),
                            Some(first.end),
                            "Found disallowed tag tokens (do not specify types in markup)".into(),
                            first.start,
                        );
                    }
                    TokenKind::FlowMappingStart | TokenKind::FlowSequenceStart => {
                        return err(
                            Some("While scanning"),
                            Some(first.start),
                            "Found ugly disallowed JSONesque flow mapping (surround with ' and ' to make text appear literally)".into(),
                            first.end,
                        );
                    }
                    TokenKind::Anchor => {
                        return err(
                            Some("While scanning"),
                            Some(first.start),
                            "Found confusing disallowed anchor token (surround with ' and ' to make text appear literally)".into(),
                            first.end,
                        );
                    }
                    _ => return Ok(true),
                }
            }
        }
        Ok(false)
    }

    pub(super) fn peek_token(&mut self) -> YamlResult<Token> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        self.gather_comments()?;
        // The stream always ends with a stream-end token, which is never taken.
        Ok(self.tokens.front().cloned().unwrap_or_else(|| {
            Token::new(TokenKind::StreamEnd, self.reader.mark(), self.reader.mark())
        }))
    }

    pub(super) fn get_token(&mut self) -> YamlResult<Token> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        self.gather_comments()?;
        if self.tokens.len() > 1 && self.tokens[1].kind == TokenKind::Comment {
            let first_kind = self.tokens[0].kind;
            let same_line = self.tokens[0].end.line == self.tokens[1].start.line;
            let trailing = matches!(
                first_kind,
                TokenKind::Scalar
                    | TokenKind::Value
                    | TokenKind::FlowSequenceEnd
                    | TokenKind::FlowMappingEnd
            ) && same_line;
            let following = first_kind == TokenKind::Scalar && !same_line;
            if trailing || following {
                self.tokens_taken += 1;
                self.tokens.remove(1);
                self.fetch_more_tokens()?;
                while self.tokens.len() > 1 && self.tokens[1].kind == TokenKind::Comment {
                    self.tokens_taken += 1;
                    self.tokens.remove(1);
                    self.fetch_more_tokens()?;
                }
                self.tokens[0].comment = true;
            }
        }
        match self.tokens.pop_front() {
            Some(token) => {
                self.tokens_taken += 1;
                Ok(token)
            }
            None => Ok(Token::new(
                TokenKind::StreamEnd,
                self.reader.mark(),
                self.reader.mark(),
            )),
        }
    }

    fn gather_comments(&mut self) -> YamlResult<()> {
        if self.tokens.is_empty() {
            return Ok(());
        }
        let mut found = false;
        if self.tokens[0].kind == TokenKind::Comment {
            self.tokens.pop_front();
            self.tokens_taken += 1;
            found = true;
        }
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
            if self.tokens.is_empty() {
                return Ok(());
            }
            if self.tokens[0].kind == TokenKind::Comment {
                self.tokens_taken += 1;
                self.tokens.pop_front();
                found = true;
            }
        }
        if found && let Some(first) = self.tokens.front_mut() {
            first.comment = true;
        }
        if !self.done && self.tokens.len() < 2 {
            self.fetch_more_tokens()?;
        }
        Ok(())
    }

    fn need_more_tokens(&mut self) -> YamlResult<bool> {
        if self.done {
            return Ok(false);
        }
        if self.tokens.is_empty() {
            return Ok(true);
        }
        self.stale_possible_simple_keys()?;
        Ok(self.next_possible_simple_key() == Some(self.tokens_taken))
    }

    fn fetch_more_tokens(&mut self) -> YamlResult<()> {
        if let Some((start, end)) = self.scan_to_next_token() {
            self.tokens
                .push_back(Token::new(TokenKind::Comment, start, end));
            return Ok(());
        }
        self.stale_possible_simple_keys()?;
        self.unwind_indent(self.reader.column as i64);
        let ch = self.reader.peek(0);
        match ch {
            '\0' => return self.fetch_stream_end(),
            '%' if self.reader.column == 0 => return self.fetch_directive(),
            '-' if self.check_document_indicator("---") => {
                return self.fetch_document_indicator(TokenKind::DocumentStart);
            }
            '.' if self.check_document_indicator("...") => {
                return self.fetch_document_indicator(TokenKind::DocumentEnd);
            }
            '[' => return self.fetch_flow_collection_start(TokenKind::FlowSequenceStart, '['),
            '{' => return self.fetch_flow_collection_start(TokenKind::FlowMappingStart, '{'),
            ']' => return self.fetch_flow_collection_end(TokenKind::FlowSequenceEnd),
            '}' => return self.fetch_flow_collection_end(TokenKind::FlowMappingEnd),
            ',' => return self.fetch_flow_entry(),
            _ => {}
        }
        if ch == '-' && is_in(self.reader.peek(1), THE_END_SPACE_TAB) {
            return self.fetch_block_entry();
        }
        if ch == '?' && (self.flow_level() > 0 || is_in(self.reader.peek(1), THE_END_SPACE_TAB)) {
            return self.fetch_key();
        }
        if ch == ':' && self.check_value() {
            return self.fetch_value();
        }
        match ch {
            '*' => return self.fetch_anchor_or_alias(TokenKind::Alias),
            '&' => return self.fetch_anchor_or_alias(TokenKind::Anchor),
            '!' => {
                self.save_possible_simple_key()?;
                self.allow_simple_key = false;
                let token = self.scan_tag()?;
                self.tokens.push_back(token);
                return Ok(());
            }
            '|' | '>' if self.flow_level() == 0 => {
                self.allow_simple_key = true;
                self.remove_possible_simple_key()?;
                let token = self.scan_block_scalar(ch == '>')?;
                self.tokens.push_back(token);
                return Ok(());
            }
            '\'' | '"' => {
                self.save_possible_simple_key()?;
                self.allow_simple_key = false;
                let token = self.scan_flow_scalar(ch == '"')?;
                self.tokens.push_back(token);
                return Ok(());
            }
            _ => {}
        }
        if self.check_plain() {
            self.save_possible_simple_key()?;
            self.allow_simple_key = false;
            let token = self.scan_plain()?;
            self.tokens.push_back(token);
            return Ok(());
        }
        err(
            Some("while scanning for the next token"),
            None,
            format!(
                "found character {} that cannot start any token",
                python::repr(&ch.to_string())
            ),
            self.mark(),
        )
    }

    fn push_simple(&mut self, kind: TokenKind) {
        let start = self.mark();
        self.reader.forward(1);
        let end = self.mark();
        self.tokens.push_back(Token::new(kind, start, end));
    }

    fn fetch_stream_end(&mut self) -> YamlResult<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        self.possible_simple_keys.clear();
        let mark = self.mark();
        self.tokens
            .push_back(Token::new(TokenKind::StreamEnd, mark, mark));
        self.done = true;
        Ok(())
    }

    fn fetch_directive(&mut self) -> YamlResult<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_directive()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn check_document_indicator(&self, indicator: &str) -> bool {
        self.reader.column == 0
            && self.reader.prefix(3) == indicator
            && is_in(self.reader.peek(3), THE_END_SPACE_TAB)
    }

    fn fetch_document_indicator(&mut self, kind: TokenKind) -> YamlResult<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark();
        self.reader.forward(3);
        let end = self.mark();
        self.tokens.push_back(Token::new(kind, start, end));
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, kind: TokenKind, c: char) -> YamlResult<()> {
        self.save_possible_simple_key()?;
        self.flow_context.push(c);
        self.allow_simple_key = true;
        self.push_simple(kind);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, kind: TokenKind) -> YamlResult<()> {
        self.remove_possible_simple_key()?;
        self.flow_context.pop();
        self.allow_simple_key = false;
        self.push_simple(kind);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> YamlResult<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        self.push_simple(TokenKind::FlowEntry);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> YamlResult<()> {
        if self.flow_level() == 0 {
            if !self.allow_simple_key {
                return err(
                    None,
                    None,
                    "sequence entries are not allowed here".into(),
                    self.mark(),
                );
            }
            if self.add_indent(self.reader.column) {
                let mark = self.mark();
                self.tokens
                    .push_back(Token::new(TokenKind::BlockSequenceStart, mark, mark));
            }
        }
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        self.push_simple(TokenKind::BlockEntry);
        Ok(())
    }

    fn fetch_key(&mut self) -> YamlResult<()> {
        if self.flow_level() == 0 {
            if !self.allow_simple_key {
                return err(
                    None,
                    None,
                    "mapping keys are not allowed here".into(),
                    self.mark(),
                );
            }
            if self.add_indent(self.reader.column) {
                let mark = self.mark();
                self.tokens
                    .push_back(Token::new(TokenKind::BlockMappingStart, mark, mark));
            }
        }
        self.allow_simple_key = self.flow_level() == 0;
        self.remove_possible_simple_key()?;
        self.push_simple(TokenKind::Key);
        Ok(())
    }

    fn check_value(&self) -> bool {
        if self.version() == (1, 1) {
            if self.flow_level() > 0 {
                return true;
            }
        } else if self.flow_level() > 0 {
            let next_blank = is_in(self.reader.peek(1), THE_END_SPACE_TAB);
            if self.flow_context.last() == Some(&'[') {
                if !next_blank {
                    return false;
                }
            } else if self
                .tokens
                .back()
                .is_some_and(|token| token.kind == TokenKind::Value)
                && !next_blank
            {
                return false;
            }
            return true;
        }
        is_in(self.reader.peek(1), THE_END_SPACE_TAB)
    }

    fn fetch_value(&mut self) -> YamlResult<()> {
        let level = self.flow_level();
        if let Some(i) = self
            .possible_simple_keys
            .iter()
            .position(|(l, _)| *l == level)
        {
            let key = self.possible_simple_keys.remove(i).1;
            let at = key.token_number - self.tokens_taken;
            self.tokens
                .insert(at, Token::new(TokenKind::Key, key.mark, key.mark));
            if self.flow_level() == 0 && self.add_indent(key.column) {
                self.tokens.insert(
                    at,
                    Token::new(TokenKind::BlockMappingStart, key.mark, key.mark),
                );
            }
            self.allow_simple_key = false;
        } else {
            if self.flow_level() == 0 && !self.allow_simple_key {
                return err(
                    None,
                    None,
                    "mapping values are not allowed here".into(),
                    self.mark(),
                );
            }
            if self.flow_level() == 0 && self.add_indent(self.reader.column) {
                let mark = self.mark();
                self.tokens
                    .push_back(Token::new(TokenKind::BlockMappingStart, mark, mark));
            }
            self.allow_simple_key = self.flow_level() == 0;
            self.remove_possible_simple_key()?;
        }
        self.push_simple(TokenKind::Value);
        Ok(())
    }

    fn fetch_anchor_or_alias(&mut self, kind: TokenKind) -> YamlResult<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_anchor(kind)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn check_plain(&self) -> bool {
        const INDICATORS: &str = "\0 \t\r\n\u{85}\u{2028}\u{2029}-?:,[]{}#&*!|>'\"%@`";
        let ch = self.reader.peek(0);
        let ch1 = self.reader.peek(1);
        let block = self.flow_level() == 0;
        if self.version() == (1, 1) {
            return !is_in(ch, INDICATORS)
                || (!is_in(ch1, THE_END_SPACE_TAB) && (ch == '-' || (block && is_in(ch, "?:"))));
        }
        if !is_in(ch, INDICATORS) {
            return true;
        }
        if ch == '-' && !is_in(ch1, THE_END_SPACE_TAB) {
            return true;
        }
        if ch == ':' && !block && !is_in(ch1, " \t") {
            return true;
        }
        !is_in(ch1, THE_END_SPACE_TAB) && (ch == '-' || (block && is_in(ch, "?:")))
    }

    /// The round-trip scanner's `scan_to_next_token`: skips spaces, and returns the span of a
    /// comment or of a run of empty lines (which become comment tokens).
    fn scan_to_next_token(&mut self) -> Option<(Mark, Mark)> {
        if self.reader.pointer == 0 && self.reader.peek(0) == '\u{feff}' {
            self.reader.forward(1);
        }
        loop {
            while self.reader.peek(0) == ' ' {
                self.reader.forward(1);
            }
            if self.reader.peek(0) == '#' {
                let start = self.mark();
                self.reader.forward(1);
                let mut ch = '#';
                while !is_in(ch, THE_END) {
                    ch = self.reader.peek(0);
                    if ch == '\0' {
                        break;
                    }
                    self.reader.forward(1);
                }
                while !self.scan_line_break(false).is_empty() {}
                let end = self.mark();
                if self.flow_level() == 0 {
                    self.allow_simple_key = true;
                }
                return Some((start, end));
            }
            if self.scan_line_break(false).is_empty() {
                return None;
            }
            if self.flow_level() == 0 {
                self.allow_simple_key = true;
            }
            if self.reader.peek(0) == '\n' {
                let start = self.mark();
                while !self.scan_line_break(true).is_empty() {}
                let end = self.mark();
                return Some((start, end));
            }
        }
    }

    fn scan_line_break(&mut self, empty_line: bool) -> String {
        let ch = self.reader.peek(0);
        if matches!(ch, '\r' | '\n' | '\u{85}') {
            if self.reader.prefix(2) == "\r\n" {
                self.reader.forward(2);
            } else {
                self.reader.forward(1);
            }
            return "\n".into();
        }
        if matches!(ch, '\u{2028}' | '\u{2029}') || (empty_line && matches!(ch, '\t' | ' ')) {
            self.reader.forward(1);
            return ch.to_string();
        }
        String::new()
    }

    fn found(&self, c: char) -> String {
        python::repr(&c.to_string())
    }
}

/// ruamel's `token.move_comment(scanner.peek_token())`: always peeks (that drives the scanner);
/// moves the comment flag unless the target ends the stream or starts a document. Returns
/// whether the comment moved.
pub(super) fn move_comment(token: &Token, s: &mut Scanner) -> YamlResult<bool> {
    s.peek_token()?;
    if !token.comment {
        return Ok(false);
    }
    match s.tokens.front_mut() {
        Some(front) if !matches!(front.kind, TokenKind::StreamEnd | TokenKind::DocumentStart) => {
            front.comment = true;
            Ok(true)
        }
        _ => Ok(false),
    }
}
