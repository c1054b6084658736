//! The operations behind the CLI commands, one module per command. The binary parses arguments
//! and calls these; tests and other hosts call the same code.

pub mod check;
pub mod codes;
pub mod hash;
#[cfg(feature = "git")]
pub mod pin;
pub mod prepare;
pub mod schema;
pub mod verify;
