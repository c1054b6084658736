//! The signature of a pinned commit, checked in-process against the source's trust policy
//! (`verify:` in the descriptor), without the `git`, `ssh-keygen` or `gpg` programs — by
//! `prepare` and `pin` on the fetched commit, and by `verify` on the commit object the corpus
//! manifest keeps (after checking that the object's id is the pinned commit).
//!
//! The signed payload is the commit object without its `gpgsig` header (`gpgsig-sha256` in a
//! SHA-256 repository), exactly as Git signs it.
//! SSH signatures (`-----BEGIN SSH SIGNATURE-----`, Git's `gpg.format = ssh`) are verified with
//! the `ssh-key` crate's SSHSIG support in the `git` namespace; the signing key must be listed in
//! the allowed-signers file with that namespace allowed and the committer time inside its
//! validity window (Git judges the window by the committer time too). OpenPGP signatures
//! (`-----BEGIN PGP SIGNATURE-----`) are verified with the `pgp` crate against the keyring of
//! `openpgp_keys`, by a primary key or a subkey whose binding verified when the keyring was read.
//! The verdict: unsigned → `signature_missing`; a signature that does not verify over the
//! payload → `signature_invalid`; a valid signature by a key not allowed (or a format the policy
//! lists no keys for) → `signer_not_allowed`; X.509 signatures → `signature_unsupported` — never
//! accepted silently.

use crate::descriptor::signers::{AllowedSigners, OpenPgpKeys, Signer, TrustPolicy};
use crate::format::escape;
use crate::prepare::code::PrepareCode;

/// The namespace Git signs commits in.
pub const GIT_NAMESPACE: &str = "git";

/// Why a commit's signature is refused.
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

impl SignatureError {
    /// Stable error code.
    pub fn code(&self) -> PrepareCode {
        match self {
            SignatureError::Missing { .. } => PrepareCode::SignatureMissing,
            SignatureError::Invalid { .. } => PrepareCode::SignatureInvalid,
            SignatureError::NotAllowed { .. } => PrepareCode::SignerNotAllowed,
            SignatureError::Unsupported { .. } => PrepareCode::SignatureUnsupported,
        }
    }
}

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
        verify_openpgp(commit, text, payload, committed_at, keys)
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
    let listed: Vec<_> = signers
        .signers
        .iter()
        .filter(|s| !s.cert_authority && s.key.key_data() == sig.public_key())
        .collect();
    match listed
        .iter()
        .find(|s| s.allows(sig.public_key(), GIT_NAMESPACE, committed_at))
    {
        Some(allowed) => Ok(Signer {
            format: "ssh".into(),
            principal: allowed.principals.clone(),
            fingerprint,
        }),
        None => Err(SignatureError::NotAllowed {
            commit,
            fingerprint,
            signers: signers.path.clone(),
            reason: if listed.is_empty() {
                "the key is not listed".into()
            } else {
                format!(
                    "the key is listed (line {}) but not for the `{GIT_NAMESPACE}` namespace at the committer time {committed_at}",
                    listed[0].line
                )
            },
        }),
    }
}

fn verify_openpgp(
    commit: String,
    text: &str,
    payload: &[u8],
    committed_at: i64,
    keys: &OpenPgpKeys,
) -> Result<Signer, SignatureError> {
    use pgp::composed::Deserializable as _;
    use pgp::types::KeyDetails as _;

    let (sig, _) =
        pgp::composed::DetachedSignature::from_armor_single(text.as_bytes()).map_err(|e| {
            SignatureError::Invalid {
                commit: commit.clone(),
                reason: format!("the OpenPGP signature cannot be read: {e}"),
            }
        })?;
    let issuers: Vec<String> = sig
        .signature
        .issuer_fingerprint()
        .iter()
        .map(|f| format!("{f:X}"))
        .collect();
    let issuer_ids: Vec<String> = sig
        .signature
        .issuer_key_id()
        .iter()
        .map(|k| hex_upper(k.as_ref()))
        .collect();
    let mut issuer_listed = false;
    for key in &keys.keys {
        let principal = key
            .details
            .users
            .first()
            .map(|u| String::from_utf8_lossy(u.id.id()).into_owned())
            .unwrap_or_default();
        let primary = (
            format!("{:X}", key.fingerprint()),
            hex_upper(key.legacy_key_id().as_ref()),
        );
        let candidates = std::iter::once((primary, sig.verify(key, payload), None)).chain(
            key.public_subkeys.iter().map(|sub| {
                (
                    (
                        format!("{:X}", sub.key.fingerprint()),
                        hex_upper(sub.key.legacy_key_id().as_ref()),
                    ),
                    sig.verify(sub, payload),
                    Some(sub),
                )
            }),
        );
        for ((fingerprint, id), verdict, subkey) in candidates {
            if verdict.is_ok() {
                if let Err(reason) = openpgp_valid_at(key, subkey, committed_at) {
                    return Err(SignatureError::NotAllowed {
                        commit,
                        fingerprint,
                        signers: keys.path.clone(),
                        reason,
                    });
                }
                return Ok(Signer {
                    format: "openpgp".into(),
                    principal,
                    fingerprint,
                });
            }
            issuer_listed |= issuers.contains(&fingerprint) || issuer_ids.contains(&id);
        }
    }
    if issuer_listed {
        return Err(SignatureError::Invalid {
            commit,
            reason: "it does not verify with the listed key that issued it".into(),
        });
    }
    Err(SignatureError::NotAllowed {
        commit,
        fingerprint: issuers
            .first()
            .or(issuer_ids.first())
            .cloned()
            .unwrap_or_else(|| "an unnamed key".into()),
        signers: keys.path.clone(),
        reason: "the key is not in the keyring".into(),
    })
}

/// Whether OpenPGP `key` (or its `subkey`) could sign at Unix time `at`, judged from the
/// self-signatures of the keyring as `gpg` judges a key: not when the primary key or the subkey
/// is revoked (at any time: a revocation says the key can no longer be trusted, and may be
/// backdated), and not before the key was created or after the expiry its newest self-signature
/// sets (a subkey: its newest binding, and the primary key's expiry too).
fn openpgp_valid_at(
    key: &pgp::composed::SignedPublicKey,
    subkey: Option<&pgp::composed::SignedPublicSubKey>,
    at: i64,
) -> Result<(), String> {
    use pgp::packet::SignatureType;
    use pgp::types::KeyDetails as _;

    if !key.details.revocation_signatures.is_empty() {
        return Err("the primary key was revoked".into());
    }
    let self_signatures = key
        .details
        .users
        .iter()
        .flat_map(|u| &u.signatures)
        .chain(&key.details.direct_signatures)
        .filter(|s| s.is_certification() || s.typ() == Some(SignatureType::Key));
    window(
        "the primary key",
        key.primary_key.created_at().as_secs(),
        self_signatures,
        at,
    )?;
    let Some(subkey) = subkey else {
        return Ok(());
    };
    if subkey
        .signatures
        .iter()
        .any(|s| s.typ() == Some(SignatureType::SubkeyRevocation))
    {
        return Err("the signing subkey was revoked".into());
    }
    let bindings = subkey
        .signatures
        .iter()
        .filter(|s| s.typ() == Some(SignatureType::SubkeyBinding));
    window(
        "the signing subkey",
        subkey.key.created_at().as_secs(),
        bindings,
        at,
    )
}

/// Whether Unix time `at` lies in the validity window of a key created at `created` whose newest
/// of `signatures` sets its expiry (none, or zero: it does not expire).
fn window<'s>(
    what: &str,
    created: u32,
    signatures: impl Iterator<Item = &'s pgp::packet::Signature>,
    at: i64,
) -> Result<(), String> {
    let created = i64::from(created);
    if at < created {
        return Err(format!(
            "{what} was created after the commit (at Unix time {created}, the commit at {at})"
        ));
    }
    let newest = signatures.max_by_key(|s| s.created().map(|t| t.as_secs()));
    let lifetime = newest
        .and_then(|s| s.key_expiration_time())
        .map(|d| i64::from(d.as_secs()))
        .filter(|&secs| secs > 0);
    match lifetime {
        Some(secs) if at >= created.saturating_add(secs) => Err(format!(
            "{what} expired at Unix time {} and the commit was made at {at}",
            created.saturating_add(secs)
        )),
        _ => Ok(()),
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// The parts of a raw commit object a signature check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedCommit {
    /// The `gpgsig` header's value (continuation lines joined), if any.
    pub signature: Option<Vec<u8>>,
    /// The object without that header: what was signed.
    pub payload: Vec<u8>,
    /// The committer time, in Unix seconds.
    pub committed_at: i64,
}

impl SignedCommit {
    /// Splits the raw commit object `object` (without the `commit <len>\0` prefix) of a
    /// repository whose ids are `hex_len` hex digits (40: SHA-1, 64: SHA-256). `None` when the
    /// object has no committer time.
    pub fn parse(object: &[u8], hex_len: usize) -> Option<SignedCommit> {
        let field: &[u8] = if hex_len == 64 {
            b"gpgsig-sha256 "
        } else {
            b"gpgsig "
        };
        let headers_end = find(object, b"\n\n").map_or(object.len(), |i| i + 1);
        let mut signature: Option<Vec<u8>> = None;
        let mut payload = Vec::with_capacity(object.len());
        let mut committed_at = None;
        let mut in_signature = false;
        let mut lines = object[..headers_end].split_inclusive(|&b| b == b'\n');
        for line in lines.by_ref() {
            if in_signature && line.first() == Some(&b' ') {
                let sig = signature.get_or_insert_with(Vec::new);
                sig.push(b'\n');
                sig.extend_from_slice(trim_newline(&line[1..]));
                continue;
            }
            in_signature = false;
            if signature.is_none() && line.starts_with(field) {
                signature = Some(trim_newline(&line[field.len()..]).to_vec());
                in_signature = true;
                continue;
            }
            if let Some(rest) = line.strip_prefix(b"committer ") {
                let rest = String::from_utf8_lossy(trim_newline(rest));
                committed_at = rest
                    .rsplit(' ')
                    .nth(1)
                    .and_then(|seconds| seconds.parse::<i64>().ok());
            }
            payload.extend_from_slice(line);
        }
        payload.extend_from_slice(&object[headers_end..]);
        Some(SignedCommit {
            signature,
            payload,
            committed_at: committed_at?,
        })
    }
}

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
    let parts = SignedCommit::parse(object, commit.len())
        .ok_or_else(|| invalid("the commit object has no committer time"))?;
    verify(
        commit,
        parts.signature.as_deref(),
        &parts.payload,
        parts.committed_at,
        policy,
    )
}

fn trim_newline(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

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
        // A SHA-256 repository signs under another header: this one is payload there.
        let other = SignedCommit::parse(SIGNED, 64).expect("a commit");
        assert_eq!(other.signature, None);
        assert_eq!(other.payload, SIGNED);
        // A `gpgsig` line in the message is not a header.
        let in_message = b"tree 4b82\ncommitter C <c@e> 5 +0000\n\ngpgsig not a header\n";
        assert_eq!(
            SignedCommit::parse(in_message, 40)
                .expect("a commit")
                .signature,
            None
        );
        assert_eq!(
            SignedCommit::parse(b"tree 4b82\n\nno committer\n", 40),
            None
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
