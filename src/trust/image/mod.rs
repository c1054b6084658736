//! "Was this image published by an allowed identity or key": the signature material a registry
//! holds for a pinned manifest digest ([`material`], fetched by
//! [`crate::source::oci::publisher`]), read ([`cosign_v2`], [`bundle`], [`simple_signing`],
//! [`dsse`]) and judged against a source's [`PublisherPolicy`] ([`verify`]): a key signature
//! ([`crate::trust::keys::public_key`]), or a Fulcio certificate chaining to the trusted root at
//! the signing time ([`crate::trust::x509::certificate`]) with a transparency-log entry its log
//! keys vouch for ([`crate::trust::tlog`]), offline. Any one signature that binds the pinned
//! digest and verifies suffices, as cosign decides; the [`verdict`](crate::trust::verdict) says
//! who signed, or why each signature did not count. The policy's types are [`policy`]'s.

pub mod bundle;
#[cfg(test)]
mod conformance_tests;
pub mod cosign_v2;
pub mod dsse;
pub mod keyless;
pub mod material;
pub mod policy;
#[cfg(test)]
mod sigstore_python_tests;
pub mod simple_signing;

use crate::trust::verdict::{Rejected, Verdict, Verified};
use material::SignatureMaterial;
use policy::PublisherPolicy;

/// Judges `material` for the image pinned at `pinned` (`sha256:<hex>`) against `policy`, at no
/// network: the first signature (in `material`'s order) that binds `pinned` and verifies under
/// a configured key or identity decides. When none does, every signature's rejection is
/// returned, the referrers the fetch skipped last (`unreadable`): an image whose only
/// signatures could not be read is refused as one no signature satisfies.
pub fn verify(material: &SignatureMaterial, pinned: &str, policy: &PublisherPolicy) -> Verdict {
    let mut rejected = Vec::new();
    for signature in &material.cosign {
        match cosign_v2::judge(signature, pinned, policy) {
            Ok(signer) => {
                return Ok(Verified {
                    signer,
                    material: SignatureMaterial {
                        cosign: vec![signature.clone()],
                        ..SignatureMaterial::default()
                    },
                });
            }
            Err((rejection, detail)) => rejected.push(Rejected {
                found_at: signature.found_at.clone(),
                rejection,
                detail,
            }),
        }
    }
    for bundle in &material.bundles {
        match bundle::judge(bundle, pinned, policy) {
            Ok(signer) => {
                return Ok(Verified {
                    signer,
                    material: SignatureMaterial {
                        bundles: vec![bundle.clone()],
                        ..SignatureMaterial::default()
                    },
                });
            }
            Err((rejection, detail)) => rejected.push(Rejected {
                found_at: bundle.found_at.clone(),
                rejection,
                detail,
            }),
        }
    }
    rejected.extend(material.skipped.iter().map(Rejected::from));
    Err(rejected)
}
