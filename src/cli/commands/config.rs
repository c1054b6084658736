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
        default_value = crate::descriptor::DEFAULT_PATH,
        value_name = "PATH"
    )]
    pub path: PathBuf,
}

impl ConfigArg {
    /// The checked plan of the descriptor, or the exit status of its problems (their codes')
    /// after every problem was printed.
    pub fn plan(&self) -> Result<crate::descriptor::Plan, crate::cli::exit::Exit> {
        self.plan_as(crate::cli::sarif::Format::Text)
    }

    /// The loaded descriptor and its checked plan, or the exit status of its problems.
    pub fn loaded(
        &self,
    ) -> Result<(crate::descriptor::Loaded, crate::descriptor::Plan), crate::cli::exit::Exit> {
        crate::ops::check::load_plan(&self.path).map_err(|e| {
            crate::cli::output::check_error(&e);
            crate::cli::exit::Exit::of(&e)
        })
    }

    /// [`ConfigArg::plan`], the problems also written as a SARIF log on stdout when `format` is
    /// `sarif`.
    pub fn plan_as(
        &self,
        format: crate::cli::sarif::Format,
    ) -> Result<crate::descriptor::Plan, crate::cli::exit::Exit> {
        crate::ops::check::load_plan(&self.path)
            .map(|(_, plan)| plan)
            .map_err(|e| {
                crate::cli::output::check_error(&e);
                let exit = crate::cli::exit::Exit::of(&e);
                if format != crate::cli::sarif::Format::Sarif {
                    return exit;
                }
                let mut log = crate::format::sarif::Log::new();
                crate::cli::sarif::check_error(&mut log, &self.path, &e);
                exit.worse(crate::cli::sarif::print(&log))
            })
    }
}
