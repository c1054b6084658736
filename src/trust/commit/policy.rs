//! Who may sign a pinned commit: an allowed-signers file in the format of Git's
//! `gpg.ssh.allowedSignersFile` (OpenSSH's `ssh-keygen -Y verify -f`), parsed and checked when the
//! descriptor is checked, so a malformed line refuses the descriptor with its line number.
//!
//! Each line that is neither blank nor a `#` comment holds: comma-separated principals (patterns
//! with `*` and `?`), optional comma-separated options, the key type and its base64 data, and an
//! optional comment. Options: `namespaces="…"` (a pattern list the signature's namespace must
//! match), `valid-after="…"` and `valid-before="…"` (`YYYYMMDD`, `YYYYMMDDHHMM` or
//! `YYYYMMDDHHMMSS`, optionally followed by `Z`; read as UTC — a deviation from `ssh-keygen`, which
//! reads times without `Z` in the local time zone; the committer time of the commit is judged
//! against them, as Git does), and `cert-authority` (a certificate authority: certificates are not
//! supported, so such a line never allows a signature). Option names are case-insensitive, as in
//! `ssh-keygen`. A line `ssh-keygen` would skip refuses the whole file here (stricter: the file's
//! author learns of it from `skillfold check`): an unknown option, an option given twice
//! (`ssh-keygen`: "multiple … clauses"), `valid-before` not after `valid-after`, a time at the Unix
//! epoch, a backslash in the options, or a NUL byte anywhere.
//!
//! Principals and namespaces are pattern lists, as OpenSSH's `match_pattern_list` reads them
//! (`pattern`: `*`, `?`, `!` negation; see
//! [`match_pattern_list`](crate::trust::keys::pattern::match_pattern_list)).
//!
//! Which line decides, exactly as `git verify-commit` decides with `ssh-keygen`
//! ([`AllowedSigners::allowing`]): Git first asks `ssh-keygen -Y find-principals` for the
//! principals of the *first* line listing the key that is valid at the committer time (its
//! namespaces are not looked at), then, for each of those principals in turn, `ssh-keygen -Y
//! verify -I principal -n git` looks for the first line whose principal patterns match the
//! principal, that lists the key, allows the `git` namespace and is valid at that time. So one key
//! on two lines, first for another namespace under another principal, is refused.
//!
//! The key files are read only with the cargo feature `signatures` ([`SUPPORTED`]); without it
//! [`TrustPolicy`] has no value and `verify:` is refused ([`unsupported`]).
//!
//! This module holds the policy ([`TrustPolicy`], [`Signer`]) and the OpenPGP keyring
//! ([`OpenPgpKeys`]); [`crate::trust::keys::allowed_signers`] the allowed-signers file and the
//! line that decides, [`crate::trust::keys::pattern`] OpenSSH's pattern lists,
//! [`crate::trust::keys::key_file`] the bounded read of a key file and its error.

#[cfg(feature = "signatures")]
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[cfg(feature = "signatures")]
use crate::trust::keys::allowed_signers::AllowedSigners;
#[cfg(feature = "signatures")]
use crate::trust::keys::key_file::{SignersError, SignersRefusal, read_bounded};

/// Who signed a verified commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signer {
    /// `ssh`.
    pub format: String,
    /// The principals of the allowed-signers line that allowed the key.
    pub principal: String,
    /// The key's fingerprint (`SHA256:…`).
    pub fingerprint: String,
}

#[cfg(feature = "signatures")]
/// A source's trust policy: the keys that may sign its pinned commit.
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// SSH keys (`verify.allowed_signers`).
    pub ssh: Option<AllowedSigners>,
    /// OpenPGP keys (`verify.openpgp_keys`).
    pub openpgp: Option<OpenPgpKeys>,
}

/// A source's trust policy in a build without the `signatures` feature: a type with no value, so
/// no code path of such a build can hold a policy, let alone judge a signature by one. The
/// descriptor check refuses every `verify:` instead ([`unsupported`]).
#[cfg(not(feature = "signatures"))]
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    never: std::convert::Infallible,
}

#[cfg(not(feature = "signatures"))]
impl TrustPolicy {
    /// Never returns: no policy exists in this build.
    pub fn unreachable(&self) -> ! {
        match self.never {}
    }
}

/// Whether this build verifies commit signatures (the cargo feature `signatures`).
pub const SUPPORTED: bool = cfg!(feature = "signatures");

/// Why `verify` (or `pin`'s key options) cannot be honoured by a build without signature support:
/// the commit's signature could not be checked, so the source is refused rather than accepted
/// unchecked.
pub fn unsupported(what: &str) -> String {
    format!(
        "{what} requires commit signature support, which this build of skillfold lacks (built \
         without the cargo feature `signatures`): the commit's signature cannot be checked, so the \
         source is refused; use a build with the feature (the default)"
    )
}

#[cfg(feature = "signatures")]
/// An armored OpenPGP keyring (`verify.openpgp_keys`): public keys whose self-signatures and
/// subkey bindings verify.
#[derive(Debug, Clone)]
pub struct OpenPgpKeys {
    /// The file it was read from.
    pub path: PathBuf,
    /// The keys.
    pub keys: Vec<pgp::composed::SignedPublicKey>,
}

#[cfg(feature = "signatures")]
impl OpenPgpKeys {
    /// Reads the armored public keys in `path` (at most
    /// [`MAX_SIGNERS_BYTES`](crate::trust::keys::key_file::MAX_SIGNERS_BYTES)); a key whose
    /// bindings do not verify refuses the file.
    pub fn read(path: &Path) -> Result<OpenPgpKeys, SignersError> {
        use pgp::composed::Deserializable as _;
        use pgp::types::KeyDetails as _;

        let error = |refusal: SignersRefusal| SignersError {
            path: path.to_owned(),
            line: None,
            refusal,
        };
        let bytes = read_bounded(path)?;
        let (keys, _) =
            pgp::composed::SignedPublicKey::from_armor_many(&bytes[..]).map_err(|e| {
                error(SignersRefusal::NotArmored {
                    reason: e.to_string(),
                })
            })?;
        let mut out = Vec::new();
        for (i, key) in keys.enumerate() {
            let key = key.map_err(|e| {
                error(SignersRefusal::OpenPgpKey {
                    index: i + 1,
                    reason: e.to_string(),
                })
            })?;
            key.verify_bindings().map_err(|e| {
                error(SignersRefusal::SelfSignatures {
                    index: i + 1,
                    fingerprint: format!("{:X}", key.fingerprint()),
                    reason: e.to_string(),
                })
            })?;
            out.push(key);
        }
        if out.is_empty() {
            return Err(error(SignersRefusal::NoPublicKey));
        }
        Ok(OpenPgpKeys {
            path: path.to_owned(),
            keys: out,
        })
    }
}
