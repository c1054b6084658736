//! Loading the runtime for the commands that serve skills (`prompt`, `load`, `run-script`):
//! the descriptor, then the verified snapshots one agent needs. Bundles that fail verification
//! are named on stderr and left out.

use crate::runtime::Runtime;
use crate::runtime::catalogue::Catalogue;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::{self, Exit};

#[derive(Debug, Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub config: ConfigArg,

    /// The agent whose catalogue to use: the defaults plus its extras (default: the defaults).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,

    /// Also report discovered skills that were dropped (ambiguous, shadowed) or skipped
    /// (malformed).
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// The agent's catalogue, or the exit status after the errors were printed.
pub fn catalogue(args: &AgentArgs) -> Result<Catalogue, Exit> {
    let plan = args.config.plan()?;
    let fail = |e: crate::runtime::catalogue::CatalogueError| {
        diag!("error: {e} [{}]", e.code());
        exit::of(e.code())
    };
    let runtime = Runtime::load_for(plan, args.agent.as_deref()).map_err(fail)?;
    for failure in runtime.failures() {
        diag!("warning: {failure} [{}]", failure.code);
        let hint = crate::format::hint::Hint::of_refusal(
            failure.code.as_str(),
            &failure.details,
            crate::format::hint::Via::Descriptor,
        );
        crate::cli::output::details("  ", &failure.details, hint.as_ref());
    }
    if let Some(Err(e)) = runtime.guides() {
        diag!("warning: {e}");
    }
    let catalogue = runtime.catalogue(args.agent.as_deref()).map_err(fail)?;
    if args.verbose
        && let Some(discovery) = catalogue.discovery()
    {
        for line in discovery.dropped.iter().chain(&discovery.skipped) {
            diag!("note: guides: {line}");
        }
    }
    Ok(catalogue)
}

/// Calls `tool` with `input` and prints its JSON result (stdout) or error object (stderr).
pub fn call_and_print(catalogue: &Catalogue, tool: &str, input: &serde_json::Value) -> Exit {
    match catalogue.call(tool, input) {
        Ok((output, _record)) => crate::cli::output::print_json(&output),
        Err(e) => {
            // The JSON writer escapes every control and invisible character; one line per line
            // of the object.
            let text = crate::support::json_text::pretty(&e.to_json()).unwrap_or_default();
            for line in text.lines() {
                diag!("{line}");
            }
            exit::of(e.code)
        }
    }
}
