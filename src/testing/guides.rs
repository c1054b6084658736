//! A folder of discovered (unpinned) skills with one of each case the guides scanner meets:
//! portable and legacy skills, an ambiguous id, a malformed and a too-deep one, hidden folders,
//! symbolic links (a skill directory, a `SKILL.md`, a reference and a references folder) and
//! references that are too large or not text. Shared by the unit tests of `runtime::guides`
//! and the integration tests of the binary (`tests/it/guides.rs` includes this file), so both
//! sides test the same tree.

use std::path::Path;

pub fn write(root: &Path, rel: &str, text: &[u8]) {
    let path = root.join(rel);
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(path, text).unwrap();
}

pub fn portable(root: &Path, dir: &str, name: &str) {
    write(
        root,
        &format!("{dir}/SKILL.md"),
        format!("---\nname: {name}\ndescription: About {name}.\n---\n# {name}\n").as_bytes(),
    );
}

/// A guides folder with a variety of skills.
pub fn guides_root() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    portable(r, "writing/style", "Style Guide");
    write(r, "writing/style/references/tone.md", b"# Tone\n");
    write(r, "writing/style/references/data.json", b"{\"a\": 1}\n");
    write(r, "writing/style/references/tool.py", b"print(1)\n");
    write(
        r,
        "writing/style/references/big.md",
        &vec![b'a'; 256 * 1024 + 1],
    );
    write(r, "writing/style/references/latin1.txt", b"caf\xe9\n");
    write(r, "writing/style/notes.md", b"outside references\n");
    // Legacy: skill.yml wins over the frontmatter; a non-strict skill.yml is read line by line.
    write(
        r,
        "ops/deploys/skill.yml",
        b"name: Deploys\ndescription: How we deploy.\n",
    );
    write(
        r,
        "ops/deploys/SKILL.md",
        b"---\nname: ignored\ndescription: ignored\n---\nDeploy steps.\n",
    );
    write(
        r,
        "ops/oncall/skill.yml",
        b"name: On-call\ndescription: Paging: who, when and how\n",
    );
    write(r, "ops/oncall/SKILL.md", b"On-call steps.\n");
    // Ambiguous: two directories called `dup`.
    portable(r, "a/dup", "one");
    portable(r, "b/dup", "two");
    // Malformed: no description.
    write(r, "broken/SKILL.md", b"---\nname: broken\n---\n");
    // Too deep: 9 levels below the root.
    portable(r, "1/2/3/4/5/6/7/8/deep", "deep");
    // Hidden folders are not scanned.
    portable(r, ".hidden/secret", "secret");
    // A symlinked skill directory and a symlinked SKILL.md are never followed.
    let outside = tempfile::tempdir().unwrap();
    portable(outside.path(), "linked", "linked");
    std::os::unix::fs::symlink(outside.path().join("linked"), r.join("linked")).unwrap();
    fs_err::create_dir_all(r.join("alias")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("linked/SKILL.md"),
        r.join("alias/SKILL.md"),
    )
    .unwrap();
    std::mem::forget(outside);
    // A reference that is a symlink, and a references folder that is a symlink.
    std::os::unix::fs::symlink(
        r.join("writing/style/references/tone.md"),
        r.join("writing/style/references/link.md"),
    )
    .unwrap();
    portable(r, "linkdir", "linkdir");
    std::os::unix::fs::symlink(
        r.join("writing/style/references"),
        r.join("linkdir/references"),
    )
    .unwrap();
    tmp
}

/// A guides folder whose names and descriptions hold terminal controls: a frontmatter with ESC
/// and BEL (YAML escapes), a legacy `skill.yml` with raw ones, and folder names with RLO and ESC.
pub fn hostile_guides_root() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    // YAML spells ESC and BEL as `\e` and `\a` in a double-quoted scalar.
    write(
        r,
        "hostile/SKILL.md",
        b"---\nname: \"Hostile\\e]0;owned\\a\"\ndescription: \"Red \\e[31mtext\\a and a bell\\u202e.\"\n---\n# Hostile\n",
    );
    // A legacy skill.yml that is not YAML (raw ESC) is read line by line: raw bytes too.
    write(
        r,
        "legacy/skill.yml",
        b"name: Legacy\ndescription: Clear \x1b[2J screen\x07\n",
    );
    write(r, "legacy/SKILL.md", b"Legacy steps.\n");
    // Directory names a terminal would act on are not scanned (and reported escaped).
    portable(r, "rtl\u{202e}dcba", "rtl");
    portable(r, "esc\u{1b}[8m", "esc");
    tmp
}
