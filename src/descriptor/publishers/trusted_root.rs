//! The Sigstore trusted root (`verify.sigstore.trusted_root`; the protobuf-specs
//! `TrustedRoot` message as JSON, media type `application/vnd.dev.sigstore.trustedroot+json;version=0.1`):
//! the Fulcio certificate authorities (each a chain and a validity window) and the transparency
//! logs' keys (each with its log id and validity window). Read with the descriptor, bounded;
//! timestamp authorities and CT logs are read past, not used (see docs/security.md).

use std::path::Path;

/// One Fulcio certificate authority.
#[derive(Debug, Clone)]
pub struct CertificateAuthority {
    /// Its chain, DER, leaf-most first (the last is the root).
    pub chain: Vec<Vec<u8>>,
    /// Valid from (Unix seconds).
    pub valid_from: i64,
    /// Valid until (Unix seconds), if it ends.
    pub valid_until: Option<i64>,
}

/// One transparency log's key.
#[derive(Debug, Clone)]
pub struct LogKey {
    /// The log id (SHA-256 of the key's DER SubjectPublicKeyInfo, as Rekor names it).
    pub log_id: Vec<u8>,
    /// The key.
    pub key: super::key::PublicKey,
    /// Valid from (Unix seconds).
    pub valid_from: i64,
    /// Valid until (Unix seconds), if it ends.
    pub valid_until: Option<i64>,
}

/// A parsed trusted root.
#[derive(Debug, Clone)]
pub struct TrustedRoot {
    /// The Fulcio certificate authorities.
    pub authorities: Vec<CertificateAuthority>,
    /// The transparency logs' keys.
    pub logs: Vec<LogKey>,
}

impl TrustedRoot {
    /// Parses a trusted root's JSON; the error names the rule broken.
    pub fn parse(json: &[u8]) -> Result<TrustedRoot, String> {
        let _ = json;
        Err("not implemented yet".to_owned())
    }

    /// Reads and parses the file at `path` (bounded).
    pub fn read(path: &Path) -> Result<TrustedRoot, String> {
        let _ = path;
        Err("not implemented yet".to_owned())
    }
}
