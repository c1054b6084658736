//! An agent the descriptor does not name ([`UnknownAgent`]): the one wording of `unknown_agent`
//! for every command, the runtime, the MCP server and its token files. It names the agents the
//! descriptor has (the first [`MAX_LISTED`]) and, when one is a few edits away, the closest.

use std::fmt;

use crate::support::escape;

/// The agents an [`UnknownAgent`] lists; more are counted.
pub const MAX_LISTED: usize = 10;

/// The longest agent name the descriptor accepts: a longer query has no close match.
const MAX_AGENT_NAME: usize = 64;

/// `--agent` (or a token's, a rule's agent) names an agent the descriptor does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownAgent {
    /// The name asked for, as given.
    pub agent: String,
    /// The agents the descriptor names, sorted.
    pub known: Vec<String>,
}

impl UnknownAgent {
    /// `agent` looked up among `known`.
    pub fn new<'a>(agent: &str, known: impl IntoIterator<Item = &'a String>) -> UnknownAgent {
        let mut known: Vec<String> = known.into_iter().cloned().collect();
        known.sort();
        UnknownAgent {
            agent: agent.to_owned(),
            known,
        }
    }

    /// The known agent closest to the one asked for, if it is a few edits away (at most a third
    /// of the name, at least one).
    pub fn closest(&self) -> Option<&str> {
        let wanted: Vec<char> = self.agent.chars().collect();
        let bound = wanted.len().max(3) / 3;
        if wanted.len() > MAX_AGENT_NAME + bound {
            return None;
        }
        self.known
            .iter()
            .map(|k| (edit_distance(&wanted, k), k))
            .filter(|(d, _)| *d <= bound)
            .min_by_key(|(d, _)| *d)
            .map(|(_, k)| k.as_str())
    }
}

impl fmt::Display for UnknownAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the descriptor names no agent `{}`",
            escape::text(&self.agent)
        )?;
        if let Some(close) = self.closest() {
            write!(f, " (did you mean `{}`?)", escape::text(close))?;
        }
        if self.known.is_empty() {
            return f.write_str("; it names no agents, only the defaults (give no agent)");
        }
        let listed: Vec<String> = self
            .known
            .iter()
            .take(MAX_LISTED)
            .map(|k| format!("`{}`", escape::text(k)))
            .collect();
        write!(f, "; its agents: {}", listed.join(", "))?;
        if self.known.len() > MAX_LISTED {
            write!(f, " and {} more", self.known.len() - MAX_LISTED)?;
        }
        Ok(())
    }
}

/// The Levenshtein distance between `a` and `b`, by characters.
fn edit_distance(a: &[char], b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(agent: &str, known: &[&str]) -> UnknownAgent {
        let known: Vec<String> = known.iter().map(|s| (*s).to_owned()).collect();
        UnknownAgent::new(agent, &known)
    }

    #[test]
    fn names_the_agents_and_the_closest() {
        let e = unknown("reviewr", &["ops", "reviewer", "sec"]);
        assert_eq!(
            e.to_string(),
            "the descriptor names no agent `reviewr` (did you mean `reviewer`?); its agents: \
             `ops`, `reviewer`, `sec`"
        );
        assert_eq!(unknown("xyz", &["ops", "sec"]).closest(), None);
        assert_eq!(
            unknown("x", &[]).to_string(),
            "the descriptor names no agent `x`; it names no agents, only the defaults (give no agent)"
        );
    }

    #[test]
    fn the_list_is_bounded_and_the_name_escaped() {
        let many: Vec<String> = (0..25).map(|i| format!("agent-{i:02}")).collect();
        let e = UnknownAgent::new("a\nb", &many);
        let text = e.to_string();
        assert!(
            text.contains("`a\\nb`") && text.ends_with(" and 15 more"),
            "{text}"
        );
        let long = "o".repeat(10_000);
        assert_eq!(unknown(&long, &["ops"]).closest(), None);
    }

    #[test]
    fn edit_distance_counts_edits() {
        let d = |a: &str, b: &str| edit_distance(&a.chars().collect::<Vec<_>>(), b);
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("ops", "ops"), 0);
    }
}
