//! Commit signatures: the allowed-signers file, and a raw commit object's header split and
//! signature verdict against a fixed trust policy.

use std::path::Path;

#[cfg(feature = "signatures")]
/// The path the fuzzed allowed-signers text is said to come from.
const SIGNERS_PATH: &str = "fuzz/allowed_signers";

#[cfg(feature = "signatures")]
/// An allowed-signers file's text (lossy UTF-8), parsed as `check` parses `verify.allowed_signers`.
///
/// Invariants: a refusal names the file and either the first line that does not parse (a line
/// that is neither blank nor a comment, after which no earlier line is at fault: each earlier
/// line parses alone, and that line alone is refused) or no line, when no signer is listed;
/// an accepted file has one entry per non-blank, non-comment line, in order, each with its own
/// line number, principals without quotes or spaces and a key; every entry written back in the
/// canonical form (options from its fields, the key in OpenSSH form) parses to the same entry;
/// `allows` and `lists` agree with the entry's fields.
///
/// The rules of issue 28's items 7 and 9 (a repeated option refuses its line; namespace
/// patterns as `ssh-keygen` matches them) are the signers tests' (tests/it/signatures.rs); here
/// a namespace list allows what `match_pattern_list` says.
pub fn signers(data: &[u8]) {
    use crate::trust::keys::allowed_signers::AllowedSigners;
    use crate::trust::keys::key_file::SignersRefusal;

    let text = String::from_utf8_lossy(data);
    let path = Path::new(SIGNERS_PATH);
    let listed: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        // Trimmed as the parser trims a line (spaces, tabs and a carriage return).
        .map(|(i, l)| (i + 1, l.trim_matches([' ', '\t', '\r'])))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let parse_alone = |line: &str| AllowedSigners::parse(line, path);
    match AllowedSigners::parse(&text, path) {
        Err(e) => {
            assert_eq!(e.path, path);
            assert!(!e.refusal.to_string().is_empty());
            assert!(e.to_string().starts_with(SIGNERS_PATH));
            match e.line {
                None => assert!(listed.is_empty(), "refused without a line: {e}"),
                // A NUL byte refuses the file at the first line holding one, blank or comment
                // lines included.
                Some(n) if text.lines().nth(n - 1).is_some_and(|l| l.contains('\0')) => {
                    assert_eq!(e.refusal, SignersRefusal::Nul, "{e}");
                    assert!(text.lines().take(n - 1).all(|l| !l.contains('\0')));
                }
                Some(n) => {
                    let at = listed.iter().position(|(i, _)| *i == n);
                    let at = at.unwrap_or_else(|| panic!("line {n} is blank or a comment: {e}"));
                    for (_, earlier) in &listed[..at] {
                        assert!(parse_alone(earlier).is_ok(), "an earlier line is at fault");
                    }
                    let alone = parse_alone(listed[at].1).expect_err("the line alone is refused");
                    assert_eq!(alone.line, Some(1));
                    assert_eq!(alone.refusal, e.refusal, "the same line, another reason");
                }
            }
        }
        Ok(parsed) => {
            assert_eq!(parsed.path, path);
            assert_eq!(parsed.signers.len(), listed.len());
            for (signer, (line, raw)) in parsed.signers.iter().zip(&listed) {
                assert_eq!(signer.line, *line);
                check_signer(signer, raw);
            }
        }
    }
}

#[cfg(feature = "signatures")]
/// One accepted allowed-signers entry: its fields are sane, written back canonically it parses
/// to the same entry, and `allows` follows the fields.
fn check_signer(signer: &crate::trust::keys::allowed_signers::AllowedSigner, raw: &str) {
    use crate::trust::keys::allowed_signers::AllowedSigners;

    assert!(!signer.principals.is_empty());
    assert!(raw.starts_with(&signer.principals));
    // No quote, and none of the parser's separators (spaces, tabs, a carriage return: other
    // Unicode white space is part of a principal, as for `ssh-keygen`).
    assert!(!signer.principals.contains(['"', ' ', '\t', '\r']));
    let mut options = Vec::new();
    if signer.cert_authority {
        options.push("cert-authority".to_owned());
    }
    if let Some(namespaces) = &signer.namespaces {
        options.push(format!("namespaces=\"{namespaces}\""));
    }
    for (name, time) in [
        ("valid-after", signer.valid_after),
        ("valid-before", signer.valid_before),
    ] {
        if let Some(time) = time {
            options.push(format!("{name}=\"{}\"", civil_time(time)));
        }
    }
    // A quote inside a value changes how the written-back line splits into tokens: no
    // canonical form to compare with then.
    if !signer
        .namespaces
        .as_deref()
        .is_some_and(|n| n.contains('"'))
    {
        let key = signer.key.to_openssh().expect("a parsed key writes back");
        let line = if options.is_empty() {
            format!("{} {key}", signer.principals)
        } else {
            format!("{} {} {key}", signer.principals, options.join(","))
        };
        let again = AllowedSigners::parse(&line, Path::new(SIGNERS_PATH))
            .unwrap_or_else(|e| panic!("`{line}` written back does not parse: {e}"));
        let again = &again.signers[0];
        assert_eq!(again.principals, signer.principals);
        assert_eq!(again.namespaces, signer.namespaces, "`{line}`");
        assert_eq!(again.valid_after, signer.valid_after, "`{line}`");
        assert_eq!(again.valid_before, signer.valid_before, "`{line}`");
        assert_eq!(again.cert_authority, signer.cert_authority);
        assert_eq!(again.key.key_data(), signer.key.key_data());
    }
    let data = signer.key.key_data();
    use crate::trust::keys::pattern::{PatternMatch, match_pattern_list};
    // A namespace the line's pattern list allows (absent: any), when one is easy to name: `git`,
    // or one of its patterns without wildcards or negation.
    let namespace = match signer.namespaces.as_deref() {
        None => Some("git".to_owned()),
        Some(list) => std::iter::once("git")
            .chain(list.split(','))
            .filter(|n| !n.contains(['*', '?', '!']))
            .find(|n| match_pattern_list(n, list) == PatternMatch::Matched)
            .map(str::to_owned),
    };
    let inside = signer.valid_after.or(signer.valid_before).unwrap_or(0);
    let window_open = signer.valid_after.is_none_or(|t| inside >= t)
        && signer.valid_before.is_none_or(|t| inside <= t);
    if let Some(namespace) = &namespace {
        assert_eq!(
            signer.allows(data, namespace, inside),
            !signer.cert_authority && window_open
        );
        if let Some(after) = signer.valid_after {
            assert!(
                !signer.allows(data, namespace, after - 1),
                "allowed before valid-after"
            );
        }
        if let Some(before) = signer.valid_before {
            assert!(
                !signer.allows(data, namespace, before + 1),
                "allowed after valid-before"
            );
        }
    }
    // A namespace the pattern list does not match is never allowed.
    if let Some(list) = signer.namespaces.as_deref() {
        let other = format!("{}-not-listed", list.replace(['*', '?', '!', ','], ""));
        if match_pattern_list(&other, list) != PatternMatch::Matched {
            assert!(
                !signer.allows(data, &other, inside),
                "an unlisted namespace"
            );
        }
    }
}

#[cfg(feature = "signatures")]
/// Unix seconds as `YYYYMMDDHHMMSSZ` (proleptic Gregorian, UTC), written out independently of
/// the signers parser's day count.
fn civil_time(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}{:02}{:02}{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(feature = "signatures")]
/// The allowed-signers file of [`signature`]: the SSH keys the seed commits were signed with
/// (`ssh-keygen -t ed25519` and `-t ecdsa`, by `git commit -S` with `gpg.format = ssh`), one line
/// for `git` only, one for any namespace, and a line whose window closed long ago.
const FUZZ_ALLOWED_SIGNERS: &str = "\
fuzz@example.com namespaces=\"git\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILz+kamIDiMu7JpLENnvQIvtm++oej5FHZxC+ZseWziS fuzz@example.com
expired@example.com valid-before=\"20200101\" ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPi04pFG+dmdONaCXKWdgx3HiX6EPMOHXOqUfP1NQGDKo+6yccKTfzwAZdwGNTOdHPxiQgvbU03UowqSSaNsQ1I=
ecdsa@example.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBPi04pFG+dmdONaCXKWdgx3HiX6EPMOHXOqUfP1NQGDKo+6yccKTfzwAZdwGNTOdHPxiQgvbU03UowqSSaNsQ1I=
";

#[cfg(feature = "signatures")]
/// The OpenPGP keyring of [`signature`]: the key the seed commits were signed with (`gpg
/// --quick-gen-key … ed25519 sign,cert` plus an ed25519 signing subkey, `gpg --armor --export`).
const FUZZ_OPENPGP_KEYS: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----

mDMEaw7aQBYJKwYBBAHaRw8BAQdA8poPpYX/cRt//GlAn5luLrZ30RXKwWUkcOis
0jHKBQO0HUZ1enogU2lnbmVyIDxwZ3BAZXhhbXBsZS5jb20+iJAEExYIADgWIQS2
bzK15tuzhBBDJsD8taW4cV970gUCaw7aQAIbAwULCQgHAgYVCgkICwIEFgIDAQIe
AQIXgAAKCRD8taW4cV970jzsAP9vyyag01JCDNG0gfq7jTaPxT1KrAk9bd/dk4Nf
TfF/WAD/TW3oiDSiJo6FH5zrRnPXAynHQOTUHwJIpJzJ9P/Mbwe4MwRrDtpAFgkr
BgEEAdpHDwEBB0CGR41uJu8bTewntA+SH4Tsxb7f1DmljKiVGbohh2F3D4jvBBgW
CAAgFiEEtm8ytebbs4QQQybA/LWluHFfe9IFAmsO2kACGwIAgQkQ/LWluHFfe9J2
IAQZFggAHRYhBC1V8Lwve9u0OBevlk5fxy7OTLeUBQJrDtpAAAoJEE5fxy7OTLeU
bQIBAJ2yiglu7/efI/GUqqG/tP7zYmNH4ewZhZ1HKlJYQdWHAQCuopc1xV5D2LTZ
340L5CpRYbVRq0MVoIqKGRma27DBDlPCAQDVAUFjMTiXq5Hvax1uAYsbTUPhmjEl
LG7KE/D3JyGZxQEAsKv+vnSdYkBi3VcFik1AZJUj08lGjbJm7dmusCLcWAU=
=WX/s
-----END PGP PUBLIC KEY BLOCK-----
";

#[cfg(feature = "signatures")]
/// Who may sign, as [`signature`] reports them: `(format, principal, fingerprint)`.
const FUZZ_SIGNERS: [(&str, &str, &str); 4] = [
    (
        "ssh",
        "fuzz@example.com",
        "SHA256:7Y91yN+/LnR7jkD2ZPI9cZTzzxN4qv4rEY5OqjPOtcM",
    ),
    (
        "ssh",
        "ecdsa@example.com",
        "SHA256:m5cYud5TuUeQzEzHWDi37PBuXuTjtwPcLmnFja4i1tE",
    ),
    (
        "openpgp",
        "Fuzz Signer <pgp@example.com>",
        "B66F32B5E6DBB384104326C0FCB5A5B8715F7BD2",
    ),
    (
        "openpgp",
        "Fuzz Signer <pgp@example.com>",
        "2D55F0BC2F7BDBB43817AF964E5FC72ECE4CB794",
    ),
];

#[cfg(feature = "signatures")]
/// The trust policy of [`signature`], built once.
pub(crate) fn fuzz_trust_policy() -> &'static crate::trust::commit::policy::TrustPolicy {
    use crate::trust::commit::policy::{OpenPgpKeys, TrustPolicy};
    use crate::trust::keys::allowed_signers::AllowedSigners;
    use pgp::composed::Deserializable as _;

    static POLICY: std::sync::OnceLock<TrustPolicy> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        let ssh = AllowedSigners::parse(FUZZ_ALLOWED_SIGNERS, Path::new("fuzz/allowed_signers"))
            .expect("the fuzz allowed-signers file parses");
        let (keys, _) =
            pgp::composed::SignedPublicKey::from_armor_many(FUZZ_OPENPGP_KEYS.as_bytes())
                .expect("the fuzz keyring is armored");
        let keys: Vec<_> = keys
            .map(|k| {
                let key = k.expect("the fuzz key reads");
                key.verify_bindings()
                    .expect("the fuzz key's bindings verify");
                key
            })
            .collect();
        TrustPolicy {
            ssh: Some(ssh),
            openpgp: Some(OpenPgpKeys {
                path: "fuzz/openpgp_keys.asc".into(),
                keys,
            }),
        }
    })
}

#[cfg(feature = "signatures")]
/// What Git makes of a raw commit object's headers (`parse_buffer_signed_by_header` in Git's
/// `commit.c`, written out again): the payload a signature covers (every `gpgsig*` header
/// removed), the signature (every header of this repository's kind, continuation lines
/// included, newlines kept), and whether the headers are unambiguous: at most one `gpgsig*`
/// header and at most one `committer` line.
struct GitSplit {
    payload: Vec<u8>,
    signature: Option<Vec<u8>>,
    unambiguous: bool,
    committer: Option<Vec<u8>>,
}

#[cfg(feature = "signatures")]
fn git_split(object: &[u8], hex_len: usize) -> GitSplit {
    let header: &[u8] = if hex_len == 64 {
        b"gpgsig-sha256"
    } else {
        b"gpgsig"
    };
    let mut payload = Vec::new();
    let mut signature: Option<Vec<u8>> = None;
    let (mut in_signature, mut other_signature) = (false, false);
    let (mut signature_headers, mut committers) = (0, 0);
    let mut committer = None;
    let mut at = 0;
    while at < object.len() {
        let line_end = object[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(object.len(), |i| at + i + 1);
        let line = &object[at..line_end];
        let mut next = line_end;
        let sig = if in_signature && line.first() == Some(&b' ') {
            Some(&line[1..])
        } else if line.starts_with(header) && line.get(header.len()) == Some(&b' ') {
            other_signature = false;
            signature_headers += 1;
            Some(&line[header.len() + 1..])
        } else {
            if line.starts_with(b"gpgsig") {
                other_signature = true;
                signature_headers += 1;
            } else if other_signature && line.first() != Some(&b' ') {
                other_signature = false;
            }
            None
        };
        match sig {
            Some(sig) => {
                signature
                    .get_or_insert_with(Vec::new)
                    .extend_from_slice(sig);
                in_signature = true;
            }
            None => {
                if line.first() == Some(&b'\n') {
                    next = object.len();
                } else if line.starts_with(b"committer ") && !other_signature {
                    committers += 1;
                    committer.get_or_insert_with(|| line.to_vec());
                }
                if !other_signature {
                    payload.extend_from_slice(&object[at..next]);
                }
                in_signature = false;
            }
        }
        at = next;
    }
    GitSplit {
        payload,
        signature,
        unambiguous: signature_headers <= 1 && committers <= 1,
        committer,
    }
}

#[cfg(feature = "signatures")]
/// The seconds of a well-formed committer line (`committer NAME <EMAIL> SECONDS +HHMM`).
fn committer_seconds(line: &[u8]) -> Option<i64> {
    let line = std::str::from_utf8(line).ok()?;
    let line = line.strip_suffix('\n').unwrap_or(line);
    let rest = line.strip_prefix("committer ")?;
    let (ident, date) = rest.rsplit_once("> ")?;
    if ident.contains(['\n', '>']) || !ident.contains(" <") {
        return None;
    }
    let (seconds, zone) = date.split_once(' ')?;
    let zone_ok = zone.len() == 5
        && matches!(zone.as_bytes()[0], b'+' | b'-')
        && zone[1..].bytes().all(|b| b.is_ascii_digit());
    let digits_ok =
        (1..=15).contains(&seconds.len()) && seconds.bytes().all(|b| b.is_ascii_digit());
    (zone_ok && digits_ok).then(|| seconds.parse().ok())?
}

#[cfg(feature = "signatures")]
/// A raw commit object (without its `commit <len>\0` prefix), judged as from a SHA-1 and from a
/// SHA-256 repository, against a fixed policy of two SSH keys and one OpenPGP key (the keys the
/// seed commits were signed with by `git commit -S`).
///
/// Invariants: on a commit (first header `tree`) whose signature headers and committer line are
/// unambiguous, the split is Git's exactly (payload, signature, committer time); a verdict is one of the four signature
/// codes, with a message; the same object under another id is refused as `signature_invalid`; an
/// accepted commit carries a signature by one of the policy's keys, reported with the principal
/// and fingerprint the policy gives it, over exactly the payload Git would check (it verifies
/// again through `verify` with Git's split); the verdict is deterministic.
///
/// Ambiguous headers (two `gpgsig`, `gpgsig` beside `gpgsig-sha256`, two `committer` lines) are
/// judged against `git verify-commit` by the signature tests (tests/it/signatures.rs); the fuzzer
/// reaches them, and the invariants above hold for them too.
pub fn signature(data: &[u8]) {
    use crate::trust::commit::{self, SignedCommit};

    let policy = fuzz_trust_policy();
    for hex_len in [40, 64] {
        let git = git_split(data, hex_len);
        let split = SignedCommit::parse(data, hex_len).ok();
        // A commit (its first header `tree`) with one signature header, the only one: Git's
        // payload and ours must agree.
        if let Some(split) = &split
            && git.unambiguous
            && data.starts_with(b"tree ")
            && (git.signature.is_some() || split.signature.is_some())
        {
            assert_eq!(split.payload, git.payload, "the payload is not Git's");
            // Git keeps each line's newline, skillfold joins the lines with newlines: the same
            // lines, but for the newlines at the end (an object can end inside the header).
            let trimmed = |s: &[u8]| {
                let end = s.iter().rposition(|&b| b != b'\n').map_or(0, |i| i + 1);
                s[..end].to_vec()
            };
            assert_eq!(
                split.signature.as_deref().map(trimmed),
                git.signature.as_deref().map(trimmed),
                "the signature is not Git's"
            );
            if let Some(seconds) = git.committer.as_deref().and_then(committer_seconds) {
                assert_eq!(split.committed_at, seconds, "not the committer's time");
            }
        }
        let id = commit::commit_object_id(data, hex_len);
        assert_eq!(id.len(), hex_len);
        let verdict = commit::verify_commit_object(&id, data, policy);
        let other = if id.starts_with('0') { "1" } else { "0" }.repeat(hex_len);
        let refused = commit::verify_commit_object(&other, data, policy)
            .expect_err("another commit's id is refused");
        assert_eq!(refused.code().as_str(), "signature_invalid");
        match &verdict {
            Err(e) => {
                assert!(matches!(
                    e.code().as_str(),
                    "signature_missing"
                        | "signature_invalid"
                        | "signer_not_allowed"
                        | "signature_unsupported"
                ));
                assert!(!e.to_string().is_empty());
                if e.code().as_str() == "signature_missing" {
                    assert!(split.as_ref().is_some_and(|s| s.signature.is_none()));
                }
            }
            Ok(signer) => {
                let split = split.as_ref().expect("an accepted commit splits");
                assert!(split.signature.is_some(), "accepted without a signature");
                assert!(
                    FUZZ_SIGNERS.contains(&(
                        signer.format.as_str(),
                        signer.principal.as_str(),
                        signer.fingerprint.as_str()
                    )),
                    "accepted for an unknown signer {signer:?}"
                );
                if git.unambiguous {
                    let again = commit::verify(
                        &id,
                        git.signature.as_deref(),
                        &git.payload,
                        split.committed_at,
                        policy,
                    );
                    assert_eq!(again.as_ref(), Ok(signer), "Git's split does not verify");
                }
            }
        }
        // The verdict, not its message: the pgp crate's messages can carry a captured backtrace
        // (with `RUST_BACKTRACE` set), which names the caller's line.
        let again = commit::verify_commit_object(&id, data, policy);
        assert_eq!(
            again.as_ref().map_err(|e| e.code()),
            verdict.as_ref().map_err(|e| e.code()),
            "the verdict is not deterministic"
        );
    }
}
