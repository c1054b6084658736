//! Git sources (feature `git`): fetch exactly one pinned commit with gix, then read its tree and
//! blobs straight from the object database — never a checkout, so no filters, CRLF conversion,
//! LFS smudge or hooks ever touch the bytes.
//!
//! - [`fetch`]: fetch the pinned commit into a throwaway bare repository, isolated from the
//!   user's Git configuration except the credential helpers, with a fallback for servers that
//!   refuse a want-by-id; [`partial`] fetches its trees first and then only the blobs of the
//!   approved bundles, when the server allows it, every pack read through [`pack`]: bounded in
//!   objects, in bytes and in each object's bytes as it arrives. [`options`] holds what every connection runs
//!   under (isolated configuration, object bound, deadline), [`redirect`] follows HTTP(S)
//!   redirects by gix's rules, [`fetch_error`] says why a fetch failed, and [`refs`] resolves a
//!   branch, tag or `HEAD` from the server's ref listing. [`transport`] connects, every HTTP(S)
//!   answer read through [`answer`]: bounded in lines before its pack, and cut off at the
//!   fetch's deadline.
//! - [`tree`]: walk the whole tree of the commit once per distinct tree object, bounded in
//!   entries, bytes and path length, refusing malformed trees (and, in [`commit`], the source if
//!   any entry is a symlink).
//! - [`select`]: turn each approved bundle into a file set, counting and sizing every entry
//!   before any blob is inflated; [`lfs`] recognises the Git LFS pointers it refuses.
//! - [`approved`]: one source's approved bundles taken from a fetched commit under its own
//!   `links` policy and limits: the one check `prepare`, `outdated` and `update` share.

pub mod answer;
pub mod approved;
pub mod candidate;
pub mod commit;
pub mod fetch;
pub mod fetch_error;
pub mod lfs;
mod options;
pub mod pack;
pub mod partial;
mod redirect;
pub mod refs;
pub mod select;
#[cfg(test)]
mod test_repo;
mod transport;
pub mod tree;
