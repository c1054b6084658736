use super::*;
use crate::descriptor::edit::apply;

const ITEM: &str = "- git:\n    source: \"s\"\n    approved:\n      - name: a\n";

fn appended(text: &str, scope: Scope<'_>) -> String {
    let edits = append_source(text, scope, ITEM).unwrap_or_else(|e| panic!("{e}\n{text}"));
    apply(text, edits).expect("applied")
}

/// `text` with `inserted` at the first occurrence of `at` (the only change allowed).
fn with(text: &str, at: &str, inserted: &str) -> String {
    let i = text.find(at).unwrap_or_else(|| panic!("{at:?} in {text}"));
    format!("{}{inserted}{}", &text[..i], &text[i..])
}

const FILE: &str = "# team skills\nskills:   # the defaults\n  - git:\n      source: x   # upstream\n      approved:\n        - { name: p, version: '1', hash: h }\n\n# trailing comment\nagents:\n  writer:\n    skills:\n    - local: { name: w }\n      # more of it\n  # between agents\n  reader:\n    skills: []   # none yet\nscripts: { allowlist: [] }\n";

#[test]
fn a_source_goes_after_the_last_item_at_its_indentation() {
    let out = appended(FILE, Scope::Defaults);
    let item = "  - git:\n      source: \"s\"\n      approved:\n        - name: a\n";
    assert_eq!(out, with(FILE, "\n# trailing comment", item));
}

#[test]
fn an_agent_list_an_empty_list_and_a_new_agent() {
    // An indentless list, with a comment indented under its item.
    let out = appended(FILE, Scope::Agent("writer"));
    assert_eq!(
        out,
        with(
            FILE,
            "  # between agents",
            "    - git:\n        source: \"s\"\n        approved:\n          - name: a\n"
        )
    );
    // `[]` is taken out for the block; the comment stays on the key's line.
    let out = appended(FILE, Scope::Agent("reader"));
    assert_eq!(
        out,
        FILE.replace(
            "    skills: []   # none yet\n",
            "    skills:   # none yet\n      - git:\n          source: \"s\"\n          approved:\n            - name: a\n"
        )
    );
    // A new agent after the last one.
    let out = appended(FILE, Scope::Agent("true"));
    assert_eq!(
        out,
        with(
            FILE,
            "scripts:",
            "  \"true\":\n    skills:\n      - git:\n          source: \"s\"\n          approved:\n            - name: a\n"
        )
    );
}

#[test]
fn what_is_missing_is_made_at_the_end_in_the_files_line_endings() {
    let text = "scripts:\r\n  timeout_seconds: 5";
    assert_eq!(
        appended(text, Scope::Defaults),
        format!(
            "{text}\r\nskills:\r\n  - git:\r\n      source: \"s\"\r\n      approved:\r\n        - name: a\r\n"
        )
    );
    assert_eq!(
        appended("", Scope::Agent("ops")),
        "agents:\n  ops:\n    skills:\n      - git:\n          source: \"s\"\n          approved:\n            - name: a\n"
    );
    assert_eq!(
        appended("# nothing yet\n", Scope::Defaults),
        "# nothing yet\nskills:\n  - git:\n      source: \"s\"\n      approved:\n        - name: a\n"
    );
    // An agent whose value is empty gets its `skills:`.
    assert_eq!(
        appended("agents:\n  ops:\n", Scope::Agent("ops")),
        "agents:\n  ops:\n    skills:\n      - git:\n          source: \"s\"\n          approved:\n            - name: a\n"
    );
}

#[test]
fn approved_entries_go_at_the_end_of_their_list() {
    let items = "- name: b\n  hash: h2\n";
    let edits = append_approved(FILE, "skills[0].git", items).expect("edits");
    assert_eq!(
        apply(FILE, edits).expect("applied"),
        with(
            FILE,
            "\n# trailing comment",
            "        - name: b\n          hash: h2\n"
        )
    );
    let text =
        "agents:\n  w:\n    skills:\n      - git: { source: x, approved: [ { name: p } ] }\n";
    let err = append_approved(text, "agents.w.skills[0].git", items).expect_err("flow");
    assert_eq!(err.line, 4, "{err}");
    assert!(err.message.contains("flow style"), "{err}");
    let err = append_approved(text, "skills[0].git", items).expect_err("no source there");
    assert!(err.message.contains("no source"), "{err}");
}

#[test]
fn a_flow_list_with_items_is_refused_with_its_line() {
    let text = "# one\nskills: [ { local: { name: a } } ]\n";
    let err = append_source(text, Scope::Defaults, ITEM).expect_err("flow");
    assert_eq!(err.line, 2, "{err}");
    assert!(
        err.message.contains("`skills` is written in flow style"),
        "{err}"
    );
    let err = append_source("[a]\n", Scope::Defaults, ITEM).expect_err("not a mapping");
    assert!(err.message.contains("not a mapping"), "{err}");
}
