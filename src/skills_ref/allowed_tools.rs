//! The experimental `allowed-tools` frontmatter field parsed into rules.
//!
//! The spec calls it a "space-separated string of pre-approved tools", in Claude Code's
//! notation: `Read Grep Bash(git status:*) Bash(npm run test)`. Tokens are split on ASCII
//! whitespace *outside* parentheses, so a pattern may contain spaces. Each token is a tool name
//! (no whitespace, no parentheses) optionally followed by one parenthesised pattern that ends
//! the token. Refused, because they are ambiguous grants: an empty pattern (`Bash()`), a
//! pattern that is only `!` (`Bash(!)`), unbalanced or nested parentheses, text after the
//! closing parenthesis, and a pattern without a tool name. Parsing grants nothing by itself:
//! it tells a host what a skill asks for.

use std::fmt;

use crate::skills_ref::code::AllowedToolsCode;
use crate::support::escape;

/// One requested tool, with an optional argument pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRule {
    /// The tool name, e.g. `Bash`.
    pub tool: String,
    /// The pattern inside the parentheses, e.g. `git status:*`; `None` for the bare tool.
    pub pattern: Option<String>,
}

impl fmt::Display for ToolRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(p) => write!(f, "{}({p})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// Why `allowed-tools` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllowedToolsError {
    /// `Tool()`.
    #[error("`{}()` has an empty pattern; write the tool alone to allow all of it", escape::text(.0))]
    EmptyPattern(String),
    /// `Tool(!)`.
    #[error("`{}(!)` is not a pattern", escape::text(.0))]
    BangPattern(String),
    /// A `(` without its `)`, a stray `)`, or `(` inside a pattern.
    #[error("unbalanced parentheses in `{}`", escape::text(.0))]
    Unbalanced(String),
    /// Text after the closing parenthesis.
    #[error("text after the closing parenthesis in `{}`", escape::text(.0))]
    TrailingText(String),
    /// `(…)` with no tool name before it.
    #[error("a pattern without a tool name in `{}`", escape::text(.0))]
    MissingTool(String),
}

impl AllowedToolsError {
    /// Stable error code.
    pub fn code(&self) -> AllowedToolsCode {
        match self {
            AllowedToolsError::EmptyPattern(_) => AllowedToolsCode::EmptyPattern,
            AllowedToolsError::BangPattern(_) => AllowedToolsCode::BangPattern,
            AllowedToolsError::Unbalanced(_) => AllowedToolsCode::Unbalanced,
            AllowedToolsError::TrailingText(_) => AllowedToolsCode::TrailingText,
            AllowedToolsError::MissingTool(_) => AllowedToolsCode::MissingTool,
        }
    }
}

/// Splits on ASCII whitespace outside parentheses.
pub fn tokens(value: &str) -> Result<Vec<&str>, AllowedToolsError> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = None;
    for (i, c) in value.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| AllowedToolsError::Unbalanced(value.to_owned()))?;
            }
            c if c.is_ascii_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    out.push(&value[s..i]);
                }
                continue;
            }
            _ => {}
        }
        start.get_or_insert(i);
    }
    if depth != 0 {
        return Err(AllowedToolsError::Unbalanced(value.to_owned()));
    }
    if let Some(s) = start {
        out.push(&value[s..]);
    }
    Ok(out)
}

/// Parses the field into rules, in order.
pub fn parse(value: &str) -> Result<Vec<ToolRule>, AllowedToolsError> {
    tokens(value)?.into_iter().map(parse_token).collect()
}

fn parse_token(token: &str) -> Result<ToolRule, AllowedToolsError> {
    let Some(open) = token.find('(') else {
        if token.contains(')') {
            return Err(AllowedToolsError::Unbalanced(token.to_owned()));
        }
        return Ok(ToolRule {
            tool: token.to_owned(),
            pattern: None,
        });
    };
    let tool = &token[..open];
    let rest = &token[open + 1..];
    let close = rest
        .find(')')
        .ok_or_else(|| AllowedToolsError::Unbalanced(token.to_owned()))?;
    let pattern = &rest[..close];
    if pattern.contains('(') {
        return Err(AllowedToolsError::Unbalanced(token.to_owned()));
    }
    if close + 1 != rest.len() {
        return Err(AllowedToolsError::TrailingText(token.to_owned()));
    }
    if tool.is_empty() {
        return Err(AllowedToolsError::MissingTool(token.to_owned()));
    }
    match pattern.trim() {
        "" => Err(AllowedToolsError::EmptyPattern(tool.to_owned())),
        "!" => Err(AllowedToolsError::BangPattern(tool.to_owned())),
        _ => Ok(ToolRule {
            tool: tool.to_owned(),
            pattern: Some(pattern.to_owned()),
        }),
    }
}

crate::coded_by_code!(AllowedToolsError);

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(s: &str) -> Vec<String> {
        parse(s).unwrap().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn splits_outside_parentheses() {
        assert_eq!(
            rules("Read  Grep\tBash(git status:*) Bash(npm run test)\n"),
            ["Read", "Grep", "Bash(git status:*)", "Bash(npm run test)"]
        );
        assert_eq!(rules(""), Vec::<String>::new());
        assert_eq!(
            rules("Read\u{a0}Write"),
            ["Read\u{a0}Write"],
            "only ASCII whitespace splits"
        );
    }

    #[test]
    fn refuses_ambiguous_grants() {
        assert_eq!(
            parse("Bash()"),
            Err(AllowedToolsError::EmptyPattern("Bash".into()))
        );
        assert_eq!(
            parse("Bash( )"),
            Err(AllowedToolsError::EmptyPattern("Bash".into()))
        );
        assert_eq!(
            parse("Bash(!)"),
            Err(AllowedToolsError::BangPattern("Bash".into()))
        );
        assert!(matches!(
            parse("Bash(ls"),
            Err(AllowedToolsError::Unbalanced(_))
        ));
        assert!(matches!(
            parse("Bash)"),
            Err(AllowedToolsError::Unbalanced(_))
        ));
        assert!(matches!(
            parse("Bash(a(b))"),
            Err(AllowedToolsError::Unbalanced(_))
        ));
        assert!(matches!(
            parse("Bash(ls)x"),
            Err(AllowedToolsError::TrailingText(_))
        ));
        assert!(matches!(
            parse("(ls)"),
            Err(AllowedToolsError::MissingTool(_))
        ));
    }
}
