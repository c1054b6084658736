//! The YAML dialect of skills-ref 0.1.1: `strictyaml.load(text)` (strictyaml 1.7.3 with its
//! vendored ruamel.yaml, schema `Any()`), reproduced down to the text of its error messages.
//!
//! # Why a scanner of our own
//!
//! [`crate::yaml`] (saphyr) sees anchors, tags and flow style, but its errors, their positions
//! and the order in which problems are found are saphyr's. skills-ref prints `str(e)` of
//! ruamel's exceptions — context, marks with a source snippet and a caret, problem — and which
//! error wins depends on how far ruamel's scanner has looked ahead (simple-key lookahead, the
//! round-trip scanner's comment tokens). So this module re-implements that pipeline's
//! *behaviour*: a reader over code points with ruamel's line/column rules, a token scanner
//! with the same simple-key and indentation bookkeeping, the block-style parser, the composer
//! and the constructor checks strictyaml adds. The code is ours; the algorithm follows the
//! documented behaviour of PyYAML/ruamel so that every message and mark comes out the same.
//!
//! # The dialect
//!
//! - Every scalar is a string: `123`, `true`, `null`, `~`, dates stay as written; `key:` is `""`.
//! - Refused (`Invalid YAML` in skills-ref): flow collections `[…]`/`{…}` (when the parser
//!   reaches them), anchors, tags, aliases (never defined, since anchors are refused), duplicate
//!   keys (`name` and `'name'` too), sibling mappings at different indentation, a scalar merge
//!   value, a second document, and everything ruamel's scanner refuses (tabs where a token
//!   would start, `@`/`` ` ``/`%` starting a value, `: ` inside a plain value, …).
//! - A merge key `<<` with a mapping value is accepted and its keys are dropped, as strictyaml's
//!   `.data` does.
//! - Inputs on which strictyaml itself crashes instead of raising a YAML error (raw control
//!   characters, an escape outside Unicode, a lone surrogate escape, a sequence as a key, two
//!   merge keys in one mapping) give [`LoadError::Unsupported`]: skillfold reports them as errors
//!   rather than mimicking a traceback.
//!
//! Comment bookkeeping of ruamel's round-trip scanner is modelled only as far as it changes
//! which tokens are scanned and where empty values are marked.

use std::collections::VecDeque;

use super::python;

/// A parsed frontmatter value, as `strictyaml.load(text).data` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A scalar (every scalar is a string in this dialect).
    Str(String),
    /// A block sequence.
    List(Vec<Value>),
    /// A block mapping, keys in document order.
    Map(Vec<(String, Value)>),
    /// A plain `=` or `<<` in value position: ruamel has no constructor for these tags and
    /// yields a `TaggedScalar` object, which is not a string. Holds the scalar text.
    Tagged(String),
}

/// Why the frontmatter could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// strictyaml raises a YAML error; this is `str(e)`, byte for byte.
    Yaml(String),
    /// A character YAML does not allow in a stream (a control character, U+FFFE, …). skills-ref
    /// crashes with a traceback here.
    ControlChar {
        /// The character.
        ch: char,
        /// 1-based line in the frontmatter text (the `SKILL.md` line, since the text starts on
        /// the line of the opening fence).
        line: usize,
    },
    /// Input on which strictyaml crashes with something other than a YAML error.
    Unsupported(String),
}

/// Loads frontmatter text the way `strictyaml.load(text).data` does.
pub fn load(text: &str) -> Result<Value, LoadError> {
    if let Some((i, ch)) = text.char_indices().find(|&(_, c)| !stream_printable(c)) {
        let line = text[..i].matches('\n').count() + 1;
        return Err(LoadError::ControlChar { ch, line });
    }
    let mut buf: Vec<char> = text.chars().collect();
    buf.push('\0');
    let mut composer = Composer {
        parser: Parser::new(Scanner::new(Reader::new(buf))),
        depth: 0,
    };
    let result = composer.single_node().and_then(|root| {
        let mut checker = Checker::default();
        if let Some(root) = &root {
            checker.run(root)?;
        }
        Ok(root)
    });
    match result {
        Ok(Some(root @ (Node::Map { .. } | Node::Seq { .. }))) => Ok(build(&root)),
        Ok(_) => Ok(Value::Str(text.to_owned())),
        Err(Fail::Marked(e)) => Err(LoadError::Yaml(e.render(&composer.parser.scanner.r.buf))),
        Err(Fail::Crash(why)) => Err(LoadError::Unsupported(why)),
    }
}

/// ruamel's `Reader.NON_PRINTABLE` complement: what a YAML stream may contain.
fn stream_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

// --- marks and errors -----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    pointer: usize,
    line: usize,
    column: usize,
}

#[derive(Debug)]
struct MarkedError {
    context: Option<String>,
    context_mark: Option<Mark>,
    problem: String,
    problem_mark: Mark,
    note: Option<&'static str>,
}

#[derive(Debug)]
enum Fail {
    Marked(MarkedError),
    Crash(String),
}

type R<T> = Result<T, Fail>;

fn err<T>(context: Option<&str>, context_mark: Option<Mark>, problem: String, mark: Mark) -> R<T> {
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
    fn render(&self, buf: &[char]) -> String {
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

// --- reader ---------------------------------------------------------------------------------

struct Reader {
    buf: Vec<char>,
    pointer: usize,
    line: usize,
    column: usize,
}

impl Reader {
    fn new(buf: Vec<char>) -> Reader {
        Reader {
            buf,
            pointer: 0,
            line: 0,
            column: 0,
        }
    }

    fn peek(&self, i: usize) -> char {
        self.buf.get(self.pointer + i).copied().unwrap_or('\0')
    }

    fn prefix(&self, n: usize) -> String {
        let end = (self.pointer + n).min(self.buf.len());
        self.buf[self.pointer.min(end)..end].iter().collect()
    }

    fn forward(&mut self, n: usize) {
        for _ in 0..n {
            let Some(&ch) = self.buf.get(self.pointer) else {
                return;
            };
            self.pointer += 1;
            if ch == '\n' || (ch == '\r' && self.peek(0) != '\n') {
                self.line += 1;
                self.column = 0;
            } else if ch != '\u{feff}' {
                self.column += 1;
            }
        }
    }

    fn mark(&self) -> Mark {
        Mark {
            pointer: self.pointer,
            line: self.line,
            column: self.column,
        }
    }
}

const THE_END: &str = "\n\0\r\u{85}\u{2028}\u{2029}";
const THE_END_SPACE_TAB: &str = " \n\0\t\r\u{85}\u{2028}\u{2029}";
const BREAKS: &str = "\r\n\u{85}\u{2028}\u{2029}";
const END_OR_SPACE: &str = "\0 \r\n\u{85}\u{2028}\u{2029}";

fn is_in(c: char, set: &str) -> bool {
    set.contains(c)
}

// --- tokens ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    StreamStart,
    StreamEnd,
    Directive,
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowMappingStart,
    FlowSequenceEnd,
    FlowMappingEnd,
    Key,
    Value,
    BlockEntry,
    FlowEntry,
    Alias,
    Anchor,
    Tag,
    Scalar,
    Comment,
}

impl T {
    fn id(self) -> &'static str {
        match self {
            T::StreamStart => "<stream start>",
            T::StreamEnd => "<stream end>",
            T::Directive => "<directive>",
            T::DocumentStart => "<document start>",
            T::DocumentEnd => "<document end>",
            T::BlockSequenceStart => "<block sequence start>",
            T::BlockMappingStart => "<block mapping start>",
            T::BlockEnd => "<block end>",
            T::FlowSequenceStart => "[",
            T::FlowMappingStart => "{",
            T::FlowSequenceEnd => "]",
            T::FlowMappingEnd => "}",
            T::Key => "?",
            T::Value => ":",
            T::BlockEntry => "-",
            T::FlowEntry => ",",
            T::Alias => "<alias>",
            T::Anchor => "<anchor>",
            T::Tag => "<tag>",
            T::Scalar => "<scalar>",
            T::Comment => "<comment>",
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    t: T,
    start: Mark,
    end: Mark,
    /// Scalar value, alias name, directive name.
    value: String,
    /// Scalar: written plain.
    plain: bool,
    /// `%YAML` directive: the version; `%TAG`: the handle in `value2`.
    version: Option<(u64, u64)>,
    value2: String,
    /// Whether ruamel's round-trip scanner attached a comment to this token.
    comment: bool,
}

impl Token {
    fn new(t: T, start: Mark, end: Mark) -> Token {
        Token {
            t,
            start,
            end,
            value: String::new(),
            plain: false,
            version: None,
            value2: String::new(),
            comment: false,
        }
    }
}

// --- scanner --------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct SimpleKey {
    token_number: usize,
    required: bool,
    index: usize,
    line: usize,
    column: usize,
    mark: Mark,
}

struct Scanner {
    r: Reader,
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
    fn new(r: Reader) -> Scanner {
        let mut s = Scanner {
            r,
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
        let m = s.r.mark();
        s.tokens.push_back(Token::new(T::StreamStart, m, m));
        s
    }

    fn version(&self) -> (u64, u64) {
        self.yaml_version.unwrap_or((1, 2))
    }

    fn flow_level(&self) -> usize {
        self.flow_context.len()
    }

    fn mark(&self) -> Mark {
        self.r.mark()
    }

    // The public face, as the parser uses it. `check` is strictyaml's `check_token`, which
    // refuses tags, flow collections and anchors when the parser asks for them.
    fn check(&mut self, choices: &[T]) -> R<bool> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        self.gather_comments()?;
        let Some(first) = self.tokens.front() else {
            return Ok(false);
        };
        for &choice in choices {
            if first.t == choice {
                match first.t {
                    T::Tag => {
                        return err(
                            Some("While scanning"),
                            Some(first.end),
                            "Found disallowed tag tokens (do not specify types in markup)".into(),
                            first.start,
                        );
                    }
                    T::FlowMappingStart | T::FlowSequenceStart => {
                        return err(
                            Some("While scanning"),
                            Some(first.start),
                            "Found ugly disallowed JSONesque flow mapping (surround with ' and ' to make text appear literally)".into(),
                            first.end,
                        );
                    }
                    T::Anchor => {
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

    fn peek_token(&mut self) -> R<Token> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        self.gather_comments()?;
        // The stream always ends with a stream-end token, which is never taken.
        Ok(self
            .tokens
            .front()
            .cloned()
            .unwrap_or_else(|| Token::new(T::StreamEnd, self.r.mark(), self.r.mark())))
    }

    fn get_token(&mut self) -> R<Token> {
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
        }
        self.gather_comments()?;
        if self.tokens.len() > 1 && self.tokens[1].t == T::Comment {
            let t0 = self.tokens[0].t;
            let same_line = self.tokens[0].end.line == self.tokens[1].start.line;
            let trailing = matches!(
                t0,
                T::Scalar | T::Value | T::FlowSequenceEnd | T::FlowMappingEnd
            ) && same_line;
            let following = t0 == T::Scalar && !same_line;
            if trailing || following {
                self.tokens_taken += 1;
                self.tokens.remove(1);
                self.fetch_more_tokens()?;
                while self.tokens.len() > 1 && self.tokens[1].t == T::Comment {
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
            None => Ok(Token::new(T::StreamEnd, self.r.mark(), self.r.mark())),
        }
    }

    fn gather_comments(&mut self) -> R<()> {
        if self.tokens.is_empty() {
            return Ok(());
        }
        let mut found = false;
        if self.tokens[0].t == T::Comment {
            self.tokens.pop_front();
            self.tokens_taken += 1;
            found = true;
        }
        while self.need_more_tokens()? {
            self.fetch_more_tokens()?;
            if self.tokens.is_empty() {
                return Ok(());
            }
            if self.tokens[0].t == T::Comment {
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

    fn need_more_tokens(&mut self) -> R<bool> {
        if self.done {
            return Ok(false);
        }
        if self.tokens.is_empty() {
            return Ok(true);
        }
        self.stale_possible_simple_keys()?;
        Ok(self.next_possible_simple_key() == Some(self.tokens_taken))
    }

    fn fetch_more_tokens(&mut self) -> R<()> {
        if let Some((start, end)) = self.scan_to_next_token() {
            self.tokens.push_back(Token::new(T::Comment, start, end));
            return Ok(());
        }
        self.stale_possible_simple_keys()?;
        self.unwind_indent(self.r.column as i64);
        let ch = self.r.peek(0);
        match ch {
            '\0' => return self.fetch_stream_end(),
            '%' if self.r.column == 0 => return self.fetch_directive(),
            '-' if self.check_document_indicator("---") => {
                return self.fetch_document_indicator(T::DocumentStart);
            }
            '.' if self.check_document_indicator("...") => {
                return self.fetch_document_indicator(T::DocumentEnd);
            }
            '[' => return self.fetch_flow_collection_start(T::FlowSequenceStart, '['),
            '{' => return self.fetch_flow_collection_start(T::FlowMappingStart, '{'),
            ']' => return self.fetch_flow_collection_end(T::FlowSequenceEnd),
            '}' => return self.fetch_flow_collection_end(T::FlowMappingEnd),
            ',' => return self.fetch_flow_entry(),
            _ => {}
        }
        if ch == '-' && is_in(self.r.peek(1), THE_END_SPACE_TAB) {
            return self.fetch_block_entry();
        }
        if ch == '?' && (self.flow_level() > 0 || is_in(self.r.peek(1), THE_END_SPACE_TAB)) {
            return self.fetch_key();
        }
        if ch == ':' && self.check_value() {
            return self.fetch_value();
        }
        match ch {
            '*' => return self.fetch_anchor_or_alias(T::Alias),
            '&' => return self.fetch_anchor_or_alias(T::Anchor),
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

    fn next_possible_simple_key(&self) -> Option<usize> {
        self.possible_simple_keys
            .iter()
            .map(|(_, k)| k.token_number)
            .min()
    }

    fn stale_possible_simple_keys(&mut self) -> R<()> {
        let mut i = 0;
        while i < self.possible_simple_keys.len() {
            let key = self.possible_simple_keys[i].1;
            if key.line != self.r.line || self.r.pointer - key.index > 1024 {
                if key.required {
                    return err(
                        Some("while scanning a simple key"),
                        Some(key.mark),
                        "could not find expected ':'".into(),
                        self.mark(),
                    );
                }
                self.possible_simple_keys.remove(i);
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    fn save_possible_simple_key(&mut self) -> R<()> {
        let required = self.flow_level() == 0 && self.indent == self.r.column as i64;
        if self.allow_simple_key {
            self.remove_possible_simple_key()?;
            let key = SimpleKey {
                token_number: self.tokens_taken + self.tokens.len(),
                required,
                index: self.r.pointer,
                line: self.r.line,
                column: self.r.column,
                mark: self.mark(),
            };
            self.possible_simple_keys.push((self.flow_level(), key));
        }
        Ok(())
    }

    fn remove_possible_simple_key(&mut self) -> R<()> {
        let level = self.flow_level();
        if let Some(i) = self
            .possible_simple_keys
            .iter()
            .position(|(l, _)| *l == level)
        {
            let key = self.possible_simple_keys[i].1;
            if key.required {
                return err(
                    Some("while scanning a simple key"),
                    Some(key.mark),
                    "could not find expected ':'".into(),
                    self.mark(),
                );
            }
            self.possible_simple_keys.remove(i);
        }
        Ok(())
    }

    fn unwind_indent(&mut self, column: i64) {
        if self.flow_level() > 0 {
            return;
        }
        while self.indent > column {
            let mark = self.mark();
            self.indent = self.indents.pop().unwrap_or(-1);
            self.tokens.push_back(Token::new(T::BlockEnd, mark, mark));
        }
    }

    fn add_indent(&mut self, column: usize) -> bool {
        let column = column as i64;
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            return true;
        }
        false
    }

    fn push_simple(&mut self, t: T) {
        let start = self.mark();
        self.r.forward(1);
        let end = self.mark();
        self.tokens.push_back(Token::new(t, start, end));
    }

    fn fetch_stream_end(&mut self) -> R<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        self.possible_simple_keys.clear();
        let mark = self.mark();
        self.tokens.push_back(Token::new(T::StreamEnd, mark, mark));
        self.done = true;
        Ok(())
    }

    fn fetch_directive(&mut self) -> R<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_directive()?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn check_document_indicator(&self, indicator: &str) -> bool {
        self.r.column == 0
            && self.r.prefix(3) == indicator
            && is_in(self.r.peek(3), THE_END_SPACE_TAB)
    }

    fn fetch_document_indicator(&mut self, t: T) -> R<()> {
        self.unwind_indent(-1);
        self.remove_possible_simple_key()?;
        self.allow_simple_key = false;
        let start = self.mark();
        self.r.forward(3);
        let end = self.mark();
        self.tokens.push_back(Token::new(t, start, end));
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, t: T, c: char) -> R<()> {
        self.save_possible_simple_key()?;
        self.flow_context.push(c);
        self.allow_simple_key = true;
        self.push_simple(t);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, t: T) -> R<()> {
        self.remove_possible_simple_key()?;
        self.flow_context.pop();
        self.allow_simple_key = false;
        self.push_simple(t);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> R<()> {
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        self.push_simple(T::FlowEntry);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> R<()> {
        if self.flow_level() == 0 {
            if !self.allow_simple_key {
                return err(
                    None,
                    None,
                    "sequence entries are not allowed here".into(),
                    self.mark(),
                );
            }
            if self.add_indent(self.r.column) {
                let mark = self.mark();
                self.tokens
                    .push_back(Token::new(T::BlockSequenceStart, mark, mark));
            }
        }
        self.allow_simple_key = true;
        self.remove_possible_simple_key()?;
        self.push_simple(T::BlockEntry);
        Ok(())
    }

    fn fetch_key(&mut self) -> R<()> {
        if self.flow_level() == 0 {
            if !self.allow_simple_key {
                return err(
                    None,
                    None,
                    "mapping keys are not allowed here".into(),
                    self.mark(),
                );
            }
            if self.add_indent(self.r.column) {
                let mark = self.mark();
                self.tokens
                    .push_back(Token::new(T::BlockMappingStart, mark, mark));
            }
        }
        self.allow_simple_key = self.flow_level() == 0;
        self.remove_possible_simple_key()?;
        self.push_simple(T::Key);
        Ok(())
    }

    fn check_value(&self) -> bool {
        if self.version() == (1, 1) {
            if self.flow_level() > 0 {
                return true;
            }
        } else if self.flow_level() > 0 {
            let next_blank = is_in(self.r.peek(1), THE_END_SPACE_TAB);
            if self.flow_context.last() == Some(&'[') {
                if !next_blank {
                    return false;
                }
            } else if self.tokens.back().is_some_and(|t| t.t == T::Value) && !next_blank {
                return false;
            }
            return true;
        }
        is_in(self.r.peek(1), THE_END_SPACE_TAB)
    }

    fn fetch_value(&mut self) -> R<()> {
        let level = self.flow_level();
        if let Some(i) = self
            .possible_simple_keys
            .iter()
            .position(|(l, _)| *l == level)
        {
            let key = self.possible_simple_keys.remove(i).1;
            let at = key.token_number - self.tokens_taken;
            self.tokens
                .insert(at, Token::new(T::Key, key.mark, key.mark));
            if self.flow_level() == 0 && self.add_indent(key.column) {
                self.tokens
                    .insert(at, Token::new(T::BlockMappingStart, key.mark, key.mark));
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
            if self.flow_level() == 0 && self.add_indent(self.r.column) {
                let mark = self.mark();
                self.tokens
                    .push_back(Token::new(T::BlockMappingStart, mark, mark));
            }
            self.allow_simple_key = self.flow_level() == 0;
            self.remove_possible_simple_key()?;
        }
        self.push_simple(T::Value);
        Ok(())
    }

    fn fetch_anchor_or_alias(&mut self, t: T) -> R<()> {
        self.save_possible_simple_key()?;
        self.allow_simple_key = false;
        let token = self.scan_anchor(t)?;
        self.tokens.push_back(token);
        Ok(())
    }

    fn check_plain(&self) -> bool {
        const INDICATORS: &str = "\0 \t\r\n\u{85}\u{2028}\u{2029}-?:,[]{}#&*!|>'\"%@`";
        let ch = self.r.peek(0);
        let ch1 = self.r.peek(1);
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
        if self.r.pointer == 0 && self.r.peek(0) == '\u{feff}' {
            self.r.forward(1);
        }
        loop {
            while self.r.peek(0) == ' ' {
                self.r.forward(1);
            }
            if self.r.peek(0) == '#' {
                let start = self.mark();
                self.r.forward(1);
                let mut ch = '#';
                while !is_in(ch, THE_END) {
                    ch = self.r.peek(0);
                    if ch == '\0' {
                        break;
                    }
                    self.r.forward(1);
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
            if self.r.peek(0) == '\n' {
                let start = self.mark();
                while !self.scan_line_break(true).is_empty() {}
                let end = self.mark();
                return Some((start, end));
            }
        }
    }

    fn scan_line_break(&mut self, empty_line: bool) -> String {
        let ch = self.r.peek(0);
        if matches!(ch, '\r' | '\n' | '\u{85}') {
            if self.r.prefix(2) == "\r\n" {
                self.r.forward(2);
            } else {
                self.r.forward(1);
            }
            return "\n".into();
        }
        if matches!(ch, '\u{2028}' | '\u{2029}') || (empty_line && matches!(ch, '\t' | ' ')) {
            self.r.forward(1);
            return ch.to_string();
        }
        String::new()
    }

    fn found(&self, c: char) -> String {
        python::repr(&c.to_string())
    }

    fn scan_directive(&mut self) -> R<Token> {
        let start = self.mark();
        self.r.forward(1);
        let name = self.scan_directive_name(start)?;
        let mut token = Token::new(T::Directive, start, start);
        let end;
        if name == "YAML" {
            token.version = Some(self.scan_yaml_directive_value(start)?);
            end = self.mark();
        } else if name == "TAG" {
            token.value2 = self.scan_tag_directive_value(start)?;
            end = self.mark();
        } else {
            end = self.mark();
            while !is_in(self.r.peek(0), THE_END) {
                self.r.forward(1);
            }
        }
        self.scan_directive_ignored_line(start)?;
        token.end = end;
        token.value = name;
        Ok(token)
    }

    fn directive_error<X>(&self, start: Mark, problem: String) -> R<X> {
        err(
            Some("while scanning a directive"),
            Some(start),
            problem,
            self.mark(),
        )
    }

    fn scan_directive_name(&mut self, start: Mark) -> R<String> {
        let mut length = 0;
        let mut ch = self.r.peek(0);
        while ch.is_ascii_alphanumeric() || is_in(ch, "-_:.") {
            length += 1;
            ch = self.r.peek(length);
        }
        if length == 0 {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return self.directive_error(start, p);
        }
        let value = self.r.prefix(length);
        self.r.forward(length);
        let ch = self.r.peek(0);
        if !is_in(ch, END_OR_SPACE) {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return self.directive_error(start, p);
        }
        Ok(value)
    }

    fn scan_yaml_directive_value(&mut self, start: Mark) -> R<(u64, u64)> {
        while self.r.peek(0) == ' ' {
            self.r.forward(1);
        }
        let major = self.scan_yaml_directive_number(start)?;
        if self.r.peek(0) != '.' {
            let p = format!(
                "expected a digit or '.', but found {}",
                self.found(self.r.peek(0))
            );
            return self.directive_error(start, p);
        }
        self.r.forward(1);
        let minor = self.scan_yaml_directive_number(start)?;
        if !is_in(self.r.peek(0), END_OR_SPACE) {
            let p = format!(
                "expected a digit or ' ', but found {}",
                self.found(self.r.peek(0))
            );
            return self.directive_error(start, p);
        }
        self.yaml_version = Some((major, minor));
        Ok((major, minor))
    }

    fn scan_yaml_directive_number(&mut self, start: Mark) -> R<u64> {
        let ch = self.r.peek(0);
        if !ch.is_ascii_digit() {
            let p = format!("expected a digit, but found {}", self.found(ch));
            return self.directive_error(start, p);
        }
        let mut length = 0;
        while self.r.peek(length).is_ascii_digit() {
            length += 1;
        }
        let value = self.r.prefix(length).parse().unwrap_or(u64::MAX);
        self.r.forward(length);
        Ok(value)
    }

    fn scan_tag_directive_value(&mut self, start: Mark) -> R<String> {
        while self.r.peek(0) == ' ' {
            self.r.forward(1);
        }
        let handle = self.scan_tag_handle("directive", start)?;
        if self.r.peek(0) != ' ' {
            let p = format!("expected ' ', but found {}", self.found(self.r.peek(0)));
            return self.directive_error(start, p);
        }
        while self.r.peek(0) == ' ' {
            self.r.forward(1);
        }
        self.scan_tag_uri("directive", start)?;
        if !is_in(self.r.peek(0), END_OR_SPACE) {
            let p = format!("expected ' ', but found {}", self.found(self.r.peek(0)));
            return self.directive_error(start, p);
        }
        Ok(handle)
    }

    fn scan_directive_ignored_line(&mut self, start: Mark) -> R<()> {
        while self.r.peek(0) == ' ' {
            self.r.forward(1);
        }
        if self.r.peek(0) == '#' {
            while !is_in(self.r.peek(0), THE_END) {
                self.r.forward(1);
            }
        }
        let ch = self.r.peek(0);
        if !is_in(ch, THE_END) {
            let p = format!(
                "expected a comment or a line break, but found {}",
                self.found(ch)
            );
            return self.directive_error(start, p);
        }
        self.scan_line_break(false);
        Ok(())
    }

    fn scan_anchor(&mut self, t: T) -> R<Token> {
        let start = self.mark();
        let name = if self.r.peek(0) == '*' {
            "alias"
        } else {
            "anchor"
        };
        self.r.forward(1);
        let mut length = 0;
        let mut ch = self.r.peek(0);
        while anchor_name_char(ch) {
            length += 1;
            ch = self.r.peek(length);
        }
        let context = format!("while scanning an {name}");
        if length == 0 {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return err(Some(&context), Some(start), p, self.mark());
        }
        let value = self.r.prefix(length);
        self.r.forward(length);
        if !is_in(ch, "\0 \t\r\n\u{85}\u{2028}\u{2029}?:,[]{}%@`") {
            let p = format!(
                "expected alphabetic or numeric character, but found {}",
                self.found(ch)
            );
            return err(Some(&context), Some(start), p, self.mark());
        }
        let mut token = Token::new(t, start, self.mark());
        token.value = value;
        Ok(token)
    }

    fn scan_tag(&mut self) -> R<Token> {
        let start = self.mark();
        let ch = self.r.peek(1);
        if ch == '<' {
            self.r.forward(2);
            self.scan_tag_uri("tag", start)?;
            if self.r.peek(0) != '>' {
                let p = format!("expected '>', but found {}", self.found(self.r.peek(0)));
                return err(Some("while parsing a tag"), Some(start), p, self.mark());
            }
            self.r.forward(1);
        } else if is_in(ch, THE_END_SPACE_TAB) {
            self.r.forward(1);
        } else {
            let mut length = 1;
            let mut use_handle = false;
            let mut ch = ch;
            while !is_in(ch, END_OR_SPACE) {
                if ch == '!' {
                    use_handle = true;
                    break;
                }
                length += 1;
                ch = self.r.peek(length);
            }
            if use_handle {
                self.scan_tag_handle("tag", start)?;
            } else {
                self.r.forward(1);
            }
            self.scan_tag_uri("tag", start)?;
        }
        let ch = self.r.peek(0);
        if !is_in(ch, END_OR_SPACE) {
            let p = format!("expected ' ', but found {}", self.found(ch));
            return err(Some("while scanning a tag"), Some(start), p, self.mark());
        }
        Ok(Token::new(T::Tag, start, self.mark()))
    }

    fn scan_tag_handle(&mut self, name: &str, start: Mark) -> R<String> {
        let context = format!("while scanning a {name}");
        let ch = self.r.peek(0);
        if ch != '!' {
            let p = format!("expected '!', but found {}", self.found(ch));
            return err(Some(&context), Some(start), p, self.mark());
        }
        let mut length = 1;
        let mut ch = self.r.peek(1);
        if ch != ' ' {
            while ch.is_ascii_alphanumeric() || is_in(ch, "-_") {
                length += 1;
                ch = self.r.peek(length);
            }
            if ch != '!' {
                self.r.forward(length);
                let p = format!("expected '!', but found {}", self.found(ch));
                return err(Some(&context), Some(start), p, self.mark());
            }
            length += 1;
        }
        let value = self.r.prefix(length);
        self.r.forward(length);
        Ok(value)
    }

    fn scan_tag_uri(&mut self, name: &str, start: Mark) -> R<()> {
        let mut any = false;
        let mut length = 0;
        let mut ch = self.r.peek(0);
        while ch.is_ascii_alphanumeric()
            || is_in(ch, "-;/?:@&=+$,_.!~*'()[]%")
            || (self.version() > (1, 1) && ch == '#')
        {
            if ch == '%' {
                self.r.forward(length);
                length = 0;
                self.scan_uri_escapes(name, start)?;
                any = true;
            } else {
                length += 1;
            }
            ch = self.r.peek(length);
        }
        if length != 0 {
            self.r.forward(length);
            any = true;
        }
        if !any {
            let p = format!("expected URI, but found {}", self.found(ch));
            return err(
                Some(&format!("while parsing a {name}")),
                Some(start),
                p,
                self.mark(),
            );
        }
        Ok(())
    }

    fn scan_uri_escapes(&mut self, name: &str, start: Mark) -> R<()> {
        let context = format!("while scanning a {name}");
        let mut bytes = Vec::new();
        let mark = self.mark();
        while self.r.peek(0) == '%' {
            self.r.forward(1);
            for k in 0..2 {
                let c = self.r.peek(k);
                if !c.is_ascii_hexdigit() {
                    let p = format!(
                        "expected URI escape sequence of 2 hexdecimal numbers, but found {}",
                        self.found(c)
                    );
                    return err(Some(&context), Some(start), p, self.mark());
                }
            }
            bytes.push(u8::from_str_radix(&self.r.prefix(2), 16).unwrap_or(0));
            self.r.forward(2);
        }
        if let Err(e) = std::str::from_utf8(&bytes) {
            let at = e.valid_up_to();
            let byte = bytes[at];
            let reason = match e.error_len() {
                None => "unexpected end of data",
                Some(_) if (0xc2..=0xf4).contains(&byte) => "invalid continuation byte",
                Some(_) => "invalid start byte",
            };
            let p =
                format!("'utf-8' codec can't decode byte 0x{byte:02x} in position {at}: {reason}");
            return err(Some(&context), Some(start), p, mark);
        }
        Ok(())
    }

    fn scan_block_scalar(&mut self, folded: bool) -> R<Token> {
        let mut chunks = String::new();
        let start = self.mark();
        self.r.forward(1);
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
        while self.r.column as i64 == indent && self.r.peek(0) != '\0' {
            chunks.push_str(&breaks.concat());
            let leading_non_space = !is_in(self.r.peek(0), " \t");
            let mut length = 0;
            while !is_in(self.r.peek(length), THE_END) {
                length += 1;
            }
            chunks.push_str(&self.r.prefix(length));
            self.r.forward(length);
            line_break = self.scan_line_break(false);
            (breaks, end_mark) = self.scan_block_scalar_breaks(indent);
            if min_indent == 0
                && (self.check_document_indicator("---") || self.check_document_indicator("..."))
            {
                break;
            }
            if self.r.column as i64 == indent && self.r.peek(0) != '\0' {
                if folded
                    && line_break == "\n"
                    && leading_non_space
                    && !is_in(self.r.peek(0), " \t")
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
        let mut token = Token::new(T::Scalar, start, end_mark);
        token.value = chunks;
        if trailing {
            // The round-trip scanner swallows the comments and blank lines that follow.
            while self.scan_to_next_token().is_some() {}
        }
        Ok(token)
    }

    fn scan_block_scalar_indicators(&mut self, start: Mark) -> R<(Option<bool>, Option<i64>)> {
        let context = Some("while scanning a block scalar");
        let mut chomping = None;
        let mut increment = None;
        let zero = "expected indentation indicator in the range 1-9, but found 0";
        let ch = self.r.peek(0);
        if ch == '+' || ch == '-' {
            chomping = Some(ch == '+');
            self.r.forward(1);
            let ch = self.r.peek(0);
            if let Some(d) = ch.to_digit(10) {
                if d == 0 {
                    return err(context, Some(start), zero.into(), self.mark());
                }
                increment = Some(i64::from(d));
                self.r.forward(1);
            }
        } else if let Some(d) = ch.to_digit(10) {
            if d == 0 {
                return err(context, Some(start), zero.into(), self.mark());
            }
            increment = Some(i64::from(d));
            self.r.forward(1);
            let ch = self.r.peek(0);
            if ch == '+' || ch == '-' {
                chomping = Some(ch == '+');
                self.r.forward(1);
            }
        }
        let ch = self.r.peek(0);
        if !is_in(ch, END_OR_SPACE) {
            let p = format!(
                "expected chomping or indentation indicators, but found {}",
                self.found(ch)
            );
            return err(context, Some(start), p, self.mark());
        }
        Ok((chomping, increment))
    }

    fn scan_block_scalar_ignored_line(&mut self, start: Mark) -> R<()> {
        while self.r.peek(0) == ' ' {
            self.r.forward(1);
        }
        if self.r.peek(0) == '#' {
            while !is_in(self.r.peek(0), THE_END) {
                self.r.forward(1);
            }
        }
        let ch = self.r.peek(0);
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
        while is_in(self.r.peek(0), " \r\n\u{85}\u{2028}\u{2029}") {
            if self.r.peek(0) != ' ' {
                chunks.push(self.scan_line_break(false));
                end = self.mark();
            } else {
                self.r.forward(1);
                max_indent = max_indent.max(self.r.column);
            }
        }
        (chunks, max_indent, end)
    }

    fn scan_block_scalar_breaks(&mut self, indent: i64) -> (Vec<String>, Mark) {
        let mut chunks = Vec::new();
        let mut end = self.mark();
        while (self.r.column as i64) < indent && self.r.peek(0) == ' ' {
            self.r.forward(1);
        }
        while is_in(self.r.peek(0), BREAKS) {
            chunks.push(self.scan_line_break(false));
            end = self.mark();
            while (self.r.column as i64) < indent && self.r.peek(0) == ' ' {
                self.r.forward(1);
            }
        }
        (chunks, end)
    }

    fn scan_flow_scalar(&mut self, double: bool) -> R<Token> {
        let mut chunks = String::new();
        let start = self.mark();
        let quote = self.r.peek(0);
        self.r.forward(1);
        self.scan_flow_scalar_non_spaces(double, start, &mut chunks)?;
        while self.r.peek(0) != quote {
            self.scan_flow_scalar_spaces(start, &mut chunks)?;
            self.scan_flow_scalar_non_spaces(double, start, &mut chunks)?;
        }
        self.r.forward(1);
        let mut token = Token::new(T::Scalar, start, self.mark());
        token.value = chunks;
        Ok(token)
    }

    fn scan_flow_scalar_non_spaces(
        &mut self,
        double: bool,
        start: Mark,
        out: &mut String,
    ) -> R<()> {
        let context = Some("while scanning a double-quoted scalar");
        loop {
            let mut length = 0;
            while !is_in(self.r.peek(length), " \n'\"\\\0\t\r\u{85}\u{2028}\u{2029}") {
                length += 1;
            }
            if length != 0 {
                out.push_str(&self.r.prefix(length));
                self.r.forward(length);
            }
            let ch = self.r.peek(0);
            if !double && ch == '\'' && self.r.peek(1) == '\'' {
                out.push('\'');
                self.r.forward(2);
            } else if (double && ch == '\'') || (!double && is_in(ch, "\"\\")) {
                out.push(ch);
                self.r.forward(1);
            } else if double && ch == '\\' {
                self.r.forward(1);
                let ch = self.r.peek(0);
                if let Some(replacement) = escape_replacement(ch) {
                    out.push(replacement);
                    self.r.forward(1);
                } else if let Some(length) = escape_code_length(ch) {
                    self.r.forward(1);
                    for k in 0..length {
                        let c = self.r.peek(k);
                        if !c.is_ascii_hexdigit() {
                            let p = format!(
                                "expected escape sequence of {length} hexdecimal numbers, but found {}",
                                self.found(c)
                            );
                            return err(context, Some(start), p, self.mark());
                        }
                    }
                    let code = u32::from_str_radix(&self.r.prefix(length), 16).unwrap_or(u32::MAX);
                    let Some(c) = char::from_u32(code) else {
                        return Err(Fail::Crash(format!(
                            "the escape `\\{}{}` on line {} is not a Unicode scalar value (a surrogate or beyond U+10FFFF)",
                            ch,
                            self.r.prefix(length),
                            self.r.line + 1
                        )));
                    };
                    out.push(c);
                    self.r.forward(length);
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

    fn scan_flow_scalar_spaces(&mut self, start: Mark, out: &mut String) -> R<()> {
        let mut length = 0;
        while is_in(self.r.peek(length), " \t") {
            length += 1;
        }
        let whitespaces = self.r.prefix(length);
        self.r.forward(length);
        let ch = self.r.peek(0);
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

    fn scan_flow_scalar_breaks(&mut self, start: Mark) -> R<Vec<String>> {
        let mut chunks = Vec::new();
        loop {
            let prefix = self.r.prefix(3);
            if (prefix == "---" || prefix == "...") && is_in(self.r.peek(3), THE_END_SPACE_TAB) {
                return err(
                    Some("while scanning a quoted scalar"),
                    Some(start),
                    "found unexpected document separator".into(),
                    self.mark(),
                );
            }
            while is_in(self.r.peek(0), " \t") {
                self.r.forward(1);
            }
            if is_in(self.r.peek(0), BREAKS) {
                chunks.push(self.scan_line_break(false));
            } else {
                return Ok(chunks);
            }
        }
    }

    fn scan_plain(&mut self) -> R<Token> {
        let mut chunks = String::new();
        let start = self.mark();
        let mut end = start;
        let indent = self.indent + 1;
        let mut spaces: Option<Vec<String>> = Some(Vec::new());
        let flow = self.flow_level() > 0;
        loop {
            let mut length = 0;
            if self.r.peek(0) == '#' {
                break;
            }
            let mut ch;
            loop {
                ch = self.r.peek(length);
                let next = self.r.peek(length + 1);
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
                    self.r.peek(length + 1),
                    "\0 \t\r\n\u{85}\u{2028}\u{2029},[]{}",
                )
            {
                self.r.forward(length);
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
            chunks.push_str(&self.r.prefix(length));
            self.r.forward(length);
            end = self.mark();
            spaces = self.scan_plain_spaces();
            if spaces.as_ref().is_none_or(Vec::is_empty)
                || self.r.peek(0) == '#'
                || (!flow && (self.r.column as i64) < indent)
            {
                break;
            }
        }
        let mut token = Token::new(T::Scalar, start, end);
        token.value = chunks;
        token.plain = true;
        Ok(token)
    }

    fn scan_plain_spaces(&mut self) -> Option<Vec<String>> {
        let mut chunks = Vec::new();
        let mut length = 0;
        while self.r.peek(length) == ' ' {
            length += 1;
        }
        let whitespaces = self.r.prefix(length);
        self.r.forward(length);
        let ch = self.r.peek(0);
        let separator = |s: &Scanner| {
            let prefix = s.r.prefix(3);
            (prefix == "---" || prefix == "...") && is_in(s.r.peek(3), THE_END_SPACE_TAB)
        };
        if is_in(ch, BREAKS) {
            let line_break = self.scan_line_break(false);
            self.allow_simple_key = true;
            if separator(self) {
                return None;
            }
            let mut breaks = Vec::new();
            while is_in(self.r.peek(0), " \r\n\u{85}\u{2028}\u{2029}") {
                if self.r.peek(0) == ' ' {
                    self.r.forward(1);
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

fn anchor_name_char(c: char) -> bool {
    if is_in(c, ",[]{}") {
        return false;
    }
    matches!(c, '\u{21}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{10000}'..)
        || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
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

// --- parser ---------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Ev {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    Scalar { value: String, plain: bool },
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
}

#[derive(Debug, Clone)]
struct Event {
    ev: Ev,
    start: Mark,
    end: Mark,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentEnd,
    DocumentContent,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
}

struct Parser {
    scanner: Scanner,
    current: Option<Event>,
    state: Option<State>,
    states: Vec<State>,
    marks: Vec<Mark>,
}

impl Parser {
    fn new(scanner: Scanner) -> Parser {
        Parser {
            scanner,
            current: None,
            state: Some(State::StreamStart),
            states: Vec::new(),
            marks: Vec::new(),
        }
    }

    fn peek_event(&mut self) -> R<Option<&Event>> {
        if self.current.is_none()
            && let Some(state) = self.state
        {
            self.current = Some(self.run(state)?);
        }
        Ok(self.current.as_ref())
    }

    fn get_event(&mut self) -> R<Option<Event>> {
        self.peek_event()?;
        Ok(self.current.take())
    }

    fn pop_state(&mut self) -> Option<State> {
        self.states.pop()
    }

    fn run(&mut self, state: State) -> R<Event> {
        let s = &mut self.scanner;
        match state {
            State::StreamStart => {
                let token = s.get_token()?;
                s.peek_token()?;
                self.state = Some(State::ImplicitDocumentStart);
                Ok(event(Ev::StreamStart, token.start, token.end))
            }
            State::ImplicitDocumentStart => {
                if !s.check(&[T::Directive, T::DocumentStart, T::StreamEnd])? {
                    let token = s.peek_token()?;
                    self.states.push(State::DocumentEnd);
                    self.state = Some(State::BlockNode);
                    Ok(event(Ev::DocumentStart, token.start, token.start))
                } else {
                    self.document_start()
                }
            }
            State::DocumentStart => self.document_start(),
            State::DocumentEnd => {
                let token = s.peek_token()?;
                let start = token.start;
                let mut end = token.start;
                if s.check(&[T::DocumentEnd])? {
                    end = s.get_token()?.end;
                }
                self.state = Some(if s.version() == (1, 1) {
                    State::DocumentStart
                } else {
                    State::ImplicitDocumentStart
                });
                Ok(event(Ev::DocumentEnd, start, end))
            }
            State::DocumentContent => {
                if s.check(&[T::Directive, T::DocumentStart, T::DocumentEnd, T::StreamEnd])? {
                    let mark = s.peek_token()?.start;
                    self.state = self.pop_state();
                    Ok(empty_scalar(mark))
                } else {
                    self.node(true, false)
                }
            }
            State::BlockNode => self.node(true, false),
            State::BlockSequenceFirstEntry => {
                let token = s.get_token()?;
                self.marks.push(token.start);
                self.block_sequence_entry()
            }
            State::BlockSequenceEntry => self.block_sequence_entry(),
            State::IndentlessSequenceEntry => {
                if s.check(&[T::BlockEntry])? {
                    let token = s.get_token()?;
                    move_comment(&token, s)?;
                    if !s.check(&[T::BlockEntry, T::Key, T::Value, T::BlockEnd])? {
                        self.states.push(State::IndentlessSequenceEntry);
                        return self.node(true, false);
                    }
                    self.state = Some(State::IndentlessSequenceEntry);
                    return Ok(empty_scalar(token.end));
                }
                let token = s.peek_token()?;
                self.state = self.pop_state();
                Ok(event(Ev::SequenceEnd, token.start, token.start))
            }
            State::BlockMappingFirstKey => {
                let token = s.get_token()?;
                self.marks.push(token.start);
                self.block_mapping_key()
            }
            State::BlockMappingKey => self.block_mapping_key(),
            State::BlockMappingValue => self.block_mapping_value(),
        }
    }

    fn document_start(&mut self) -> R<Event> {
        let s = &mut self.scanner;
        while s.check(&[T::DocumentEnd])? {
            s.get_token()?;
        }
        if !s.check(&[T::StreamEnd])? {
            let start = s.peek_token()?.start;
            self.process_directives()?;
            let s = &mut self.scanner;
            if !s.check(&[T::DocumentStart])? {
                let token = s.peek_token()?;
                return err(
                    None,
                    None,
                    format!(
                        "expected '<document start>', but found {}",
                        python::repr(token.t.id())
                    ),
                    token.start,
                );
            }
            let token = s.get_token()?;
            self.states.push(State::DocumentEnd);
            self.state = Some(State::DocumentContent);
            Ok(event(Ev::DocumentStart, start, token.end))
        } else {
            let token = s.get_token()?;
            self.state = None;
            Ok(event(Ev::StreamEnd, token.start, token.end))
        }
    }

    fn process_directives(&mut self) -> R<()> {
        let s = &mut self.scanner;
        let mut yaml_version = None;
        let mut handles: Vec<String> = Vec::new();
        while s.check(&[T::Directive])? {
            let token = s.get_token()?;
            if token.value == "YAML" {
                if yaml_version.is_some() {
                    return err(
                        None,
                        None,
                        "found duplicate YAML directive".into(),
                        token.start,
                    );
                }
                if token.version.map(|v| v.0) != Some(1) {
                    return err(
                        None,
                        None,
                        "found incompatible YAML document (version 1.* is required)".into(),
                        token.start,
                    );
                }
                yaml_version = token.version;
            } else if token.value == "TAG" {
                if handles.contains(&token.value2) {
                    return err(
                        None,
                        None,
                        format!("duplicate tag handle {}", python::repr(&token.value2)),
                        token.start,
                    );
                }
                handles.push(token.value2);
            }
        }
        Ok(())
    }

    fn node(&mut self, block: bool, indentless_sequence: bool) -> R<Event> {
        let s = &mut self.scanner;
        if s.check(&[T::Alias])? {
            let token = s.get_token()?;
            self.state = self.pop_state();
            return Ok(event(Ev::Alias(token.value), token.start, token.end));
        }
        // strictyaml refuses anchors and tags as soon as the parser asks for them.
        if !s.check(&[T::Anchor])? {
            s.check(&[T::Tag])?;
        }
        let start = s.peek_token()?.start;
        if indentless_sequence && s.check(&[T::BlockEntry])? {
            let end = s.peek_token()?.end;
            self.state = Some(State::IndentlessSequenceEntry);
            return Ok(event(Ev::SequenceStart, start, end));
        }
        if s.check(&[T::Scalar])? {
            let token = s.get_token()?;
            self.state = self.pop_state();
            return Ok(event(
                Ev::Scalar {
                    value: token.value,
                    plain: token.plain,
                },
                start,
                token.end,
            ));
        }
        if s.check(&[T::FlowSequenceStart])? || s.check(&[T::FlowMappingStart])? {
            // Unreachable: `check` refuses flow collections.
            return Err(Fail::Crash("flow collections are refused".into()));
        }
        if block && s.check(&[T::BlockSequenceStart])? {
            let end = s.peek_token()?.start;
            self.state = Some(State::BlockSequenceFirstEntry);
            return Ok(event(Ev::SequenceStart, start, end));
        }
        if block && s.check(&[T::BlockMappingStart])? {
            let end = s.peek_token()?.start;
            self.state = Some(State::BlockMappingFirstKey);
            return Ok(event(Ev::MappingStart, start, end));
        }
        let token = s.peek_token()?;
        let kind = if block { "block" } else { "flow" };
        err(
            Some(&format!("while parsing a {kind} node")),
            Some(start),
            format!(
                "expected the node content, but found {}",
                python::repr(token.t.id())
            ),
            token.start,
        )
    }

    fn block_sequence_entry(&mut self) -> R<Event> {
        let s = &mut self.scanner;
        if s.check(&[T::BlockEntry])? {
            let token = s.get_token()?;
            move_comment(&token, s)?;
            if !s.check(&[T::BlockEntry, T::BlockEnd])? {
                self.states.push(State::BlockSequenceEntry);
                return self.node(true, false);
            }
            self.state = Some(State::BlockSequenceEntry);
            return Ok(empty_scalar(token.end));
        }
        if !s.check(&[T::BlockEnd])? {
            let token = s.peek_token()?;
            return err(
                Some("while parsing a block collection"),
                self.marks.last().copied(),
                format!(
                    "expected <block end>, but found {}",
                    python::repr(token.t.id())
                ),
                token.start,
            );
        }
        let token = s.get_token()?;
        self.state = self.pop_state();
        self.marks.pop();
        Ok(event(Ev::SequenceEnd, token.start, token.end))
    }

    fn block_mapping_key(&mut self) -> R<Event> {
        let s = &mut self.scanner;
        if s.check(&[T::Key])? {
            let token = s.get_token()?;
            move_comment(&token, s)?;
            if !s.check(&[T::Key, T::Value, T::BlockEnd])? {
                self.states.push(State::BlockMappingValue);
                return self.node(true, true);
            }
            self.state = Some(State::BlockMappingValue);
            return Ok(empty_scalar(token.end));
        }
        if s.version() > (1, 1) && s.check(&[T::Value])? {
            self.state = Some(State::BlockMappingValue);
            let mark = s.peek_token()?.start;
            return Ok(empty_scalar(mark));
        }
        if !s.check(&[T::BlockEnd])? {
            let token = s.peek_token()?;
            return err(
                Some("while parsing a block mapping"),
                self.marks.last().copied(),
                format!(
                    "expected <block end>, but found {}",
                    python::repr(token.t.id())
                ),
                token.start,
            );
        }
        let token = s.get_token()?;
        move_comment(&token, s)?;
        self.state = self.pop_state();
        self.marks.pop();
        Ok(event(Ev::MappingEnd, token.start, token.end))
    }

    fn block_mapping_value(&mut self) -> R<Event> {
        let s = &mut self.scanner;
        if s.check(&[T::Value])? {
            let mut token = s.get_token()?;
            if (s.check(&[T::Value])? || !s.check(&[T::Key])?) && move_comment(&token, s)? {
                token.comment = false;
            }
            if !s.check(&[T::Key, T::Value, T::BlockEnd])? {
                self.states.push(State::BlockMappingKey);
                return self.node(true, true);
            }
            self.state = Some(State::BlockMappingKey);
            let mark = if token.comment {
                token.end
            } else {
                s.peek_token()?.end
            };
            return Ok(empty_scalar(mark));
        }
        self.state = Some(State::BlockMappingKey);
        let mark = s.peek_token()?.start;
        Ok(empty_scalar(mark))
    }
}

/// ruamel's `token.move_comment(scanner.peek_token())`: always peeks (that drives the scanner);
/// moves the comment flag unless the target ends the stream or starts a document. Returns
/// whether the comment moved.
fn move_comment(token: &Token, s: &mut Scanner) -> R<bool> {
    s.peek_token()?;
    if !token.comment {
        return Ok(false);
    }
    match s.tokens.front_mut() {
        Some(front) if !matches!(front.t, T::StreamEnd | T::DocumentStart) => {
            front.comment = true;
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn event(ev: Ev, start: Mark, end: Mark) -> Event {
    Event { ev, start, end }
}

fn empty_scalar(mark: Mark) -> Event {
    event(
        Ev::Scalar {
            value: String::new(),
            plain: true,
        },
        mark,
        mark,
    )
}

// --- composer -------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScalarTag {
    Str,
    Merge,
    Value,
}

#[derive(Debug)]
enum Node {
    Scalar {
        tag: ScalarTag,
        value: String,
        start: Mark,
        end: Mark,
    },
    Seq {
        items: Vec<Node>,
        start: Mark,
    },
    Map {
        entries: Vec<(Node, Node)>,
        start: Mark,
        end: Mark,
    },
}

impl Node {
    fn start(&self) -> Mark {
        match self {
            Node::Scalar { start, .. } | Node::Seq { start, .. } | Node::Map { start, .. } => {
                *start
            }
        }
    }

    fn id(&self) -> &'static str {
        match self {
            Node::Scalar { .. } => "scalar",
            Node::Seq { .. } => "sequence",
            Node::Map { .. } => "mapping",
        }
    }
}

struct Composer {
    parser: Parser,
    /// Collections open around the node being composed (bounded: see [`MAX_NESTING`]).
    depth: usize,
}

/// Deeper nesting is refused (as a YAML the reference cannot load: Python's recursion limit
/// stops ruamel long before) instead of exhausting the stack.
const MAX_NESTING: usize = 200;

impl Composer {
    fn is_next(&mut self, f: impl Fn(&Ev) -> bool) -> R<bool> {
        Ok(self.parser.peek_event()?.is_some_and(|e| f(&e.ev)))
    }

    fn single_node(&mut self) -> R<Option<Node>> {
        self.parser.get_event()?;
        let mut document = None;
        if !self.is_next(|e| matches!(e, Ev::StreamEnd))? {
            self.parser.get_event()?;
            document = Some(self.node()?);
            self.parser.get_event()?;
        }
        if !self.is_next(|e| matches!(e, Ev::StreamEnd))? {
            let event = self.parser.get_event()?;
            let mark = event.map(|e| e.start).unwrap_or(self.parser.scanner.mark());
            return err(
                Some("expected a single document in the stream"),
                document.as_ref().map(Node::start),
                "but found another document".into(),
                mark,
            );
        }
        self.parser.get_event()?;
        Ok(document)
    }

    fn node(&mut self) -> R<Node> {
        if self.depth >= MAX_NESTING {
            return Err(Fail::Crash(format!(
                "collections nested deeper than {MAX_NESTING} levels"
            )));
        }
        self.depth += 1;
        let node = self.node_at_depth();
        self.depth -= 1;
        node
    }

    fn node_at_depth(&mut self) -> R<Node> {
        let Some(event) = self.parser.get_event()? else {
            return Err(Fail::Crash("the YAML event stream ended early".into()));
        };
        match event.ev {
            Ev::Alias(name) => err(
                None,
                None,
                format!("found undefined alias {}", python::repr(&name)),
                event.start,
            ),
            Ev::Scalar { value, plain } => {
                let tag = match (plain, value.as_str()) {
                    (true, "<<") => ScalarTag::Merge,
                    (true, "=") => ScalarTag::Value,
                    _ => ScalarTag::Str,
                };
                Ok(Node::Scalar {
                    tag,
                    value,
                    start: event.start,
                    end: event.end,
                })
            }
            Ev::SequenceStart => {
                let mut items = Vec::new();
                while !self.is_next(|e| matches!(e, Ev::SequenceEnd))? {
                    items.push(self.node()?);
                }
                self.parser.get_event()?;
                Ok(Node::Seq {
                    items,
                    start: event.start,
                })
            }
            Ev::MappingStart => {
                let mut entries = Vec::new();
                while !self.is_next(|e| matches!(e, Ev::MappingEnd))? {
                    let key = self.node()?;
                    let value = self.node()?;
                    entries.push((key, value));
                }
                let end = self.parser.get_event()?.map(|e| e.end).unwrap_or(event.end);
                Ok(Node::Map {
                    entries,
                    start: event.start,
                    end,
                })
            }
            other => Err(Fail::Crash(format!("unexpected YAML event {other:?}"))),
        }
    }
}

// --- constructor checks ---------------------------------------------------------------------

/// The errors `StrictYAMLConstructor` raises, in the order it raises them: ruamel builds the
/// root collection lazily and fills nested ones depth-first ("deep") from there, so a queue of
/// pending collections reproduces which problem is found first.
#[derive(Default)]
struct Checker<'a> {
    deep: bool,
    pending: Vec<&'a Node>,
    tuple_key: Option<String>,
}

#[derive(PartialEq, Eq)]
enum Key {
    Str(String),
    Tuple(Vec<String>),
}

impl<'a> Checker<'a> {
    fn run(&mut self, root: &'a Node) -> R<()> {
        self.construct(root, false)?;
        while !self.pending.is_empty() {
            for node in std::mem::take(&mut self.pending) {
                self.fill(node)?;
            }
        }
        match self.tuple_key.take() {
            Some(why) => Err(Fail::Crash(why)),
            None => Ok(()),
        }
    }

    fn construct(&mut self, node: &'a Node, deep: bool) -> R<()> {
        let old = self.deep;
        if deep {
            self.deep = true;
        }
        if !matches!(node, Node::Scalar { .. }) {
            if self.deep {
                self.fill(node)?;
            } else {
                self.pending.push(node);
            }
        }
        if deep {
            self.deep = old;
        }
        Ok(())
    }

    fn fill(&mut self, node: &'a Node) -> R<()> {
        match node {
            Node::Scalar { .. } => Ok(()),
            Node::Seq { items, .. } => {
                for item in items {
                    self.construct(item, false)?;
                }
                Ok(())
            }
            Node::Map { entries, start, .. } => {
                let entries = self.flatten(entries, *start)?;
                let mut seen: Vec<Key> = Vec::new();
                for (key, value) in &entries {
                    self.construct(key, true)?;
                    let k = match key {
                        Node::Scalar { value, .. } => Key::Str(value.clone()),
                        Node::Map { .. } => {
                            return err(
                                Some("while constructing a mapping"),
                                Some(*start),
                                "found unhashable key".into(),
                                key.start(),
                            );
                        }
                        Node::Seq { items, start: at } => {
                            let mut parts = Vec::new();
                            for item in items {
                                match item {
                                    Node::Scalar { value, .. } => parts.push(value.clone()),
                                    _ => return Err(Fail::Crash(unsupported_key(*at))),
                                }
                            }
                            self.tuple_key.get_or_insert_with(|| unsupported_key(*at));
                            Key::Tuple(parts)
                        }
                    };
                    self.construct(value, true)?;
                    if seen.contains(&k) {
                        let shown = match &k {
                            Key::Str(s) => s.clone(),
                            Key::Tuple(parts) => python_tuple(parts),
                        };
                        let end = match key {
                            Node::Scalar { end, .. } => *end,
                            other => other.start(),
                        };
                        return err(
                            Some("While parsing"),
                            Some(key.start()),
                            format!("Duplicate key '{shown}' found"),
                            end,
                        );
                    }
                    seen.push(k);
                }
                let mut previous = None;
                for (_, value) in &entries {
                    if let Node::Map { start, end, .. } = value {
                        let column = *previous.get_or_insert(start.column);
                        if start.column != column {
                            return err(
                                Some("While parsing"),
                                Some(*start),
                                "Found mapping with indentation inconsistent with previous mapping"
                                    .into(),
                                *end,
                            );
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// ruamel's `flatten_mapping`: takes the merge keys out (checking their values).
    fn flatten(
        &mut self,
        entries: &'a [(Node, Node)],
        start: Mark,
    ) -> R<Vec<(&'a Node, &'a Node)>> {
        let mut kept = Vec::new();
        let mut merged = false;
        for (key, value) in entries {
            let is_merge = matches!(
                key,
                Node::Scalar {
                    tag: ScalarTag::Merge,
                    ..
                }
            );
            if !is_merge {
                kept.push((key, value));
                continue;
            }
            if merged {
                return Err(Fail::Crash(format!(
                    "a second merge key `<<` on line {} in one mapping",
                    key.start().line + 1
                )));
            }
            merged = true;
            match value {
                Node::Map { .. } => self.construct(value, false)?,
                Node::Seq { items, .. } => {
                    for item in items {
                        if !matches!(item, Node::Map { .. }) {
                            return err(
                                Some("while constructing a mapping"),
                                Some(start),
                                format!("expected a mapping for merging, but found {}", item.id()),
                                item.start(),
                            );
                        }
                        self.construct(item, false)?;
                    }
                }
                Node::Scalar { .. } => {
                    return err(
                        Some("while constructing a mapping"),
                        Some(start),
                        "expected a mapping or list of mappings for merging, but found scalar"
                            .into(),
                        value.start(),
                    );
                }
            }
        }
        Ok(kept)
    }
}

fn unsupported_key(at: Mark) -> String {
    format!("a sequence used as a mapping key on line {}", at.line + 1)
}

fn python_tuple(parts: &[String]) -> String {
    let items: Vec<String> = parts.iter().map(|p| python::repr(p)).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// The value strictyaml hands back once every check passed.
fn build(node: &Node) -> Value {
    match node {
        Node::Scalar {
            tag: ScalarTag::Str,
            value,
            ..
        } => Value::Str(value.clone()),
        Node::Scalar { value, .. } => Value::Tagged(value.clone()),
        Node::Seq { items, .. } => Value::List(items.iter().map(build).collect()),
        Node::Map { entries, .. } => Value::Map(
            entries
                .iter()
                .filter_map(|(k, v)| match k {
                    Node::Scalar {
                        tag: ScalarTag::Merge,
                        ..
                    } => None,
                    Node::Scalar { value, .. } => Some((value.clone(), build(v))),
                    _ => None,
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml_err(text: &str) -> String {
        match load(text) {
            Err(LoadError::Yaml(m)) => m,
            other => panic!("expected a YAML error, got {other:?}"),
        }
    }

    fn map(text: &str) -> Vec<(String, Value)> {
        match load(text) {
            Ok(Value::Map(m)) => m,
            other => panic!("expected a mapping, got {other:?}"),
        }
    }

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn every_scalar_is_a_string() {
        let m = map("\na: 123\nb: true\nc: null\nd: ~\ne:\nf: 2024-01-01\n");
        let values: Vec<&Value> = m.iter().map(|(_, v)| v).collect();
        assert_eq!(
            values,
            [
                &s("123"),
                &s("true"),
                &s("null"),
                &s("~"),
                &s(""),
                &s("2024-01-01")
            ]
        );
    }

    #[test]
    fn block_scalars_and_quotes() {
        let m = map(
            "a: |\n  x\n  y\n\nb: >-\n  p\n  q\nc: 'it''s'\nd: \"\\u00e9\\t\"\ne: plain\n  folded\n",
        );
        assert_eq!(m[0].1, s("x\ny\n"));
        assert_eq!(m[1].1, s("p q"));
        assert_eq!(m[2].1, s("it's"));
        assert_eq!(m[3].1, s("é\t"));
        assert_eq!(m[4].1, s("plain folded"));
    }

    #[test]
    fn nested_collections_and_merge() {
        let m = map("a:\n  - x\n  - y\nb:\n  k: v\n<<:\n  z: w\n");
        assert_eq!(m[0].1, Value::List(vec![s("x"), s("y")]));
        assert_eq!(m[1].1, Value::Map(vec![("k".into(), s("v"))]));
        assert_eq!(m.len(), 2, "merged keys are dropped");
        assert_eq!(map("a: =\n")[0].1, Value::Tagged("=".into()));
    }

    #[test]
    fn refusals_carry_rueamels_text() {
        assert_eq!(
            yaml_err("\nname: &n x\n"),
            "While scanning\n  in \"<unicode string>\", line 2, column 7:\n    name: &n x\n          ^ (line: 2)\nFound confusing disallowed anchor token (surround with ' and ' to make text appear literally)\n  in \"<unicode string>\", line 2, column 9:\n    name: &n x\n            ^ (line: 2)"
        );
        assert!(yaml_err("a: [b]\n").starts_with("While scanning"));
        assert!(yaml_err("a: !!str b\n").contains("Found disallowed tag tokens"));
        assert!(yaml_err("a: *x\n").starts_with("found undefined alias 'x'"));
        assert!(yaml_err("a: 1\na: 2\n").contains("Duplicate key 'a' found"));
        assert!(yaml_err("a: b: c\n").starts_with("mapping values are not allowed here"));
        assert!(yaml_err("a: x\t\n").contains("found character '\\t' that cannot start any token"));
    }

    #[test]
    fn crashes_are_reported_as_unsupported() {
        assert!(matches!(
            load("a: \u{7}\n"),
            Err(LoadError::ControlChar {
                ch: '\u{7}',
                line: 1
            })
        ));
        assert!(matches!(
            load("a: \"\\ud800\"\n"),
            Err(LoadError::Unsupported(_))
        ));
        assert!(matches!(
            load("? - a\n: b\n"),
            Err(LoadError::Unsupported(_))
        ));
    }

    #[test]
    fn scalar_and_empty_documents_are_not_mappings() {
        assert_eq!(load("\n").unwrap(), s("\n"));
        assert_eq!(load("# c\n").unwrap(), s("# c\n"));
        assert_eq!(load("x\n").unwrap(), s("x\n"));
        assert!(matches!(load("- a\n").unwrap(), Value::List(_)));
    }
}
