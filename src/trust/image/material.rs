//! The signature material of one image as the registry held it: cosign ≤ v2 signature layers
//! (a simple-signing payload and the layer's annotations) and Sigstore bundles (cosign v3),
//! each with where it was found, and the referrers skipped unread. Serialisable: the corpus manifest records the material that
//! verified, so `verify` re-checks it offline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Every signature the registry holds for one manifest digest, in the order they are tried.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureMaterial {
    /// cosign ≤ v2 layers of the `sha256-<hex>.sig` manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cosign: Vec<CosignSignature>,
    /// Sigstore bundles (cosign v3), from referrers or the `sha256-<hex>` tag index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bundles: Vec<SigstoreBundle>,
    /// The referrers listed as signatures that could not be fetched or read (gone, malformed,
    /// over their bound), skipped as cosign skips them; the verdict counts each as a rejection
    /// (`unreadable`). What the fetch saw, never recorded: the corpus manifest keeps only what
    /// verified.
    #[serde(skip)]
    pub skipped: Vec<Skipped>,
}

/// A signature the registry lists and the fetch could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where it was listed (`referrer sha256:…`).
    pub found_at: String,
    /// Why, with the code the fetch would have failed with (escaped).
    pub detail: String,
}

/// One layer of a cosign ≤ v2 signature manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CosignSignature {
    /// The layer's bytes: the simple-signing payload (JSON, UTF-8).
    pub payload: String,
    /// The layer's annotations (`dev.cosignproject.cosign/signature`,
    /// `dev.sigstore.cosign/certificate`, `…/chain`, `…/bundle`, …).
    pub annotations: BTreeMap<String, String>,
    /// Where it was found.
    pub found_at: String,
}

/// One Sigstore bundle (v0.1–v0.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigstoreBundle {
    /// Its media type as the registry named it (the artifact type or layer media type).
    pub media_type: String,
    /// The bundle's JSON (UTF-8).
    pub json: String,
    /// Where it was found.
    pub found_at: String,
}
