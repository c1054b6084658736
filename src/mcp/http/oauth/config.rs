//! The `--oauth FILE` of `serve --listen`: which identity provider issues the access tokens the
//! server accepts, for which audience, and which agent's endpoint each token opens.
//!
//! The file is YAML or JSON (JSON is read as the YAML it also is) and as strict as the
//! descriptor: an unknown key, a key written twice, an anchor, an alias or a tag is refused, naming
//! the key. It holds `issuer` (an `https://` URL, or `http://` on a loopback host for tests; it must
//! equal the tokens' `iss`), optionally `audience` (an `aud` accepted besides each endpoint's own
//! URL), optionally `public_url` (the URL clients reach the server by, behind an ingress, kept in
//! its canonical form; default: the address it listens on), optionally `algorithms` (a subset of `RS256`,
//! `PS256`, `ES256`, `EdDSA`; default: all four) and `agents`, the rules: `{agent, claim, value}`,
//! where `agent` is a descriptor agent or `null` (the defaults at `/mcp`), written out.

use std::collections::BTreeSet;

use crate::format::yaml::{self, Node, NodeKind};
use crate::support::escape;

use super::validate::Algorithm;

/// The most bytes an `--oauth` file may hold.
pub const MAX_OAUTH_BYTES: u64 = 64 * 1024;

/// The most rules a file may hold.
pub const MAX_RULES: usize = 1024;

/// A parsed `--oauth` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// The issuer, exactly as the tokens' `iss` must hold it.
    pub issuer: String,
    /// An audience accepted besides each endpoint's own URL.
    pub audience: Option<String>,
    /// The URL clients use, canonical (lowercase scheme and host, no default port, no trailing
    /// `/`; `None`: the listen address).
    pub public_url: Option<String>,
    /// The signature algorithms accepted.
    pub algorithms: Vec<Algorithm>,
    /// The rules, in order: the first one a token matches decides its endpoint.
    pub rules: Vec<Rule>,
}

/// One rule: a token whose `claim` holds `value` opens the endpoint of `agent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The agent (`None`: the defaults at `/mcp`).
    pub agent: Option<String>,
    /// The claim's name.
    pub claim: String,
    /// The value it must hold (equal, in an array, or for `scope` in its space-separated list).
    pub value: String,
}

/// Why an `--oauth` file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct OAuthError {
    /// The file.
    pub source_name: String,
    /// What is wrong, naming the key.
    pub message: String,
}

impl OAuthError {
    /// Stable error code.
    pub fn code(&self) -> crate::mcp::code::ServeCode {
        crate::mcp::code::ServeCode::InvalidOauth
    }
}

/// Whether `host` (as [`reqwest::Url::host_str`] gives it, IPv6 in brackets) is a loopback name
/// or address.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An `http(s)://` URL with no credentials, query or fragment; `https` unless the host is
/// loopback.
// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn check_url(text: &str, key: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text).map_err(|e| format!("`{key}` is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{key}` must be an `https://` URL"));
    }
    let Some(host) = url.host_str() else {
        return Err(format!("`{key}` names no host"));
    };
    if url.scheme() == "http" && !is_loopback_host(host) {
        return Err(format!(
            "`{key}` must be `https://` (plain `http://` only on a loopback host)"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("`{key}` must not hold credentials"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("`{key}` must have no query and no fragment"));
    }
    Ok(url)
}

impl OAuthConfig {
    /// Reads the file at `path` (a regular file of at most [`MAX_OAUTH_BYTES`]) and parses it;
    /// every agent named must be one of `agents`.
    pub fn read(path: &std::path::Path, agents: &BTreeSet<String>) -> Result<Self, OAuthError> {
        let source_name = escape::path(path).to_string();
        let error = |message: String| OAuthError {
            source_name: source_name.clone(),
            message,
        };
        let bytes = crate::format::untrusted_fs::read_input(path, MAX_OAUTH_BYTES)
            .map_err(|e| error(e.reason))?
            .map_err(|size| error(format!("{size} bytes, over the bound of {MAX_OAUTH_BYTES}")))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            error(format!(
                "not UTF-8 text (an invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Self::parse(&text, &source_name, agents)
    }

    /// Parses the text of an `--oauth` file read from `source_name`.
    pub fn parse(
        text: &str,
        source_name: &str,
        agents: &BTreeSet<String>,
    ) -> Result<Self, OAuthError> {
        parse(text, agents).map_err(|message| OAuthError {
            source_name: source_name.to_owned(),
            message,
        })
    }
}

/// Refuses what this file never needs: anchors, aliases, tags.
// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn plain(node: &Node, key: &str) -> Result<(), String> {
    if node.anchored || node.tag.is_some() || matches!(node.kind, NodeKind::Alias) {
        return Err(format!(
            "`{key}` (line {}): anchors, aliases and tags are not allowed",
            node.position.line
        ));
    }
    Ok(())
}

/// The entries of a mapping, each key a plain string written once.
// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn mapping<'n>(node: &'n Node, key: &str) -> Result<Vec<(String, &'n Node)>, String> {
    plain(node, key)?;
    let NodeKind::Mapping { entries, .. } = &node.kind else {
        return Err(format!(
            "`{key}` (line {}) must be a mapping",
            node.position.line
        ));
    };
    let mut seen: Vec<(String, &Node)> = Vec::new();
    for (k, v) in entries {
        plain(k, key)?;
        let Some((name, _)) = k.as_scalar().filter(|_| k.is_core_string()) else {
            return Err(format!(
                "`{key}` (line {}): every key must be a string",
                k.position.line
            ));
        };
        let name = name.to_owned();
        if seen.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "`{}` is written twice (line {})",
                escape::text(&name),
                k.position.line
            ));
        }
        plain(v, &name)?;
        seen.push((name, v));
    }
    Ok(seen)
}

/// A string scalar, non-empty, at most 2048 characters.
// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn string(node: &Node, key: &str) -> Result<String, String> {
    let Some((value, _)) = node.as_scalar().filter(|_| node.is_core_string()) else {
        return Err(format!(
            "`{key}` (line {}) must be a string",
            node.position.line
        ));
    };
    if value.is_empty() || value.chars().count() > 2048 {
        return Err(format!(
            "`{key}` (line {}) must be 1 to 2048 characters",
            node.position.line
        ));
    }
    Ok(value.to_owned())
}

fn is_null(node: &Node) -> bool {
    matches!(node.as_scalar(), Some((value, yaml::Style::Plain)) if matches!(value, "null" | "~"))
}

// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn parse(text: &str, agents: &BTreeSet<String>) -> Result<OAuthConfig, String> {
    let root = yaml::parse(text)
        .map_err(|e| {
            format!(
                "not YAML or JSON (line {}: {})",
                e.position.line,
                escape::text(&e.message)
            )
        })?
        .ok_or_else(|| "is empty; it needs `issuer` and `agents`".to_owned())?;
    let mut issuer = None;
    let mut audience = None;
    let mut public_url = None;
    let mut algorithms = None;
    let mut rules = None;
    for (key, value) in mapping(&root, "the file")? {
        match key.as_str() {
            "issuer" => {
                let text = string(value, "issuer")?;
                check_url(&text, "issuer")?;
                issuer = Some(text);
            }
            "audience" => audience = Some(string(value, "audience")?),
            "public_url" => {
                let text = string(value, "public_url")?;
                let url = check_url(&text, "public_url")?;
                if url.path() != "/" && !url.path().is_empty() {
                    return Err(
                        "`public_url` must be an origin (`https://host[:port]`), without a path"
                            .to_owned(),
                    );
                }
                // The canonical form (lowercase host, no default port, no trailing `/`): the
                // metadata's `resource` and the audience a client asks its token for.
                public_url = Some(url.as_str().trim_end_matches('/').to_owned());
            }
            "algorithms" => algorithms = Some(parse_algorithms(value)?),
            "agents" => rules = Some(parse_rules(value, agents)?),
            other => {
                return Err(format!(
                    "unknown key `{}` (the keys are issuer, audience, public_url, algorithms, agents)",
                    escape::text(other)
                ));
            }
        }
    }
    let issuer = issuer.ok_or("`issuer` is missing")?;
    let rules = rules.ok_or("`agents` is missing (the rules that decide each token's endpoint)")?;
    Ok(OAuthConfig {
        issuer,
        audience,
        public_url,
        algorithms: algorithms.unwrap_or_else(|| Algorithm::ALL.to_vec()),
        rules,
    })
}

// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn sequence<'n>(node: &'n Node, key: &str) -> Result<&'n [Node], String> {
    plain(node, key)?;
    match &node.kind {
        NodeKind::Sequence { items, .. } => Ok(items),
        _ => Err(format!(
            "`{key}` (line {}) must be a list",
            node.position.line
        )),
    }
}

// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn parse_algorithms(node: &Node) -> Result<Vec<Algorithm>, String> {
    let items = sequence(node, "algorithms")?;
    if items.is_empty() {
        return Err(
            "`algorithms` is empty: name at least one of RS256, PS256, ES256, EdDSA".into(),
        );
    }
    let mut out = Vec::new();
    for item in items {
        let name = string(item, "algorithms")?;
        let algorithm = Algorithm::from_name(&name).ok_or_else(|| {
            format!(
                "`algorithms`: `{}` is not one of RS256, PS256, ES256, EdDSA (never `none`, never HS*)",
                escape::text(&name)
            )
        })?;
        if out.contains(&algorithm) {
            return Err(format!(
                "`algorithms`: `{}` is written twice",
                algorithm.name()
            ));
        }
        out.push(algorithm);
    }
    Ok(out)
}

// A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
fn parse_rules(node: &Node, agents: &BTreeSet<String>) -> Result<Vec<Rule>, String> {
    let items = sequence(node, "agents")?;
    if items.is_empty() {
        return Err("`agents` is empty: no token could open any endpoint".into());
    }
    if items.len() > MAX_RULES {
        return Err(format!("`agents` holds more than {MAX_RULES} rules"));
    }
    let mut rules = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("agents[{i}]");
        let mut agent = None;
        let mut claim = None;
        let mut value = None;
        for (key, v) in mapping(item, &at)? {
            match key.as_str() {
                "agent" => {
                    agent = Some(if is_null(v) {
                        None
                    } else {
                        Some(string(v, &format!("{at}.agent"))?)
                    })
                }
                "claim" => claim = Some(string(v, &format!("{at}.claim"))?),
                "value" => value = Some(string(v, &format!("{at}.value"))?),
                other => {
                    return Err(format!(
                        "{at}: unknown key `{}` (each rule has exactly agent, claim, value)",
                        escape::text(other)
                    ));
                }
            }
        }
        // `agent: null` must be written: a forgotten key must not open the default endpoint.
        let agent = agent.ok_or_else(|| {
            format!("{at}: `agent` is missing (write `null` for the default catalogue at /mcp)")
        })?;
        let claim = claim.ok_or_else(|| format!("{at}: `claim` is missing"))?;
        let value = value.ok_or_else(|| format!("{at}: `value` is missing"))?;
        if let Some(name) = &agent
            && !agents.contains(name)
        {
            return Err(format!(
                "{at}.agent: {}",
                crate::descriptor::plan::UnknownAgent::new(name, agents)
            ));
        }
        rules.push(Rule {
            agent,
            claim,
            value,
        });
    }
    Ok(rules)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
