//! Fetching an image's signature material from its registry, bounded and under the pull's
//! deadline and credentials: the cosign ≤ v2 `sha256-<hex>.sig` manifest and its layers, and
//! Sigstore bundles attached as OCI 1.1 referrers (the referrers API, or the `sha256-<hex>` tag
//! index where the registry has none).
//!
//! Every request goes through the registry [`Session`] a pull uses, so credentials and tokens
//! are scoped to the registry's origin exactly as for layers, redirects are followed by the same
//! rules, a 401/403 is `registry_denied` and a 5xx `registry_unavailable` (retryable). The whole
//! fetch runs within [`MaterialRequest::deadline`] (`pull_deadline` past it, the connections
//! dropped). Every answer is bounded before it is read, and read no further than its bound:
//!
//! | what | bound |
//! |---|---|
//! | the `sha256-<hex>.sig` manifest | [`MAX_SIGNATURE_MANIFEST_BYTES`] |
//! | its layers | [`MAX_SIGNATURE_LAYERS`] |
//! | one signature layer (a simple-signing payload) | [`MAX_SIGNATURE_PAYLOAD_BYTES`], declared and read |
//! | one page of the referrers index, or the `sha256-<hex>` tag index | [`MAX_REFERRERS_INDEX_BYTES`] |
//! | pages of the referrers index followed (`Link: <…>; rel="next"`) | [`MAX_REFERRERS_PAGES`] |
//! | descriptors in the referrers index, all pages together | [`MAX_REFERRER_DESCRIPTORS`] |
//! | Sigstore bundle referrers fetched | [`MAX_BUNDLE_REFERRERS`] |
//! | one referrer's manifest | [`MAX_REFERRER_MANIFEST_BYTES`], declared and read |
//! | one bundle | [`MAX_BUNDLE_BYTES`], declared and read |
//!
//! All together one fetch reads at most [`MAX_FETCHED_BYTES`] (17.5 MiB).
//!
//! An answer over a bound is `image_too_large`; a blob or manifest fetched by digest must have
//! exactly its declared size and digest (`digest_mismatch`); an answer that is not the
//! JSON it must be, a payload or bundle that is not UTF-8, is `malformed_image`. Nothing the
//! registry sent is put in a message unescaped.
//!
//! One exception, as cosign skips what it cannot read: a bundle referrer the listing names whose
//! manifest or bundle cannot be fetched or read — gone (a dangling referrer), not of its declared
//! digest or size, not one bundle layer about the pinned digest, over its own bound (nothing past
//! it read) — is skipped and kept with why in [`SignatureMaterial::skipped`]. The verdict lists
//! it among the rejections (`unreadable`): beside a valid signature it does not matter, and an
//! image whose only signatures are unreadable is refused as one no signature satisfies, not
//! retried. Every bound holds all the same: a skipped referrer counts toward
//! [`MAX_BUNDLE_REFERRERS`], so a flood of them still ends the fetch, and a listing that is not
//! an index of descriptors, or a registry that denies, fails or stalls, still fails it.
//!
//! What is kept, in the order the verdict tries it:
//! 1. every layer of the `sha256-<hex>.sig` manifest whose media type is cosign's simple-signing
//!    type ([`SIMPLE_SIGNING`]), as a [`CosignSignature`]. cosign itself reads every layer of
//!    that manifest as a candidate signature whatever its media type; cosign only ever writes
//!    this type, and sigstore-rs keeps only this type too: a layer of another type is skipped
//!    unread, which can only make the verdict stricter than cosign's, never more lenient. No
//!    such tag (404) is no cosign ≤ v2 material.
//! 2. the referrers of the pinned digest whose `artifactType` is a Sigstore bundle media type
//!    ([`BUNDLE_MEDIA_TYPES`]), each a manifest of exactly one bundle layer whose `subject` is the
//!    pinned digest, as a [`SigstoreBundle`]. The referrers API is asked without an
//!    `artifactType` filter (a bundle has several media types and the filter takes one) and the
//!    descriptors are filtered here, so a registry that ignores or applies filters answers the
//!    same. A referrer whose `dev.sigstore.bundle.predicateType` annotation names a predicate
//!    other than cosign's signature predicate (`https://sigstore.dev/cosign/sign/v1`) is an
//!    attestation about the image (an SBOM, a provenance), not a signature of it: skipped
//!    unread, so a large attestation does not trip the bundle bound. A registry without the
//!    referrers API answers 404 (the distribution spec; go-containerregistry, which cosign uses,
//!    also takes a 400, a 406 and a 200 that is not an OCI image index to mean so): then the
//!    image index at the tag `sha256-<hex>` (the spec's referrers tag schema) lists the
//!    referrers instead; no such tag is no referrer.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::descriptor::plan::{ImageReference, is_sha256_digest};
use crate::source::oci::MEDIA_MANIFEST;
use crate::source::oci::code::DistributionCode;
use crate::source::oci::image::sha256;
use crate::source::oci::pull::run_within;
use crate::source::oci::pull_error::{PullError, fail};
use crate::source::oci::session::Session;
use crate::support::escape;
use crate::trust::image::material::{CosignSignature, SignatureMaterial, SigstoreBundle, Skipped};

/// The largest `sha256-<hex>.sig` manifest read: its layers' annotations hold the signatures,
/// certificates, chains and Rekor bundles (a few KiB each), so this leaves room for
/// [`MAX_SIGNATURE_LAYERS`] keyless signatures.
pub const MAX_SIGNATURE_MANIFEST_BYTES: u64 = 512 * 1024;
/// The most layers a `sha256-<hex>.sig` manifest may list (cosign: 1000).
pub const MAX_SIGNATURE_LAYERS: usize = 64;
/// The largest simple-signing payload read (one is a few hundred bytes).
pub const MAX_SIGNATURE_PAYLOAD_BYTES: u64 = 64 * 1024;
/// The largest page of the referrers index (or the `sha256-<hex>` tag index) read.
pub const MAX_REFERRERS_INDEX_BYTES: u64 = 1024 * 1024;
/// The most pages of the referrers index read.
pub const MAX_REFERRERS_PAGES: usize = 4;
/// The most descriptors the referrers index may list, all pages together.
pub const MAX_REFERRER_DESCRIPTORS: usize = 128;
/// The most Sigstore bundle referrers fetched.
pub const MAX_BUNDLE_REFERRERS: usize = 16;
/// The largest manifest of one referrer read.
pub const MAX_REFERRER_MANIFEST_BYTES: u64 = 64 * 1024;
/// The largest Sigstore bundle read.
pub const MAX_BUNDLE_BYTES: u64 = 512 * 1024;

/// The most bytes one fetch reads, all answers together: the `.sig` manifest and its layers,
/// the referrers index's pages (or the tag index, smaller), and each bundle referrer's manifest
/// and bundle — 18,350,080 bytes (17.5 MiB).
pub const MAX_FETCHED_BYTES: u64 = MAX_SIGNATURE_MANIFEST_BYTES
    + MAX_SIGNATURE_LAYERS as u64 * MAX_SIGNATURE_PAYLOAD_BYTES
    + MAX_REFERRERS_PAGES as u64 * MAX_REFERRERS_INDEX_BYTES
    + MAX_BUNDLE_REFERRERS as u64 * (MAX_REFERRER_MANIFEST_BYTES + MAX_BUNDLE_BYTES);

// The bounds above are held together in memory at worst (each answer is read whole): they must
// stay well under the 32 MiB a cold `prepare`'s anonymous memory is held to (BENCHMARKS.md).
const _: () = assert!(MAX_FETCHED_BYTES < 32 * 1024 * 1024);

/// The media type of a cosign ≤ v2 signature layer (a simple-signing payload).
pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The media types of a Sigstore bundle: the form sigstore-go (and so cosign v3) writes for
/// v0.3 (`…bundle.v0.3+json`), the parameter form older clients wrote for v0.1–v0.3
/// (`…bundle+json;version=0.x`), and the `.v0.x+json` form for v0.1 and v0.2.
pub const BUNDLE_MEDIA_TYPES: [&str; 6] = [
    "application/vnd.dev.sigstore.bundle.v0.3+json",
    "application/vnd.dev.sigstore.bundle.v0.2+json",
    "application/vnd.dev.sigstore.bundle.v0.1+json",
    "application/vnd.dev.sigstore.bundle+json;version=0.3",
    "application/vnd.dev.sigstore.bundle+json;version=0.2",
    "application/vnd.dev.sigstore.bundle+json;version=0.1",
];
/// The referrer annotation cosign v3 names a bundle's predicate type in.
const PREDICATE_ANNOTATION: &str = "dev.sigstore.bundle.predicateType";
/// The predicate type of cosign v3's signature of an image (`cosign sign`).
const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
const MEDIA_DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// What to fetch the signature material of.
pub struct MaterialRequest<'a> {
    /// The image, pinned by digest.
    pub reference: &'a ImageReference,
    /// HTTP instead of HTTPS.
    pub plain_http: bool,
    /// The overall deadline (`pull_deadline` past it).
    pub deadline: std::time::Duration,
}

/// Every signature the registry holds for the pinned digest: none is an empty material (the
/// verdict then says unsigned), not an error.
pub fn fetch(request: &MaterialRequest<'_>) -> Result<SignatureMaterial, PullError> {
    run_within(request.deadline, fetch_async(request), || {
        format!(
            "the signatures of {} were not fetched within the deadline of {}",
            request.reference,
            crate::support::time::seconds(request.deadline)
        )
    })
}

/// [`fetch`] as one future, on a tokio runtime with I/O and time enabled: a caller that already
/// runs one (a pull and its signatures under one deadline) awaits it within its own deadline.
pub async fn fetch_async(request: &MaterialRequest<'_>) -> Result<SignatureMaterial, PullError> {
    let reference = request.reference;
    let Some(hex) = reference
        .digest
        .strip_prefix("sha256:")
        .filter(|_| is_sha256_digest(&reference.digest))
    else {
        return Err(fail(
            DistributionCode::MalformedImage,
            format!(
                "`{}` is not `sha256:` and 64 lowercase hex digits",
                escape::text(&reference.digest)
            ),
        ));
    };
    let session = Session::open(
        &reference.registry,
        &reference.repository,
        request.plain_http,
        reference.to_string(),
    )?;
    let mut fetcher = Fetcher {
        session,
        reference,
        hex,
    };
    let cosign = fetcher.cosign_signatures().await?;
    let (bundles, skipped) = fetcher.sigstore_bundles().await?;
    Ok(SignatureMaterial {
        cosign,
        bundles,
        skipped,
    })
}

/// The requests of one fetch: the session and the image.
struct Fetcher<'a> {
    session: Session,
    reference: &'a ImageReference,
    /// The pinned digest's 64 hex digits.
    hex: &'a str,
}

/// Where the referrers were listed.
#[derive(Clone, Copy)]
enum Listed {
    /// The referrers API.
    Api,
    /// The `sha256-<hex>` tag index.
    Tag,
}

/// One descriptor of a manifest or index, checked: its digest and declared size.
struct Descriptor {
    digest: String,
    size: u64,
}

impl Fetcher<'_> {
    /// The layers of the `sha256-<hex>.sig` manifest (none when there is no such tag).
    async fn cosign_signatures(&mut self) -> Result<Vec<CosignSignature>, PullError> {
        let tag = format!("sha256-{}.sig", self.hex);
        let what = format!("the signature manifest `{tag}`");
        let accept = format!("{MEDIA_MANIFEST}, {MEDIA_DOCKER_MANIFEST}");
        let Some(body) = self
            .at_tag(&tag, &accept, MAX_SIGNATURE_MANIFEST_BYTES, &what)
            .await?
        else {
            return Ok(Vec::new());
        };
        let manifest = self.json_object(&body, &what)?;
        let media_type = optional_string(&manifest, "mediaType")
            .map_err(|()| self.malformed(format!("{what} has a `mediaType` that is not a string")))?
            .unwrap_or(MEDIA_MANIFEST);
        if media_type != MEDIA_MANIFEST && media_type != MEDIA_DOCKER_MANIFEST {
            return Err(self.malformed(format!(
                "{what} has media type `{}`, not an image manifest",
                escape::text(media_type)
            )));
        }
        let layers = manifest
            .get("layers")
            .and_then(Value::as_array)
            .ok_or_else(|| self.malformed(format!("{what} has no `layers` list")))?;
        if layers.len() > MAX_SIGNATURE_LAYERS {
            return Err(self.too_large(format!(
                "{what} lists {} layers, over the bound of {MAX_SIGNATURE_LAYERS}",
                layers.len()
            )));
        }
        let mut signatures = Vec::new();
        for (index, layer) in layers.iter().enumerate() {
            let found_at = format!("`{tag}` layer {index}");
            let layer_what = format!("layer {index} of {what}");
            if !layer.is_object() {
                return Err(self.malformed(format!("{layer_what} is not a JSON object")));
            }
            if layer.get("mediaType").and_then(Value::as_str) != Some(SIMPLE_SIGNING) {
                continue;
            }
            let descriptor = self.descriptor(layer, &layer_what)?;
            if descriptor.size > MAX_SIGNATURE_PAYLOAD_BYTES {
                return Err(self.too_large(format!(
                    "{layer_what} declares {} bytes, over the bound of {MAX_SIGNATURE_PAYLOAD_BYTES}; nothing was read",
                    descriptor.size
                )));
            }
            let annotations = self.annotations(layer, &layer_what)?;
            let payload = self.blob(&descriptor, &layer_what).await?;
            let payload = String::from_utf8(payload)
                .map_err(|_| self.malformed(format!("{layer_what} is not UTF-8")))?;
            signatures.push(CosignSignature {
                payload,
                annotations,
                found_at,
            });
        }
        Ok(signatures)
    }

    /// The Sigstore bundles attached as referrers of the pinned digest, and the referrers skipped
    /// because they could not be fetched or read ([`skippable`]).
    async fn sigstore_bundles(&mut self) -> Result<(Vec<SigstoreBundle>, Vec<Skipped>), PullError> {
        let (listed, descriptors) = match self.referrers_api().await? {
            Some(descriptors) => (Listed::Api, descriptors),
            None => (Listed::Tag, self.referrers_tag().await?),
        };
        let mut seen = BTreeSet::new();
        let mut bundles = Vec::new();
        let mut skipped = Vec::new();
        for (index, entry) in descriptors.iter().enumerate() {
            let entry_what = format!("referrer {index} of {}", self.listing(listed));
            let Some(object) = entry.as_object() else {
                return Err(self.malformed(format!("{entry_what} is not a JSON object")));
            };
            let artifact_type = object.get("artifactType").and_then(Value::as_str);
            if !artifact_type.is_some_and(|t| BUNDLE_MEDIA_TYPES.contains(&t)) {
                continue;
            }
            let predicate = object
                .get("annotations")
                .and_then(|a| a.get(PREDICATE_ANNOTATION));
            if predicate.is_some_and(|p| p.as_str() != Some(COSIGN_SIGN_PREDICATE)) {
                continue;
            }
            let descriptor = self.descriptor(entry, &entry_what)?;
            if !seen.insert(descriptor.digest.clone()) {
                continue;
            }
            if seen.len() > MAX_BUNDLE_REFERRERS {
                return Err(self.too_large(format!(
                    "{} lists more than {MAX_BUNDLE_REFERRERS} Sigstore bundle referrers, the most fetched",
                    self.listing(listed)
                )));
            }
            match self.bundle(&descriptor, listed).await {
                Ok(bundle) => bundles.push(bundle),
                Err(e) if skippable(e.code) => skipped.push(Skipped {
                    found_at: self.found_at(&descriptor, listed),
                    detail: self.skipped_because(e),
                }),
                Err(e) => return Err(e),
            }
        }
        Ok((bundles, skipped))
    }

    /// Where the referrer `descriptor` was found, as a verdict names it.
    fn found_at(&self, descriptor: &Descriptor, listed: Listed) -> String {
        match listed {
            Listed::Api => format!("referrer {}", descriptor.digest),
            Listed::Tag => format!(
                "referrer {} (listed by the tag `sha256-{}`)",
                descriptor.digest, self.hex
            ),
        }
    }

    /// Why a referrer was skipped: `error`'s message (escaped, as every message here) without
    /// the image every message of this fetch names, and its code.
    fn skipped_because(&self, error: PullError) -> String {
        let prefix = format!("the signature material of {}: ", self.reference);
        let message = error
            .message
            .strip_prefix(&prefix)
            .unwrap_or(&error.message);
        format!("{message} ({})", error.code.as_str())
    }

    /// The referrer `descriptor` (a Sigstore bundle artifact): its manifest, then its one bundle
    /// layer.
    async fn bundle(
        &mut self,
        descriptor: &Descriptor,
        listed: Listed,
    ) -> Result<SigstoreBundle, PullError> {
        let what = format!("the manifest of referrer {}", descriptor.digest);
        if descriptor.size > MAX_REFERRER_MANIFEST_BYTES {
            return Err(self.too_large(format!(
                "{what} declares {} bytes, over the bound of {MAX_REFERRER_MANIFEST_BYTES}; nothing was read",
                descriptor.size
            )));
        }
        let url = format!("{}/manifests/{}", self.session.base, descriptor.digest);
        let response = self
            .session
            .get(&url, Some(MEDIA_MANIFEST), descriptor.size, &what)
            .await?;
        let body = self
            .session
            .read_body(response, descriptor.size, &what)
            .await?;
        self.check_digest(&body, descriptor, &what)?;
        let manifest = self.json_object(&body, &what)?;
        let media_type = optional_string(&manifest, "mediaType")
            .map_err(|()| self.malformed(format!("{what} has a `mediaType` that is not a string")))?
            .unwrap_or(MEDIA_MANIFEST);
        if media_type != MEDIA_MANIFEST {
            return Err(self.malformed(format!(
                "{what} has media type `{}`, not an OCI image manifest",
                escape::text(media_type)
            )));
        }
        let subject = manifest
            .get("subject")
            .and_then(|s| s.get("digest"))
            .and_then(Value::as_str);
        if subject != Some(self.reference.digest.as_str()) {
            return Err(self.malformed(format!(
                "{what} is listed as a referrer of {} but its `subject` is {}",
                self.reference.digest,
                subject.map_or_else(
                    || "missing".to_owned(),
                    |s| format!("`{}`", escape::text(s))
                )
            )));
        }
        let layers = manifest
            .get("layers")
            .and_then(Value::as_array)
            .filter(|layers| layers.len() == 1)
            .ok_or_else(|| {
                self.malformed(format!(
                    "{what} names a Sigstore bundle artifact but does not list exactly one layer"
                ))
            })?;
        let layer = &layers[0];
        let layer_what = format!("the bundle of referrer {}", descriptor.digest);
        let layer_type = layer
            .get("mediaType")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(media_type) = BUNDLE_MEDIA_TYPES.iter().find(|t| **t == layer_type) else {
            return Err(self.malformed(format!(
                "{layer_what} has media type `{}`, not a Sigstore bundle's",
                escape::text(layer_type)
            )));
        };
        let layer_descriptor = self.descriptor(layer, &layer_what)?;
        if layer_descriptor.size > MAX_BUNDLE_BYTES {
            return Err(self.too_large(format!(
                "{layer_what} declares {} bytes, over the bound of {MAX_BUNDLE_BYTES}; nothing was read",
                layer_descriptor.size
            )));
        }
        let json = self.blob(&layer_descriptor, &layer_what).await?;
        let json = String::from_utf8(json)
            .map_err(|_| self.malformed(format!("{layer_what} is not UTF-8")))?;
        Ok(SigstoreBundle {
            media_type: (*media_type).to_owned(),
            json,
            found_at: self.found_at(descriptor, listed),
        })
    }

    /// The manifest or index at `tag`, at most `bound` bytes; `None` when there is no such tag
    /// (404). Its `Docker-Content-Digest` is not relied on (nothing here is named by the tag's
    /// digest: the layers and referrers it lists are checked against their own digests, and the
    /// signatures bind the pinned digest), as go-containerregistry does not check it for tags:
    /// registries get it wrong.
    async fn at_tag(
        &mut self,
        tag: &str,
        accept: &str,
        bound: u64,
        what: &str,
    ) -> Result<Option<Vec<u8>>, PullError> {
        let url = format!("{}/manifests/{tag}", self.session.base);
        let response = self
            .session
            .answer(&Method::GET, &url, Some(accept), what)
            .await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let response = self.session.judge(response, bound, what)?;
        let body = self.session.read_body(response, bound, what).await?;
        Ok(Some(body))
    }

    /// The blob `descriptor`: exactly its declared size, read no further, and equal to its
    /// digest.
    async fn blob(&mut self, descriptor: &Descriptor, what: &str) -> Result<Vec<u8>, PullError> {
        let url = format!("{}/blobs/{}", self.session.base, descriptor.digest);
        let response = self.session.get(&url, None, descriptor.size, what).await?;
        let body = self
            .session
            .read_body(response, descriptor.size, what)
            .await?;
        self.check_digest(&body, descriptor, what)?;
        Ok(body)
    }

    /// `body` has `descriptor`'s size and digest.
    fn check_digest(
        &self,
        body: &[u8],
        descriptor: &Descriptor,
        what: &str,
    ) -> Result<(), PullError> {
        let digest = sha256(body);
        if body.len() as u64 != descriptor.size || digest != descriptor.digest {
            return Err(fail(
                DistributionCode::DigestMismatch,
                format!(
                    "{what} of {}: named {} of {} bytes, the registry sent {} bytes with digest {digest}",
                    self.reference,
                    descriptor.digest,
                    descriptor.size,
                    body.len()
                ),
            ));
        }
        Ok(())
    }

    /// The digest (`sha256:` and 64 lowercase hex) and size of the descriptor `value`.
    fn descriptor(&self, value: &Value, what: &str) -> Result<Descriptor, PullError> {
        let digest = value
            .get("digest")
            .and_then(Value::as_str)
            .filter(|d| is_sha256_digest(d))
            .ok_or_else(|| {
                self.malformed(format!(
                    "{what} has no `digest` of `sha256:` and 64 lowercase hex digits"
                ))
            })?;
        let size = value
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| self.malformed(format!("{what} has no `size`")))?;
        Ok(Descriptor {
            digest: digest.to_owned(),
            size,
        })
    }

    /// The annotations of the descriptor `value`: none, or an object of strings.
    fn annotations(
        &self,
        value: &Value,
        what: &str,
    ) -> Result<BTreeMap<String, String>, PullError> {
        let Some(annotations) = value.get("annotations") else {
            return Ok(BTreeMap::new());
        };
        let malformed = || self.malformed(format!("{what} has annotations that are not strings"));
        let annotations = annotations.as_object().ok_or_else(malformed)?;
        annotations
            .iter()
            .map(|(key, value)| {
                value
                    .as_str()
                    .map(|value| (key.clone(), value.to_owned()))
                    .ok_or_else(malformed)
            })
            .collect()
    }

    /// `body` as a JSON object.
    fn json_object(
        &self,
        body: &[u8],
        what: &str,
    ) -> Result<serde_json::Map<String, Value>, PullError> {
        match serde_json::from_slice(body) {
            Ok(Value::Object(object)) => Ok(object),
            Ok(_) => Err(self.malformed(format!("{what} is not a JSON object"))),
            Err(e) => Err(self.malformed(format!(
                "{what} is not JSON: {}",
                escape::text(&e.to_string())
            ))),
        }
    }

    /// What `listed` lists referrers in, for messages.
    fn listing(&self, listed: Listed) -> String {
        match listed {
            Listed::Api => "the referrers index".to_owned(),
            Listed::Tag => format!("the referrers tag index `sha256-{}`", self.hex),
        }
    }

    fn malformed(&self, what: String) -> PullError {
        fail(
            DistributionCode::MalformedImage,
            format!("the signature material of {}: {what}", self.reference),
        )
    }

    fn too_large(&self, what: String) -> PullError {
        fail(
            DistributionCode::ImageTooLarge,
            format!("the signature material of {}: {what}", self.reference),
        )
    }
}

/// Whether a referrer whose fetch failed with `code` is skipped (and reported) rather than
/// failing the whole fetch: what is about that one referrer — its manifest or bundle gone
/// (`image_not_found`), not what its descriptor names (`digest_mismatch`), not a bundle
/// referrer as read (`malformed_image`), over its own bound, nothing past it read
/// (`image_too_large`). cosign skips a referrer it cannot read too. What is about the registry
/// (denied, unavailable, refusing, the deadline) still fails the fetch.
fn skippable(code: DistributionCode) -> bool {
    matches!(
        code,
        DistributionCode::ImageNotFound
            | DistributionCode::DigestMismatch
            | DistributionCode::MalformedImage
            | DistributionCode::ImageTooLarge
    )
}

/// The string at `key` of `object`: `Ok(None)` when absent, `Err` when not a string.
fn optional_string<'v>(
    object: &'v serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<&'v str>, ()> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(value)) => Ok(Some(value)),
        Some(_) => Err(()),
    }
}

#[path = "referrers.rs"]
mod referrers;

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
