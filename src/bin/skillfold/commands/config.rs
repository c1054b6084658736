//! The `-c/--config` argument shared by every command that reads the descriptor.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct ConfigArg {
    /// The descriptor to read.
    #[arg(
        short = 'c',
        long = "config",
        env = "SKILLFOLD_CONFIG",
        default_value = skillfold::descriptor::DEFAULT_PATH,
        value_name = "PATH"
    )]
    pub path: PathBuf,
}
