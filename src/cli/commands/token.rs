//! `skillfold token`: a new bearer token for an agent's endpoint of `serve --listen`.

use std::path::PathBuf;

use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::{self, Exit};
use crate::codes::{CommandCode, ErrorCode, ServeCode};
use crate::mcp::http::tokens::{MAX_TOKENS_BYTES, Tokens};
use crate::ops::token;
use crate::support::escape;

/// Make a bearer token for `serve --listen --tokens FILE`: print it once, keep only its hash.
///
/// Prints a new random token (32 bytes from the operating system's random source) on stdout,
/// once, and appends `{"agent": NAME, "sha256": HEX}` to the tokens file (`--defaults`: `null`,
/// the default catalogue at `/mcp`). The file is replaced atomically and keeps its mode; a new
/// one is created with mode 0600. The result is checked with the server's own reader first
/// (every agent named must be one of the descriptor's): a file the server would refuse is not
/// written. The server reads the file when it starts: restart it to accept the new token.
///
/// Exit status: 0 the token was made and its hash written; 1 the random source or the file
/// system failed (`token_write_failed`; nothing written); 2 an agent the descriptor does not
/// name, a tokens file the server would refuse, or a link at its path (`invalid_tokens`).
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  skillfold token --agent reviewer --tokens /etc/skillfold/tokens.json > reviewer.token"
)]
#[command(group(clap::ArgGroup::new("endpoint").required(true).args(["agent", "defaults"])))]
pub struct TokenArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// The agent whose endpoint (`/agents/<name>/mcp`) the token opens.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,

    /// The token opens the default catalogue at `/mcp` (`"agent": null`).
    #[arg(long)]
    defaults: bool,

    /// The tokens file to append the token's hash to (created if missing).
    #[arg(long, value_name = "FILE")]
    tokens: PathBuf,
}

pub fn run(args: TokenArgs) -> Exit {
    let plan = match args.config.plan() {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    let agents = plan.agents.keys().cloned().collect();
    let shown = escape::path(&args.tokens).to_string();
    let failed = |e: token::TokenFileError| {
        let code = if e.transient() {
            ErrorCode::from(CommandCode::TokenWriteFailed)
        } else {
            ErrorCode::from(ServeCode::InvalidTokens)
        };
        diag!("error: {e} [{code}]");
        Exit::of(&code)
    };
    let existing = match token::read(&args.tokens, MAX_TOKENS_BYTES as u64) {
        Ok(existing) => existing,
        Err(e) => return failed(e),
    };
    // A file the server refuses already is not appended to: its problem is named first.
    if let Some(existing) = &existing
        && let Err(e) = Tokens::parse(&existing.text, &shown, &agents)
    {
        diag!("error: {e} [{}]", e.code());
        return exit::of(e.code());
    }
    let new = match token::generate() {
        Ok(new) => new,
        Err(e) => return failed(e),
    };
    let text = match token::append(
        &args.tokens,
        existing.as_ref().map(|e| e.text.as_str()),
        args.agent.as_deref(),
        &new.sha256,
    ) {
        Ok(text) => text,
        Err(e) => return failed(e),
    };
    // What the server will read: every agent known, no hash twice, within its bound.
    if let Err(e) = Tokens::parse(&text, &shown, &agents) {
        diag!("error: {e} [{}]", e.code());
        return exit::of(e.code());
    }
    let entries = text.matches("\"sha256\"").count();
    let mode = existing.map_or(token::NEW_FILE_MODE, |e| e.mode);
    if let Err(e) = token::write(&args.tokens, &text, mode) {
        return failed(e);
    }
    let endpoint = match &args.agent {
        Some(agent) => format!("/agents/{}/mcp", escape::text(agent)),
        None => "/mcp".to_owned(),
    };
    diag!(
        "added the SHA-256 of a new token for {endpoint} to `{shown}` ({entries} token(s)); the token is on stdout, shown once: give it to the agent, restart the server"
    );
    crate::cli::output::print(&format!("{}\n", new.token))
}
