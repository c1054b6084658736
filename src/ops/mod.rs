//! The operations behind the CLI commands, one module per command (and `target`, what `outdated`
//! and `update` share: both look at another commit or image than a pin). `install` also holds
//! `verify --installed`, the check of what it writes. The command line
//! ([`crate::cli`]) parses arguments and calls these. Operations may use every layer below them
//! (`support` up to `runtime`); of the layers above, [`crate::mcp`] (the reload's preparation)
//! and [`crate::cli`] use them.
//!
//! The exceptions, each because the library already has exactly that operation as its API:
//! `prompt`, `load` and `run-script` build a [`crate::Runtime`] and call its
//! [`crate::Catalogue`] (the catalogue's prompt block and `call` are what hosts use too); `serve`
//! runs [`crate::mcp`]; `validate`, `read-properties` and `to-prompt` call [`crate::skills_ref`]
//! (`skills_ref::validate`, `skills_ref::properties`, `skills_ref::prompt`); `token` writes a
//! tokens file the command line checks with the server's own reader
//! ([`crate::mcp::http::tokens`]) before it is written.

pub mod check;
pub mod hash;
#[cfg(feature = "git")]
pub mod import;
pub mod install;
#[cfg(feature = "git")]
pub mod outdated;
#[cfg(feature = "git")]
pub mod pin;
pub mod prepare;
pub mod push;
pub mod sbom;
// Only `pin --scan` (built with the Git fetcher) runs a scanner.
#[cfg(feature = "git")]
pub mod scan;
pub mod schema;
#[cfg(feature = "git")]
pub mod target;
#[cfg(feature = "http")]
pub mod token;
#[cfg(feature = "git")]
pub mod update;
pub mod verify;
