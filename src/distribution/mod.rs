//! Distribution (`skillfold push`): a verified set of bundles written as a reproducible OCI image
//! layout on disk ([`layout`]) or pushed to a registry ([`registry`], feature `oci`). The image
//! format itself — manifest, config, layer tar, media types — is [`crate::source::oci`]'s, shared
//! with the pull; registry credentials are scoped as the pull scopes them. It may use the layers
//! below it ([`crate::support`], [`crate::format`], [`crate::source`]); [`crate::ops::push`]
//! drives it.

pub mod layout;
#[cfg(feature = "oci")]
pub mod registry;
#[cfg(feature = "oci")]
pub mod sign;
