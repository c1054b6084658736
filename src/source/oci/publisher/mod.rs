//! Who published an image, as far as the registry is asked: the signature material a registry
//! holds for a pinned manifest digest (cosign ≤ v2's `sha256-<hex>.sig` manifest and cosign v3's
//! Sigstore bundles, as OCI 1.1 referrers or under the `sha256-<hex>` tag), fetched by [`fetch`]
//! into [`crate::trust::image::material`]'s types, and the source's [`Refusal`] (its code and
//! message) when [`crate::trust::image::verify`] finds no signature that counts. The judging is
//! [`crate::trust`]'s, at no network.

#[cfg(feature = "oci")]
pub mod fetch;

use super::code::DistributionCode;
use crate::descriptor::plan::ImageReference;
use crate::trust::image::material::SignatureMaterial;
use crate::trust::verdict::Rejected;

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

/// Why an image's publisher was refused: the code, the message, and each signature's rejection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `image_unsigned` (no signature) or `image_signature_refused`.
    pub code: DistributionCode,
    /// What happened.
    pub message: String,
    /// Each signature that did not count, and why.
    pub details: Vec<String>,
}

impl Refusal {
    /// The refusal of `image` (as messages name it) when no signature in `rejected` (none:
    /// unsigned) satisfies the policy.
    pub fn of(image: &str, rejected: &[Rejected]) -> Refusal {
        if rejected.is_empty() {
            return Refusal {
                code: DistributionCode::ImageUnsigned,
                message: format!(
                    "the source requires a publisher's signature and the registry holds none for {image} (no cosign signature tag, no Sigstore bundle referrer)"
                ),
                details: Vec::new(),
            };
        }
        Refusal {
            code: DistributionCode::ImageSignatureRefused,
            message: format!(
                "none of the {} signature(s) of {image} verifies under the source's `verify`",
                rejected.len()
            ),
            details: rejected.iter().map(Rejected::to_string).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::image::material::{self, SignatureMaterial};
    use crate::trust::image::policy::PublisherPolicy;
    use crate::trust::image::verify;
    use crate::trust::verdict::Rejection;

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
