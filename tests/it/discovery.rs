//! Multi-source skill discovery: precedence, shadowing, qualifiers, broken and unnamed skills,
//! `SKILL.md` spelling, and warnings.

use skillfold::skills_ref::discovery::{MemTree, Source, discover};

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

fn tree(label: &str, files: &[(&str, String)]) -> Source {
    let mut t = MemTree::new(label);
    for (path, text) in files {
        t = t.with_file(*path, text.as_bytes().to_vec());
    }
    Source::tree(t)
}

#[test]
fn first_source_wins_and_later_ones_are_shadowed() {
    let user = tree(
        "user",
        &[("pdf/SKILL.md", skill("pdf", "User's PDF skill."))],
    );
    let system = tree(
        "system",
        &[
            ("pdf/SKILL.md", skill("pdf", "System PDF skill.")),
            ("csv/SKILL.md", skill("csv", "System CSV skill.")),
        ],
    );
    let d = discover(&[user, system]);
    let ids: Vec<&str> = d.offered().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["pdf", "csv"]);
    assert_eq!(d.get("pdf").unwrap().description, "User's PDF skill.");
    assert_eq!(d.shadowed.len(), 1);
    assert_eq!(d.shadowed[0].id, "pdf");
    assert_eq!(d.shadowed[0].location.source, 1);
    assert_eq!(d.shadowed[0].by.source, 0);
    assert_eq!(d.shadowed[0].by.shown, "user:pdf");
}

#[test]
fn a_qualified_source_lists_taken_names_as_qualifier_name() {
    let user = tree("user", &[("pdf/SKILL.md", skill("pdf", "Mine."))]);
    let team = tree(
        "team",
        &[
            ("pdf/SKILL.md", skill("pdf", "Team's.")),
            ("docx/SKILL.md", skill("docx", "Team docx.")),
        ],
    )
    .with_qualifier("team");
    let again = tree("again", &[("pdf/SKILL.md", skill("pdf", "Third."))]).with_qualifier("team");
    let d = discover(&[user, team, again]);
    let ids: Vec<&str> = d.offered().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["pdf", "docx", "team:pdf"],
        "an untaken name stays plain"
    );
    assert_eq!(d.get("team:pdf").unwrap().name, "pdf");
    assert_eq!(d.shadowed.len(), 1, "team:pdf taken too: shadowed");
    assert_eq!(d.shadowed[0].id, "team:pdf");
    assert_eq!(d.shadowed[0].location.source, 2);
}

#[test]
fn a_broken_skill_keeps_its_claim_and_is_reported_not_hidden() {
    let first = tree(
        "first",
        &[(
            "pdf/SKILL.md",
            "---\nname: pdf\ndescription: Broken.\ntitle: extra\nallowed-tools: Bash()\n---\n"
                .into(),
        )],
    );
    let second = tree("second", &[("pdf/SKILL.md", skill("pdf", "Fine."))]);
    let d = discover(&[first, second]);
    let pdf = d.get("pdf").expect("listed");
    assert!(!pdf.is_offered());
    assert_eq!(pdf.description, "Broken.");
    assert!(
        pdf.problems
            .iter()
            .any(|p| p.starts_with("Unexpected fields in frontmatter: title."))
    );
    assert!(
        pdf.problems
            .iter()
            .any(|p| p.contains("[allowed_tools_empty_pattern]"))
    );
    assert_eq!(
        d.offered().count(),
        0,
        "not replaced by the lower-precedence skill"
    );
    assert_eq!(d.shadowed.len(), 1);
}

#[test]
fn skills_without_name_or_description_claim_nothing() {
    let first = tree(
        "first",
        &[
            ("pdf/SKILL.md", "---\ndescription: No name.\n---\n".into()),
            (
                "csv/SKILL.md",
                "---\nname: csv\ndescription: '  '\n---\n".into(),
            ),
            ("bad/SKILL.md", "---\nname: [bad]\n---\n".into()),
        ],
    );
    let second = tree("second", &[("pdf/SKILL.md", skill("pdf", "The real one."))]);
    let d = discover(&[first, second]);
    let ids: Vec<&str> = d.offered().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["pdf"]);
    assert_eq!(d.get("pdf").unwrap().location.source, 1);
    assert!(d.shadowed.is_empty());
    assert_eq!(d.unclaimed.len(), 3);
    let problems: Vec<&str> = d
        .unclaimed
        .iter()
        .flat_map(|u| u.problems.iter().map(String::as_str))
        .collect();
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("Invalid YAML in frontmatter: While scanning"))
    );
    assert!(problems.contains(&"Field 'description' must be a non-empty string"));
    assert!(problems.contains(&"Missing required field in frontmatter: name"));
}

#[test]
fn skill_md_spelling_is_decided_case_exactly() {
    let t = tree(
        "t",
        &[
            ("lower/skill.md", skill("lower", "Lowercase file.")),
            ("odd/Skill.md", skill("odd", "Odd case.")),
            ("both/SKILL.md", skill("both", "Upper wins.")),
            ("both/skill.md", skill("other", "Ignored.")),
            ("both/SKILL.MD", skill("x", "Ignored.")),
        ],
    );
    let d = discover(&[t]);
    let ids: Vec<&str> = d.offered().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["both", "lower"]);
    assert_eq!(d.get("lower").unwrap().file, "skill.md");
    assert_eq!(d.get("both").unwrap().file, "SKILL.md");
    assert!(d.get("both").unwrap().warnings[0].contains("`SKILL.MD` is not a skill file"));
    assert_eq!(d.warnings.len(), 1);
    assert!(d.warnings[0].contains("`Skill.md` is not a skill file"));
}

#[test]
fn long_bodies_warn_and_allowed_tools_are_parsed() {
    let body = "line\n".repeat(501);
    let t = tree(
        "t",
        &[(
            "big/SKILL.md",
            format!(
                "---\nname: big\ndescription: Big.\nallowed-tools: Read Bash(git status:*)\n---\n{body}"
            ),
        )],
    );
    let d = discover(&[t]);
    let big = d.get("big").unwrap();
    assert!(big.is_offered());
    assert!(big.warnings[0].contains("501 lines"));
    let rules: Vec<String> = big.allowed_tools.iter().map(ToString::to_string).collect();
    assert_eq!(rules, ["Read", "Bash(git status:*)"]);
}

#[test]
fn directories_on_disk_never_follow_links() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs_err::create_dir_all(root.join("real")).unwrap();
    fs_err::write(root.join("real/SKILL.md"), skill("real", "On disk.")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
    fs_err::create_dir_all(root.join("md-link")).unwrap();
    std::os::unix::fs::symlink(root.join("real/SKILL.md"), root.join("md-link/SKILL.md")).unwrap();
    let d = discover(&[Source::dir(root)]);
    let ids: Vec<&str> = d.offered().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["real"]);
    assert_eq!(d.unclaimed.len(), 2);
    assert!(
        d.unclaimed
            .iter()
            .all(|u| u.problems[0].contains("symbolic link"))
    );
}

#[test]
fn a_huge_sparse_skill_md_on_disk_is_refused_without_being_read() {
    use skillfold::skills_ref::skill_file::MAX_SKILL_MD_BYTES;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs_err::create_dir_all(root.join("huge")).unwrap();
    let path = root.join("huge/SKILL.md");
    fs_err::write(&path, skill("huge", "Sparse.")).unwrap();
    let file = fs_err::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(10 * 1024 * 1024 * 1024).unwrap();
    fs_err::create_dir_all(root.join("at")).unwrap();
    let at = root.join("at/SKILL.md");
    fs_err::write(&at, skill("at", "At the bound.")).unwrap();
    let file = fs_err::OpenOptions::new().write(true).open(&at).unwrap();
    file.set_len(MAX_SKILL_MD_BYTES).unwrap();
    let started = std::time::Instant::now();
    let d = discover(&[Source::dir(root)]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let ids: Vec<&str> = d.offered().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["at"]);
    assert_eq!(d.unclaimed.len(), 1);
    let problem = &d.unclaimed[0].problems[0];
    assert!(
        problem.contains(&format!("larger than {MAX_SKILL_MD_BYTES} bytes"))
            && problem.contains("[file_too_large]"),
        "{problem}"
    );
}

#[test]
fn a_source_listing_is_bounded_at_and_one_past() {
    use skillfold::skills_ref::discovery::MAX_LISTING;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs_err::create_dir_all(root.join("pdf")).unwrap();
    fs_err::write(root.join("pdf/SKILL.md"), skill("pdf", "PDFs.")).unwrap();
    for i in 0..MAX_LISTING - 1 {
        fs_err::write(root.join(format!("f{i:05}")), b"").unwrap();
    }
    let d = discover(&[Source::dir(root)]);
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert_eq!(
        d.offered().count(),
        1,
        "exactly {MAX_LISTING} entries are listed"
    );
    fs_err::write(root.join("one-more"), b"").unwrap();
    let d = discover(&[Source::dir(root)]);
    assert_eq!(d.offered().count(), 0);
    assert_eq!(d.warnings.len(), 1);
    assert!(
        d.warnings[0].contains(&format!("more than {MAX_LISTING} entries")),
        "{:?}",
        d.warnings
    );
}
