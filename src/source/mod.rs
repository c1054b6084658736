//! Sources (DESIGN §3): where approved bundles come from, fetched exactly as pinned. It may use
//! the layers below it, [`crate::support`], [`crate::format`], [`crate::trust`] and
//! [`crate::descriptor`]; nothing here writes the managed corpus ([`crate::corpus`], above it) or
//! serves bundles. Signatures are judged by [`crate::trust`]: this layer fetches the bytes (a
//! commit object, an image's signature material) and asks it.
//!
//! - [`git`] (feature `git`): fetch one pinned commit with gix, walk its whole tree, take the
//!   approved bundles from the object database; weigh candidate commits for `outdated`/`update`.
//! - [`oci`]: the OCI image format skillfold writes and reads (manifest, config, the
//!   reproducible layer tar), the strict reader of pulled layers and, with feature `oci`, the
//!   pull of a digest-pinned image with its registry credentials.
//! - [`error`] (feature `git`): [`error::SourceError`], why one source (Git or OCI) could not
//!   be used, as `outdated` and `update` report it.
//! - [`origin`]: the origin (scheme, host, port) every credential is scoped to.
//! - [`tls`]: the one TLS provider of every https client.
//! - [`code`]: the stable codes of preparation (area `preparation`, the `PrepareCode` enum),
//!   which [`crate::corpus`] shares.
//!
//! The steps are driven by [`crate::ops::prepare`] (and `pin`, `outdated`, `update`).

pub mod code;
#[cfg(feature = "git")]
pub mod error;
#[cfg(feature = "git")]
pub mod git;
pub mod oci;
#[cfg(any(feature = "git", feature = "oci", feature = "http"))]
pub mod origin;
#[cfg(any(feature = "git", feature = "oci", feature = "http"))]
pub mod tls;
