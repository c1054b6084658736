//! One module per subcommand: its arguments and how its results are printed.

pub mod check;
mod config;
pub mod hash;
#[cfg(feature = "git")]
pub mod import;
pub mod install;
pub mod load;
#[cfg(feature = "git")]
pub mod outdated;
#[cfg(feature = "git")]
pub mod pin;
pub mod prepare;
pub mod prompt;
pub mod push;
pub mod read_properties;
pub mod run_script;
mod runtime_args;
pub mod sbom;
pub mod schema;
#[cfg(feature = "mcp")]
pub mod serve;
pub mod to_prompt;
#[cfg(feature = "http")]
pub mod token;
#[cfg(feature = "git")]
pub mod update;
pub mod validate;
pub mod verify;
