//! `skillfold serve`: the MCP server over stdio.

use std::time::Duration;

use clap::Args;
use skillfold::mcp::{self, ServeOptions};

use super::runtime_args::AgentArgs;
use crate::exit::{self, Exit};

/// Serve an agent's skills to an LLM host as an MCP server over stdio.
///
/// The server's instructions are the agent's catalogue prompt; its tools are the catalogue's
/// (`load_skill`, and every other tool the library offers), with the same schemas, results and
/// error codes; every file of every skill is a `skill://<name>/<path>` resource, listed by the
/// Skills extension (`skills/list`, `skills/get`) with its SHA-256 and size. Only verified
/// bundles are served; one that fails verification is named on stderr and left out. stdout
/// carries the protocol; logs go to stderr.
///
/// With --watch, a change of the descriptor (or SIGHUP) prepares the agent's sources again and
/// swaps the catalogue atomically; a failed reload keeps serving the previous catalogue and is
/// retried with backoff.
///
/// Exit status: 0 the client closed the connection (or SIGTERM/SIGINT); 1 the session failed;
/// 2 a bad descriptor or an unknown agent.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    agent: AgentArgs,

    /// Reload when the descriptor changes or on SIGHUP (prepares the agent's sources again).
    #[arg(long)]
    watch: bool,

    /// How often --watch checks the descriptor, in seconds (fractions allowed).
    #[arg(long, value_name = "SECONDS", default_value = "2", value_parser = parse_interval)]
    poll_interval: Duration,
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(0.05..=3600.0).contains(&seconds) {
        return Err(format!("`{text}` is outside 0.05 to 3600 seconds"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

pub fn run(args: ServeArgs) -> Exit {
    // The library reports; the binary decides to show it, on stderr, never panicking.
    mcp::set_diagnostics(|line| crate::output::diag_line(format_args!("{line}")));
    let options = ServeOptions {
        config: args.agent.config.path,
        agent: args.agent.agent,
        watch: args.watch,
        poll_interval: args.poll_interval,
    };
    match mcp::run(options) {
        Ok(()) => Exit::Ok,
        Err(e) => {
            let lines = match &e {
                mcp::ServeError::Load(load) => load.lines(),
                other => vec![format!("{other} [{}]", other.code())],
            };
            for line in lines {
                diag!("error: {line}");
            }
            exit::of(e.code())
        }
    }
}
