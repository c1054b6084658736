//! A source's `content:` key: the content rules ([`crate::format::content`]) tightened, or
//! relaxed with a written reason, for that source's bundles.
//!
//! ```yaml
//! content:
//!   hidden: warn        # refuse | warn (default: per class, docs/content.md)
//!   comments: allow     # refuse | warn | allow (default: warn)
//!   reason: "the upstream skills ship RTL documentation with bidi isolates"
//! ```
//!
//! `hidden: warn` and `comments: allow` relax the defaults: `check` refuses them without a
//! `reason` that says why (`invalid_content_policy`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::content::{CommentRule, ContentPolicy, HiddenRule};

/// Longest `reason`, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// How a source's bundles are judged for hidden characters and HTML comments.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContentSpec {
    /// Hidden characters (tag, bidi, control, invisible): `refuse` refuses every one; `warn`
    /// reports each without refusing (a relaxation: `reason` is required). Without it, the
    /// default verdict of each class applies (docs/content.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<HiddenSpec>,
    /// HTML comments in `SKILL.md`'s body: `refuse`, `warn` (the default) or `allow` (not
    /// reported; a relaxation: `reason` is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comments: Option<CommentsSpec>,
    /// Why the defaults are relaxed for this source (required by `hidden: warn` and
    /// `comments: allow`); at most 500 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 500))]
    pub reason: Option<String>,
}

/// `content.hidden`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HiddenSpec {
    /// Every hidden character refuses the bundle.
    Refuse,
    /// Every hidden character is a warning (needs `reason`).
    Warn,
}

/// `content.comments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CommentsSpec {
    /// An HTML comment in the body refuses the bundle.
    Refuse,
    /// An HTML comment in the body is a warning (the default).
    Warn,
    /// HTML comments are not reported (needs `reason`).
    Allow,
}

/// Why a `content:` key is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContentSpecError {
    /// It relaxes a default and gives no reason (or a blank one).
    #[error("`{relaxed}` relaxes the content rules: write why in `reason` (docs/content.md)")]
    NoReason {
        /// The relaxing setting, as written.
        relaxed: &'static str,
    },
    /// The reason is longer than [`MAX_REASON_CHARS`].
    #[error("`reason` holds {chars} characters, over the bound of {MAX_REASON_CHARS}")]
    ReasonTooLong {
        /// Its length in characters.
        chars: usize,
    },
}

impl ContentSpec {
    /// The policy it names, or why it is refused.
    pub fn resolve(&self) -> Result<ContentPolicy, ContentSpecError> {
        let policy = ContentPolicy {
            hidden: match self.hidden {
                None => HiddenRule::Default,
                Some(HiddenSpec::Refuse) => HiddenRule::Refuse,
                Some(HiddenSpec::Warn) => HiddenRule::Warn,
            },
            comments: match self.comments {
                None | Some(CommentsSpec::Warn) => CommentRule::Warn,
                Some(CommentsSpec::Refuse) => CommentRule::Refuse,
                Some(CommentsSpec::Allow) => CommentRule::Allow,
            },
        };
        let reason = self.reason.as_deref().unwrap_or_default();
        let chars = reason.chars().count();
        if chars > MAX_REASON_CHARS {
            return Err(ContentSpecError::ReasonTooLong { chars });
        }
        if policy.relaxes() && reason.trim().is_empty() {
            let relaxed = if policy.hidden == HiddenRule::Warn {
                "hidden: warn"
            } else {
                "comments: allow"
            };
            return Err(ContentSpecError::NoReason { relaxed });
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> ContentSpec {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn tightening_needs_no_reason_and_relaxing_does() {
        let tight = spec("{hidden: refuse, comments: refuse}")
            .resolve()
            .unwrap();
        assert_eq!(tight.hidden, HiddenRule::Refuse);
        assert_eq!(tight.comments, CommentRule::Refuse);
        assert_eq!(spec("{}").resolve(), Ok(ContentPolicy::DEFAULT));
        for relaxed in [
            "{hidden: warn}",
            "{comments: allow}",
            "{hidden: warn, reason: '  '}",
        ] {
            assert!(
                matches!(
                    spec(relaxed).resolve(),
                    Err(ContentSpecError::NoReason { .. })
                ),
                "{relaxed}"
            );
        }
        let relaxed = spec("{hidden: warn, comments: allow, reason: RTL docs}")
            .resolve()
            .unwrap();
        assert!(relaxed.relaxes());
        let long = format!("{{comments: allow, reason: {}}}", "x".repeat(501));
        assert!(matches!(
            spec(&long).resolve(),
            Err(ContentSpecError::ReasonTooLong { chars: 501 })
        ));
    }

    #[test]
    fn unknown_keys_and_values_are_refused() {
        assert!(serde_yaml::from_str::<ContentSpec>("{hidden: allow}").is_err());
        assert!(serde_yaml::from_str::<ContentSpec>("{bidi: warn}").is_err());
    }
}
