//! One module per subcommand: its arguments and how its results are printed.

pub mod check;
mod config;
pub mod hash;
#[cfg(feature = "git")]
pub mod pin;
pub mod prepare;
pub mod schema;
