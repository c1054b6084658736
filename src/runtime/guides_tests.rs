//! Discovery of a guides folder and `skill_read_reference` on a catalogue: what is found and
//! what is not, the bounds of a scan, and every refusal of the tool with its code. (Moved from
//! the integration tests: `discover` is not host API; a host gets its guides through the
//! descriptor, tested with the binary in `tests/it/guides.rs`.)

use std::path::Path;

use serde_json::{Value, json};

use super::{MAX_DIRECTORY_ENTRIES, discover};
use crate::runtime::catalogue::Catalogue;

use crate::testing::guides::{guides_root, hostile_guides_root, portable};

fn catalogue(root: &Path) -> Catalogue {
    Catalogue::new(None, [])
        .unwrap()
        .with_guides(discover(root).unwrap())
}

fn read(c: &Catalogue, skill: &str, path: &str) -> Result<Value, crate::runtime::tools::ToolError> {
    c.call(
        "skill_read_reference",
        &json!({"skill": skill, "path": path}),
    )
    .map(|(v, _)| v)
}

#[test]
fn discovery_finds_portable_and_legacy_skills_and_reports_the_rest() {
    let tmp = guides_root();
    let d = discover(tmp.path()).unwrap();
    let ids: Vec<&str> = d.guides.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["deploys", "linkdir", "oncall", "style"]);
    let deploys = d.get("deploys").unwrap();
    assert_eq!(
        (
            deploys.name.as_str(),
            deploys.description.as_str(),
            deploys.kind.as_str()
        ),
        ("Deploys", "How we deploy.", "legacy")
    );
    assert_eq!(
        d.get("oncall").unwrap().description,
        "Paging: who, when and how"
    );
    assert_eq!(d.get("style").unwrap().kind, "portable");
    assert!(
        d.dropped.iter().any(|l| l.contains("`dup` is ambiguous")),
        "{:?}",
        d.dropped
    );
    assert!(
        d.skipped.iter().any(|l| l.starts_with("broken")),
        "{:?}",
        d.skipped
    );
    assert!(
        d.skipped.iter().any(|l| l.contains("deeper than 8")),
        "{:?}",
        d.skipped
    );
}

#[test]
fn read_reference_serves_skill_md_and_reference_text() {
    let tmp = guides_root();
    let c = catalogue(tmp.path());
    assert_eq!(
        c.tools().iter().map(|t| t.name).collect::<Vec<_>>(),
        ["skill_read_reference"]
    );
    let prompt = c.prompt().unwrap();
    assert!(
        prompt.contains("<name>\nstyle\n</name>") && prompt.contains("skill_read_reference"),
        "{prompt}"
    );
    assert!(prompt.contains("untrusted data"), "{prompt}");
    assert_eq!(
        read(&c, "style", "SKILL.md").unwrap()["content"],
        "---\nname: Style Guide\ndescription: About Style Guide.\n---\n# Style Guide\n"
    );
    assert_eq!(
        read(&c, "style", "references/tone.md").unwrap()["content"],
        "# Tone\n"
    );
    assert_eq!(
        read(&c, "style", "references/data.json").unwrap()["content"],
        "{\"a\": 1}\n"
    );
    let (_, record) = c
        .call(
            "skill_read_reference",
            &json!({"skill": "style", "path": "references/tone.md"}),
        )
        .unwrap();
    assert_eq!(record.origin.kind, "discovered");
    assert_eq!(record.version, None);
    assert_eq!(record.bytes, 7);
}

#[test]
fn read_reference_refuses_with_each_code() {
    let tmp = guides_root();
    let c = catalogue(tmp.path());
    let code = |skill: &str, path: &str| read(&c, skill, path).unwrap_err().code;
    assert_eq!(
        c.call(
            "skill_read_reference",
            &json!({"skill": "style", "path": "SKILL.md", "x": 1})
        )
        .unwrap_err()
        .code,
        "invalid_args"
    );
    assert_eq!(
        c.call("skill_read_reference", &json!({"skill": "style"}))
            .unwrap_err()
            .code,
        "invalid_args"
    );
    let unknown = read(&c, "nope", "SKILL.md").unwrap_err();
    assert_eq!(unknown.code, "unknown_skill");
    assert_eq!(unknown.valid, ["deploys", "linkdir", "oncall", "style"]);
    for bad in [
        "../ops/deploys/SKILL.md",
        "/etc/passwd",
        "references/tool.py",
        "notes.md",
        "references/../SKILL.md",
        "references",
        "skill.yml",
    ] {
        assert_eq!(code("style", bad), "invalid_path", "{bad}");
    }
    assert_eq!(code("style", "references/missing.md"), "not_found");
    assert_eq!(code("style", "references/big.md"), "too_large");
    assert_eq!(code("style", "references/latin1.txt"), "not_text");
    assert_eq!(
        code("style", "references/link.md"),
        "invalid_path",
        "a symlinked file"
    );
    assert_eq!(
        code("linkdir", "references/tone.md"),
        "invalid_path",
        "a symlinked folder on the path"
    );
}

#[test]
fn without_guides_nothing_changes_and_approved_names_win() {
    let plain = Catalogue::new(None, []).unwrap();
    assert!(plain.tools().is_empty());
    assert_eq!(plain.prompt(), None);
    // A discovered skill whose id an approved skill already has is dropped and reported.
    let tmp = guides_root();
    let skill =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/commit-message");
    portable(tmp.path(), "x/commit-message", "shadow");
    let bundle = crate::format::bundle::Bundle::read_dir(&skill).unwrap();
    let pin = crate::format::pin::Pin {
        name: bundle.name().clone(),
        version: "1".parse().unwrap(),
        hash: bundle.digest(),
    };
    let origin = crate::runtime::snapshot::Origin {
        kind: crate::SourceKind::Local,
        location: "t".into(),
        url: None,
        commit: None,
        generation: None,
    };
    let snap = crate::runtime::snapshot::Snapshot::new(bundle, pin, origin, skill.join("SKILL.md"))
        .unwrap();
    let c = Catalogue::new(None, [std::sync::Arc::new(snap)])
        .unwrap()
        .with_guides(discover(tmp.path()).unwrap());
    let d = c.discovery().unwrap();
    assert!(d.get("commit-message").is_none());
    assert!(
        d.dropped
            .iter()
            .any(|l| l.contains("an approved skill has this name")),
        "{:?}",
        d.dropped
    );
    let tools: Vec<&str> = c.tools().iter().map(|t| t.name).collect();
    assert_eq!(tools, ["load_skill", "skill_read_reference"]);
}

#[test]
fn a_directory_listing_is_bounded_at_and_one_past() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    portable(r, "team/style", "Style");
    let crowded = r.join("team");
    for i in 0..MAX_DIRECTORY_ENTRIES - 1 {
        fs_err::write(crowded.join(format!("f{i:05}")), b"").unwrap();
    }
    let d = discover(r).unwrap();
    let ids: Vec<&str> = d.guides.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(
        ids,
        ["style"],
        "exactly {MAX_DIRECTORY_ENTRIES} entries: {:?}",
        d.skipped
    );
    fs_err::write(crowded.join("one-more"), b"").unwrap();
    let d = discover(r).unwrap();
    assert!(d.guides.is_empty());
    assert_eq!(
        d.skipped,
        [format!(
            "team: more than {MAX_DIRECTORY_ENTRIES} entries, not scanned"
        )]
    );
}

#[test]
fn a_symlinked_or_missing_guides_root_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs_err::create_dir(tmp.path().join("real")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("link")).unwrap();
    let err = discover(&tmp.path().join("link")).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    let err = discover(&tmp.path().join("missing")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
}

#[test]
fn a_guides_description_with_terminal_controls_is_shown_escaped_everywhere() {
    let tmp = hostile_guides_root();
    let r = tmp.path();

    let d = discover(r).unwrap();
    let ids: Vec<&str> = d.guides.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["hostile", "legacy"], "{:?}", d.skipped);
    let hostile = d.get("hostile").unwrap();
    assert_eq!(
        hostile.description,
        "Red \\u{1b}[31mtext\\u{7} and a bell\\u{202e}."
    );
    assert_eq!(hostile.name, "Hostile\\u{1b}]0;owned\\u{7}");
    assert_eq!(
        d.get("legacy").unwrap().description,
        "Clear \\u{1b}[2J screen\\u{7}"
    );
    for line in d.skipped.iter().chain(&d.dropped) {
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{202e}'),
            "{line:?}"
        );
    }
    assert!(
        d.skipped.iter().any(|l| l.contains("rtl\\u{202e}dcba")),
        "{:?}",
        d.skipped
    );
}
