//! The signature of a pinned commit, checked in-process against the source's trust policy
//! (`verify:` in the descriptor), without the `git`, `ssh-keygen` or `gpg` programs.
//!
//! The signed payload is the commit object without its `gpgsig` header, exactly as Git signs it.
//! SSH signatures (`-----BEGIN SSH SIGNATURE-----`, Git's `gpg.format = ssh`) are verified with
//! the `ssh-key` crate's SSHSIG support in the `git` namespace; the signing key must be listed in
//! the allowed-signers file with that namespace allowed and the committer time inside its
//! validity window (Git judges the window by the committer time too). The verdict:
//! unsigned → `signature_missing`; a signature that does not verify over the payload →
//! `signature_invalid`; a valid signature by a key not allowed → `signer_not_allowed`; X.509 and
//! OpenPGP signatures → `signature_unsupported` — never accepted silently.

use crate::descriptor::signers::{AllowedSigners, Signer};
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
        /// `an X.509`, `an OpenPGP`, `an unknown`.
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
/// `signers`.
pub fn verify(
    commit: &str,
    signature: Option<&[u8]>,
    payload: &[u8],
    committed_at: i64,
    signers: &AllowedSigners,
) -> Result<Signer, SignatureError> {
    let commit = commit.to_owned();
    let Some(signature) = signature else {
        return Err(SignatureError::Missing { commit });
    };
    let text = String::from_utf8_lossy(signature);
    let text = text.trim_start();
    let format = if text.starts_with("-----BEGIN SSH SIGNATURE-----") {
        None
    } else if text.starts_with("-----BEGIN PGP SIGNATURE-----") {
        Some("an OpenPGP")
    } else if text.starts_with("-----BEGIN SIGNED MESSAGE-----")
        || text.starts_with("-----BEGIN PKCS7-----")
        || text.starts_with("-----BEGIN CMS-----")
    {
        Some("an X.509")
    } else {
        Some("an unknown")
    };
    if let Some(format) = format {
        return Err(SignatureError::Unsupported { commit, format });
    }
    let sig = ssh_key::SshSig::from_pem(text.trim_end().as_bytes()).map_err(|e| {
        SignatureError::Invalid {
            commit: commit.clone(),
            reason: format!("the SSH signature cannot be read: {e}"),
        }
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
