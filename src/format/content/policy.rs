//! What a source's `content:` makes of the content rules ([`ContentPolicy`]), and what a finding
//! records ([`Finding`]): the types the bounds of a profile and a problem carry, kept apart from
//! the rules themselves so that those may use them.

use serde::Serialize;

/// What a source's `content:` makes of hidden characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum HiddenRule {
    /// The verdict of each class and place (docs/content.md).
    #[default]
    Default,
    /// Every hidden character refuses the bundle (tightens).
    Refuse,
    /// No hidden character refuses it; each is a warning (relaxes: needs a reason).
    Warn,
}

/// What a source's `content:` makes of HTML comments in `SKILL.md`'s body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CommentRule {
    /// A comment refuses the bundle (tightens).
    Refuse,
    /// A comment is a warning (the default).
    #[default]
    Warn,
    /// Comments are not reported (relaxes: needs a reason).
    Allow,
}

/// The content policy of one source: the descriptor's `content: {hidden, comments}` (its
/// `reason` is checked by `check` and kept in the file). Carried by the source's
/// [`Limits`](crate::format::limits::Limits) to every check of its bundles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ContentPolicy {
    /// Hidden characters.
    pub hidden: HiddenRule,
    /// HTML comments.
    pub comments: CommentRule,
}

impl ContentPolicy {
    /// The defaults of the module doc.
    pub const DEFAULT: ContentPolicy = ContentPolicy {
        hidden: HiddenRule::Default,
        comments: CommentRule::Warn,
    };

    /// Whether it accepts something the defaults refuse or reports less than they do (`check`
    /// then wants a written `reason`).
    pub fn relaxes(&self) -> bool {
        self.hidden == HiddenRule::Warn || self.comments == CommentRule::Allow
    }
}

/// Where a finding is and what it found, as a [`Problem`](crate::format::problem::Problem) carries it (and JSON shows it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `tag`, `bidi`, `control`, `invisible`, or `comment`.
    pub class: &'static str,
    /// The line, from 1; absent when the finding is in the file's name, or in `description`
    /// written as a YAML escape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The column in characters, from 1 (in a name: the character of the path; in
    /// `description`: the character of the value).
    pub column: usize,
    /// The first hidden code point, `U+E0041`; absent for a comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_point: Option<String>,
    /// Its Unicode name, `TAG LATIN CAPITAL LETTER A`; absent for a comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Hidden characters in the run (1 or more); for a comment, the lines it spans.
    pub count: usize,
}
