//! OpenPGP commit signatures (`-----BEGIN PGP SIGNATURE-----`), verified with the `pgp` crate
//! against the keyring of the source's `openpgp_keys`, as gpg would judge them and never more
//! leniently: exactly one binary or text signature; made by a primary key flagged for signing, or
//! by a subkey whose newest binding carries the signing flag and a back-signature that verifies;
//! by a key valid (not revoked, created, not expired) at the signature's creation time, at the
//! committer time and now. [`verify`] reads as those steps; the parent module names the commit
//! and the keyring in the refusal ([`OpenPgpRefusal`]).

use pgp::composed::{Deserializable as _, DetachedSignature, SignedPublicKey, SignedPublicSubKey};
use pgp::types::KeyDetails as _;

use crate::trust::commit::policy::{OpenPgpKeys, Signer};

/// Why an OpenPGP signature is refused (the parent module adds the commit and the keyring).
pub(super) enum OpenPgpRefusal {
    /// The signature cannot be read, is not one signature over data, or does not verify with
    /// the listed key that issued it: why (`signature_invalid`).
    Invalid(String),
    /// A signature by a key the keyring does not hold, or holds but does not allow to sign then
    /// (`signer_not_allowed`).
    NotAllowed {
        /// The signing key's fingerprint (or key id, or `an unnamed key`).
        fingerprint: String,
        /// Why it is not allowed.
        reason: String,
    },
}

/// Verifies the armored signature `text` over `payload`, committed at Unix time `committed_at`,
/// against the keyring `keys`: the one signature of the block, by the first key of the keyring
/// (a primary key, then its subkeys, in order) it verifies with, which must then be allowed to
/// sign at every time that matters.
pub(super) fn verify(
    text: &str,
    payload: &[u8],
    committed_at: i64,
    keys: &OpenPgpKeys,
) -> Result<Signer, OpenPgpRefusal> {
    let sig = read_signature(text).map_err(OpenPgpRefusal::Invalid)?;
    let signed_at = sig.signature.created().map(|t| i64::from(t.as_secs()));
    let issuers = Issuers::of(&sig);
    let mut issuer_listed = false;
    for key in &keys.keys {
        for ((fingerprint, id), verified, subkey) in verdicts(key, &sig, payload) {
            if verified {
                if let Err(reason) = may_sign_then(key, subkey, signed_at, committed_at) {
                    return Err(OpenPgpRefusal::NotAllowed {
                        fingerprint,
                        reason,
                    });
                }
                return Ok(Signer {
                    format: "openpgp".into(),
                    principal: principal(key),
                    fingerprint,
                });
            }
            issuer_listed |= issuers.name(&fingerprint, &id);
        }
    }
    Err(issuers.unverified(issuer_listed))
}

/// The one signature over data in the armored block `text`, or why there is none.
// A `String`: the reason of a `signature_invalid` refusal, only shown.
fn read_signature(text: &str) -> Result<DetachedSignature, String> {
    let (signatures, _) = DetachedSignature::from_armor_many(text.as_bytes())
        .map_err(|e| format!("the OpenPGP signature cannot be read: {}", pgp_reason(&e)))?;
    let signatures = signatures
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the OpenPGP signature cannot be read: {}", pgp_reason(&e)))?;
    // gpg reports each signature of the block, and Git refuses more than one status.
    let [sig] = <[_; 1]>::try_from(signatures).map_err(|signatures| {
        format!(
            "the armored block holds {} signatures, not one",
            signatures.len()
        )
    })?;
    // A commit is signed as binary data (0x00); gpg also reads text signatures (0x01) over data,
    // and nothing else.
    if !matches!(
        sig.signature.typ(),
        Some(pgp::packet::SignatureType::Binary | pgp::packet::SignatureType::Text)
    ) {
        return Err(format!(
            "it is not a signature over data (its type is {:?})",
            sig.signature.typ()
        ));
    }
    Ok(sig)
}

/// Who a signature says issued it: the issuer fingerprints and key ids of its subpackets, in
/// uppercase hex.
struct Issuers {
    fingerprints: Vec<String>,
    key_ids: Vec<String>,
}

impl Issuers {
    fn of(sig: &DetachedSignature) -> Issuers {
        let fingerprints: Vec<String> = sig
            .signature
            .issuer_fingerprint()
            .iter()
            .map(|f| format!("{f:X}"))
            .collect();
        let key_ids: Vec<String> = sig
            .signature
            .issuer_key_id()
            .iter()
            .map(|k| hex_upper(k.as_ref()))
            .collect();
        Issuers {
            fingerprints,
            key_ids,
        }
    }

    /// Whether the key of `fingerprint` and key id `id` is named an issuer.
    fn name(&self, fingerprint: &String, id: &String) -> bool {
        self.fingerprints.contains(fingerprint) || self.key_ids.contains(id)
    }

    /// The refusal of a signature no key of the keyring verifies: invalid when a listed key
    /// issued it (`issuer_listed`), otherwise made by a key not in the keyring.
    fn unverified(self, issuer_listed: bool) -> OpenPgpRefusal {
        if issuer_listed {
            return OpenPgpRefusal::Invalid(
                "it does not verify with the listed key that issued it".into(),
            );
        }
        OpenPgpRefusal::NotAllowed {
            fingerprint: self
                .fingerprints
                .first()
                .or(self.key_ids.first())
                .cloned()
                .unwrap_or_else(|| "an unnamed key".into()),
            reason: "the key is not in the keyring".into(),
        }
    }
}

/// The user ID `key` is shown by: its first (empty if it has none).
fn principal(key: &SignedPublicKey) -> String {
    key.details
        .users
        .first()
        .map(|u| String::from_utf8_lossy(u.id.id()).into_owned())
        .unwrap_or_default()
}

/// Each key of `key` that may have made `sig` over `payload` — the primary key, then its
/// subkeys in order — with its fingerprint and key id (uppercase hex), whether `sig` verifies
/// with it, and the subkey (`None`: the primary key).
fn verdicts<'k>(
    key: &'k SignedPublicKey,
    sig: &'k DetachedSignature,
    payload: &'k [u8],
) -> impl Iterator<Item = ((String, String), bool, Option<&'k SignedPublicSubKey>)> + 'k {
    let primary = (
        format!("{:X}", key.fingerprint()),
        hex_upper(key.legacy_key_id().as_ref()),
    );
    std::iter::once((primary, sig.verify(key, payload).is_ok(), None)).chain(
        key.public_subkeys.iter().map(move |sub| {
            (
                (
                    format!("{:X}", sub.key.fingerprint()),
                    hex_upper(sub.key.legacy_key_id().as_ref()),
                ),
                sig.verify(sub, payload).is_ok(),
                Some(sub),
            )
        }),
    )
}

/// Whether `key` (or its `subkey`), which verified the signature, may make data signatures and
/// could sign at the signature's creation time `signed_at`, at the committer time
/// `committed_at` and now.
// A `String`: the reason of a `signer_not_allowed` refusal, only shown.
fn may_sign_then(
    key: &SignedPublicKey,
    subkey: Option<&SignedPublicSubKey>,
    signed_at: Option<i64>,
    committed_at: i64,
) -> Result<(), String> {
    let may_sign = match subkey {
        None => primary_may_sign(key),
        Some(subkey) => subkey_may_sign(key, subkey),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    // gpg judges the key at the signature's time and now; Git's committer time is judged too
    // (the stricter of all three).
    may_sign.and_then(|()| {
        signed_at
            .ok_or_else(|| "the signature has no creation time".to_owned())
            .and_then(|signed_at| {
                [committed_at, signed_at, now]
                    .into_iter()
                    .try_for_each(|at| openpgp_valid_at(key, subkey, at))
            })
    })
}

/// Whether the primary key of `key` may make data signatures, as gpg decides it (`ERRSIG … 125`,
/// wrong key usage, otherwise): its current self-signatures (the newest of each user ID, and the
/// newest direct-key signature) carry key flags, and every one that does has the signing flag. A
/// key whose self-signatures carry no key flags is refused (gpg would fall back on what the
/// algorithm can do: stricter, and documented).
// A `String`: the reason of a `signer_not_allowed` refusal, only shown.
fn primary_may_sign(key: &pgp::composed::SignedPublicKey) -> Result<(), String> {
    let newest = |signatures: &[pgp::packet::Signature]| {
        signatures
            .iter()
            .max_by_key(|s| s.created().map(|t| t.as_secs()))
            .cloned()
    };
    let current: Vec<pgp::packet::Signature> = key
        .details
        .users
        .iter()
        .filter_map(|u| newest(&u.signatures))
        .chain(newest(&key.details.direct_signatures))
        .collect();
    let flagged: Vec<_> = current.iter().filter(|s| has_key_flags(s)).collect();
    if flagged.is_empty() {
        return Err(
            "the primary key's self-signatures carry no key flags, so it is not flagged for signing"
                .into(),
        );
    }
    if let Some(unflagged) = flagged.iter().find(|s| !s.key_flags().sign()) {
        return Err(format!(
            "the primary key is not flagged for signing (its key flags: {})",
            flag_names(&unflagged.key_flags())
        ));
    }
    Ok(())
}

/// Whether `subkey` of `key` may make data signatures, as gpg decides it: its newest binding
/// signature carries the signing flag and a primary-key binding signature (0x19, the
/// "back-signature") made by the subkey that verifies.
// A `String`: the reason of a `signer_not_allowed` refusal, only shown.
fn subkey_may_sign(
    key: &pgp::composed::SignedPublicKey,
    subkey: &pgp::composed::SignedPublicSubKey,
) -> Result<(), String> {
    let Some(binding) = subkey
        .signatures
        .iter()
        .filter(|s| s.typ() == Some(pgp::packet::SignatureType::SubkeyBinding))
        .max_by_key(|s| s.created().map(|t| t.as_secs()))
    else {
        return Err("the signing subkey has no binding signature".into());
    };
    if !has_key_flags(binding) || !binding.key_flags().sign() {
        return Err(format!(
            "the subkey is not flagged for signing (its key flags: {})",
            flag_names(&binding.key_flags())
        ));
    }
    let Some(back) = binding.embedded_signature() else {
        return Err("the signing subkey has no back-signature (0x19) in its binding".into());
    };
    back.verify_primary_key_binding(&subkey.key, &key.primary_key)
        .map_err(|e| {
            format!(
                "the signing subkey's back-signature does not verify: {}",
                pgp_reason(&e)
            )
        })
}

/// Whether signature `sig` carries a key-flags subpacket in its hashed area.
fn has_key_flags(sig: &pgp::packet::Signature) -> bool {
    sig.config().is_some_and(|c| {
        c.hashed_subpackets()
            .any(|p| matches!(p.data, pgp::packet::SubpacketData::KeyFlags(_)))
    })
}

/// `certify, encrypt` — the flags a key carries, for messages.
fn flag_names(flags: &pgp::packet::KeyFlags) -> String {
    let names: Vec<&str> = [
        (flags.certify(), "certify"),
        (flags.sign(), "sign"),
        (flags.encrypt_comms(), "encrypt communications"),
        (flags.encrypt_storage(), "encrypt storage"),
        (flags.authentication(), "authenticate"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Whether OpenPGP `key` (or its `subkey`) could sign at Unix time `at`, judged from the
/// self-signatures of the keyring as `gpg` judges a key: not when the primary key or the subkey
/// is revoked (at any time: a revocation says the key can no longer be trusted, and may be
/// backdated), and not before the key was created or after the expiry its newest self-signature
/// sets (a subkey: its newest binding, and the primary key's expiry too).
// A `String`: the reason of a `signer_not_allowed` refusal, only shown.
fn openpgp_valid_at(
    key: &pgp::composed::SignedPublicKey,
    subkey: Option<&pgp::composed::SignedPublicSubKey>,
    at: i64,
) -> Result<(), String> {
    use pgp::packet::SignatureType;

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
// A `String`: the reason of a `signer_not_allowed` refusal, only shown.
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

/// `bytes` in uppercase hex, as gpg shows key ids.
fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// What an OpenPGP library error says, for a refusal's message: its first line only (the
/// library's errors may carry a captured backtrace after it), at most 200 characters.
fn pgp_reason(error: &dyn std::fmt::Display) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default();
    match first.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &first[..at]),
        None => first.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_library_error_is_quoted_by_its_first_line_and_bounded() {
        let long = format!("{}\n   0: backtrace frame", "x".repeat(300));
        let reason = super::pgp_reason(&long);
        assert_eq!(reason, format!("{}…", "x".repeat(200)));
        assert_eq!(super::pgp_reason(&"short\nframes"), "short");
    }
}
