//! `skillfold serve`: the MCP server over stdio.

use std::time::Duration;

use crate::mcp::{self, ServeOptions};
use clap::Args;

use super::runtime_args::AgentArgs;
use crate::cli::exit::{self, Exit};

/// Serve an agent's skills to an LLM host as an MCP server over stdio, or every agent's over
/// HTTP with --listen.
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
/// With --listen ADDR:PORT, one server serves every agent over MCP Streamable HTTP: the defaults
/// at `/mcp`, each agent's catalogue at `/agents/<name>/mcp`, each endpoint behind its own bearer
/// tokens (--tokens), with `GET /healthz` and `GET /readyz` for probes. Sessions are bound to the
/// endpoint and token that opened them. With --oauth FILE it is an OAuth 2.1 resource server:
/// JWT access tokens of the identity provider the file names are accepted too.
///
/// Exit status: 0 the client closed the connection (or SIGTERM/SIGINT); 1 the session failed or
/// the address cannot be listened on; 2 a bad descriptor, an unknown agent, bad tokens, a bad
/// --oauth file, or a reachable address without tokens or --oauth.
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

    #[cfg(feature = "http")]
    #[command(flatten)]
    http: HttpArgs,
}

/// `--listen` and what goes with it.
#[cfg(feature = "http")]
#[derive(Debug, Args)]
struct HttpArgs {
    /// Serve MCP Streamable HTTP on this address instead of stdio: the defaults at `/mcp`, each
    /// agent's catalogue at `/agents/<name>/mcp`, `/healthz` and `/readyz`. An address that is
    /// not loopback needs --tokens or --oauth (or --insecure-no-auth).
    #[arg(long, value_name = "ADDR:PORT", conflicts_with = "agent")]
    listen: Option<std::net::SocketAddr>,

    /// The bearer tokens accepted, by SHA-256: a JSON array of `{"agent": NAME or null,
    /// "sha256": HEX}` (null: the defaults at `/mcp`). Never the tokens themselves.
    #[arg(long, value_name = "FILE", requires = "listen")]
    tokens: Option<std::path::PathBuf>,

    /// Accept the JWT access tokens of an identity provider: a YAML or JSON file with
    /// `issuer`, optionally `audience` and `public_url`, and `agents` (rules `{agent, claim,
    /// value}`; the first a token matches decides its endpoint). With --tokens, either accepts.
    #[arg(long, value_name = "FILE", requires = "listen")]
    oauth: Option<std::path::PathBuf>,

    /// A browser origin allowed to call (`https://app.example.com:443`); repeatable. Requests
    /// with any other `Origin` header are refused (403); requests without one are not.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    allow_origins: Vec<String>,

    /// Serve an address that is not loopback without tokens: anyone who reaches it gets every
    /// agent's skills.
    #[arg(long, requires = "listen")]
    insecure_no_auth: bool,

    /// At most this many live sessions; beyond, new sessions get 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = mcp::http::DEFAULT_MAX_SESSIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_sessions: usize,

    /// Append one JSON line per tool call and resource read to this file (`-`: stderr): agent,
    /// session, skill, version, pinned hash, file, bytes and their SHA-256, outcome. Reopened on
    /// SIGHUP.
    #[arg(long, value_name = "PATH", requires = "listen")]
    audit_log: Option<std::path::PathBuf>,

    /// The bearer tokens that may read /metrics, in the --tokens format with `"agent": null`
    /// (default: /metrics needs no token).
    #[arg(long, value_name = "FILE", requires = "listen")]
    metrics_tokens: Option<std::path::PathBuf>,

    /// Serve HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "PEM", requires_all = ["listen", "tls_key"])]
    tls_cert: Option<std::path::PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,

    /// Close sessions idle this many seconds.
    #[arg(long, value_name = "SECONDS", default_value = "1800", value_parser = parse_interval)]
    session_idle: Duration,

    /// A request body must arrive whole within this many seconds of its headers; beyond, 408
    /// and the connection is closed.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_interval)]
    body_timeout: Duration,

    /// An answer's bytes may wait this many seconds for the client to take them; beyond, the
    /// connection is closed.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_interval)]
    write_timeout: Duration,

    /// At most this many open connections; beyond, 16 more (4 per client address) are admitted
    /// only to answer /healthz or /readyz once, and the rest are closed at once.
    #[arg(long, value_name = "N", default_value_t = mcp::http::DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections: usize,

    /// At most this many open connections from one client address that have not yet presented a
    /// valid token (a connection counts for its token from its first request that does); beyond,
    /// a new one is served waiting for up to 5 s: a request with a valid token places it for its
    /// token at once, one without waits for a place or takes the place of one idle for 2 s, else
    /// gets 503 and the connection is closed.
    #[arg(long, value_name = "N", default_value_t = mcp::http::DEFAULT_MAX_CONNECTIONS_PER_CLIENT, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections_per_client: usize,

    /// At most this many open connections of one token (or one --oauth subject); beyond, the
    /// first request of another gets 429 with Retry-After and its connection is closed.
    #[arg(long, value_name = "N", default_value_t = mcp::http::DEFAULT_MAX_CONNECTIONS_PER_TOKEN, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_connections_per_token: usize,

    /// At most this many requests in flight that open no session (stateless 2026-07-28
    /// requests, and initialize); beyond, 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = mcp::http::DEFAULT_MAX_IN_FLIGHT, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_in_flight: usize,

    /// At most this many of them per token (the requests of no token share one count);
    /// beyond, 429 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = mcp::http::DEFAULT_MAX_IN_FLIGHT_PER_TOKEN, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    max_in_flight_per_token: usize,
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
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
    mcp::set_diagnostics(|line| crate::cli::output::diag_line(format_args!("{line}")));
    #[cfg(feature = "http")]
    if let Some(listen) = args.http.listen {
        return run_http(&args, listen);
    }
    let options = ServeOptions {
        config: args.agent.config.path,
        agent: args.agent.agent,
        watch: args.watch,
        poll_interval: args.poll_interval,
    };
    finish(mcp::run(options))
}

/// The exit status of a server that stopped, after its errors were printed.
fn finish(result: Result<(), mcp::ServeError>) -> Exit {
    match result {
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

#[cfg(feature = "http")]
fn run_http(args: &ServeArgs, listen: std::net::SocketAddr) -> Exit {
    use mcp::http::tokens::Tokens;

    let plan = match args.agent.config.plan() {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    let agents = plan.agents.keys().cloned().collect();
    let tokens = match (&args.http.tokens, std::env::var("SKILLFOLD_SERVE_TOKENS")) {
        (Some(path), _) => Some(Tokens::read(path, &agents)),
        (None, Ok(text)) => Some(Tokens::parse(&text, "SKILLFOLD_SERVE_TOKENS", &agents)),
        (None, Err(_)) => None,
    };
    let tokens = match tokens.transpose() {
        Ok(tokens) => tokens,
        Err(e) => {
            diag!("error: {e} [{}]", e.code());
            return exit::of(e.code());
        }
    };
    let metrics_tokens = match args
        .http
        .metrics_tokens
        .as_deref()
        .map(|path| Tokens::read(path, &Default::default()))
        .transpose()
    {
        Ok(tokens) => tokens,
        Err(e) => {
            diag!("error: {e} [{}]", e.code());
            return exit::of(e.code());
        }
    };
    let oauth = match args
        .http
        .oauth
        .as_deref()
        .map(|path| mcp::http::oauth::config::OAuthConfig::read(path, &agents))
        .transpose()
    {
        Ok(oauth) => oauth,
        Err(e) => {
            diag!("error: {e} [{}]", e.code());
            return exit::of(e.code());
        }
    };
    finish(mcp::http::run(mcp::http::HttpOptions {
        config: args.agent.config.path.clone(),
        listen,
        tokens,
        oauth,
        allow_origins: args.http.allow_origins.clone(),
        insecure_no_auth: args.http.insecure_no_auth,
        max_sessions: args.http.max_sessions,
        session_idle: args.http.session_idle,
        watch: args.watch,
        poll_interval: args.poll_interval,
        audit_log: args.http.audit_log.clone(),
        tls: args.http.tls_cert.clone().zip(args.http.tls_key.clone()),
        metrics_tokens,
        body_timeout: args.http.body_timeout,
        write_timeout: args.http.write_timeout,
        max_connections: args.http.max_connections,
        max_connections_per_client: args.http.max_connections_per_client,
        max_connections_per_token: args.http.max_connections_per_token,
        max_in_flight: args.http.max_in_flight,
        max_in_flight_per_token: args.http.max_in_flight_per_token,
    }))
}
