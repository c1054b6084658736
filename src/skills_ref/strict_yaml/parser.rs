//! The parser: turns the scanner's tokens into block-style [`Event`]s (stream, document,
//! sequence, mapping, scalar, alias) with ruamel's state machine, its marks for empty values
//! and its comment moves. It hands the composer one event at a time through
//! [`Parser::peek_event`] and [`Parser::get_event`].

use super::errors::{Fail, YamlResult, err};
use super::reader::Mark;
use super::scanner::{Scanner, TokenKind, move_comment};
use crate::skills_ref::python;

/// What an event is (ruamel's event classes), with the payload the composer needs.
#[derive(Debug, Clone)]
pub(super) enum EventKind {
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
pub(super) struct Event {
    pub(super) kind: EventKind,
    pub(super) start: Mark,
    pub(super) end: Mark,
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

pub(super) struct Parser {
    pub(super) scanner: Scanner,
    current: Option<Event>,
    state: Option<State>,
    states: Vec<State>,
    marks: Vec<Mark>,
}

impl Parser {
    pub(super) fn new(scanner: Scanner) -> Parser {
        Parser {
            scanner,
            current: None,
            state: Some(State::StreamStart),
            states: Vec::new(),
            marks: Vec::new(),
        }
    }

    pub(super) fn peek_event(&mut self) -> YamlResult<Option<&Event>> {
        if self.current.is_none()
            && let Some(state) = self.state
        {
            self.current = Some(self.run(state)?);
        }
        Ok(self.current.as_ref())
    }

    pub(super) fn get_event(&mut self) -> YamlResult<Option<Event>> {
        self.peek_event()?;
        Ok(self.current.take())
    }

    fn pop_state(&mut self) -> Option<State> {
        self.states.pop()
    }

    fn run(&mut self, state: State) -> YamlResult<Event> {
        let s = &mut self.scanner;
        match state {
            State::StreamStart => {
                let token = s.get_token()?;
                s.peek_token()?;
                self.state = Some(State::ImplicitDocumentStart);
                Ok(event(EventKind::StreamStart, token.start, token.end))
            }
            State::ImplicitDocumentStart => {
                if !s.check(&[
                    TokenKind::Directive,
                    TokenKind::DocumentStart,
                    TokenKind::StreamEnd,
                ])? {
                    let token = s.peek_token()?;
                    self.states.push(State::DocumentEnd);
                    self.state = Some(State::BlockNode);
                    Ok(event(EventKind::DocumentStart, token.start, token.start))
                } else {
                    self.document_start()
                }
            }
            State::DocumentStart => self.document_start(),
            State::DocumentEnd => {
                let token = s.peek_token()?;
                let start = token.start;
                let mut end = token.start;
                if s.check(&[TokenKind::DocumentEnd])? {
                    end = s.get_token()?.end;
                }
                self.state = Some(if s.version() == (1, 1) {
                    State::DocumentStart
                } else {
                    State::ImplicitDocumentStart
                });
                Ok(event(EventKind::DocumentEnd, start, end))
            }
            State::DocumentContent => {
                if s.check(&[
                    TokenKind::Directive,
                    TokenKind::DocumentStart,
                    TokenKind::DocumentEnd,
                    TokenKind::StreamEnd,
                ])? {
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
                if s.check(&[TokenKind::BlockEntry])? {
                    let token = s.get_token()?;
                    move_comment(&token, s)?;
                    if !s.check(&[
                        TokenKind::BlockEntry,
                        TokenKind::Key,
                        TokenKind::Value,
                        TokenKind::BlockEnd,
                    ])? {
                        self.states.push(State::IndentlessSequenceEntry);
                        return self.node(true, false);
                    }
                    self.state = Some(State::IndentlessSequenceEntry);
                    return Ok(empty_scalar(token.end));
                }
                let token = s.peek_token()?;
                self.state = self.pop_state();
                Ok(event(EventKind::SequenceEnd, token.start, token.start))
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

    fn document_start(&mut self) -> YamlResult<Event> {
        let s = &mut self.scanner;
        while s.check(&[TokenKind::DocumentEnd])? {
            s.get_token()?;
        }
        if !s.check(&[TokenKind::StreamEnd])? {
            let start = s.peek_token()?.start;
            self.process_directives()?;
            let s = &mut self.scanner;
            if !s.check(&[TokenKind::DocumentStart])? {
                let token = s.peek_token()?;
                return err(
                    None,
                    None,
                    format!(
                        "expected '<document start>', but found {}",
                        python::repr(token.kind.id())
                    ),
                    token.start,
                );
            }
            let token = s.get_token()?;
            self.states.push(State::DocumentEnd);
            self.state = Some(State::DocumentContent);
            Ok(event(EventKind::DocumentStart, start, token.end))
        } else {
            let token = s.get_token()?;
            self.state = None;
            Ok(event(EventKind::StreamEnd, token.start, token.end))
        }
    }

    fn process_directives(&mut self) -> YamlResult<()> {
        let s = &mut self.scanner;
        let mut yaml_version = None;
        let mut handles: Vec<String> = Vec::new();
        while s.check(&[TokenKind::Directive])? {
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
                if handles.contains(&token.tag_handle) {
                    return err(
                        None,
                        None,
                        format!("duplicate tag handle {}", python::repr(&token.tag_handle)),
                        token.start,
                    );
                }
                handles.push(token.tag_handle);
            }
        }
        Ok(())
    }

    fn node(&mut self, block: bool, indentless_sequence: bool) -> YamlResult<Event> {
        let s = &mut self.scanner;
        if s.check(&[TokenKind::Alias])? {
            let token = s.get_token()?;
            self.state = self.pop_state();
            return Ok(event(EventKind::Alias(token.value), token.start, token.end));
        }
        // strictyaml refuses anchors and tags as soon as the parser asks for them.
        if !s.check(&[TokenKind::Anchor])? {
            s.check(&[TokenKind::Tag])?;
        }
        let start = s.peek_token()?.start;
        if indentless_sequence && s.check(&[TokenKind::BlockEntry])? {
            let end = s.peek_token()?.end;
            self.state = Some(State::IndentlessSequenceEntry);
            return Ok(event(EventKind::SequenceStart, start, end));
        }
        if s.check(&[TokenKind::Scalar])? {
            let token = s.get_token()?;
            self.state = self.pop_state();
            return Ok(event(
                EventKind::Scalar {
                    value: token.value,
                    plain: token.plain,
                },
                start,
                token.end,
            ));
        }
        if s.check(&[TokenKind::FlowSequenceStart])? || s.check(&[TokenKind::FlowMappingStart])? {
            // Unreachable: `check` refuses flow collections.
            return Err(Fail::Crash("flow collections are refused".into()));
        }
        if block && s.check(&[TokenKind::BlockSequenceStart])? {
            let end = s.peek_token()?.start;
            self.state = Some(State::BlockSequenceFirstEntry);
            return Ok(event(EventKind::SequenceStart, start, end));
        }
        if block && s.check(&[TokenKind::BlockMappingStart])? {
            let end = s.peek_token()?.start;
            self.state = Some(State::BlockMappingFirstKey);
            return Ok(event(EventKind::MappingStart, start, end));
        }
        let token = s.peek_token()?;
        let kind = if block { "block" } else { "flow" };
        err(
            Some(&format!("while parsing a {kind} node")),
            Some(start),
            format!(
                "expected the node content, but found {}",
                python::repr(token.kind.id())
            ),
            token.start,
        )
    }

    fn block_sequence_entry(&mut self) -> YamlResult<Event> {
        let s = &mut self.scanner;
        if s.check(&[TokenKind::BlockEntry])? {
            let token = s.get_token()?;
            move_comment(&token, s)?;
            if !s.check(&[TokenKind::BlockEntry, TokenKind::BlockEnd])? {
                self.states.push(State::BlockSequenceEntry);
                return self.node(true, false);
            }
            self.state = Some(State::BlockSequenceEntry);
            return Ok(empty_scalar(token.end));
        }
        if !s.check(&[TokenKind::BlockEnd])? {
            let token = s.peek_token()?;
            return err(
                Some("while parsing a block collection"),
                self.marks.last().copied(),
                format!(
                    "expected <block end>, but found {}",
                    python::repr(token.kind.id())
                ),
                token.start,
            );
        }
        let token = s.get_token()?;
        self.state = self.pop_state();
        self.marks.pop();
        Ok(event(EventKind::SequenceEnd, token.start, token.end))
    }

    fn block_mapping_key(&mut self) -> YamlResult<Event> {
        let s = &mut self.scanner;
        if s.check(&[TokenKind::Key])? {
            let token = s.get_token()?;
            move_comment(&token, s)?;
            if !s.check(&[TokenKind::Key, TokenKind::Value, TokenKind::BlockEnd])? {
                self.states.push(State::BlockMappingValue);
                return self.node(true, true);
            }
            self.state = Some(State::BlockMappingValue);
            return Ok(empty_scalar(token.end));
        }
        if s.version() > (1, 1) && s.check(&[TokenKind::Value])? {
            self.state = Some(State::BlockMappingValue);
            let mark = s.peek_token()?.start;
            return Ok(empty_scalar(mark));
        }
        if !s.check(&[TokenKind::BlockEnd])? {
            let token = s.peek_token()?;
            return err(
                Some("while parsing a block mapping"),
                self.marks.last().copied(),
                format!(
                    "expected <block end>, but found {}",
                    python::repr(token.kind.id())
                ),
                token.start,
            );
        }
        let token = s.get_token()?;
        move_comment(&token, s)?;
        self.state = self.pop_state();
        self.marks.pop();
        Ok(event(EventKind::MappingEnd, token.start, token.end))
    }

    fn block_mapping_value(&mut self) -> YamlResult<Event> {
        let s = &mut self.scanner;
        if s.check(&[TokenKind::Value])? {
            let mut token = s.get_token()?;
            if (s.check(&[TokenKind::Value])? || !s.check(&[TokenKind::Key])?)
                && move_comment(&token, s)?
            {
                token.comment = false;
            }
            if !s.check(&[TokenKind::Key, TokenKind::Value, TokenKind::BlockEnd])? {
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

fn event(kind: EventKind, start: Mark, end: Mark) -> Event {
    Event { kind, start, end }
}

fn empty_scalar(mark: Mark) -> Event {
    event(
        EventKind::Scalar {
            value: String::new(),
            plain: true,
        },
        mark,
        mark,
    )
}
