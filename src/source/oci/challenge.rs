//! A registry's authentication challenges: the `WWW-Authenticate` values of its `401` answers
//! read as RFC 9110 §11.6.1 writes them ([`parse_challenges`]), what the registry session
//! ([`super::session`]) answers, and the token realms a registry names ([`bearer_token_realms`]),
//! which `push` asks before sending any credential.

use reqwest::header::WWW_AUTHENTICATE;
use reqwest::{Client, StatusCode};

use crate::support::escape;

/// The token realms that the registry `registry` (`host[:port]`, over HTTPS, or HTTP when
/// `plain_http`) names in the bearer challenges of its `/v2/` endpoint, as written: where a client
/// that answers challenges itself would send credentials. Every realm of every bearer challenge in
/// every `WWW-Authenticate` header is listed, whichever one that client picks; a header that is
/// not well formed, or a challenge naming its realm twice, is an error (what that client would
/// read in it is not known). `push` (whose client does answer challenges) asks this before
/// sending any credential.
pub async fn bearer_token_realms(
    registry: &str,
    plain_http: bool,
) -> Result<Vec<String>, TokenRealmError> {
    crate::source::tls::install_provider();
    let unavailable = |e: &dyn std::fmt::Display| {
        TokenRealmError::Unavailable(escape::text(&e.to_string()).to_string())
    };
    let client = Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unavailable(&e))?;
    let scheme = if plain_http { "http" } else { "https" };
    let response = client
        .get(format!("{scheme}://{registry}/v2/"))
        .send()
        .await
        .map_err(|e| unavailable(&e))?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return Ok(Vec::new());
    }
    let mut realms = Vec::new();
    for header in response.headers().get_all(WWW_AUTHENTICATE) {
        let challenges = header
            .to_str()
            .ok()
            .and_then(parse_challenges)
            .ok_or(TokenRealmError::Malformed)?;
        for challenge in challenges.iter().filter(|c| c.scheme == "bearer") {
            realms.extend(
                challenge
                    .param("realm")
                    .map_err(|()| TokenRealmError::Malformed)?,
            );
        }
    }
    Ok(realms)
}

/// Why [`bearer_token_realms`] could not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRealmError {
    /// The registry could not be reached (escaped).
    Unavailable(String),
    /// Its challenge is not well formed, or names a realm twice.
    Malformed,
}

/// One challenge of a `WWW-Authenticate` value: its scheme (lowercase) and parameters (names
/// lowercase, quoted values unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(super) scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of the parameter `name`: none, one, or `Err` when it is given twice (readers
    /// disagree on which counts).
    pub(super) fn param(&self, name: &str) -> Result<Option<String>, ()> {
        let mut values = self.params.iter().filter(|(k, _)| k == name);
        let first = values.next().map(|(_, v)| v.clone());
        if values.next().is_some() {
            return Err(());
        }
        Ok(first)
    }
}

/// The challenges of a `WWW-Authenticate` value (RFC 9110 §11.6.1: `scheme param=value, …`, the
/// values tokens or quoted strings, several challenges separated by commas); `None` when it is
/// not well formed (a `token68` challenge included: registries send parameters).
pub(crate) fn parse_challenges(value: &str) -> Option<Vec<Challenge>> {
    fn tchar(c: char) -> bool {
        c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
    }
    let mut chars = value.chars().peekable();
    let mut challenges: Vec<Challenge> = Vec::new();
    let skip_spaces = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
    };
    loop {
        skip_spaces(&mut chars);
        while chars.next_if(|c| *c == ',').is_some() {
            skip_spaces(&mut chars);
        }
        if chars.peek().is_none() {
            break;
        }
        let mut token = String::new();
        while let Some(c) = chars.next_if(|c| tchar(*c)) {
            token.push(c);
        }
        if token.is_empty() {
            return None;
        }
        skip_spaces(&mut chars);
        if chars.next_if(|c| *c == '=').is_none() {
            // A new challenge: its scheme, then a space or the end or a comma.
            challenges.push(Challenge {
                scheme: token.to_ascii_lowercase(),
                params: Vec::new(),
            });
            continue;
        }
        skip_spaces(&mut chars);
        let mut value = String::new();
        if chars.next_if(|c| *c == '"').is_some() {
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => value.push(chars.next()?),
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| tchar(*c) || *c == '/' || *c == ':') {
                value.push(c);
            }
            if value.is_empty() {
                return None;
            }
        }
        challenges
            .last_mut()?
            .params
            .push((token.to_ascii_lowercase(), value));
        skip_spaces(&mut chars);
        // A parameter ends at a comma or the end.
        if chars.peek().is_some_and(|c| *c != ',') {
            return None;
        }
    }
    Some(challenges)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn realms(value: &str) -> Option<Vec<Result<Option<String>, ()>>> {
        let challenges = parse_challenges(value)?;
        Some(
            challenges
                .iter()
                .filter(|c| c.scheme == "bearer")
                .map(|c| c.param("realm"))
                .collect(),
        )
    }

    #[test]
    fn challenges_are_read_as_http_auth_reads_them() {
        let one = |v: &str| realms(v).unwrap();
        assert_eq!(
            one(r#"Bearer realm="https://auth.example.com/token",service="registry""#),
            [Ok(Some("https://auth.example.com/token".to_owned()))]
        );
        assert_eq!(
            one("bearer Realm=https://a.example.com/t , scope=x"),
            [Ok(Some("https://a.example.com/t".to_owned()))]
        );
        // A realm hidden in a quoted value is not one; the realm after it is.
        assert_eq!(
            one(r#"Bearer service="x,realm=https://registry/token",realm="https://evil/t""#),
            [Ok(Some("https://evil/t".to_owned()))]
        );
        assert_eq!(
            one(r#"Bearer realm="https://a/\"q\"",service=s"#),
            [Ok(Some(r#"https://a/"q""#.to_owned()))]
        );
        // A bearer challenge after a Basic one, in one header.
        assert_eq!(
            one(r#"Basic realm="registry", Bearer realm="https://evil/t""#),
            [Ok(Some("https://evil/t".to_owned()))]
        );
        assert_eq!(one(r#"Basic realm="registry""#), []);
        // A realm named twice: which one a reader takes differs.
        assert_eq!(
            one(r#"Bearer realm="https://a/t",REALM="https://b/t""#),
            [Err(())]
        );
        for malformed in [
            r#"Bearer realm="https://a/t"#,
            "realm=https://a/t",
            "Bearer realm=https://a/t b",
            "Bearer realm=",
            "Bearer abc==",
            "Bearer realm=\"a\" Basic realm=b",
            "Bearer (realm)",
        ] {
            assert!(realms(malformed).is_none(), "{malformed}");
        }
    }
}
