//! One module per subcommand: its arguments and how its results are printed.

pub mod hash;
