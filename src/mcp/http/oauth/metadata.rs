//! The RFC 9728 protected-resource metadata of each endpoint: `GET
//! /.well-known/oauth-protected-resource` + the endpoint's path (`/mcp`,
//! `/agents/<name>/mcp`), and the bare well-known path for `/mcp`. Each names the endpoint's URL
//! as `resource`, the issuer as its only authorization server, `bearer_methods_supported:
//! ["header"]` and the scopes the rules name (rules on `scope` for this endpoint). No token is
//! needed to read it; every 401 points to it.

use serde_json::{Value, json};

use super::ResourceServer;

/// The well-known prefix of RFC 9728.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl ResourceServer {
    /// The URL of the RFC 9728 document of the endpoint at `path`.
    pub fn metadata_url(&self, path: &str) -> String {
        format!("{}{WELL_KNOWN}{path}", self.base_url)
    }
}

/// The endpoint path a metadata request names (`/.well-known/oauth-protected-resource` alone
/// is `/mcp`'s); `None` for a path outside the prefix.
pub fn endpoint_path(request_path: &str) -> Option<&str> {
    let rest = request_path.strip_prefix(WELL_KNOWN)?;
    match rest {
        "" | "/" => Some("/mcp"),
        rest if rest.starts_with('/') => Some(rest),
        _ => None,
    }
}

/// The document of the endpoint at `path`, which serves `agent`.
pub fn document(server: &ResourceServer, path: &str, agent: Option<&str>) -> Value {
    json!({
        "resource": server.resource(path),
        "authorization_servers": [server.config().issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": server.scopes(agent),
    })
}
