//! The tokens the scanner hands the parser: their kinds (ruamel's token classes, with the names
//! its messages show) and what a token carries (its marks, a scalar's value and style, a
//! directive's version or tag handle, whether a comment was attached to it).

use crate::skills_ref::strict_yaml::reader::Mark;

/// What a token is (ruamel's token classes); [`TokenKind::id`] is the name its messages show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::skills_ref::strict_yaml) enum TokenKind {
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

impl TokenKind {
    pub(in crate::skills_ref::strict_yaml) fn id(self) -> &'static str {
        match self {
            TokenKind::StreamStart => "<stream start>",
            TokenKind::StreamEnd => "<stream end>",
            TokenKind::Directive => "<directive>",
            TokenKind::DocumentStart => "<document start>",
            TokenKind::DocumentEnd => "<document end>",
            TokenKind::BlockSequenceStart => "<block sequence start>",
            TokenKind::BlockMappingStart => "<block mapping start>",
            TokenKind::BlockEnd => "<block end>",
            TokenKind::FlowSequenceStart => "[",
            TokenKind::FlowMappingStart => "{",
            TokenKind::FlowSequenceEnd => "]",
            TokenKind::FlowMappingEnd => "}",
            TokenKind::Key => "?",
            TokenKind::Value => ":",
            TokenKind::BlockEntry => "-",
            TokenKind::FlowEntry => ",",
            TokenKind::Alias => "<alias>",
            TokenKind::Anchor => "<anchor>",
            TokenKind::Tag => "<tag>",
            TokenKind::Scalar => "<scalar>",
            TokenKind::Comment => "<comment>",
        }
    }
}

#[derive(Debug, Clone)]
pub(in crate::skills_ref::strict_yaml) struct Token {
    pub(in crate::skills_ref::strict_yaml) kind: TokenKind,
    pub(in crate::skills_ref::strict_yaml) start: Mark,
    pub(in crate::skills_ref::strict_yaml) end: Mark,
    /// Scalar value, alias name, directive name.
    pub(in crate::skills_ref::strict_yaml) value: String,
    /// Scalar: written plain.
    pub(in crate::skills_ref::strict_yaml) plain: bool,
    /// `%YAML` directive: the version; `%TAG`: the handle in `tag_handle`.
    pub(in crate::skills_ref::strict_yaml) version: Option<(u64, u64)>,
    pub(in crate::skills_ref::strict_yaml) tag_handle: String,
    /// Whether ruamel's round-trip scanner attached a comment to this token.
    pub(in crate::skills_ref::strict_yaml) comment: bool,
}

impl Token {
    pub(in crate::skills_ref::strict_yaml) fn new(
        kind: TokenKind,
        start: Mark,
        end: Mark,
    ) -> Token {
        Token {
            kind,
            start,
            end,
            value: String::new(),
            plain: false,
            version: None,
            tag_handle: String::new(),
            comment: false,
        }
    }
}
