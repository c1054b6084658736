//! The managed corpus of one Git or OCI source: where preparation publishes verified bundles and
//! where the runtime reads them. [`store`] writes and opens generations, [`guard`] is the preparer's
//! lock, [`manifest`] records what a generation holds and where it came from, and [`pin_check`]
//! verifies a bundle against its pin, after a fetch and on every read, and [`publish`] makes a
//! staged generation `current` (one corpus, or the corpora of one commit together), making each
//! step durable through [`durable`]; [`folders`] makes, reaches and empties the store's own
//! folders without following a link, each with its mode, and [`leftovers`] removes what a
//! preparation leaves there; [`shared_dir`] finds corpus directories
//! that are one folder on disk. It may use the layers below it: [`crate::support`],
//! [`crate::format`], [`crate::descriptor`] (the signer a manifest records) and
//! [`crate::source`] (whose `preparation` codes it shares).
//!
//! # Layout
//!
//! ```text
//! <directory>/
//!   current -> .skillfold/generations/<id>     the published tree: <name>/SKILL.md, ...
//!   .skillfold/                                 the store's own data, unreachable from bundles
//!     guard                                     the preparer's lock (see `guard`)
//!     generations/<id>/<name>/...               immutable generations: read-only files
//!     manifests/<id>.json                       one manifest per generation
//!     previous                                  the id of the generation `current` replaced
//!     staging/<id>/                             a generation being written
//!     fetch/<id>.git/                           the throwaway repository of a Git fetch
//!     fetch/<id>.layers/                        the layers of an OCI pull, while they are read
//! ```
//!
//! Both kinds of source publish the same way; only the manifest's `source` differs (a
//! repository URL, commit and root, or an image's repository and manifest digest).
//!
//! `current` is a relative symbolic link that the store flips with one `rename(2)`: a reader that
//! opens `current` once sees the old generation or the new one, never a mix. Generations are
//! written in `staging/`, re-read and verified, made durable, moved into `generations/`, and
//! only then linked ([`publish`]). A crash at any step leaves `current` pointing to a complete,
//! verified generation; leftovers are removed by the next preparer. The generation that
//! `current` replaced is kept for rollback; older ones are removed.
//!
//! Nothing inside the corpus directory is followed where the store writes or removes: its
//! folders are opened one name at a time relative to a descriptor ([`folders`]), and a link in
//! place of one of its own folders is refused (`corpus_not_managed`). Its folders get explicit
//! modes whatever the umask: `0755` for what readers of `current` go through (the corpus
//! directory when skillfold makes it, `.skillfold/`, `generations/`, `manifests/` and every
//! folder of a generation), `0700` for `staging/` and `fetch/`.

pub mod durable;
pub mod folders;
pub mod guard;
pub mod leftovers;
pub mod manifest;
pub mod pin_check;
pub mod publish;
pub mod shared_dir;
pub mod store;

pub use guard::CorpusGuard;
pub use manifest::Manifest;
pub use store::{Corpus, CorpusError};
