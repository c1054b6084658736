//! The line a problem's location (`skills[0].git.approved[1]`, `agents.sec.skills[0].local`)
//! is written at in the descriptor's text, so a refusal can name `FILE:LINE` as well as the
//! location. Read with the one YAML reader that keeps positions ([`crate::format::yaml`]); an
//! agent name may hold dots, so each mapping takes the longest run of segments that is one of
//! its keys.

use crate::format::yaml::{self, Node, NodeKind};

/// The 1-based line where the node at `location` starts in `text`, if the text has it.
pub fn line_of(text: &str, location: &str) -> Option<usize> {
    let root = yaml::parse(text).ok()??;
    let mut segments: Vec<Segment<'_>> = Vec::new();
    for part in location.split('.') {
        let (key, indices) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        segments.push(Segment::Key(key));
        for index in indices.split('[').filter(|i| !i.is_empty()) {
            segments.push(Segment::Index(index.trim_end_matches(']').parse().ok()?));
        }
    }
    walk(&root, &segments).map(|node| node.position.line)
}

#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

fn walk<'n>(node: &'n Node, segments: &[Segment<'_>]) -> Option<&'n Node> {
    let Some(first) = segments.first() else {
        return Some(node);
    };
    match (&node.kind, first) {
        (NodeKind::Sequence { items, .. }, Segment::Index(i)) => {
            walk(items.get(*i)?, &segments[1..])
        }
        (NodeKind::Mapping { entries, .. }, Segment::Key(_)) => {
            // The longest run of key segments (joined by dots) that names a key.
            let run = segments
                .iter()
                .take_while(|s| matches!(s, Segment::Key(_)))
                .count();
            (1..=run).rev().find_map(|n| {
                let key: Vec<&str> = segments[..n]
                    .iter()
                    .map(|s| match s {
                        Segment::Key(k) => *k,
                        Segment::Index(_) => "",
                    })
                    .collect();
                let key = key.join(".");
                let (_, value) = entries
                    .iter()
                    .rev()
                    .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))?;
                walk(value, &segments[n..])
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_names_its_line() {
        let text = "skills:\n  - local: { name: a }\n  - git:\n      approved:\n        - name: b\n        - { name: c }\nagents:\n  team.a:\n    skills:\n      - local:\n          name: d\n";
        assert_eq!(line_of(text, "skills[0].local"), Some(2));
        assert_eq!(line_of(text, "skills[1].git.approved[1]"), Some(6));
        assert_eq!(line_of(text, "skills[1].git.approved[0]"), Some(5));
        assert_eq!(line_of(text, "agents.team.a.skills[0].local"), Some(11));
        assert_eq!(line_of(text, "skills[5].local"), None);
        assert_eq!(line_of("skills: [", "skills"), None);
    }
}
