//! The approved bundles of one OCI source, as every command reads them from the layers of a
//! pulled image: `prepare` (the pinned image), `outdated` and `update` (a candidate) run this one
//! reader, so a review can never approve what `prepare` refuses (DESIGN §9, "the review path is
//! the prepare path").
//!
//! One pull may serve several sources of one image (it brings the layers any of them wants);
//! each source then reads them on its own terms: a layer whose bundle-name annotation names a
//! bundle the source does not approve is not read for it (the layer-to-bundle mapping does not
//! depend on which other sources share the pull), every other layer is read with the strict
//! reader ([`super::unpack`]) under the source's own limits profile, keeping only the source's
//! approved bundles — what one source holds in memory is its own approved bundles, whatever the
//! number of layers.

use std::collections::{BTreeMap, BTreeSet};

use super::PulledLayer;
use super::code::DistributionCode;
use super::layer_error::LayerError;
use crate::format::file_set::FileSet;
use crate::format::limits::Limits;
use crate::format::problem::Problems;

/// One source's approved bundles, read from the layers of an image.
#[derive(Debug, Default)]
pub struct ApprovedBundles {
    /// Each approved bundle found, with its files and what the rules found in them.
    pub bundles: BTreeMap<String, (FileSet, Problems)>,
    /// The bundles the layers offer, approved or not: the folders holding a `SKILL.md` file in
    /// the layers read, and the names the annotations of the layers not read give.
    pub offered: BTreeSet<String>,
}

impl ApprovedBundles {
    /// Reads the bundles named in `approved` from the `layers` of `image` (as shown in
    /// messages) under `limits`, the layers it reads declaring at most `max_bytes` together
    /// (the source's pull bound, whatever other sources the pull served: `pull_too_large`).
    /// `keep_going` is asked before each layer (an interrupt); what the layers refuse is
    /// `refusal`'s error. A bundle in two layers refuses the image (`duplicate_in_layer`); so
    /// does anything the strict reader refuses.
    pub fn read<E>(
        (image, layers): (&str, &[PulledLayer]),
        approved: &BTreeSet<String>,
        (limits, max_bytes): (Limits, u64),
        keep_going: &dyn Fn() -> Result<(), E>,
        refusal: &dyn Fn(LayerError) -> E,
    ) -> Result<ApprovedBundles, E> {
        let mine =
            |layer: &&PulledLayer| layer.bundle.as_ref().is_none_or(|b| approved.contains(b));
        let declared: u64 = layers.iter().filter(mine).map(|l| l.size).sum();
        if declared > max_bytes {
            return Err(refusal(LayerError {
                code: DistributionCode::PullTooLarge,
                message: format!(
                    "the layer(s) of {image} this source reads declare {declared} bytes, over its pull bound of {max_bytes} bytes (16 bundles at the bounds of its limits profile)"
                ),
            }));
        }
        let mut read = ApprovedBundles::default();
        for layer in layers {
            keep_going()?;
            if !mine(&layer) {
                read.offered.extend(layer.bundle.clone());
                continue;
            }
            let in_layer = |e: LayerError| LayerError {
                code: e.code,
                message: format!("layer {}: {}", layer.digest, e.message),
            };
            let file = fs_err::File::open(&layer.path).map_err(|e| {
                refusal(in_layer(LayerError {
                    code: DistributionCode::WriteFailed,
                    message: format!(
                        "cannot read the pulled layer: {}",
                        crate::support::escape::text(&e.to_string())
                    ),
                }))
            })?;
            let reader = std::io::BufReader::with_capacity(64 * 1024, file);
            let (found, offered) = super::unpack::unpack_offering(reader, approved, limits)
                .map_err(|e| refusal(in_layer(e)))?;
            read.offered.extend(offered);
            for (name, files) in found {
                if read.bundles.insert(name.clone(), files).is_some() {
                    return Err(refusal(LayerError {
                        code: DistributionCode::DuplicateInLayer,
                        message: format!(
                            "`{}` is in more than one layer of {image}",
                            crate::support::escape::text(&name)
                        ),
                    }));
                }
            }
        }
        Ok(read)
    }
}
