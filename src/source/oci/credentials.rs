//! Registry credentials, scoped to an origin (DESIGN §8): anonymous unless given, and a credential
//! is only ever returned for the scheme + host + port it was configured for.
//!
//! - `SKILLFOLD_REGISTRY_AUTH=REGISTRY=USER:PASSWORD` (`REGISTRY` is `[https://|http://]host[:port]`)
//!   is for that registry only; it wins over Docker's `config.json` there.
//! - `SKILLFOLD_REGISTRY_AUTH=USER:PASSWORD`, naming no registry, is for the one registry a command
//!   names itself (`push --to`, [`Unscoped::CommandRegistry`]); `prepare`, whose descriptor may
//!   name several registries, sends it nowhere ([`Unscoped::Nowhere`]) and says so when a
//!   registry asks for credentials.
//! - Otherwise the `auths` entry for the registry in Docker's `config.json`
//!   (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`): `auth` (base64 of
//!   `USER:PASSWORD`) or `username` and `password`, matched as Docker keys them.
//!
//! A key (in either place) is a [`Scope`]; it matches an origin when its host is the origin's host (ASCII case
//! folded), its port the origin's port (a key without a port: the default port of the origin's
//! scheme, 443 or 80) and, when the key names a scheme, that scheme: an `https://` key is never
//! used over plain HTTP, an `http://` key never over HTTPS; a key without a scheme follows the
//! scheme the descriptor chose for the source (`plain_http`). A path after the host
//! (`https://index.docker.io/v1/`) is ignored. Credential helpers (`credsStore`, `credHelpers`)
//! are not run. Credentials are never printed, logged or put in a report.
//!
//! A registry's credentials go to the token realm its bearer challenge names only when that realm
//! is on the registry's own origin, or on an origin `SKILLFOLD_REGISTRY_TOKEN_REALMS` names for
//! that registry ([`token_realm`]): a list of `REGISTRY=REALM` entries, separated by commas or
//! white space, each side written as a registry key is (`[https://|http://]host[:port]`).

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;

use crate::source::origin::{Origin, Scope};

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

/// What a `SKILLFOLD_REGISTRY_AUTH` that names no registry is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unscoped {
    /// The one registry the command line names (`push --to`).
    CommandRegistry,
    /// No registry (`prepare`: the descriptor may name several).
    Nowhere,
}

/// Where credentials came from, for messages (never the credentials themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundCredentials {
    /// None: anonymous.
    Anonymous,
    /// None, though `SKILLFOLD_REGISTRY_AUTH` is set: it names no registry, so it is sent to none.
    UnscopedEnvironment,
    /// `SKILLFOLD_REGISTRY_AUTH`.
    Environment(Credentials),
    /// Docker's `config.json` at this path.
    DockerConfig(PathBuf, Credentials),
}

impl FoundCredentials {
    /// Where the credentials came from, for a message: never the credentials themselves.
    pub fn describe(&self) -> String {
        match self {
            FoundCredentials::Anonymous => "anonymous".to_owned(),
            FoundCredentials::UnscopedEnvironment => "anonymous: SKILLFOLD_REGISTRY_AUTH names no registry, so it is sent to none; write it as REGISTRY=USER:PASSWORD".to_owned(),
            FoundCredentials::Environment(_) => "credentials from SKILLFOLD_REGISTRY_AUTH".to_owned(),
            FoundCredentials::DockerConfig(path, _) => {
                format!("credentials from {}", crate::support::escape::path(path))
            }
        }
    }

    /// The credentials, if any.
    pub fn credentials(&self) -> Option<&Credentials> {
        match self {
            FoundCredentials::Anonymous | FoundCredentials::UnscopedEnvironment => None,
            FoundCredentials::Environment(c) | FoundCredentials::DockerConfig(_, c) => Some(c),
        }
    }
}

/// The credentials configured for `origin` (a registry's), and nothing configured for another.
pub fn lookup(origin: &Origin, unscoped: Unscoped) -> FoundCredentials {
    let mut unscoped_set = false;
    if let Some(value) = std::env::var_os("SKILLFOLD_REGISTRY_AUTH")
        && let Some(value) = value.to_str()
    {
        match environment(value) {
            Some((Some(scope), credentials)) if scope.matches(origin) => {
                return FoundCredentials::Environment(credentials);
            }
            Some((None, credentials)) if unscoped == Unscoped::CommandRegistry => {
                return FoundCredentials::Environment(credentials);
            }
            Some((None, _)) => unscoped_set = true,
            _ => {}
        }
    }
    let found = docker_config().and_then(|path| {
        let credentials = from_docker_config(&path, origin)?;
        Some(FoundCredentials::DockerConfig(path, credentials))
    });
    match found {
        Some(found) => found,
        None if unscoped_set => FoundCredentials::UnscopedEnvironment,
        None => FoundCredentials::Anonymous,
    }
}

/// Whether a registry's credentials may go to the token realm its challenge names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Realm {
    /// The realm is on the registry's own origin.
    SameOrigin,
    /// The realm is on another origin, which `SKILLFOLD_REGISTRY_TOKEN_REALMS` names for the
    /// registry.
    Named,
    /// The realm is on another origin, named for the registry nowhere: it gets no credential.
    Unnamed,
}

impl Realm {
    /// Whether the registry's credentials may be sent to the realm.
    pub fn gets_credentials(self) -> bool {
        self != Realm::Unnamed
    }
}

/// Where the token realm at `realm`, named by the challenge of the registry at `registry`, stands.
pub fn token_realm(registry: &Origin, realm: &Origin) -> Realm {
    if registry == realm {
        return Realm::SameOrigin;
    }
    let named = std::env::var_os("SKILLFOLD_REGISTRY_TOKEN_REALMS")
        .and_then(|v| v.to_str().map(|v| named_realm(v, registry, realm)))
        .unwrap_or(false);
    if named { Realm::Named } else { Realm::Unnamed }
}

/// Whether the `REGISTRY=REALM` list `value` names `realm` for `registry`. An entry that is not
/// two registry keys around an `=` names nothing.
fn named_realm(value: &str, registry: &Origin, realm: &Origin) -> bool {
    value
        .split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter_map(|entry| entry.split_once('='))
        .filter_map(|(r, t)| Some((Scope::parse(r)?, Scope::parse(t)?)))
        .any(|(r, t)| r.matches(registry) && t.matches(realm))
}

/// `REGISTRY=USER:PASSWORD` (with its scope) or `USER:PASSWORD` (none). A value whose part before
/// the first `=` is not a registry (`host` with a `.`, a port, or `localhost`) names none.
fn environment(value: &str) -> Option<(Option<Scope>, Credentials)> {
    if let Some((key, rest)) = value.split_once('=')
        && looks_like_registry(key)
        && let Some(scope) = Scope::parse(key)
        && let Some(credentials) = split(rest)
    {
        return Some((Some(scope), credentials));
    }
    split(value).map(|c| (None, c))
}

fn looks_like_registry(key: &str) -> bool {
    let authority = key.split_once("://").map_or(key, |(_, rest)| rest);
    let host = authority.split('/').next().unwrap_or_default();
    let (name, port) = host.rsplit_once(':').unwrap_or((host, ""));
    let port_ok = port.is_empty() || port.bytes().all(|b| b.is_ascii_digit());
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    port_ok && name_ok && (name.contains('.') || !port.is_empty() || name == "localhost")
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

fn from_docker_config(path: &std::path::Path, origin: &Origin) -> Option<Credentials> {
    // A FIFO or device is refused unopened, a file over the bound unread.
    let bytes = crate::format::untrusted_fs::read_input(path, MAX_CONFIG_BYTES)
        .ok()?
        .ok()?;
    let config: Value = serde_json::from_slice(&bytes).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(key, entry)| {
        Scope::parse(key)
            .is_some_and(|scope| scope.matches(origin))
            .then_some(entry)
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

    fn origin(registry: &str, plain_http: bool) -> Origin {
        Origin::registry(registry, plain_http).unwrap()
    }

    #[test]
    fn docker_config_entries_are_matched_by_origin_in_either_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("ci:s3cret:with:colons");
        fs_err::write(
            &path,
            format!(
                r#"{{"auths": {{"https://registry.example.com/v1/": {{"auth": "{auth}"}},
                   "127.0.0.1:5000": {{"username": "u", "password": "p"}},
                   "http://plain.example.com:8080": {{"username": "h", "password": "p"}}}}}}"#
            ),
        )
        .unwrap();
        let found = from_docker_config(&path, &origin("registry.example.com", false)).unwrap();
        assert_eq!(
            (found.user.as_str(), found.password.as_str()),
            ("ci", "s3cret:with:colons")
        );
        // The same host on its default port, spelled out.
        assert!(from_docker_config(&path, &origin("Registry.Example.com:443", false)).is_some());
        let found = from_docker_config(&path, &origin("127.0.0.1:5000", true)).unwrap();
        assert_eq!((found.user.as_str(), found.password.as_str()), ("u", "p"));
        assert!(from_docker_config(&path, &origin("127.0.0.1:5000", false)).is_some());
        assert_eq!(format!("{found:?}"), "Credentials(redacted)");
        // Another host, another port, another scheme than the key names: nothing.
        assert!(from_docker_config(&path, &origin("other.example.com", false)).is_none());
        assert!(from_docker_config(&path, &origin("127.0.0.1:5001", true)).is_none());
        assert!(from_docker_config(&path, &origin("127.0.0.1", true)).is_none());
        assert!(from_docker_config(&path, &origin("registry.example.com", true)).is_none());
        assert!(from_docker_config(&path, &origin("registry.example.com:5000", false)).is_none());
        assert!(from_docker_config(&path, &origin("plain.example.com:8080", false)).is_none());
        assert!(from_docker_config(&path, &origin("plain.example.com:8080", true)).is_some());
        assert!(from_docker_config(&path, &origin("example.com", false)).is_none());
    }

    #[test]
    fn a_token_realm_is_named_for_one_registry_by_origin() {
        let url = |u: &str| Origin::of(&reqwest::Url::parse(u).unwrap()).unwrap();
        let registry = origin("registry.example.com", false);
        let realm = url("https://auth.example.com/token");
        let list = "other.example.com=auth.example.com, registry.example.com=https://auth.example.com:443\tx=y";
        assert!(named_realm(list, &registry, &realm));
        // Named for another registry only, or another port, scheme or host of the realm: not named.
        assert!(!named_realm(
            "other.example.com=auth.example.com",
            &registry,
            &realm
        ));
        assert!(!named_realm(
            "registry.example.com=auth.example.com:8443",
            &registry,
            &realm
        ));
        assert!(!named_realm(
            "registry.example.com=http://auth.example.com",
            &registry,
            &realm
        ));
        assert!(!named_realm(
            "registry.example.com=example.com",
            &registry,
            &realm
        ));
        assert!(!named_realm(
            "registry.example.com:5000=auth.example.com",
            &registry,
            &realm
        ));
        // Malformed entries name nothing.
        for value in [
            "",
            "registry.example.com",
            "=auth.example.com",
            "registry.example.com=",
            "registry.example.com=user@auth.example.com",
        ] {
            assert!(!named_realm(value, &registry, &realm), "{value}");
        }
        // The registry's own origin needs no naming.
        assert_eq!(
            token_realm(&registry, &url("https://registry.example.com/token")),
            Realm::SameOrigin
        );
    }

    #[test]
    fn an_environment_value_needs_a_user_and_a_colon() {
        assert!(split("user").is_none());
        assert!(split(":password").is_none());
        assert_eq!(split("u:").map(|c| c.password), Some(String::new()));
    }

    #[test]
    fn an_environment_value_names_its_registry_or_none() {
        let scoped = |v: &str| environment(v).map(|(s, c)| (s, c.user, c.password));
        let (scope, user, password) = scoped("127.0.0.1:5000=puller:pa=ss:word").unwrap();
        assert_eq!((user.as_str(), password.as_str()), ("puller", "pa=ss:word"));
        let scope = scope.unwrap();
        assert!(scope.matches(&origin("127.0.0.1:5000", true)));
        assert!(!scope.matches(&origin("127.0.0.1:5001", true)));
        assert!(!scope.matches(&origin("127.0.0.2:5000", true)));
        let scope = scoped("https://registry.example.com=ci:x")
            .unwrap()
            .0
            .unwrap();
        assert!(scope.matches(&origin("registry.example.com", false)));
        assert!(!scope.matches(&origin("registry.example.com", true)));
        assert!(scoped("localhost=u:p").unwrap().0.is_some());
        // Not a registry before the `=`: the whole value is USER:PASSWORD, naming none.
        for value in ["user:pa=ss", "us=er:pass"] {
            let (scope, ..) = scoped(value).unwrap();
            assert!(scope.is_none(), "{value}");
        }
        assert!(scoped("registry.example.com=nocolon").is_none());
    }
}
