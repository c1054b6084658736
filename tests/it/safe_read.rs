//! Bad input on disk: every refusal of the safe reader and the bundle rules, each with its code,
//! and every bound at its maximum (accepted) and one past it (refused).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;

use skillfold::bundle::{Bundle, LoadError};
use skillfold::limits;
use skillfold::problem::ProblemCode::*;
use skillfold::safe_read::{self, ReadError};

use super::util::{TempBundle, skill_md};

#[test]
fn valid_bundle_reads_every_file() {
    let b = TempBundle::new();
    b.write("references/guide.md", b"# Guide\n");
    b.write("scripts/run.py", b"print('hi')\n");
    b.write("assets/deep/er/x.txt", b"x");
    b.mkdir("empty/dirs/do/not/count");
    let bundle = Bundle::read_dir(b.root()).expect("valid");
    let paths: Vec<_> = bundle.files().iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(
        paths,
        [
            "SKILL.md",
            "assets/deep/er/x.txt",
            "references/guide.md",
            "scripts/run.py"
        ]
    );
}

#[test]
fn symlink_to_a_file_is_refused() {
    let b = TempBundle::new();
    b.write("references/real.md", b"x");
    b.symlink("real.md", "references/link.md");
    b.assert_refused(Symlink);
}

#[test]
fn symlink_to_a_directory_is_refused_and_not_followed() {
    let b = TempBundle::new();
    b.write("references/a.md", b"x");
    b.symlink("references", "refs");
    let codes = b.codes();
    assert_eq!(codes, [Symlink]);
}

#[test]
fn dangling_symlink_is_refused() {
    let b = TempBundle::new();
    b.symlink("does-not-exist", "gone.md");
    b.assert_refused(Symlink);
}

#[test]
fn symlink_pointing_outside_is_refused_and_never_read() {
    let b = TempBundle::new();
    let secret = b.outside().join("secret.txt");
    fs_err::write(&secret, b"TOP SECRET").expect("write");
    b.symlink(&secret, "leak.md");
    let err = Bundle::read_dir(b.root()).expect_err("refused");
    let LoadError::Invalid(invalid) = err else {
        panic!("{err}")
    };
    let text = format!("{:?}", invalid.problems);
    assert!(!text.contains("TOP SECRET"));
    assert_eq!(
        invalid.problems.as_slice()[0].path.as_deref(),
        Some("leak.md")
    );
}

#[test]
fn symlinked_skill_md_is_refused() {
    let b = TempBundle::empty();
    b.write("real/SKILL.md", skill_md("demo").as_bytes());
    b.symlink("real/SKILL.md", "SKILL.md");
    let codes = b.codes();
    assert!(codes.contains(&Symlink), "{codes:?}");
    assert!(codes.contains(&MissingSkillMd), "{codes:?}");
}

#[test]
fn symlinked_root_is_refused() {
    let b = TempBundle::new();
    let link = b.outside().join("link");
    std::os::unix::fs::symlink(b.root(), &link).expect("symlink");
    let err = safe_read::read_bundle_dir(&link).expect_err("refused");
    assert!(matches!(err, ReadError::RootIsSymlink { .. }), "{err}");
    assert_eq!(err.code(), "root_is_symlink");
}

#[test]
fn missing_and_non_directory_roots_are_refused() {
    let b = TempBundle::new();
    let err = safe_read::read_bundle_dir(&b.path("nope")).expect_err("missing");
    assert_eq!(err.code(), "not_found");
    let err = safe_read::read_bundle_dir(&b.path("SKILL.md")).expect_err("file");
    assert_eq!(err.code(), "not_a_directory");
}

#[test]
fn fifo_is_refused_without_blocking() {
    let b = TempBundle::new();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        b.path("pipe.md"),
        rustix::fs::Mode::from(0o644),
    )
    .expect("mkfifo");
    // Nobody ever writes to it: opening it for reading would block forever.
    b.assert_refused(SpecialFile);
}

#[test]
fn socket_is_refused() {
    let b = TempBundle::new();
    let _listener = std::os::unix::net::UnixListener::bind(b.path("sock")).expect("bind");
    b.assert_refused(SpecialFile);
}

#[test]
fn file_swapped_for_a_symlink_after_inventory_is_refused() {
    let b = TempBundle::new();
    b.write("references/a.md", b"original");
    let secret = b.outside().join("secret.txt");
    fs_err::write(&secret, b"TOP SECRET").expect("write");
    let target = b.path("references/a.md");
    let outcome = safe_read::read_bundle_dir_with_hook(b.root(), &mut |path| {
        if path.as_str() == "references/a.md" {
            fs_err::remove_file(&target).expect("rm");
            std::os::unix::fs::symlink(&secret, &target).expect("symlink");
        }
    })
    .expect("read");
    let codes: Vec<_> = outcome.problems.as_slice().iter().map(|p| p.code).collect();
    assert_eq!(codes, [ChangedDuringRead]);
    assert!(outcome.files.get("references/a.md").is_none());
}

#[test]
fn file_replaced_by_another_file_after_inventory_is_refused() {
    let b = TempBundle::new();
    b.write("a.md", b"original");
    b.write("other", b"original");
    let (target, other) = (b.path("a.md"), b.path("other"));
    let outcome = safe_read::read_bundle_dir_with_hook(b.root(), &mut |path| {
        if path.as_str() == "a.md" {
            fs_err::rename(&other, &target).expect("rename");
        }
    })
    .expect("read");
    let codes: Vec<_> = outcome.problems.as_slice().iter().map(|p| p.code).collect();
    assert!(codes.contains(&ChangedDuringRead), "{codes:?}");
}

#[test]
fn file_resized_after_inventory_is_refused() {
    let b = TempBundle::new();
    b.write("a.md", b"original");
    let target = b.path("a.md");
    let outcome = safe_read::read_bundle_dir_with_hook(b.root(), &mut |path| {
        if path.as_str() == "a.md" {
            use std::io::Write as _;
            let mut f = fs_err::OpenOptions::new()
                .append(true)
                .open(&target)
                .expect("open");
            f.write_all(b" and more").expect("append");
        }
    })
    .expect("read");
    let codes: Vec<_> = outcome.problems.as_slice().iter().map(|p| p.code).collect();
    assert_eq!(codes, [ChangedDuringRead]);
}

#[test]
fn hidden_file_and_directory_are_refused() {
    let b = TempBundle::new();
    b.write(".env", b"SECRET=1");
    b.assert_refused(HiddenPath);
    let c = TempBundle::new();
    c.write(".git/config", b"x");
    c.assert_refused(HiddenPath);
}

#[test]
fn backslash_and_control_characters_in_names_are_refused() {
    let b = TempBundle::new();
    b.write("a\\b.md", b"x");
    b.assert_refused(BackslashInPath);
    let c = TempBundle::new();
    c.write("new\nline.md", b"x");
    c.assert_refused(ControlCharInPath);
}

#[test]
fn non_utf8_name_is_refused() {
    let b = TempBundle::new();
    let name = OsStr::from_bytes(b"caf\xe9.md");
    fs_err::write(b.root().join(name), b"x").expect("write");
    b.assert_refused(PathNotUtf8);
}

#[test]
fn invalid_utf8_content_and_nul_are_refused() {
    let b = TempBundle::new();
    b.write("latin1.md", b"caf\xe9\n");
    b.assert_refused(NotUtf8);
    let c = TempBundle::new();
    c.write("nul.md", b"a\0b");
    c.assert_refused(NulByte);
    let d = TempBundle::new();
    d.write("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let codes = d.codes();
    assert!(
        codes.contains(&NulByte) && codes.contains(&NotUtf8),
        "{codes:?}"
    );
}

#[test]
fn missing_skill_md_is_refused() {
    let b = TempBundle::empty();
    b.write("README.md", b"x");
    assert_eq!(b.codes(), [MissingSkillMd]);
}

#[test]
fn supporting_file_bound() {
    let max = limits::MAX_SUPPORTING_FILE_BYTES as usize;
    let b = TempBundle::new();
    b.write("references/big.md", &vec![b'a'; max]);
    b.assert_valid();
    b.write("references/big.md", &vec![b'a'; max + 1]);
    assert_eq!(b.codes(), [FileTooLarge]);
}

#[test]
fn frontmatter_and_body_bounds_on_disk() {
    let head = "name: demo\ndescription: d\n";
    let fm = |n: usize| {
        format!(
            "---\n{head}x: '{}'\n---\nbody\n",
            "y".repeat(n - head.len() - 6)
        )
    };
    let b = TempBundle::empty();
    b.write(
        "SKILL.md",
        fm(limits::MAX_FRONTMATTER_BYTES as usize).as_bytes(),
    );
    b.assert_valid();
    b.write(
        "SKILL.md",
        fm(limits::MAX_FRONTMATTER_BYTES as usize + 1).as_bytes(),
    );
    assert_eq!(b.codes(), [FrontmatterTooLarge]);
    let body = |n: usize| format!("---\n{head}---\n{}", "b".repeat(n));
    b.write("SKILL.md", body(limits::MAX_BODY_BYTES as usize).as_bytes());
    b.assert_valid();
    b.write(
        "SKILL.md",
        body(limits::MAX_BODY_BYTES as usize + 1).as_bytes(),
    );
    assert_eq!(b.codes(), [BodyTooLarge]);
}

/// SKILL.md plus `n - 1` files, `total` bytes in all.
fn fill(b: &TempBundle, n: usize, total: usize) {
    let skill = skill_md("demo");
    let rest = total - skill.len();
    let each = rest / (n - 1);
    for i in 0..n - 1 {
        let size = if i == 0 { each + rest % (n - 1) } else { each };
        b.write(&format!("files/f{i:02}.txt"), &vec![b'z'; size]);
    }
}

#[test]
fn file_count_and_total_bounds_at_maximum_and_one_past() {
    let b = TempBundle::new();
    fill(&b, limits::MAX_FILES, limits::MAX_TOTAL_BYTES as usize);
    b.assert_valid();
    let bundle = Bundle::read_dir(b.root()).expect("valid");
    assert_eq!(bundle.files().len(), limits::MAX_FILES);
    assert_eq!(bundle.files().total_bytes(), limits::MAX_TOTAL_BYTES);

    let over_count = TempBundle::new();
    fill(&over_count, limits::MAX_FILES, 64 * 1024);
    over_count.write("one-more.txt", b"x");
    assert_eq!(over_count.codes(), [TooManyFiles]);

    let over_total = TempBundle::new();
    fill(
        &over_total,
        limits::MAX_FILES,
        limits::MAX_TOTAL_BYTES as usize,
    );
    over_total.write(
        "files/f01.txt",
        &vec![
            b'z';
            fs_err::read(over_total.path("files/f01.txt"))
                .expect("read")
                .len()
                + 1
        ],
    );
    assert_eq!(over_total.codes(), [BundleTooLarge]);
}

#[test]
fn depth_bound_at_64_levels_and_65() {
    let b = TempBundle::new();
    let deep = "d/".repeat(limits::MAX_DEPTH);
    b.write(&format!("{deep}leaf.md"), b"x");
    b.assert_valid();
    let c = TempBundle::new();
    let deeper = "d/".repeat(limits::MAX_DEPTH + 1);
    c.write(&format!("{deeper}leaf.md"), b"x");
    assert_eq!(c.codes(), [TooDeep]);
}

#[test]
fn entry_bound_at_1024_and_1025() {
    // Root + SKILL.md + 1,022 directories = 1,024 entries.
    let b = TempBundle::new();
    for i in 0..limits::MAX_ENTRIES - 2 {
        b.mkdir(&format!("d{i:04}"));
    }
    b.assert_valid();
    b.mkdir("one-more");
    assert_eq!(b.codes(), [TooManyEntries]);
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let b = TempBundle::empty();
    b.write("SKILL.md", b"---\nname: Bad_Name\ndescription: ok\n---\n");
    b.write(".hidden", b"x");
    b.write("bin.dat", b"\0");
    b.symlink("bin.dat", "link");
    let codes = b.codes();
    for want in [HiddenPath, Symlink, NulByte, NameInvalid] {
        assert!(codes.contains(&want), "{want:?} missing from {codes:?}");
    }
}

#[test]
fn frontmatter_rules_refuse_on_disk() {
    let cases: &[(&str, skillfold::problem::ProblemCode)] = &[
        ("---\nname: demo\ndescription: d\n", FrontmatterUnclosed),
        ("# no frontmatter\n", FrontmatterMissing),
        ("---\n- a\n- b\n---\n", FrontmatterNotMapping),
        (
            "---\nname: demo\nname: demo\ndescription: d\n---\n",
            DuplicateKey,
        ),
        ("---\nname: &a demo\ndescription: *a\n---\n", YamlAnchor),
        ("---\nname: demo\ndescription: *a\n---\n", YamlAlias),
        ("---\nname: !!str demo\ndescription: d\n---\n", YamlTag),
        (
            "---\nname: demo\ndescription: d\n42: x\n---\n",
            NonStringKey,
        ),
        ("---\nname: Demo\ndescription: d\n---\n", NameInvalid),
        (
            "---\nname: demo\ndescription: '  '\n---\n",
            DescriptionBlank,
        ),
        (
            "---\nname: demo\ndescription: \"line\\nbreak\"\n---\n",
            DescriptionControlChar,
        ),
    ];
    for (text, code) in cases {
        let b = TempBundle::empty();
        b.write("SKILL.md", text.as_bytes());
        let codes = b.codes();
        assert!(
            codes.contains(code),
            "{text:?}: want {code:?}, got {codes:?}"
        );
    }
    let long = TempBundle::empty();
    long.write(
        "SKILL.md",
        format!("---\nname: demo\ndescription: {}\n---\n", "x".repeat(1025)).as_bytes(),
    );
    assert_eq!(long.codes(), [DescriptionTooLong]);
    let at = TempBundle::empty();
    at.write(
        "SKILL.md",
        format!("---\nname: demo\ndescription: {}\n---\n", "x".repeat(1024)).as_bytes(),
    );
    at.assert_valid();
}
