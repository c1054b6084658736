//! The rules of an *effective selection*: what one agent gets (the defaults plus its extras), and
//! the defaults alone (what a client with no agent gets). A name is unique per selection, not per
//! descriptor: two agents may each pin their own `pdf` (another version, hash or source), since
//! neither sees the other's extras. Within one selection a name has one pin (`conflicting_pins`
//! names both entries; the same pin twice counts once) and there are at most 16 unique names
//! (`too_many_skills`), or as many as the descriptor's `selection.max_skills` allows ([`bound`]:
//! from 16 to [`MAX_SKILLS_CEILING`]; it is only raised, as a limits profile raises the bundle
//! bounds).
//!
//! Each conflict is reported once, at the later entry: a clash between two defaults in the
//! defaults' own selection (not again for every agent), a clash of an agent's extra with a default
//! or with an earlier extra of that agent in the agent's selection.

use std::collections::BTreeMap;

use super::across::{Entries, EntryFacts};
use super::{DescriptorProblem, MAX_SKILLS_CEILING};
use crate::descriptor::SelectionSpec;
use crate::descriptor::code::DescriptorCode;
use crate::format::limits;
use crate::format::pin::Pin;
use crate::format::skill_name::SkillName;
use crate::support::escape;

/// The bound on each selection that `spec` (the descriptor's `selection`) sets: 16 without it,
/// else its `max_skills`, refused below 16 (`invalid_max_skills`) or over
/// [`MAX_SKILLS_CEILING`] (`max_skills_over_ceiling`).
pub(super) fn bound(spec: Option<&SelectionSpec>) -> Result<usize, DescriptorProblem> {
    let default = limits::MAX_BUNDLES_PER_CATALOGUE;
    let Some(max) = spec.and_then(|s| s.max_skills) else {
        return Ok(default);
    };
    let refused = |code, message| DescriptorProblem {
        line: None,
        code,
        location: "selection.max_skills".to_owned(),
        message,
    };
    if max < default as u64 {
        return Err(refused(
            DescriptorCode::InvalidMaxSkills,
            format!(
                "{max} is below the contract's bound of {default} skills per selection; \
                 `max_skills` only raises it"
            ),
        ));
    }
    if max > MAX_SKILLS_CEILING as u64 {
        return Err(refused(
            DescriptorCode::MaxSkillsOverCeiling,
            format!(
                "{max} is over the ceiling of {MAX_SKILLS_CEILING} skills per selection; split \
                 the skills between agents"
            ),
        ));
    }
    // Within 16..=1,024: fits a usize.
    Ok(usize::try_from(max).unwrap_or(MAX_SKILLS_CEILING))
}

/// Every problem of the selections of `entries`: the defaults alone, then each agent's, each
/// held to `max` unique names.
pub(super) fn problems(entries: &Entries, max: usize) -> Vec<DescriptorProblem> {
    let mut problems = Vec::new();
    let mut defaults = Selection::default();
    for entry in entries.selection(None) {
        defaults.add(entry, "the defaults", &mut problems);
    }
    defaults.bounded(None, max, &mut problems);
    for (agent, extras) in &entries.agents {
        let who = format!("agent `{}`", escape::text(agent));
        let mut selection = defaults.clone();
        for &index in extras {
            selection.add(&entries.entries[index], &who, &mut problems);
        }
        selection.bounded(Some(agent), max, &mut problems);
    }
    problems
}

/// The pins of one selection so far, each with the entry that first gave it.
#[derive(Clone, Default)]
struct Selection {
    pins: BTreeMap<SkillName, (Pin, String)>,
}

impl Selection {
    /// Adds the pins of `entry`, refusing a name already pinned otherwise in this selection.
    fn add(&mut self, entry: &EntryFacts, who: &str, problems: &mut Vec<DescriptorProblem>) {
        for (pin, location) in &entry.pins {
            match self.pins.get(&pin.name) {
                Some((other, other_at)) if other != pin => problems.push(DescriptorProblem {
                    line: None,
                    code: DescriptorCode::ConflictingPins,
                    location: location.clone(),
                    message: format!(
                        "`{}` is pinned as {pin} here but as {other} in {other_at}; within the \
                         selection of {who} a name has one pin",
                        pin.name
                    ),
                }),
                Some(_) => {}
                None => {
                    self.pins
                        .insert(pin.name.clone(), (pin.clone(), location.clone()));
                }
            }
        }
    }

    /// Refuses more unique names than a catalogue may hold (`max`).
    fn bounded(&self, agent: Option<&String>, max: usize, problems: &mut Vec<DescriptorProblem>) {
        // Identical pins were kept once, conflicting ones refused: one key per unique name.
        let count = self.pins.len();
        if count <= max {
            return;
        }
        let (location, who) = match agent {
            Some(a) => (
                format!("agents.{a}"),
                format!("agent `{}`", escape::text(a)),
            ),
            None => ("skills".to_owned(), "the defaults".to_owned()),
        };
        problems.push(DescriptorProblem {
            line: None,
            code: DescriptorCode::TooManySkills,
            location,
            message: format!(
                "{who} would get {count} unique skills, over the bound of {max}{}",
                if max == limits::MAX_BUNDLES_PER_CATALOGUE {
                    " (the contract's; `selection: { max_skills: N }` raises it)"
                } else {
                    " (`selection.max_skills`)"
                }
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::descriptor::parse;
    use crate::descriptor::plan::{DescriptorProblem, check};

    const H1: &str = "8a531fcd108297bda8aa470d42f427779daad537bb2a31addef29087b5ab9f9e";
    const H2: &str = "9a531fcd108297bda8aa470d42f427779daad537bb2a31addef29087b5ab9f9e";

    fn local(name: &str, hash: &str, dir: &str) -> String {
        format!("{{ local: {{ name: {name}, version: '1', directory: {dir}, hash: {hash} }} }}")
    }

    fn problems(yaml: &str) -> Vec<DescriptorProblem> {
        check(&parse(yaml).expect("parses"), Path::new("/base"))
            .err()
            .unwrap_or_default()
    }

    #[test]
    fn two_agents_may_pin_one_name_differently() {
        let yaml = format!(
            "skills: [{}]\nagents:\n  a:\n    skills: [{}]\n  b:\n    skills: [{}]\n",
            local("common", H1, "/c"),
            local("pdf", H1, "/a"),
            local("pdf", H2, "/b"),
        );
        let plan = check(&parse(&yaml).expect("parses"), Path::new("/base")).expect("accepted");
        let hash = |agent| plan.sources_for(Some(agent))[1].pins()[0].hash.to_string();
        assert_eq!((hash("a"), hash("b")), (H1.to_owned(), H2.to_owned()));
    }

    #[test]
    fn a_conflict_within_one_selection_is_refused_naming_both_entries() {
        // Two extras of one agent.
        let extras = format!(
            "agents:\n  a:\n    skills: [{}, {}]\n",
            local("pdf", H1, "/a"),
            local("pdf", H2, "/b"),
        );
        // An extra against a default (a Git source's approved entry).
        let against_default = format!(
            "skills:\n  - git:\n      source: https://example.com/s.git\n      revision: \
             0123456789abcdef0123456789abcdef01234567\n      directory: /d\n      approved:\n        \
             - {{ name: other, version: '1', hash: {H1} }}\n        - {{ name: pdf, version: '1', hash: {H1} }}\n\
             agents:\n  a:\n    skills: [{}]\n  b:\n    skills: []\n",
            local("pdf", H2, "/b"),
        );
        // Two defaults: reported once, not again for each agent.
        let defaults = format!(
            "skills: [{}, {}]\nagents:\n  a:\n    skills: []\n  b:\n    skills: []\n",
            local("pdf", H1, "/a"),
            local("pdf", H2, "/b"),
        );
        for (yaml, here, there, who) in [
            (
                &extras,
                "agents.a.skills[1].local",
                "agents.a.skills[0].local",
                "agent `a`",
            ),
            (
                &against_default,
                "agents.a.skills[0].local",
                "skills[0].git.approved[1]",
                "agent `a`",
            ),
            (
                &defaults,
                "skills[1].local",
                "skills[0].local",
                "the defaults",
            ),
        ] {
            let got = problems(yaml);
            assert_eq!(got.len(), 1, "{yaml}\n{got:#?}");
            assert_eq!(got[0].code.as_str(), "conflicting_pins");
            assert_eq!(got[0].location, here);
            assert!(got[0].message.contains(there), "{}", got[0].message);
            assert!(got[0].message.contains(who), "{}", got[0].message);
        }
    }

    #[test]
    fn max_skills_raises_the_bound_of_every_selection_and_only_within_16_to_1024() {
        let locals = |from: usize, to: usize| -> String {
            (from..to)
                .map(|i| local(&format!("s{i}"), H1, "/l"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let yaml = |selection: &str, defaults: usize, extras: usize| {
            format!(
                "{selection}skills: [{}]\nagents:\n  a:\n    skills: [{}]\n",
                locals(0, defaults),
                locals(defaults, defaults + extras),
            )
        };
        let codes = |yaml: &str| -> Vec<(String, String)> {
            problems(yaml)
                .into_iter()
                .map(|p| (p.code.as_str().to_owned(), p.location))
                .collect()
        };
        let refused = |code: &str, at: &str| vec![(code.to_owned(), at.to_owned())];
        // The default: 17 unique names are refused, for the defaults alone and for the agent.
        assert_eq!(
            codes(&yaml("", 17, 0)),
            [
                refused("too_many_skills", "skills"),
                refused("too_many_skills", "agents.a")
            ]
            .concat()
        );
        // Raised to 17: accepted; one more for an agent is refused at that agent.
        let raised = "selection: { max_skills: 17 }\n";
        assert_eq!(codes(&yaml(raised, 17, 0)), Vec::new());
        assert_eq!(codes(&yaml(raised, 16, 1)), Vec::new());
        assert_eq!(
            codes(&yaml(raised, 17, 1)),
            refused("too_many_skills", "agents.a")
        );
        // Out of range, each with its own code; the bound stays 16 then.
        for (value, code) in [
            ("1025", "max_skills_over_ceiling"),
            ("15", "invalid_max_skills"),
        ] {
            let selection = format!("selection: {{ max_skills: {value} }}\n");
            assert_eq!(
                codes(&yaml(&selection, 1, 0)),
                refused(code, "selection.max_skills")
            );
        }
        let plan = check(
            &parse(&yaml("selection: { max_skills: 1024 }\n", 1, 0)).expect("parses"),
            Path::new("/base"),
        )
        .expect("accepted");
        assert_eq!(plan.max_skills, 1024);
    }

    #[test]
    fn the_same_pin_twice_counts_once() {
        let sixteen: String = (0..15)
            .map(|i| format!("{}, ", local(&format!("s{i}"), H1, "/l")))
            .collect();
        let yaml = format!(
            "skills: [{sixteen}{}]\nagents:\n  a:\n    skills: [{}, {}]\n",
            local("pdf", H1, "/a"),
            local("pdf", H1, "/elsewhere"),
            local("s3", H1, "/l"),
        );
        assert_eq!(problems(&yaml), Vec::new());
    }
}
