//! One module per subcommand: its arguments and how its results are printed.

pub mod hash;
pub mod read_properties;
pub mod to_prompt;
pub mod validate;
