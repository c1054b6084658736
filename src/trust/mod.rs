//! Trust (DESIGN §10 "Trust is one layer"): keys, certificates, transparency logs and the
//! verdicts on commits and images, in one layer that knows nothing of where the bytes came from.
//! It may use only [`crate::support`] and [`crate::format`]; [`crate::descriptor`] reads a
//! source's `verify:` into its types, [`crate::source`] fetches the bytes and asks it,
//! [`crate::distribution`] asks it to sign. It answers three questions:
//!
//! - Was this commit signed by an allowed signer? [`commit::verify_commit_object`] (SSH and
//!   OpenPGP signatures, in-process, feature `signatures`), under a
//!   [`commit::policy::TrustPolicy`].
//! - Was this image published by an allowed identity or key? [`image::verify`], judging the
//!   signature material a registry holds (cosign ≤ v2 layers, Sigstore bundles) under an
//!   [`image::policy::PublisherPolicy`], offline; the answer is a [`verdict::Verdict`].
//! - Sign this image: [`keys::signing_key::SigningKey::sign`] (feature `oci`), with cosign's
//!   private key file.
//!
//! Beneath them: [`keys`] (allowed signers, public keys, PEM, the signing key), [`x509`] (the
//! certificate reader, the Sigstore trusted root, a Fulcio certificate's chain and SCTs),
//! [`tlog`] (transparency-log entries), [`strict_json`] (the JSON reader of signed documents).

pub mod commit;
pub mod image;
pub mod keys;
pub mod strict_json;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tlog;
pub mod verdict;
pub mod x509;
