use super::*;
use crate::format::file_set::FileSetBuilder;
use crate::ops::import::hashes::apm_content_hash;
use crate::support::error_code::ErrorCode;

fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

fn read(yaml: &str) -> Vec<Result<LockEntry, LeftOut>> {
    let tree = super::super::tree::yaml(yaml).expect("yaml");
    entries(tree["dependencies"].as_array().expect("dependencies"), &[])
}

#[test]
fn a_lock_written_by_apm_cli_reads_as_apm_clones_it_and_its_hash_is_apms() {
    // The first entry of a lock `apm-cli` 0.35.0 wrote (benches/install_vs_peers.py), and the
    // files of that skill at that commit.
    let text = fs_err::read_to_string(fixtures().join("apm-real.lock.yaml")).expect("fixture");
    let got = read(&text);
    let entry = got[0].as_ref().expect("the skill");
    assert_eq!(entry.url, "http://127.0.0.1:18290/git/repo-00.git");
    assert_eq!(entry.key, "pdf-00-0");
    assert_eq!(entry.folder, Folder::Path("skills/pdf-00-0".to_owned()));
    let At::Commit(commit, None) = &entry.at else {
        panic!(
            "a commit, and no ref beside it (APM's ref is the commit): {:?}",
            entry.at
        )
    };
    assert_eq!(
        commit.to_string(),
        "1f531bf8ac6ed40b244271c856180918b82c3209"
    );
    assert_eq!(entry.version, None, "`unknown` is no version");
    let Some(Recorded::ApmContent(recorded)) = &entry.recorded else {
        panic!("APM's content hash: {:?}", entry.recorded)
    };
    let dir = fixtures().join("apm-pdf-00-0");
    let mut builder = FileSetBuilder::new();
    for path in [
        "SKILL.md",
        "references/examples.md",
        "references/guide.md",
        "scripts/run.sh",
    ] {
        builder.insert(path, fs_err::read(dir.join(path)).expect("file"));
    }
    let (files, problems) = builder.finish();
    assert!(problems.as_slice().is_empty(), "{problems:?}");
    assert_eq!(&apm_content_hash(&files), recorded);
}

#[test]
fn git_dependencies_resolve_and_the_others_are_left_out_with_their_reason() {
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let got = read(&format!(
        "lockfile_version: '1'\ndependencies:\n\
         - {{repo_url: acme/skills, resolved_commit: {commit}, resolved_ref: v2, version: 2.0.0, virtual_path: skills/pdf, is_virtual: true, content_hash: 'sha256:ab'}}\n\
         - {{repo_url: acme/skills, resolved_ref: main, virtual_path: /skills/csv/, is_virtual: true}}\n\
         - {{repo_url: _local/notes, source: local, local_path: ./notes}}\n\
         - {{repo_url: acme/skill, source: registry, version: 1.0.0}}\n\
         - {{repo_url: acme/whole, resolved_commit: {commit}, is_virtual: false}}\n\
         - {{repo_url: acme/many, resolved_commit: {commit}, virtual_path: bundle, is_virtual: true, skill_subset: [a, b]}}\n\
         - {{repo_url: acme/skills, resolved_commit: 0123, virtual_path: skills/x, is_virtual: true}}\n\
         - {{repo_url: ../etc, virtual_path: skills/x, is_virtual: true}}\n\
         - {{repo_url: acme/skills, host: 'evil.example/x', virtual_path: skills/x, is_virtual: true}}\n\
         - {{repo_url: acme/skills, port: 0, virtual_path: skills/x, is_virtual: true}}\n\
         - {{repo_url: acme/skills, registry_prefix: artifactory/github, virtual_path: skills/x, is_virtual: true}}\n\
         - {{repo_url: acme/skills, host: 'u:tok@git.example', virtual_path: skills/x, is_virtual: true}}\n\
         - 7\n"
    ));
    let pdf = got[0].as_ref().expect("pdf");
    assert_eq!(pdf.url, "https://github.com/acme/skills.git");
    assert_eq!(pdf.key, "pdf", "named by its folder");
    let At::Commit(_, Some(asked)) = &pdf.at else {
        panic!("the commit with the ref asked for: {:?}", pdf.at)
    };
    assert_eq!(asked, "v2");
    assert_eq!(pdf.version.as_deref(), Some("2.0.0"));
    let csv = got[1].as_ref().expect("csv");
    assert_eq!(csv.at, At::Ref("main".to_owned()));
    assert_eq!(csv.folder, Folder::Path("skills/csv".to_owned()));
    let code = |i: usize| {
        got[i]
            .as_ref()
            .map_err(|e| e.code)
            .expect_err(&format!("entry {i}"))
    };
    let unsupported = ErrorCode::from(ImportCode::LockUnsupportedSource);
    let invalid = ErrorCode::from(ImportCode::LockInvalidEntry);
    for (i, expected) in [
        (2, ErrorCode::from(ImportCode::LockLocalPath)),
        (3, unsupported),
        (4, unsupported),
        (5, unsupported),
        (6, invalid),
        (7, invalid),
        (8, invalid),
        (9, invalid),
        (10, unsupported),
        (11, ErrorCode::from(ImportCode::LockCredentials)),
        (12, invalid),
    ] {
        assert_eq!(code(i), expected, "entry {i}: {:?}", got[i]);
    }
    // The credentials are never shown.
    let reason = &got[11].as_ref().unwrap_err().reason;
    assert!(!reason.contains("tok"), "{reason}");
}
