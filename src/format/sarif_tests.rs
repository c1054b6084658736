use serde_json::{Value, json};

use super::*;
use crate::format::content::policy::Finding;
use crate::format::problem::ProblemCode;

fn finding(line: Option<usize>, column: usize) -> Finding {
    Finding {
        class: "tag",
        line,
        column,
        code_point: Some("U+E0041".into()),
        name: Some("TAG LATIN CAPITAL LETTER A".into()),
        count: 1,
    }
}

fn render(log: &Log) -> Value {
    serde_json::to_value(log.document("9.9.9")).unwrap()
}

#[test]
fn a_refused_finding_is_an_error_with_its_file_line_and_column() {
    let p = Problem::error(
        ProblemCode::HiddenCharacter,
        Some("SKILL.md"),
        "a hidden character U+E0041",
    )
    .with_finding(finding(Some(7), 12));
    let e = Entry::of_problem(&p, "REPOROOT", "skills/pdf/");
    assert_eq!(e.rule, "hidden_character");
    assert_eq!(e.level, Level::Error);
    assert_eq!(
        e.place,
        Some(Place {
            base: "REPOROOT".into(),
            path: "skills/pdf/SKILL.md".into(),
            line: Some(7),
            column: Some(12),
        })
    );
    let mut log = Log::new();
    log.push(e);
    let doc = render(&log);
    let loc = &doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"],
        json!({"uri": "skills/pdf/SKILL.md", "uriBaseId": "REPOROOT"})
    );
    assert_eq!(loc["region"], json!({"startLine": 7, "startColumn": 12}));
}

#[test]
fn a_warning_is_a_warning_and_a_finding_without_a_line_has_no_region() {
    let p = Problem::warning(
        ProblemCode::HiddenCharacter,
        Some("a\u{200b}b.md"),
        "in a name",
    )
    .with_finding(finding(None, 2));
    let e = Entry::of_problem(&p, "BUNDLEROOT", "");
    assert_eq!(e.level, Level::Warning);
    let place = e.place.clone().unwrap();
    assert_eq!((place.line, place.column), (None, None));
    let mut log = Log::new();
    log.push(e);
    let doc = render(&log);
    let loc = &doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert!(loc.get("region").is_none());
    // The zero-width space is percent-encoded, never raw in the URI.
    assert_eq!(loc["artifactLocation"]["uri"], "a%E2%80%8Bb.md");
}

#[test]
fn a_bundle_wide_problem_is_at_the_bundle_folder() {
    let p = Problem::error(ProblemCode::TooManyFiles, None, "too many files");
    assert_eq!(
        Entry::of_problem(&p, "R", "skills/pdf").place.unwrap().path,
        "skills/pdf/"
    );
    assert_eq!(Entry::of_problem(&p, "R", "").place.unwrap().path, "./");
}

#[test]
fn rules_are_listed_once_in_order_of_first_use_with_their_meaning() {
    let mut log = Log::new();
    for code in [
        ProblemCode::HiddenComment,
        ProblemCode::HiddenCharacter,
        ProblemCode::HiddenComment,
    ] {
        log.push(Entry::new(code, Level::Warning, "m"));
    }
    log.push(Entry::new("no_such_code_anywhere", Level::Error, "m"));
    let doc = render(&log);
    let rules = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "hidden_comment",
            "hidden_character",
            "no_such_code_anywhere"
        ]
    );
    let indexes: Vec<u64> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleIndex"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [0, 1, 0, 2]);
    assert!(
        rules[0]["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("HTML comment")
    );
    assert!(rules[2].get("shortDescription").is_none());
    // A link of the page is written as its text.
    let tag = rules[1]["shortDescription"]["text"].as_str().unwrap();
    assert!(
        tag.contains("(content rules)") && !tag.contains("]("),
        "{tag}"
    );
    assert_eq!(doc["runs"][0]["results"][3]["level"], "error");
    assert_eq!(doc["runs"][0]["results"][0]["level"], "warning");
    assert_eq!(doc["runs"][0]["tool"]["driver"]["name"], "skillfold");
    assert_eq!(doc["runs"][0]["tool"]["driver"]["version"], "9.9.9");
    assert_eq!(doc["version"], "2.1.0");
    assert_eq!(doc["runs"][0]["columnKind"], "unicodeCodePoints");
}

#[test]
fn only_the_bases_a_result_uses_are_declared() {
    let mut log = Log::new();
    log.base(Base {
        id: "USED".into(),
        uri: Some("file:///w/".into()),
        description: "the folder".into(),
    });
    log.base(Base {
        id: "UNUSED".into(),
        uri: None,
        description: "another".into(),
    });
    log.push(Entry::new("symlink", Level::Error, "m").at(Place::file("USED", "a b/%x")));
    let doc = render(&log);
    assert_eq!(
        doc["runs"][0]["originalUriBaseIds"],
        json!({"USED": {"uri": "file:///w/", "description": {"text": "the folder"}}})
    );
    assert_eq!(
        doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "a%20b/%25x"
    );
    let empty = render(&Log::new());
    assert!(empty["runs"][0].get("originalUriBaseIds").is_none());
    assert_eq!(empty["runs"][0]["results"], json!([]));
}

#[test]
fn messages_show_no_control_or_reordering_character_raw() {
    let mut log = Log::new();
    log.push(Entry::new(
        "hidden_character",
        Level::Error,
        "`a\u{202e}b\u{9b}c`",
    ));
    let text = crate::support::json_text::pretty(&log.document("1")).unwrap();
    assert!(!text.contains('\u{202e}') && !text.contains('\u{9b}'));
    assert!(text.contains("\\u202e") && text.contains("\\u009b"));
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        back["runs"][0]["results"][0]["message"]["text"],
        "`a\u{202e}b\u{9b}c`"
    );
}

#[test]
fn a_folder_base_is_an_absolute_file_uri_ending_with_a_slash() {
    let dir = tempfile::tempdir().unwrap();
    let base = Base::folder("B", dir.path(), "d".into());
    let uri = base.uri.unwrap();
    assert!(uri.starts_with("file:///") && uri.ends_with('/'), "{uri}");
    let missing = Base::folder("B", &dir.path().join("missing"), "d".into());
    assert_eq!(missing.uri, None);
}
