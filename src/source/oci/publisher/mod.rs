//! Who published an image: the signature material a registry holds for a pinned manifest digest
//! ([`material`], fetched by [`fetch`]: cosign ≤ v2's `sha256-<hex>.sig` manifest and cosign v3's
//! Sigstore bundles, as OCI 1.1 referrers or under the `sha256-<hex>` tag), read ([`cosign_v2`],
//! [`bundle`], [`simple_signing`], [`dsse`]) and judged against a source's
//! [`PublisherPolicy`] ([`verify`]): a key signature ([`crate::descriptor::publishers::key`]),
//! or a Fulcio certificate chaining to the trusted root at the signing time ([`certificate`])
//! with a transparency-log entry its log keys vouch for ([`tlog`]), offline. Any one signature
//! that binds the pinned digest and verifies suffices, as cosign decides; the [`verdict`] says
//! who signed, or why each signature did not count.

pub mod bundle;
pub mod certificate;
#[cfg(test)]
mod conformance_tests;
pub mod cosign_v2;
pub mod dsse;
#[cfg(feature = "oci")]
pub mod fetch;
pub mod keyless;
pub mod material;
pub mod pem;
#[cfg(test)]
mod sigstore_python_tests;
pub mod simple_signing;
pub mod strict_json;
#[cfg(test)]
mod test_support;
pub mod tlog;
pub mod verdict;

pub use verdict::{Refusal, Rejected, Rejection, Signer, Verdict, Verified};

use super::code::DistributionCode;
use crate::descriptor::plan::ImageReference;
use crate::descriptor::publishers::PublisherPolicy;
use material::SignatureMaterial;

/// The signature material the registry holds for `reference`, within `deadline`, with the
/// registry's credentials scoped as for a pull ([`fetch::fetch`]); a build without the registry
/// client refuses (`oci_disabled`).
pub fn fetch_material(
    reference: &ImageReference,
    plain_http: bool,
    deadline: std::time::Duration,
) -> Result<SignatureMaterial, (DistributionCode, String)> {
    #[cfg(feature = "oci")]
    {
        fetch::fetch(&fetch::MaterialRequest {
            reference,
            plain_http,
            deadline,
        })
        .map_err(|e| (e.code, e.message))
    }
    #[cfg(not(feature = "oci"))]
    {
        let _ = (reference, plain_http, deadline);
        Err((
            DistributionCode::OciDisabled,
            "this build of skillfold has no registry client (built without the `oci` feature)"
                .to_owned(),
        ))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::publishers::PublisherPolicy;

    fn unreadable(at: &str) -> material::Skipped {
        material::Skipped {
            found_at: at.to_owned(),
            detail: "the registry answered HTTP 404 (image_not_found)".to_owned(),
        }
    }

    #[test]
    fn skipped_referrers_alone_are_a_refused_signature_not_an_unsigned_image() {
        let policy = PublisherPolicy {
            keys: Vec::new(),
            sigstore: None,
        };
        let pinned = format!("sha256:{}", "1".repeat(64));
        let material = SignatureMaterial {
            skipped: vec![
                unreadable("referrer sha256:aa"),
                unreadable("referrer sha256:bb"),
            ],
            ..SignatureMaterial::default()
        };
        let rejected = verify(&material, &pinned, &policy).unwrap_err();
        for (rejected, skipped) in rejected.iter().zip(&material.skipped) {
            assert_eq!(rejected.found_at, skipped.found_at);
            assert_eq!(rejected.detail, skipped.detail);
            assert_eq!(rejected.rejection, Rejection::Unreadable);
        }
        assert_eq!(rejected.len(), 2);
        let refusal = Refusal::of("r.example/a@x", &rejected);
        // Exit 2, a verification refusal: not `image_unsigned`, not the retryable
        // `image_not_found` the fetch of a dangling referrer once failed with.
        assert_eq!(refusal.code, DistributionCode::ImageSignatureRefused);
        assert_eq!(refusal.details.len(), 2);
        assert!(
            refusal.details[0].ends_with("[unreadable]"),
            "{:?}",
            refusal.details
        );
        // Beside a judged signature, the skipped ones come after it.
        let bundle = material::SigstoreBundle {
            media_type: "application/vnd.dev.sigstore.bundle.v0.3+json".to_owned(),
            json: "{".to_owned(),
            found_at: "referrer sha256:cc".to_owned(),
        };
        let material = SignatureMaterial {
            bundles: vec![bundle],
            ..material
        };
        let rejected = verify(&material, &pinned, &policy).unwrap_err();
        let found: Vec<&str> = rejected.iter().map(|r| r.found_at.as_str()).collect();
        assert_eq!(
            found,
            [
                "referrer sha256:cc",
                "referrer sha256:aa",
                "referrer sha256:bb"
            ]
        );
    }
}
