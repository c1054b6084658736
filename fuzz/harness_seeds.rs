//! The fuzz targets' inputs on stable: every committed seed (`fuzz/corpus/<target>/`) and crash
//! reproducer (`fuzz/reproducers/<target>/`) goes through the same body the fuzz target calls
//! (`fuzz/harness.rs`), so CI checks the targets' invariants without a nightly toolchain
//! and a fixed crash stays fixed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use crate::fuzz_entry::{self, ToolHarness};

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
    use crate::source::oci::unpack::read_tar;
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
        |bytes| match read_tar(bytes, &wanted, crate::format::limits::CHAMVI) {
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
        "signers",
        "signature",
        "image_signature",
        "descriptor_edit",
        "tokens",
        "oci_pull",
        "oci_tag",
        "http_request",
        "oauth_documents",
        "git_answer",
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
    use crate::mcp::framing::{LineVerdict, judge};
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
        LineVerdict::Forward => "forward".to_owned(),
        LineVerdict::Skip => "skip".to_owned(),
        LineVerdict::Ignore(_) => "ignore".to_owned(),
        LineVerdict::Reply(reply) => reply["error"]["code"].to_string(),
    });
}

#[test]
fn signers_seeds_hold_the_invariants() {
    replay("signers", fuzz_entry::signers);
}

/// The seeds (keys by `ssh-keygen`) reach acceptance and refusals on the line at fault.
#[test]
fn signers_seeds_reach_each_verdict() {
    use crate::trust::keys::allowed_signers::AllowedSigners;
    assert_outcomes(
        "signers",
        &[
            ("git-allowed", "ok 2"),
            ("options", "ok 2"),
            ("cert-authority", "ok 1"),
            ("crlf-comments", "ok 1"),
            ("times", "line 1"),
            ("times-in-window", "ok 1"),
            ("bad-key", "line 1"),
            ("unknown-option", "line 1"),
            ("bad-time", "line 1"),
            ("open-quote", "line 1"),
            ("second-line-bad", "line 2"),
            ("only-comment", "no line"),
        ],
        |bytes| {
            let text = String::from_utf8_lossy(bytes);
            match AllowedSigners::parse(&text, Path::new("allowed_signers")) {
                Ok(signers) => format!("ok {}", signers.signers.len()),
                Err(e) => e.line.map_or("no line".to_owned(), |l| format!("line {l}")),
            }
        },
    );
}

#[test]
fn signature_seeds_hold_the_invariants() {
    replay("signature", fuzz_entry::signature);
}

/// The seeds (commits signed by `git commit -S` with `ssh-keygen` and `gpg` keys, and hostile
/// edits of them) reach each verdict of the signature check.
#[test]
fn signature_seeds_reach_each_verdict() {
    use crate::trust::commit::{commit_object_id, verify_commit_object};
    let verdict = |bytes: &[u8], hex_len: usize| {
        let id = commit_object_id(bytes, hex_len);
        match verify_commit_object(&id, bytes, fuzz_entry::fuzz_trust_policy()) {
            Ok(signer) => format!("{} {}", signer.format, signer.fingerprint),
            Err(e) => e.code().as_str().to_owned(),
        }
    };
    let ed25519 = "ssh SHA256:7Y91yN+/LnR7jkD2ZPI9cZTzzxN4qv4rEY5OqjPOtcM";
    let subkey = "openpgp 2D55F0BC2F7BDBB43817AF964E5FC72ECE4CB794";
    let want40 = [
        ("commit-ssh-sha1", ed25519),
        (
            "commit-ssh-ecdsa",
            "ssh SHA256:m5cYud5TuUeQzEzHWDi37PBuXuTjtwPcLmnFja4i1tE",
        ),
        ("commit-pgp-sha1", subkey),
        (
            "commit-pgp-primary",
            "openpgp B66F32B5E6DBB384104326C0FCB5A5B8715F7BD2",
        ),
        ("commit-unsigned", "signature_missing"),
        ("tampered-message", "signature_invalid"),
        ("tampered-committer", "signature_invalid"),
        ("x509", "signature_unsupported"),
        ("unknown-format", "signature_unsupported"),
        ("no-committer", "signature_invalid"),
        ("gpgsig-in-message", "signature_missing"),
    ];
    assert_outcomes("signature", &want40, |bytes| verdict(bytes, 40));
    let want64 = [
        ("commit-ssh-sha256", ed25519),
        ("commit-pgp-sha256", subkey),
        ("commit-ssh-sha1", "signature_missing"),
    ];
    assert_outcomes("signature", &want64, |bytes| verdict(bytes, 64));
}

#[test]
fn descriptor_edit_seeds_hold_the_invariants() {
    replay("descriptor_edit", fuzz_entry::descriptor_edit);
}

#[cfg(feature = "git")]
#[test]
fn git_answer_seeds_hold_the_invariants() {
    replay("git_answer", fuzz_entry::git_answer);
}

/// The seeds reach each verdict of the answer reader: within the bounds (a pack begun each way
/// it may begin), over the bytes, over the lines, an invalid length.
#[cfg(feature = "git")]
#[test]
fn git_answer_seeds_reach_each_verdict() {
    use crate::source::git::answer::{AnswerKind, LineBoundBroken, LineBounds, PktLines};
    let want = [
        ("v2-capabilities", "within"),
        ("v1-advertisement", "within"),
        ("ls-refs", "within"),
        ("shallow-info-then-pack", "within"),
        ("sideband-all-packfile", "within"),
        ("v1-fetch-sideband", "within"),
        ("v1-fetch-no-sideband", "within"),
        ("over-the-bytes", "bytes"),
        ("not-hex", "bytes"),
        ("flood-of-flushes", "lines"),
        ("length-0003", "invalid"),
    ];
    assert_outcomes("git_answer", &want, |bytes| {
        let kind = [
            AnswerKind::Advertisement,
            AnswerKind::Command,
            AnswerKind::Fetch,
        ][usize::from(bytes[0] % 3)];
        let bounds = LineBounds {
            bytes: 4096,
            lines: 64,
        };
        match PktLines::new(kind.pack_after(), bounds).take(&bytes[2..]) {
            Ok(()) => "within",
            Err(LineBoundBroken::Bytes(_)) => "bytes",
            Err(LineBoundBroken::Lines(_)) => "lines",
            Err(LineBoundBroken::Invalid(_)) => "invalid",
        }
        .to_owned()
    });
}

#[cfg(feature = "http")]
#[test]
fn tokens_seeds_hold_the_invariants() {
    replay("tokens", fuzz_entry::tokens);
}

#[cfg(feature = "http")]
#[test]
fn oauth_documents_seeds_hold_the_invariants() {
    replay("oauth_documents", fuzz_entry::oauth_documents);
}

/// The seeds reach a key set URL and each refusal of discovery, and keep or leave out keys by
/// `use`, `key_ops` and type.
#[cfg(feature = "http")]
#[test]
fn oauth_documents_seeds_reach_each_verdict() {
    use crate::mcp::http::oauth::{jwks, validate};
    let at =
        reqwest::Url::parse("https://idp.example/.well-known/oauth-authorization-server/tenant")
            .unwrap();
    let want = [
        ("discovered", "jwks_uri, 3 keys"),
        ("another-issuer", "another issuer, 1 keys"),
        ("jwks-off-origin", "off origin, 1 keys"),
        ("key-ops", "jwks_uri, 2 keys"),
        ("shared-kid", "jwks_uri, 2 keys"),
        ("no-keys-array", "jwks_uri, refused"),
    ];
    assert_outcomes("oauth_documents", &want, |bytes| {
        let mut parts = bytes.splitn(3, |&b| b == 0xFF);
        let discovery: serde_json::Value =
            serde_json::from_slice(parts.next().unwrap_or_default()).unwrap();
        let key_set: serde_json::Value =
            serde_json::from_slice(parts.next().unwrap_or_default()).unwrap();
        let discovered = match jwks::jwks_uri(&discovery, "https://idp.example/tenant", &at) {
            Ok(_) => "jwks_uri",
            Err(why) if why.contains("another issuer") => "another issuer",
            Err(why) if why.contains("origin") => "off origin",
            Err(_) => "refused",
        };
        let keys = match validate::parse_key_set(&key_set) {
            Ok(keys) => format!("{} keys", keys.len()),
            Err(_) => "refused".to_owned(),
        };
        format!("{discovered}, {keys}")
    });
}

/// The seeds reach acceptance and the refusals of the tokens file.
#[cfg(feature = "http")]
#[test]
fn tokens_seeds_reach_each_verdict() {
    use crate::mcp::http::tokens::Tokens;
    let agents = ["alpha".to_owned(), "beta".to_owned()].into();
    let want = [
        ("valid", "ok"),
        ("empty-array", "ok"),
        ("missing-agent", "invalid_tokens"),
        ("unknown-agent", "invalid_tokens"),
        ("upper-hex", "invalid_tokens"),
        ("token-not-hash", "invalid_tokens"),
        ("duplicate-hash", "invalid_tokens"),
        ("extra-field", "invalid_tokens"),
        ("not-array", "invalid_tokens"),
        ("agent-number", "invalid_tokens"),
    ];
    assert_outcomes("tokens", &want, |bytes| {
        let text = bytes.split(|&b| b == 0xFF).next().unwrap_or_default();
        match Tokens::parse(&String::from_utf8_lossy(text), "t", &agents) {
            Ok(_) => "ok".to_owned(),
            Err(e) => e.code().as_str().to_owned(),
        }
    });
}

#[cfg(feature = "oci")]
#[test]
fn oci_pull_seeds_hold_the_invariants() {
    replay("oci_pull", fuzz_entry::oci_pull);
}

#[cfg(feature = "git")]
#[test]
fn oci_tag_seeds_hold_the_invariants() {
    replay("oci_tag", fuzz_entry::oci_tag);
}

/// The seeds reach each way a tag resolves: a `HEAD` naming the digest, a `HEAD` without one or
/// answered 405 or 501 and then a `GET`, a lying `GET`, and the refusals of either answer.
#[cfg(feature = "git")]
#[test]
fn oci_tag_seeds_reach_every_way_a_tag_resolves() {
    let outcome = |data: &[u8]| {
        let (head, get) = fuzz_entry::oci_tag_answers(data);
        format!("{} {}", head.status, get.status)
    };
    assert_outcomes(
        "oci_tag",
        &[
            ("head-names-the-digest", "200 200"),
            ("head-without-digest", "200 200"),
            ("head-405", "405 200"),
            ("head-501", "501 200"),
            ("get-lies", "405 200"),
            ("head-500", "500 200"),
            ("head-404", "404 200"),
            ("get-503", "501 503"),
            ("head-digest-garbage", "200 200"),
        ],
        outcome,
    );
}

/// The manifest placeholders stand for their blobs' digests and sizes, and nothing else.
#[test]
fn oci_pull_placeholders_name_the_blobs() {
    let (manifest, blobs) =
        fuzz_entry::oci_manifest_and_blobs(b"[\"@D1\",@S0,\"@X0\",@D]\xffab\xffc");
    assert_eq!(blobs, [b"ab".to_vec(), b"c".to_vec()]);
    // printf c | sha256sum
    let want = "[\"sha256:2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6\",2,\"@X0\",@D]";
    assert_eq!(String::from_utf8(manifest).expect("text"), want);
}

#[cfg(feature = "http")]
#[test]
fn http_request_seeds_hold_the_invariants() {
    replay("http_request", fuzz_entry::http_request);
}

/// The seeds reach the answers of each route: probes, tokens, origins, hosts and bodies.
#[cfg(feature = "http")]
#[test]
fn http_request_seeds_reach_each_answer() {
    let world = fuzz_entry::HttpWorld::get();
    let want = [
        ("healthz", "200"),
        ("readyz", "200"),
        ("metrics", "200"),
        ("metrics-no-token", "401"),
        ("initialize", "200"),
        ("initialize-writer", "200"),
        ("initialize-wrong-token", "403"),
        ("initialize-no-token", "401"),
        ("initialize-lowercase-bearer", "200"),
        ("initialize-foreign-origin", "403"),
        ("initialize-allowed-origin", "200"),
        ("initialize-foreign-host", "403"),
        ("unknown-path", "404"),
    ];
    assert_outcomes("http_request", &want, |bytes| {
        let raw = world.exchange(&world.request(bytes), std::time::Duration::from_secs(60));
        // The first answer: later ones may still be on their way.
        fuzz_entry::http_answers(&raw)
            .first()
            .map_or("no answer".to_owned(), |a| a.status.to_string())
    });
}

#[test]
fn image_signature_seeds_hold_the_invariants() {
    replay("image_signature", fuzz_entry::image_signature);
}

/// The seeds (sigstore-js's keyless signatures of `tests/fixtures/sigstore/`, in both layouts,
/// and its refusal variants) reach the verdicts sigstore-js gave them (its `oracle.json`).
#[test]
fn image_signature_seeds_reach_each_verdict() {
    let policy = fuzz_entry::fuzz_publisher_policy();
    let want = [
        ("cosign-v2", "accepted"),
        ("dsse-bundle", "accepted"),
        // A message signature over the simple-signing payload binds the payload, not the
        // manifest: the bundle alone does not carry the payload that names the digest, so it
        // does not sign this image (sigstore-js, given the payload as the artifact, accepts).
        ("message-bundle", "not_this_image"),
        ("message-v02-bundle", "not_this_image"),
        ("other-subject-dsse", "identity_not_allowed"),
        ("other-ca-cosign-v2", "certificate_untrusted"),
        ("other-log-dsse", "log_entry_invalid"),
        ("expired-dsse", "certificate_expired"),
        ("no-issuer-cosign-v2", "malformed"),
        // The keyless signature without its certificate: a key signature no listed key makes.
        ("key-bad-signature", "bad_signature"),
    ];
    assert_outcomes(
        "image_signature",
        &want,
        |bytes| match crate::trust::image::verify(
            &fuzz_entry::fuzz_material(bytes),
            fuzz_entry::FUZZ_PINNED,
            &policy,
        ) {
            Ok(_) => "accepted".to_owned(),
            Err(rejected) => rejected[0].rejection.as_str().to_owned(),
        },
    );
}
