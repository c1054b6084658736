//! The keys a trust policy names and the key that signs: an allowed-signers file of SSH keys
//! ([`allowed_signers`], with OpenSSH's [`pattern`] lists, read through [`key_file`]), the public
//! keys a cosign signature is checked with ([`public_key`]: PEM SubjectPublicKeyInfo of ECDSA,
//! Ed25519 or RSA), PEM blocks as signature material carries them ([`pem`]), and cosign's private
//! key file that `push --sign-key` signs with ([`signing_key`]). The OpenPGP keyring of a Git
//! source is [`crate::trust::commit::policy::OpenPgpKeys`].

#[cfg(feature = "signatures")]
pub mod allowed_signers;
#[cfg(feature = "signatures")]
pub mod key_file;
#[cfg(feature = "signatures")]
pub mod pattern;
pub mod pem;
pub mod public_key;
#[cfg(feature = "oci")]
pub mod signing_key;
