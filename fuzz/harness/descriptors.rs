//! The descriptor: `skillfold.yaml` parsed, written back and checked, and the in-place editor
//! of `update --write` judged against an independent walk of the YAML tree.

use std::path::Path;

use super::common::{is_code, matches_name_pattern};

/// Descriptor text: parsed, written back as YAML and parsed again to the same descriptor, and
/// checked statically (relative directories resolved against a fixed base, no file system access).
pub fn descriptor(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(parsed) = crate::descriptor::parse(&text) else {
        return;
    };
    let written = serde_yaml::to_string(&parsed).expect("a parsed descriptor serialises");
    let again = crate::descriptor::parse(&written)
        .unwrap_or_else(|e| panic!("written descriptor does not parse: {e}\n{written}"));
    assert_eq!(again, parsed, "descriptor does not round-trip:\n{written}");
    let base = Path::new("/fuzz/base");
    let first = crate::descriptor::check(&parsed, base);
    match &first {
        Ok(plan) => {
            for source in &plan.sources {
                for pin in source.pins() {
                    assert!(matches_name_pattern(pin.name.as_str()));
                }
            }
        }
        Err(problems) => {
            assert!(!problems.is_empty(), "refused without a problem");
            for p in problems {
                assert!(is_code(p.code.as_str()), "bad descriptor code `{}`", p.code);
                assert!(!p.message.is_empty());
            }
        }
    }
    let second = crate::descriptor::check(&again, base);
    assert_eq!(
        first.as_ref().err(),
        second.as_ref().err(),
        "the check is not deterministic"
    );
}

/// The scalars `update --write` may rewrite, as [`descriptor_edit`] addresses them: a source's
/// `revision`, or an approved entry's `version` or `hash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditSlot {
    Revision,
    Version(usize),
    Hash(usize),
}

/// Descriptor text and replacement scalars for the editor of `update --write`: the text, then
/// one value per rewritable scalar in the order [`crate::descriptor::edit::locate`] lists them
/// (each source's `revision`, then each approved entry's `version` and `hash`), separated by the
/// byte `0xFF`; an empty value leaves its scalar alone.
///
/// Invariants: the editor either refuses (`not_rewritable`, with a line) or writes text that
/// (1) is YAML whose tree equals the old tree with exactly the rewritten scalars replaced by
/// their new values — every other node keeps its value, style, flow, anchor and tag, and a
/// rewritten scalar keeps its quoting unless a plain one must be quoted to read back as the
/// same string — and (2) when the old text is a descriptor, is the same descriptor with those
/// fields changed. The scalars are found independently, by walking the tree from the
/// location `locate` names.
pub fn descriptor_edit(data: &[u8]) {
    use crate::descriptor::edit;
    use crate::format::yaml;

    let mut parts = data.split(|&b| b == 0xFF);
    let text = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let mut values = parts.map(|v| String::from_utf8_lossy(v).into_owned());
    let sites = match edit::locate(&text) {
        Ok(sites) => sites,
        Err(e) => {
            assert!(yaml::parse(&text).is_err(), "located nothing in YAML: {e}");
            assert_eq!(e.code().as_str(), "not_rewritable");
            assert!(e.line >= 1 && !e.message.is_empty());
            return;
        }
    };
    let Some(old) = yaml::parse(&text).expect("located in YAML") else {
        return assert!(sites.is_empty(), "sites in an empty document");
    };
    if has_duplicate_keys(&old) {
        // The descriptor refuses them, and which of two keys an edit addresses is the editor's
        // choice (it visits both agents of a name written twice): nothing to compare with.
        return;
    }
    let mut edits = Vec::new();
    let mut changed: Vec<(String, EditSlot, String)> = Vec::new();
    for source in &sites {
        let mut slots: Vec<(EditSlot, &edit::Site)> = Vec::new();
        slots.extend(source.revision.as_ref().map(|s| (EditSlot::Revision, s)));
        for (j, pin) in source.approved.iter().enumerate() {
            slots.extend(pin.version.as_ref().map(|s| (EditSlot::Version(j), s)));
            slots.extend(pin.hash.as_ref().map(|s| (EditSlot::Hash(j), s)));
        }
        for (slot, site) in slots {
            let node = slot_node(&old, &source.location, slot).expect("a located scalar");
            assert_eq!(node.position.line, site.line);
            if let Some((value, _)) = node.as_scalar() {
                assert_eq!(value, site.value);
            }
            let Some(value) = values.next() else { break };
            if value.is_empty() {
                continue;
            }
            match site.replace(&value) {
                Ok(e) => {
                    edits.push(e);
                    changed.push((source.location.clone(), slot, value));
                }
                Err(e) => {
                    assert_eq!(e.code().as_str(), "not_rewritable");
                    assert_eq!(e.line, site.line);
                    assert!(
                        node.anchored
                            || node.tag.is_some()
                            || node.bytes.is_empty()
                            || matches!(
                                node.kind,
                                yaml::NodeKind::Alias
                                    | yaml::NodeKind::Scalar {
                                        style: yaml::Style::Literal | yaml::Style::Folded,
                                        ..
                                    }
                            ),
                        "refused to rewrite a plain or quoted scalar: {e}"
                    );
                }
            }
        }
    }
    let new_text = match edit::apply(&text, edits) {
        Ok(t) => t,
        Err(e) => return assert_eq!(e.code().as_str(), "not_rewritable"),
    };
    let new = yaml::parse(&new_text)
        .unwrap_or_else(|e| panic!("the rewrite is not YAML ({e:?}):\n{new_text}"))
        .expect("a document");
    let mut want = old.clone();
    for (location, slot, value) in &changed {
        let node = slot_node_mut(&mut want, location, *slot).expect("a located scalar");
        let was_plain = matches!(node.as_scalar(), Some((_, yaml::Style::Plain)));
        // Single quotes cannot escape: a value with a control character is double-quoted.
        let style = match node.as_scalar() {
            Some((_, yaml::Style::SingleQuoted)) if !value.chars().any(char::is_control) => {
                yaml::Style::SingleQuoted
            }
            Some((_, yaml::Style::Plain)) => yaml::Style::Plain,
            _ => yaml::Style::DoubleQuoted,
        };
        node.kind = yaml::NodeKind::Scalar {
            value: value.clone(),
            style,
        };
        if was_plain {
            // Plain stays plain only when it reads back as the same string.
            let still_plain = matches!(
                slot_node(&new, location, *slot).and_then(yaml::Node::as_scalar),
                Some((_, yaml::Style::Plain))
            );
            if still_plain {
                assert!(yaml::plain_scalar_is_string(value), "`{value}` left plain");
            } else {
                node.kind = yaml::NodeKind::Scalar {
                    value: value.clone(),
                    style: yaml::Style::DoubleQuoted,
                };
            }
        }
    }
    assert_same_tree(&new, &want, &new_text);
    assert_eq!(new.to_json(), want.to_json());
    if let Ok(before) = crate::descriptor::parse(&text) {
        let after = crate::descriptor::parse(&new_text)
            .unwrap_or_else(|e| panic!("the rewritten descriptor does not parse: {e}\n{new_text}"));
        let mut expected = before.clone();
        for (location, slot, value) in &changed {
            let spec = git_spec_mut(&mut expected, location).expect("a located Git source");
            match slot {
                EditSlot::Revision => spec.revision = value.clone(),
                EditSlot::Version(j) => spec.approved[*j].version = value.clone(),
                EditSlot::Hash(j) => spec.approved[*j].hash = value.clone(),
            }
        }
        assert_eq!(after, expected, "not the expected descriptor:\n{new_text}");
    }
}

/// The value of `key` in a mapping node (the last of duplicates, as the editor reads them).
fn yaml_get<'n>(
    node: &'n crate::format::yaml::Node,
    key: &str,
) -> Option<&'n crate::format::yaml::Node> {
    match &node.kind {
        crate::format::yaml::NodeKind::Mapping { entries, .. } => entries
            .iter()
            .rev()
            .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn yaml_get_mut<'n>(
    node: &'n mut crate::format::yaml::Node,
    key: &str,
) -> Option<&'n mut crate::format::yaml::Node> {
    match &mut node.kind {
        crate::format::yaml::NodeKind::Mapping { entries, .. } => entries
            .iter_mut()
            .rev()
            .find(|(k, _)| k.as_scalar().is_some_and(|(k, _)| k == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn yaml_item(node: &crate::format::yaml::Node, i: usize) -> Option<&crate::format::yaml::Node> {
    match &node.kind {
        crate::format::yaml::NodeKind::Sequence { items, .. } => items.get(i),
        _ => None,
    }
}

fn yaml_item_mut(
    node: &mut crate::format::yaml::Node,
    i: usize,
) -> Option<&mut crate::format::yaml::Node> {
    match &mut node.kind {
        crate::format::yaml::NodeKind::Sequence { items, .. } => items.get_mut(i),
        _ => None,
    }
}

/// A location `locate` names (`skills[3].git`, `agents.<name>.skills[0].git`): the agent, if
/// any, and the index in its `skills`.
fn edit_location(location: &str) -> Option<(Option<&str>, usize)> {
    let (list, index) = location.strip_suffix("].git")?.rsplit_once('[')?;
    let index = index.parse().ok()?;
    if list == "skills" {
        return Some((None, index));
    }
    let agent = list.strip_prefix("agents.")?.strip_suffix(".skills")?;
    Some((Some(agent), index))
}

/// The `(key path, index)` steps from the root to a slot's scalar.
fn slot_steps(location: &str, slot: EditSlot) -> Option<Vec<(&str, Option<usize>)>> {
    let (agent, index) = edit_location(location)?;
    let mut steps = Vec::new();
    if let Some(agent) = agent {
        steps.push(("agents", None));
        steps.push((agent, None));
    }
    steps.push(("skills", Some(index)));
    match slot {
        EditSlot::Revision => {
            steps.push(("git", None));
            steps.push(("revision", None));
        }
        EditSlot::Version(j) | EditSlot::Hash(j) => {
            steps.push(("git", None));
            steps.push(("approved", Some(j)));
            steps.push((
                if matches!(slot, EditSlot::Version(_)) {
                    "version"
                } else {
                    "hash"
                },
                None,
            ));
        }
    }
    Some(steps)
}

fn slot_node<'n>(
    root: &'n crate::format::yaml::Node,
    location: &str,
    slot: EditSlot,
) -> Option<&'n crate::format::yaml::Node> {
    let mut node = root;
    for (key, index) in slot_steps(location, slot)? {
        node = yaml_get(node, key)?;
        if let Some(i) = index {
            node = yaml_item(node, i)?;
        }
    }
    Some(node)
}

fn slot_node_mut<'n>(
    root: &'n mut crate::format::yaml::Node,
    location: &str,
    slot: EditSlot,
) -> Option<&'n mut crate::format::yaml::Node> {
    let mut node = root;
    for (key, index) in slot_steps(location, slot)? {
        node = yaml_get_mut(node, key)?;
        if let Some(i) = index {
            node = yaml_item_mut(node, i)?;
        }
    }
    Some(node)
}

fn git_spec_mut<'d>(
    descriptor: &'d mut crate::descriptor::Descriptor,
    location: &str,
) -> Option<&'d mut crate::descriptor::GitSpec> {
    let (agent, index) = edit_location(location)?;
    let skills = match agent {
        None => &mut descriptor.skills,
        Some(agent) => &mut descriptor.agents.get_mut(agent)?.skills,
    };
    match skills.get_mut(index)? {
        crate::descriptor::SkillSource::Git(spec) => Some(spec),
        _ => None,
    }
}

/// Whether a mapping anywhere in the tree holds one scalar key twice.
fn has_duplicate_keys(node: &crate::format::yaml::Node) -> bool {
    use crate::format::yaml::NodeKind;
    match &node.kind {
        NodeKind::Mapping { entries, .. } => {
            let mut keys: Vec<&str> = entries
                .iter()
                .filter_map(|(k, _)| Some(k.as_scalar()?.0))
                .collect();
            keys.sort_unstable();
            keys.windows(2).any(|w| w[0] == w[1])
                || entries
                    .iter()
                    .any(|(k, v)| has_duplicate_keys(k) || has_duplicate_keys(v))
        }
        NodeKind::Sequence { items, .. } => items.iter().any(has_duplicate_keys),
        _ => false,
    }
}

/// Two trees equal in everything but positions and byte ranges.
fn assert_same_tree(got: &crate::format::yaml::Node, want: &crate::format::yaml::Node, text: &str) {
    use crate::format::yaml::NodeKind;
    assert_eq!(got.anchored, want.anchored, "an anchor changed:\n{text}");
    assert_eq!(got.tag, want.tag, "a tag changed:\n{text}");
    match (&got.kind, &want.kind) {
        (NodeKind::Sequence { items: a, flow: fa }, NodeKind::Sequence { items: b, flow: fb }) => {
            assert_eq!((a.len(), fa), (b.len(), fb), "a sequence changed:\n{text}");
            a.iter()
                .zip(b)
                .for_each(|(x, y)| assert_same_tree(x, y, text));
        }
        (
            NodeKind::Mapping {
                entries: a,
                flow: fa,
            },
            NodeKind::Mapping {
                entries: b,
                flow: fb,
            },
        ) => {
            assert_eq!((a.len(), fa), (b.len(), fb), "a mapping changed:\n{text}");
            for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                assert_same_tree(ka, kb, text);
                assert_same_tree(va, vb, text);
            }
        }
        (a, b) => assert_eq!(a, b, "a scalar changed:\n{text}"),
    }
}
