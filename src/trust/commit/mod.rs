//! "Was this commit signed by an allowed signer": the signature of a pinned commit, checked
//! in-process against the source's trust policy (`verify:` in the descriptor), without the `git`,
//! `ssh-keygen` or `gpg` programs — by `prepare` and `pin` on the fetched commit, and by `verify`
//! on the commit object the corpus manifest keeps (after checking that the object's id is the
//! pinned commit). The verdicts are never more lenient than `git verify-commit`'s with the same
//! keys (DESIGN §8), and where Git's reading is ambiguous they refuse.
//!
//! The signed payload is the commit object without its signature headers, exactly as Git builds
//! it ([`SignedCommit::parse`]): every header whose name starts with `gpgsig` is dropped, the
//! signature is the value of `gpgsig` (`gpgsig-sha256` in a SHA-256 repository), and the time is
//! the first committer's. A commit with two signature headers of the repository's kind or two
//! `committer` headers is refused (`signature_invalid`).
//!
//! SSH signatures (`-----BEGIN SSH SIGNATURE-----`, Git's `gpg.format = ssh`) are verified with
//! the `ssh-key` crate's SSHSIG support in the `git` namespace; the line of the allowed-signers
//! file that decides is the one Git's `ssh-keygen -Y find-principals` then `-Y verify` would take
//! ([`AllowedSigners::allowing`]), judged at the committer time as Git does. OpenPGP signatures
//! (`-----BEGIN PGP SIGNATURE-----`, exactly one binary or text signature) are verified with the
//! `pgp` crate against the keyring of `openpgp_keys`, by a primary key flagged for signing or a
//! subkey whose newest binding carries the signing flag and a back-signature that verifies (as
//! gpg requires), and the key must be valid (not revoked, created, not expired) at the
//! signature's creation time, at the committer time and now (gpg judges the first and the last):
//! the module `openpgp`.
//! The verdict: unsigned → `signature_missing`; a signature that does not verify over the
//! payload, or a commit whose payload is ambiguous → `signature_invalid`; a valid signature by a
//! key not allowed (or a format the policy lists no keys for) → `signer_not_allowed`; X.509
//! signatures → `signature_unsupported` — never accepted silently.
//!
//! The verification is the cargo feature `signatures` (ssh-key, pgp). Without it only the commit
//! parsing remains: no trust policy can exist (the descriptor check refuses `verify:` with
//! `signatures_not_built`), so nothing here is ever asked to judge a signature.
//!
//! The policy's types are [`policy`]'s; the codes of the refusals ([`SignatureError::code`], area
//! `preparation`) are declared with the other preparation codes in [`crate::source::code`].

use crate::support::escape;
use crate::trust::commit::policy::{Signer, TrustPolicy};
#[cfg(feature = "signatures")]
use crate::trust::keys::allowed_signers::{AllowedSigners, NotAllowed};

#[cfg(feature = "signatures")]
mod openpgp;
pub mod policy;
#[cfg(feature = "signatures")]
use openpgp::OpenPgpRefusal;

/// The namespace Git signs commits in.
#[cfg(feature = "signatures")]
pub const GIT_NAMESPACE: &str = "git";

/// Why a commit's signature is refused. (Only the verifier of the `signatures` feature refuses;
/// the type is named in every build.)
#[cfg_attr(
    not(feature = "signatures"),
    expect(
        dead_code,
        reason = "only the verifier of the `signatures` feature refuses"
    )
)]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// No `gpgsig` header.
    #[error(
        "commit {commit} is not signed, and the source requires a signature by an allowed signer"
    )]
    Missing {
        /// The commit.
        commit: String,
    },
    /// The signature does not verify.
    #[error("the signature of commit {commit} does not verify: {reason}")]
    Invalid {
        /// The commit.
        commit: String,
        /// Why.
        reason: String,
    },
    /// A valid signature by a key that is not allowed.
    #[error("commit {commit} is signed by {fingerprint}, which `{}` does not allow: {reason}", escape::path(.signers))]
    NotAllowed {
        /// The commit.
        commit: String,
        /// The signing key's fingerprint.
        fingerprint: String,
        /// The allowed-signers file.
        signers: std::path::PathBuf,
        /// Why no line allows it.
        reason: String,
    },
    /// A signature format that is not verified here.
    #[error(
        "commit {commit} carries {format} signature, which skillfold does not verify; sign with an SSH key listed in `allowed_signers`"
    )]
    Unsupported {
        /// The commit.
        commit: String,
        /// `an X.509`, `an unknown`.
        format: &'static str,
    },
}

#[cfg(feature = "signatures")]
/// Verifies the signature `signature` (the `gpgsig` header's value, `None` when the commit has
/// none) of commit `commit` over `payload`, committed at Unix time `committed_at`, against
/// `policy`.
pub fn verify(
    commit: &str,
    signature: Option<&[u8]>,
    payload: &[u8],
    committed_at: i64,
    policy: &TrustPolicy,
) -> Result<Signer, SignatureError> {
    let commit = commit.to_owned();
    let Some(signature) = signature else {
        return Err(SignatureError::Missing { commit });
    };
    let text = String::from_utf8_lossy(signature);
    let text = text.trim();
    let no_keys = |commit: String, kind: &str, key: &str| SignatureError::NotAllowed {
        commit,
        fingerprint: "an unlisted key".into(),
        signers: Default::default(),
        reason: format!("the source lists no {kind} keys (`{key}`)"),
    };
    if text.starts_with("-----BEGIN SSH SIGNATURE-----") {
        let signers = policy
            .ssh
            .as_ref()
            .ok_or_else(|| no_keys(commit.clone(), "SSH", "allowed_signers"))?;
        verify_ssh(commit, text, payload, committed_at, signers)
    } else if text.starts_with("-----BEGIN PGP SIGNATURE-----") {
        let keys = policy
            .openpgp
            .as_ref()
            .ok_or_else(|| no_keys(commit.clone(), "OpenPGP", "openpgp_keys"))?;
        openpgp::verify(text, payload, committed_at, keys).map_err(|refusal| match refusal {
            OpenPgpRefusal::Invalid(reason) => SignatureError::Invalid { commit, reason },
            OpenPgpRefusal::NotAllowed {
                fingerprint,
                reason,
            } => SignatureError::NotAllowed {
                commit,
                fingerprint,
                signers: keys.path.clone(),
                reason,
            },
        })
    } else if text.starts_with("-----BEGIN SIGNED MESSAGE-----")
        || text.starts_with("-----BEGIN PKCS7-----")
        || text.starts_with("-----BEGIN CMS-----")
    {
        Err(SignatureError::Unsupported {
            commit,
            format: "an X.509",
        })
    } else {
        Err(SignatureError::Unsupported {
            commit,
            format: "an unknown",
        })
    }
}

#[cfg(feature = "signatures")]
fn verify_ssh(
    commit: String,
    text: &str,
    payload: &[u8],
    committed_at: i64,
    signers: &AllowedSigners,
) -> Result<Signer, SignatureError> {
    let sig = ssh_key::SshSig::from_pem(text.as_bytes()).map_err(|e| SignatureError::Invalid {
        commit: commit.clone(),
        reason: format!("the SSH signature cannot be read: {e}"),
    })?;
    let key = ssh_key::PublicKey::new(sig.public_key().clone(), "");
    if sig.namespace() != GIT_NAMESPACE {
        return Err(SignatureError::Invalid {
            commit,
            reason: format!(
                "it is made in the namespace `{}`, not `{GIT_NAMESPACE}`",
                escape::text(sig.namespace())
            ),
        });
    }
    key.verify(GIT_NAMESPACE, payload, &sig)
        .map_err(|e| SignatureError::Invalid {
            commit: commit.clone(),
            reason: e.to_string(),
        })?;
    let fingerprint = key.fingerprint(ssh_key::HashAlg::Sha256).to_string();
    match signers.allowing(sig.public_key(), GIT_NAMESPACE, committed_at) {
        Ok(allowed) => Ok(Signer {
            format: "ssh".into(),
            principal: allowed.principals.clone(),
            fingerprint,
        }),
        Err(why) => Err(SignatureError::NotAllowed {
            commit,
            fingerprint,
            signers: signers.path.clone(),
            reason: match why {
                NotAllowed::Unlisted => "the key is not listed".into(),
                NotAllowed::OutsideWindow { line } => format!(
                    "the key is listed (line {line}) but no line listing it is valid at the committer time {committed_at}"
                ),
                NotAllowed::NoLineForNamespace { line } => format!(
                    "the key is listed (line {line}, the first valid at the committer time {committed_at}), but no line for its principals allows it in the `{GIT_NAMESPACE}` namespace then (Git takes the principals from that first line)"
                ),
            },
        }),
    }
}

#[cfg(feature = "signatures")]
/// The parts of a raw commit object a signature check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedCommit {
    /// The signature header's value (continuation lines joined), if any.
    pub signature: Option<Vec<u8>>,
    /// The object without any `gpgsig…` header: what was signed.
    pub payload: Vec<u8>,
    /// The committer time, in Unix seconds.
    pub committed_at: i64,
}

#[cfg(feature = "signatures")]
/// The latest committer time read (the year 9999 ends before it): `ssh-keygen` cannot read the
/// date Git would pass it for a later one, so Git refuses such a commit.
pub const MAX_COMMITTER_TIME: i64 = 253_402_300_799;

#[cfg(feature = "signatures")]
impl SignedCommit {
    /// Splits the raw commit object `object` (without the `commit <len>\0` prefix) of a
    /// repository whose ids are `hex_len` hex digits (40: SHA-1, 64: SHA-256), as Git's
    /// `parse_buffer_signed_by_header` does: the signature is the value of the repository's
    /// signature header (`gpgsig`; `gpgsig-sha256` in a SHA-256 repository), and the payload is
    /// the object without *every* header line whose name starts with `gpgsig` (the other hash's
    /// signature too) and their continuation lines. The committer time is the first committer's,
    /// read as Git's `split_ident_line` reads it (the digits after the last `>`, then a time zone).
    ///
    /// Stricter than Git where Git's reading is not one signature over one payload: a second
    /// signature header of the repository's kind (Git concatenates them and the verifier reads
    /// the first), a second `committer` header, no committer time, or one outside
    /// `1..=`[`MAX_COMMITTER_TIME`] (Git would judge time 0 as "now") refuse the commit.
    pub fn parse(object: &[u8], hex_len: usize) -> Result<SignedCommit, &'static str> {
        let field: &[u8] = if hex_len == 64 {
            b"gpgsig-sha256"
        } else {
            b"gpgsig"
        };
        let mut signature: Option<Vec<u8>> = None;
        let mut payload = Vec::with_capacity(object.len());
        let mut committer: Option<&[u8]> = None;
        // The header whose continuation lines follow: ours (kept), another signature (dropped).
        let (mut in_signature, mut in_other) = (false, false);
        let mut offset = 0;
        for line in object.split_inclusive(|&b| b == b'\n') {
            offset += line.len();
            if line == b"\n" {
                // The blank line: the rest is the message, kept whole.
                payload.extend_from_slice(&object[offset - 1..]);
                break;
            }
            if line.first() == Some(&b' ') {
                if in_signature {
                    let sig = signature.get_or_insert_with(Vec::new);
                    sig.push(b'\n');
                    sig.extend_from_slice(trim_newline(&line[1..]));
                    continue;
                }
                if in_other {
                    continue;
                }
            }
            (in_signature, in_other) = (false, false);
            if line
                .strip_prefix(field)
                .is_some_and(|rest| rest.first() == Some(&b' '))
            {
                if signature.is_some() {
                    return Err("the commit has two signature headers");
                }
                signature = Some(trim_newline(&line[field.len() + 1..]).to_vec());
                in_signature = true;
                continue;
            }
            if line.starts_with(b"gpgsig") {
                in_other = true;
                continue;
            }
            if let Some(rest) = line.strip_prefix(b"committer ")
                && committer.replace(trim_newline(rest)).is_some()
            {
                return Err("the commit has two committer headers");
            }
            payload.extend_from_slice(line);
        }
        let committed_at = committer
            .and_then(ident_time)
            .ok_or("the commit object has no committer time")?;
        if !(1..=MAX_COMMITTER_TIME).contains(&committed_at) {
            return Err("the committer time is not between 1970 and the year 9999");
        }
        Ok(SignedCommit {
            signature,
            payload,
            committed_at,
        })
    }
}

#[cfg(feature = "signatures")]
/// The time of an ident (`Name <mail> 1700000000 +0100`), read as Git's `split_ident_line`: after
/// the last `>`, spaces, one or more digits, spaces, then `+` or `-` and digits; `None` when it
/// is not there (or does not fit).
fn ident_time(ident: &[u8]) -> Option<i64> {
    let after = &ident[ident.iter().rposition(|&b| b == b'>')? + 1..];
    let after = trim_ascii_spaces(after);
    let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
    let zone = trim_ascii_spaces(&after[digits..]);
    let zone_digits = zone
        .get(1..)
        .map_or(0, |z| z.iter().take_while(|b| b.is_ascii_digit()).count());
    if digits == 0 || !matches!(zone.first(), Some(b'+' | b'-')) || zone_digits == 0 {
        return None;
    }
    std::str::from_utf8(&after[..digits]).ok()?.parse().ok()
}

#[cfg(feature = "signatures")]
/// `bytes` without the white space it starts with (Git's `isspace`: space, tab, CR, LF).
fn trim_ascii_spaces(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

#[cfg(feature = "signatures")]
/// The object id of the commit object `object`: SHA-1 (40 hex digits) or SHA-256 (64) of
/// `commit <len>\0` and the object, lowercase hex.
pub fn commit_object_id(object: &[u8], hex_len: usize) -> String {
    let header = format!("commit {}\0", object.len());
    if hex_len == 64 {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        hasher.update(header.as_bytes());
        hasher.update(object);
        hex(&hasher.finalize())
    } else {
        use sha1::Digest as _;
        let mut hasher = sha1::Sha1::new();
        hasher.update(header.as_bytes());
        hasher.update(object);
        hex(&hasher.finalize())
    }
}

/// Checks the signature of the raw commit object `object`, whose id must be `commit`, against
/// `policy`.
#[cfg(feature = "signatures")]
pub fn verify_commit_object(
    commit: &str,
    object: &[u8],
    policy: &TrustPolicy,
) -> Result<Signer, SignatureError> {
    let invalid = |reason: &str| SignatureError::Invalid {
        commit: commit.to_owned(),
        reason: reason.to_owned(),
    };
    if commit_object_id(object, commit.len()) != commit {
        return Err(invalid(
            "the recorded commit object is not the pinned commit",
        ));
    }
    let parts = SignedCommit::parse(object, commit.len()).map_err(invalid)?;
    verify(
        commit,
        parts.signature.as_deref(),
        &parts.payload,
        parts.committed_at,
        policy,
    )
}

/// A build without the `signatures` feature holds no trust policy (its type has no value), so
/// this is never called: the descriptor check refused the source's `verify` already.
#[cfg(not(feature = "signatures"))]
pub fn verify_commit_object(
    _commit: &str,
    _object: &[u8],
    policy: &TrustPolicy,
) -> Result<Signer, SignatureError> {
    policy.unreachable()
}

#[cfg(feature = "signatures")]
fn trim_newline(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

#[cfg(feature = "signatures")]
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNED: &[u8] = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@e> 1700000000 +0000\ncommitter C <c@e> 1700000123 +0100\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n\nmessage\n\nbody\n";

    #[test]
    fn the_payload_is_the_object_without_the_signature_header() {
        let parts = SignedCommit::parse(SIGNED, 40).expect("a commit");
        assert_eq!(
            parts.signature.as_deref(),
            Some(&b"-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----"[..])
        );
        assert_eq!(
            parts.payload,
            b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@e> 1700000000 +0000\ncommitter C <c@e> 1700000123 +0100\n\nmessage\n\nbody\n"
        );
        assert_eq!(parts.committed_at, 1_700_000_123);
        // A SHA-256 repository signs under another header: there the commit is unsigned, and
        // Git still leaves the SHA-1 signature out of the payload.
        let other = SignedCommit::parse(SIGNED, 64).expect("a commit");
        assert_eq!(other.signature, None);
        assert_eq!(other.payload, parts.payload);
        // A `gpgsig` line in the message is not a header.
        let in_message = b"tree 4b82\ncommitter C <c@e> 5 +0000\n\ngpgsig not a header\n";
        assert_eq!(
            SignedCommit::parse(in_message, 40)
                .expect("a commit")
                .signature,
            None
        );
        assert!(SignedCommit::parse(b"tree 4b82\n\nno committer\n", 40).is_err());
    }

    #[test]
    fn the_payload_drops_every_signature_header_as_git_does() {
        // A SHA-256 signature beside the SHA-1 one, with its continuation lines: both are out of
        // the payload, and the SHA-1 one is the signature.
        let both = b"tree 4b82\ncommitter C <c@e> 5 +0000\ngpgsig-sha256 -----BEGIN X-----\n other\n -----END X-----\ngpgsig A\n B\nmergetag object 1\n continued\ngpgsigfoo bar\n\nmessage\n gpgsig in the message\n";
        let parts = SignedCommit::parse(both, 40).expect("a commit");
        assert_eq!(parts.signature.as_deref(), Some(&b"A\nB"[..]));
        assert_eq!(
            parts.payload,
            b"tree 4b82\ncommitter C <c@e> 5 +0000\nmergetag object 1\n continued\n\nmessage\n gpgsig in the message\n"
        );
        let parts = SignedCommit::parse(both, 64).expect("a commit");
        assert_eq!(
            parts.signature.as_deref(),
            Some(&b"-----BEGIN X-----\nother\n-----END X-----"[..])
        );
        // A blank first line: everything is message, there is no header at all.
        let blank = b"\ncommitter C <c@e> 5 +0000\ngpgsig A\n";
        assert!(
            SignedCommit::parse(blank, 40).is_err(),
            "no committer header"
        );
    }

    #[test]
    fn ambiguous_commits_are_refused() {
        for (object, why) in [
            (
                &b"tree 4b82\ncommitter C <c@e> 5 +0000\ngpgsig A\ngpgsig B\n\nm\n"[..],
                "two signature headers",
            ),
            (
                b"tree 4b82\ncommitter C <c@e> 5 +0000\ncommitter C <c@e> 6 +0000\n\nm\n",
                "two committer headers",
            ),
            (
                b"tree 4b82\ncommitter C <c@e> 0 +0000\n\nm\n",
                "between 1970",
            ),
            (
                b"tree 4b82\ncommitter C <c@e> 253402300800 +0000\n\nm\n",
                "between 1970",
            ),
            // Git reads no time from these (no digits right after `>`, no zone): neither do we.
            (
                b"tree 4b82\ncommitter C <c@e> +5 +0000\n\nm\n",
                "no committer time",
            ),
            (
                b"tree 4b82\ncommitter C <c@e> -5 +0000\n\nm\n",
                "no committer time",
            ),
            (
                b"tree 4b82\ncommitter C <c@e> 5\n\nm\n",
                "no committer time",
            ),
            (
                b"tree 4b82\ncommitter C <c@e> 5 0000\n\nm\n",
                "no committer time",
            ),
        ] {
            let err = SignedCommit::parse(object, 40).expect_err(why);
            assert!(err.contains(why), "{err}");
        }
        // Git's reading: the digits after the last `>`, spaces around them.
        let odd = b"tree 4b82\ncommitter C <c@e> x> \t 17 \t-0100\n\nm\n";
        assert_eq!(
            SignedCommit::parse(odd, 40).expect("a commit").committed_at,
            17
        );
    }

    #[test]
    fn object_ids_are_git_s() {
        // Regenerate: printf '<the object>' | git hash-object -t commit --stdin (SHA-1); the
        // SHA-256 one is hashlib.sha256(b"commit %d\0" % len(o) + o) in Python.
        let object = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@e> 0 +0000\ncommitter A <a@e> 0 +0000\n\nm\n";
        assert_eq!(
            commit_object_id(object, 40),
            "fa4c43f278a59f66ffe26acd5d301ca5e367e70f"
        );
        assert_eq!(
            commit_object_id(object, 64),
            "b5cc79fefdcae225e1e7b9428b4be9b667704d84c42e935a00ac787d7841e34f"
        );
    }
}
