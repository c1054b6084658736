//! The operations behind the CLI commands, one module per command. The binary parses arguments
//! and calls these; tests and other hosts call the same code. Operations may use every folder of
//! the library; only the binary and [`crate::mcp`] (the reload) use them.
//!
//! The exceptions, each because the library already has exactly that operation as its API:
//! `prompt`, `load` and `run-script` build a [`crate::Runtime`] and call its
//! [`crate::Catalogue`] (the catalogue's prompt block and `call` are what hosts use too); `serve`
//! runs [`crate::mcp`]; `validate`, `read-properties` and `to-prompt` call [`crate::skills_ref`]
//! (`spec::validate`, `spec::properties`, `spec::prompt`).

pub mod check;
pub mod hash;
#[cfg(feature = "git")]
pub mod outdated;
#[cfg(feature = "git")]
pub mod pin;
pub mod prepare;
pub mod push;
pub mod schema;
#[cfg(feature = "git")]
pub mod update;
pub mod verify;
