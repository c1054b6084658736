//! The fuzz targets' inputs on stable: every committed seed (`fuzz/corpus/<target>/`) and crash
//! reproducer (`fuzz/reproducers/<target>/`) goes through the same body the fuzz target calls
//! (`skillfold::fuzz_entry`), so CI checks the targets' invariants without a nightly toolchain
//! and a fixed crash stays fixed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use skillfold::fuzz_entry::{self, ToolHarness};

const FUZZ_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz");

/// The committed inputs of `target`, seeds first, each with its file name.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for kind in ["corpus", "reproducers"] {
        let dir = Path::new(FUZZ_DIR).join(kind).join(target);
        if kind == "reproducers" && !dir.exists() {
            continue;
        }
        let mut paths: Vec<PathBuf> = fs_err::read_dir(&dir)
            .expect("read the input folder")
            .map(|e| e.expect("list the input folder").path())
            .collect();
        paths.sort();
        for path in paths {
            let bytes = fs_err::read(&path).expect("read an input");
            out.push((path, bytes));
        }
    }
    out
}

/// Checks that each named seed of `target` has the expected outcome, as `outcome` names it.
fn assert_outcomes(target: &str, want: &[(&str, &str)], outcome: impl Fn(&[u8]) -> String) {
    let seeds = Path::new(FUZZ_DIR).join("corpus").join(target);
    for (seed, expected) in want {
        let bytes = fs_err::read(seeds.join(seed)).expect("read a seed");
        assert_eq!(outcome(&bytes), *expected, "seed `{seed}`");
    }
}

/// Runs `body` on every input of `target`; fails naming each input that panicked.
fn replay(target: &str, body: impl Fn(&[u8])) {
    let inputs = inputs(target);
    assert!(
        inputs.len() >= 5,
        "`{target}` has {} seeds; keep a few",
        inputs.len()
    );
    let failed: Vec<String> = inputs
        .iter()
        .filter(|(_, bytes)| catch_unwind(AssertUnwindSafe(|| body(bytes))).is_err())
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(failed.is_empty(), "`{target}` failed on {failed:#?}");
}

#[test]
fn frontmatter_seeds_hold_the_invariants() {
    replay("frontmatter", fuzz_entry::frontmatter);
}

#[test]
fn skills_ref_seeds_hold_the_invariants() {
    replay("skills_ref", fuzz_entry::skills_ref);
}

#[test]
fn bundle_path_seeds_hold_the_invariants() {
    replay("bundle_path", fuzz_entry::bundle_path);
}

#[test]
fn descriptor_seeds_hold_the_invariants() {
    replay("descriptor", fuzz_entry::descriptor);
}

#[test]
fn bundle_seeds_hold_the_invariants() {
    replay("bundle", fuzz_entry::bundle);
}

#[test]
fn tools_seeds_hold_the_invariants() {
    let guides = tempfile::tempdir().expect("tempdir");
    let harness = ToolHarness::new(guides.path());
    replay("tools", |bytes| {
        harness.call(bytes);
    });
}

/// The tool seeds reach every outcome the harness is built to reach, so the fuzzer starts from
/// each refusal and from each kind of success, and a helper never runs.
#[test]
fn tools_seeds_reach_each_outcome() {
    let guides = tempfile::tempdir().expect("tempdir");
    let harness = ToolHarness::new(guides.path());
    let want = [
        ("load-body", "ok"),
        ("load-reference", "ok"),
        ("load-nested", "ok"),
        ("load-second", "ok"),
        ("load-denied", "policy_denied"),
        ("load-skill-md", "validation_error"),
        ("load-escape", "validation_error"),
        ("load-unknown", "validation_error"),
        ("load-extra-field", "validation_error"),
        ("load-wrong-type", "validation_error"),
        ("run-approved", "spawn_failed"),
        ("run-not-approved", "not_approved"),
        ("run-blocked", "blocked_tool"),
        ("run-bad-path", "invalid_path"),
        ("run-control", "invalid_args"),
        ("read-skill-md", "ok"),
        ("read-notes", "ok"),
        ("read-json", "ok"),
        ("read-binary", "not_text"),
        ("read-link", "invalid_path"),
        ("read-missing", "not_found"),
        ("read-denied", "policy_denied"),
        ("read-wrong-ext", "invalid_path"),
        ("unknown-tool", "unknown_tool"),
    ];
    assert_outcomes("tools", &want, |bytes| match harness.call(bytes) {
        Some(Ok(_)) => "ok".to_owned(),
        Some(Err(code)) => code,
        None => "not json".to_owned(),
    });
}

/// Each `[[bin]]` of `fuzz/Cargo.toml`, by name.
fn fuzz_targets() -> Vec<String> {
    let manifest = fs_err::read_to_string(Path::new(FUZZ_DIR).join("Cargo.toml")).expect("read");
    manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| {
            let line = bin.lines().find(|l| l.trim_start().starts_with("name"))?;
            Some(line.split('"').nth(1)?.to_owned())
        })
        .collect()
}

#[test]
fn oci_layer_seeds_hold_the_invariants() {
    replay("oci_layer", fuzz_entry::oci_layer);
}

/// The seeds (written by Python's `tarfile`, an independent tar writer) reach the reader's
/// verdicts: accepted ustar and PAX layers, and each kind of refusal.
#[test]
fn oci_layer_seeds_reach_each_verdict() {
    use skillfold::prepare::oci::unpack::read_tar;
    let wanted = ["pdf".to_owned()].into();
    assert_outcomes(
        "oci_layer",
        &[
            ("layer-00-valid", "ok 2"),
            ("layer-01-symlink", "link_in_layer"),
            ("layer-02-hardlink", "link_in_layer"),
            ("layer-03-dotdot", "unsafe_path_in_layer"),
            ("layer-04-duplicate", "duplicate_in_layer"),
            ("layer-05-fifo", "special_file_in_layer"),
            ("layer-06-pax", "ok 2"),
        ],
        |bytes| match read_tar(bytes, &wanted, skillfold::format::limits::CHAMVI) {
            Ok(bundles) => format!("ok {}", bundles["pdf"].0.len()),
            Err(e) => e.code.as_str().to_owned(),
        },
    );
}

#[test]
fn every_fuzz_target_has_seeds_replayed_here() {
    let targets = fuzz_targets();
    let replayed = [
        "frontmatter",
        "skills_ref",
        "bundle_path",
        "descriptor",
        "bundle",
        "tools",
        "mcp_framing",
        "oci_layer",
    ];
    let mut sorted = targets.clone();
    sorted.sort();
    let mut want = replayed.map(str::to_owned).to_vec();
    want.sort();
    assert_eq!(sorted, want, "a fuzz target without its seed replay here");
    for target in targets {
        let body = Path::new(FUZZ_DIR).join(format!("fuzz_targets/{target}.rs"));
        assert!(body.is_file(), "{} is missing", body.display());
    }
}

#[test]
fn committed_fuzz_inputs_stay_small() {
    let mut total = 0;
    for kind in ["corpus", "reproducers"] {
        let dir = Path::new(FUZZ_DIR).join(kind);
        if !dir.exists() {
            continue;
        }
        for target in fs_err::read_dir(&dir).expect("read") {
            for input in fs_err::read_dir(target.expect("entry").path()).expect("read") {
                total += input.expect("entry").metadata().expect("stat").len();
            }
        }
    }
    assert!(
        total <= 1024 * 1024,
        "{total} bytes of committed fuzz inputs; commit seeds and minimized reproducers only"
    );
}

#[test]
fn bundle_entries_round_trip_through_their_encoding() {
    let entries: [(&str, &[u8]); 3] = [
        ("SKILL.md", b"---\nname: a\n---\n"),
        ("bin", b"\x00\xfe"),
        ("empty", b""),
    ];
    let encoded = fuzz_entry::encode_entries(entries);
    let decoded = fuzz_entry::file_entries(&encoded);
    let want: Vec<(String, Vec<u8>)> = entries
        .iter()
        .map(|(p, c)| ((*p).to_owned(), c.to_vec()))
        .collect();
    assert_eq!(decoded, want);
}

#[cfg(feature = "mcp")]
#[test]
fn mcp_framing_seeds_hold_the_invariants() {
    replay("mcp_framing", fuzz_entry::mcp_framing);
}

/// The seeds reach every verdict of the framing, so the fuzzer starts from each branch.
#[cfg(feature = "mcp")]
#[test]
fn mcp_framing_seeds_reach_every_verdict() {
    use skillfold::mcp::framing::{Verdict, judge};
    let want = [
        ("initialize", "forward"),
        ("initialized", "forward"),
        ("tools-call", "forward"),
        ("resource-read", "forward"),
        ("bom-ping", "forward"),
        ("response", "forward"),
        ("tools-call-bad-params", "-32602"),
        ("batch", "-32600"),
        ("wrong-version", "-32600"),
        ("bad-id", "-32600"),
        ("no-method", "-32600"),
        ("not-utf8", "-32700"),
        ("blank", "skip"),
        ("bad-notification", "ignore"),
    ];
    assert_outcomes("mcp_framing", &want, |bytes| match judge(bytes) {
        Verdict::Forward => "forward".to_owned(),
        Verdict::Skip => "skip".to_owned(),
        Verdict::Ignore(_) => "ignore".to_owned(),
        Verdict::Reply(reply) => reply["error"]["code"].to_string(),
    });
}
