//! Git sources (feature `git`): fetch exactly one pinned commit with gix, then read its tree and
//! blobs straight from the object database — never a checkout, so no filters, CRLF conversion,
//! LFS smudge or hooks ever touch the bytes.
//!
//! - [`fetch`]: fetch the pinned commit into a throwaway bare repository, isolated from the
//!   user's Git configuration except the credential helpers, with a fallback for servers that
//!   refuse a want-by-id.
//! - [`tree`]: walk the whole tree of the commit (refusing the source if any entry is a symlink),
//!   then turn the approved bundles into file sets.

pub mod commit;
pub mod fetch;
pub mod tree;
