//! Preparation (DESIGN §3): from a checked descriptor's plan to published, verified corpora.
//! It may use [`crate::format`] and [`crate::descriptor`]; nothing here serves bundles.
//!
//! - [`git`] (feature `git`): fetch one pinned commit with gix, walk its whole tree, take the
//!   approved bundles from the object database.
//! - [`corpus`]: the managed corpus — the guard, staged generations, the atomic `current` flip,
//!   manifests, rollback.
//! - [`verify`]: a bundle against its pin (name, declared version, digest, changed files).
//! - [`oci`]: verified bundles as reproducible OCI images and image layouts (`skillfold push`).
//! - [`signature`]: a pinned commit's signature against the source's trust policy (SSH and
//!   OpenPGP, in-process), from the fetched commit or the one a manifest keeps.
//! - [`failpoint`]: crash injection for the promotion tests.
//!
//! The steps are driven by [`crate::ops::prepare`] (and `pin`, `verify`).

pub mod code;
pub mod corpus;
pub mod failpoint;
#[cfg(feature = "git")]
pub mod git;
pub mod oci;
pub mod signature;
#[cfg(any(feature = "git", feature = "oci"))]
pub mod tls;
pub mod verify;
