//! The `skillfold` command (and, run under the name `agentskills`, the skills-ref 0.1.1 reference
//! CLI). The command line lives in the library's `cli` module; this is its entry point.

fn main() -> std::process::ExitCode {
    skillfold::run_cli()
}
