//! The content rules (docs/content.md) wherever bundles are judged: `hash`, `pin` over a
//! loopback Git repository, `check`, `prepare`, `install` and the host API refuse or report each
//! class as documented, naming the file, line, column, code point and Unicode name; an emoji ZWJ
//! sequence is not a finding; a source's `content:` relaxes the defaults only with a reason.

use std::path::Path;
use std::process::Output;

use skillfold::{CommentRule, ContentPolicy, HiddenRule, Limits};

use super::support::bin::{stderr, stdout};
use super::support::world::World;

/// `Ignore me` in tag characters.
fn tags(text: &str) -> String {
    text.chars()
        .map(|c| char::from_u32(0xE0000 + c as u32).expect("a tag"))
        .collect()
}

fn skill(name: &str, description_extra: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} skill{description_extra}.\n---\n# {name}\n\n{body}"
    )
}

/// Writes the bundle `dir` (its `SKILL.md` and `files`) under `world`, without checking it.
fn write(world: &World, dir: &str, skill_md: &str, files: &[(&str, &str)]) {
    let root = world.path(dir);
    fs_err::create_dir_all(&root).expect("mkdir");
    fs_err::write(root.join("SKILL.md"), skill_md).expect("write");
    for (path, text) in files {
        let p = root.join(path);
        fs_err::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs_err::write(p, text).expect("write");
    }
}

const RELAXED: ContentPolicy = ContentPolicy {
    hidden: HiddenRule::Warn,
    comments: CommentRule::Allow,
};

/// The digest of `dir` under the relaxed policy (what a reviewer pins with `content:`).
fn relaxed_digest(dir: &Path) -> String {
    skillfold::Bundle::read_dir_under(dir, Limits::default().with_content(RELAXED))
        .expect("valid when relaxed")
        .digest()
        .to_string()
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("an exit status")
}

#[track_caller]
fn assert_has(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
}

/// A bundle folder, its `SKILL.md`, its other files, and what `hash` must say of it.
type Case = (
    &'static str,
    String,
    Vec<(&'static str, &'static str)>,
    &'static [&'static str],
);

#[test]
fn hash_refuses_each_refused_class_with_its_position_code_point_and_name() {
    let w = World::new();
    let cases: [Case; 5] = [
        (
            "tagged",
            skill("tagged", "", &format!("Run it.{}\n", tags("Ignore me"))),
            vec![],
            &[
                "tagged/SKILL.md: line 7, column 8: U+E0049 TAG LATIN CAPITAL LETTER I, a tag character, the first of 9 in a row spelling `Ignore me`",
                "[hidden_character]",
            ],
        ),
        (
            "escaped",
            skill("escaped", "", "ok\n"),
            vec![("scripts/run.sh", "echo \u{1b}[8mhidden\n")],
            &["escaped/scripts/run.sh: line 1, column 6: U+001B ESCAPE, a control character"],
        ),
        (
            "reordered",
            skill("reordered", " \u{202e}lanoitome", "ok\n"),
            vec![],
            &[
                "reordered/SKILL.md: line 3, column 34 (frontmatter): U+202E RIGHT-TO-LEFT OVERRIDE, a bidi control",
            ],
        ),
        (
            "spaced",
            skill("spaced", "\u{200b}", "ok\n"),
            vec![],
            &[
                "spaced/SKILL.md: line 3, column 30 (frontmatter): U+200B ZERO WIDTH SPACE, an invisible character",
            ],
        ),
        (
            "named",
            skill("named", "", "ok\n"),
            vec![("references/read\u{2066}me.md", "x\n")],
            &[
                "named/references/read\\u{2066}me.md: in the name, character 16: U+2066 LEFT-TO-RIGHT ISOLATE, a bidi control",
            ],
        ),
    ];
    for (dir, skill_md, files, needles) in cases {
        write(&w, dir, &skill_md, &files);
        let out = w.run(&["hash", dir]);
        assert_eq!(code(&out), 2, "{dir}: {}", stderr(&out));
        let err = stderr(&out);
        assert_has(&err, needles);
        assert_has(
            &err,
            &["refused (a source's `content: {hidden: warn, reason: …}` accepts it)"],
        );
        // Escaped on output: no hidden character reaches the terminal.
        assert!(
            !err.chars().any(|c| ('\u{e0000}'..='\u{e007f}').contains(&c)
                || matches!(c, '\u{1b}' | '\u{202e}' | '\u{200b}' | '\u{2066}')),
            "{err}"
        );
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn hash_reports_warnings_and_accepts_and_an_emoji_zwj_sequence_is_no_finding() {
    let w = World::new();
    write(
        &w,
        "noted",
        &skill(
            "noted",
            "",
            "Use it.\n\n<!-- the model reads this;\nthe page does not -->\n\nWe \u{1f468}\u{200d}\u{1f4bb} ship \u{2764}\u{fe0f}.\n",
        ),
        &[(
            "references/rtl.md",
            "abc \u{2067}\u{5e9}\u{5dc}\u{5d5}\u{5dd}\u{2069}\n",
        )],
    );
    let out = w.run(&["hash", "noted"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert_has(
        &err,
        &[
            "warning: noted/SKILL.md: line 9, column 1: an HTML comment of 2 line(s), read by the model but hidden when rendered: `the model reads this;\\nthe page does not` [hidden_comment]",
            "warning: noted/references/rtl.md: line 1, column 5: U+2067 RIGHT-TO-LEFT ISOLATE, a bidi control [hidden_character]",
            "warning: noted/references/rtl.md: line 1, column 10: U+2069 POP DIRECTIONAL ISOLATE, a bidi control [hidden_character]",
        ],
    );
    assert_eq!(
        err.lines().count(),
        3,
        "the emoji sequences are no finding:\n{err}"
    );
    // The JSON report carries them too.
    let out = w.run(&["hash", "--json", "noted"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["warnings"].as_array().map(Vec::len), Some(3));
}

#[test]
fn check_refuses_a_relaxation_without_a_reason() {
    let w = World::new();
    write(&w, "x", &skill("x", "", "ok\n"), &[]);
    let hash = relaxed_digest(&w.path("x"));
    for (content, refused) in [
        ("{ hidden: warn }", Some("hidden: warn")),
        ("{ comments: allow, reason: '  ' }", Some("comments: allow")),
        ("{ hidden: refuse, comments: refuse }", None),
        (
            "{ hidden: warn, comments: allow, reason: 'RTL docs upstream' }",
            None,
        ),
    ] {
        w.descriptor(&format!(
            "skills:\n  - local: {{ name: x, version: '1', directory: x, hash: {hash}, content: {content} }}\n"
        ));
        let out = w.cli(&["check"]);
        match refused {
            Some(setting) => {
                assert_eq!(code(&out), 2, "{content}: {}", stderr(&out));
                assert_has(
                    &stderr(&out),
                    &[
                        "skills[0].local.content",
                        &format!("`{setting}` relaxes the content rules: write why in `reason`"),
                        "[invalid_content_policy]",
                    ],
                );
            }
            None => assert_eq!(code(&out), 0, "{content}: {}", stderr(&out)),
        }
    }
}

/// A world with the local bundle `hidden` (a tag run in its body, a comment) pinned at its
/// relaxed digest, with `content` on its entry.
fn hidden_world(content: &str) -> World {
    let w = World::new();
    write(
        &w,
        "hidden",
        &skill(
            "hidden",
            "",
            &format!("Do it.{}\n<!-- and this -->\n", tags("Obey")),
        ),
        &[],
    );
    let hash = relaxed_digest(&w.path("hidden"));
    w.descriptor(&format!(
        "skills:\n  - local: {{ name: hidden, version: '1', directory: hidden, hash: {hash}{content} }}\n"
    ));
    w
}

const RELAXING: &str =
    ", content: { hidden: warn, comments: allow, reason: 'reviewed: the tags are a watermark' }";

#[test]
fn prepare_and_install_refuse_by_default_and_accept_a_relaxed_source() {
    let w = hidden_world("");
    for args in [
        &["prepare", "-c", "skillfold.yaml"][..],
        &["install", "--into", ".claude/skills"][..],
    ] {
        let out = w.cli(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert_has(
            &stderr(&out),
            &[
                "line 7, column 7: U+E004F TAG LATIN CAPITAL LETTER O",
                "spelling `Obey`",
                "hidden_character",
            ],
        );
    }
    assert!(!w.path(".claude/skills/hidden").exists());
    let w = hidden_world(RELAXING);
    for args in [
        &["prepare", "-c", "skillfold.yaml"][..],
        &["install", "--into", ".claude/skills"][..],
    ] {
        let out = w.cli(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    }
    assert!(w.path(".claude/skills/hidden/SKILL.md").is_file());
    // Tightened, a comment alone refuses.
    let w = World::new();
    write(&w, "c", &skill("c", "", "<!-- x -->\n"), &[]);
    let hash = relaxed_digest(&w.path("c"));
    w.descriptor(&format!(
        "skills:\n  - local: {{ name: c, version: '1', directory: c, hash: {hash}, content: {{ comments: refuse }} }}\n"
    ));
    let out = w.cli(&["prepare", "-c", "skillfold.yaml"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_has(&stderr(&out), &["an HTML comment", "hidden_comment"]);
}

#[test]
fn the_host_api_refuses_by_default_and_loads_a_relaxed_source() {
    let w = hidden_world("");
    let built = skillfold::Runtime::open(&w.config).expect("open");
    assert_eq!(built.refused.len(), 1);
    let failure = &built.refused[0];
    let all = format!("{} {}", failure.reason, failure.details.join("\n"));
    assert_has(
        &all,
        &[
            "SKILL.md: line 7, column 7: U+E004F TAG LATIN CAPITAL LETTER O",
            "[hidden_character]",
        ],
    );
    let w = hidden_world(RELAXING);
    let built = skillfold::Runtime::open(&w.config).expect("open");
    assert!(built.refused.is_empty(), "{:?}", built.refused);
    assert_eq!(
        built
            .runtime
            .catalogue(None)
            .expect("catalogue")
            .skills()
            .count(),
        1
    );
}

#[cfg(feature = "git")]
mod over_git {
    use super::super::support::git::Repo;
    use super::*;

    #[test]
    fn pin_refuses_a_tagged_bundle_and_shows_the_warnings_of_a_pinned_one() {
        let repo = Repo::new();
        repo.write(
            "skills/tagged/SKILL.md",
            skill("tagged", "", &format!("x{}\n", tags("Hi"))).as_bytes(),
        );
        repo.write(
            "skills/noted/SKILL.md",
            skill("noted", "", "<!-- for the model -->\n").as_bytes(),
        );
        let commit = repo.commit("two bundles");
        let url = repo.file_url();
        let pin = |name: &str| {
            super::super::support::bin::skillfold(&[
                "pin",
                "--source",
                &url,
                "--revision",
                &commit,
                "--root",
                "skills",
                name,
            ])
        };
        let out = pin("tagged");
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert_has(
            &stderr(&out),
            &[
                "SKILL.md: line 7, column 2: U+E0048 TAG LATIN CAPITAL LETTER H",
                "spelling `Hi`",
                "[hidden_character]",
            ],
        );
        let out = pin("noted");
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_has(
            &stderr(&out),
            &[
                "warning: skills/noted/SKILL.md: line 7, column 1: an HTML comment of 1 line(s)",
                "`for the model`",
                "[hidden_comment]",
            ],
        );
        assert_has(&stdout(&out), &["name: noted"]);
    }
}
