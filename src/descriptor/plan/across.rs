//! The checks across entries, in the same pass as the checks of each entry: distinct, non-nested
//! corpus directories (`shared_directory`) here, and the rules of each effective selection
//! (`selection.rs`: `conflicting_pins`, `too_many_skills`).
//!
//! Both run on the [`EntryFacts`] the checker records for every entry, valid or not: its corpus
//! directory and the pins that parsed, each with its location. An entry refused for a bad commit
//! id still has its directory and its pins, so a descriptor with both a broken entry and one
//! skill too many is told both in one `check` (docs/descriptor.md: every problem is listed).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::DescriptorProblem;
use crate::descriptor::code::DescriptorCode;
use crate::format::pin::Pin;
use crate::support::escape;

/// What the checks across entries need of one entry, whether or not it is valid.
#[derive(Debug, Clone, Default)]
pub(super) struct EntryFacts {
    /// The entry's location (`skills[0].git`).
    pub location: String,
    /// A Git or OCI source's corpus directory, when it is valid.
    pub corpus: Option<PathBuf>,
    /// The pins that parsed, each with its location, one per name (a name approved twice in
    /// one source is that source's own problem, `duplicate_name`).
    pub pins: Vec<(Pin, String)>,
}

impl EntryFacts {
    /// Records `pin` at `location`, unless the entry already has its name.
    pub fn pin(&mut self, pin: &Pin, location: String) {
        if !self.pins.iter().any(|(p, _)| p.name == pin.name) {
            self.pins.push((pin.clone(), location));
        }
    }
}

/// Every entry's facts, and which entries each selection takes (indices into `entries`).
#[derive(Debug, Default)]
pub(super) struct Entries {
    /// In the order of the file.
    pub entries: Vec<EntryFacts>,
    /// The defaults.
    pub defaults: Vec<usize>,
    /// Per agent, its extras.
    pub agents: BTreeMap<String, Vec<usize>>,
}

impl Entries {
    /// The entries `agent` sees: the defaults, then its extras (`None`: the defaults alone).
    pub fn selection(&self, agent: Option<&str>) -> impl Iterator<Item = &EntryFacts> {
        let extras = agent
            .and_then(|a| self.agents.get(a))
            .map_or(&[][..], Vec::as_slice);
        self.defaults
            .iter()
            .chain(extras)
            .map(|&i| &self.entries[i])
    }
}

/// The shared corpus directories of `entries` (each selection's problems are `selection.rs`'s).
pub(super) fn problems(entries: &Entries) -> Vec<DescriptorProblem> {
    let mut problems = Vec::new();
    let corpora: Vec<(&PathBuf, &str)> = entries
        .entries
        .iter()
        .filter_map(|e| e.corpus.as_ref().map(|c| (c, e.location.as_str())))
        .collect();
    for (i, (a, at_a)) in corpora.iter().enumerate() {
        for (b, at_b) in &corpora[i + 1..] {
            if a.starts_with(b) || b.starts_with(a) {
                problems.push(DescriptorProblem {
                    line: None,
                    code: DescriptorCode::SharedDirectory,
                    location: format!("{at_b}.directory"),
                    message: format!(
                        "`{}` overlaps the corpus of {at_a} (`{}`); each Git or OCI source needs its own directory",
                        escape::path(b),
                        escape::path(a)
                    ),
                });
            }
        }
    }
    problems
}
