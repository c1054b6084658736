//! Registry credentials: anonymous unless given. `SKILLFOLD_REGISTRY_AUTH` (`USER:PASSWORD`)
//! wins; otherwise the `auths` entry for the registry in Docker's `config.json`
//! (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`): `auth` (base64 of
//! `USER:PASSWORD`) or `username` and `password`. Credential helpers (`credsStore`,
//! `credHelpers`) are not run. Credentials are never printed, logged or put in a report.

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;

/// The largest Docker `config.json` read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A user name and password for HTTP Basic authentication (or a registry's token exchange).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub user: String,
    /// The password or token.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(redacted)")
    }
}

/// Where credentials came from, for messages (never the credentials themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// None: anonymous.
    Anonymous,
    /// `SKILLFOLD_REGISTRY_AUTH`.
    Environment(Credentials),
    /// Docker's `config.json` at this path.
    DockerConfig(PathBuf, Credentials),
}

impl Found {
    /// Where the credentials came from, for a message: never the credentials themselves.
    pub fn describe(&self) -> String {
        match self {
            Found::Anonymous => "anonymous".to_owned(),
            Found::Environment(_) => "credentials from SKILLFOLD_REGISTRY_AUTH".to_owned(),
            Found::DockerConfig(path, _) => {
                format!("credentials from {}", crate::format::escape::path(path))
            }
        }
    }

    /// The credentials, if any.
    pub fn credentials(&self) -> Option<&Credentials> {
        match self {
            Found::Anonymous => None,
            Found::Environment(c) | Found::DockerConfig(_, c) => Some(c),
        }
    }
}

/// The credentials for `registry` (`host[:port]`).
pub fn lookup(registry: &str) -> Found {
    if let Some(value) = std::env::var_os("SKILLFOLD_REGISTRY_AUTH")
        && let Some(credentials) = value.to_str().and_then(split)
    {
        return Found::Environment(credentials);
    }
    let Some(path) = docker_config() else {
        return Found::Anonymous;
    };
    match from_docker_config(&path, registry) {
        Some(credentials) => Found::DockerConfig(path, credentials),
        None => Found::Anonymous,
    }
}

fn split(value: &str) -> Option<Credentials> {
    let (user, password) = value.split_once(':')?;
    (!user.is_empty()).then(|| Credentials {
        user: user.to_owned(),
        password: password.to_owned(),
    })
}

fn docker_config() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker/config.json")),
    }
}

fn from_docker_config(path: &std::path::Path, registry: &str) -> Option<Credentials> {
    // A FIFO or device is refused unopened, a file over the bound unread.
    let bytes = crate::format::untrusted_fs::read_input(path, MAX_CONFIG_BYTES)
        .ok()?
        .ok()?;
    let config: Value = serde_json::from_slice(&bytes).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(key, entry)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        (host == registry).then_some(entry)
    })?;
    if let Some(encoded) = entry.get("auth").and_then(Value::as_str) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()?;
        return split(std::str::from_utf8(&decoded).ok()?);
    }
    Some(Credentials {
        user: entry.get("username")?.as_str()?.to_owned(),
        password: entry.get("password")?.as_str()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_entries_are_matched_by_host_in_either_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("ci:s3cret:with:colons");
        fs_err::write(
            &path,
            format!(
                r#"{{"auths": {{"https://registry.example.com/v1/": {{"auth": "{auth}"}},
                   "127.0.0.1:5000": {{"username": "u", "password": "p"}}}}}}"#
            ),
        )
        .unwrap();
        let found = from_docker_config(&path, "registry.example.com").unwrap();
        assert_eq!(
            (found.user.as_str(), found.password.as_str()),
            ("ci", "s3cret:with:colons")
        );
        let found = from_docker_config(&path, "127.0.0.1:5000").unwrap();
        assert_eq!((found.user.as_str(), found.password.as_str()), ("u", "p"));
        assert!(from_docker_config(&path, "other.example.com").is_none());
        assert_eq!(format!("{found:?}"), "Credentials(redacted)");
    }

    #[test]
    fn an_environment_value_needs_a_user_and_a_colon() {
        assert!(split("user").is_none());
        assert!(split(":password").is_none());
        assert_eq!(split("u:").map(|c| c.password), Some(String::new()));
    }
}
