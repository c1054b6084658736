use std::collections::BTreeSet;

use super::*;

fn agents() -> BTreeSet<String> {
    ["support".to_owned()].into_iter().collect()
}

fn parse(text: &str) -> Result<OAuthConfig, String> {
    OAuthConfig::parse(text, "oauth.yaml", &agents()).map_err(|e| e.to_string())
}

#[test]
fn the_issues_example_reads_the_same_as_yaml_and_as_json() {
    let yaml = "issuer: https://idp.example.com/realms/agents   # must equal iss\naudience: https://skills.example.com\npublic_url: https://skills.example.com/\nagents:\n  - { agent: support, claim: client_id, value: support-bot }\n  - { agent: null,    claim: scope,     value: skills.default }\n";
    let json = r#"{"issuer": "https://idp.example.com/realms/agents", "audience": "https://skills.example.com", "public_url": "https://skills.example.com/", "agents": [{"agent": "support", "claim": "client_id", "value": "support-bot"}, {"agent": null, "claim": "scope", "value": "skills.default"}]}"#;
    let config = parse(yaml).unwrap();
    assert_eq!(config, parse(json).unwrap());
    assert_eq!(
        config.public_url.as_deref(),
        Some("https://skills.example.com")
    );
    assert_eq!(config.algorithms, Algorithm::ALL);
    assert_eq!(
        config.rules,
        [
            Rule {
                agent: Some("support".into()),
                claim: "client_id".into(),
                value: "support-bot".into()
            },
            Rule {
                agent: None,
                claim: "scope".into(),
                value: "skills.default".into()
            },
        ]
    );
}

#[test]
fn public_url_is_kept_in_its_canonical_form() {
    for (written, canonical) in [
        ("https://Skills.Example:443/", "https://skills.example"),
        ("HTTPS://SKILLS.example", "https://skills.example"),
        ("https://skills.example:8443", "https://skills.example:8443"),
        ("http://LOCALHOST:80/", "http://localhost"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
    ] {
        let config = parse(&format!(
            "issuer: https://idp.example\npublic_url: {written}\nagents: [{{agent: null, claim: scope, value: s}}]\n"
        ))
        .unwrap();
        assert_eq!(config.public_url.as_deref(), Some(canonical), "{written}");
    }
}

#[test]
fn plain_http_is_allowed_only_on_a_loopback_issuer() {
    let rules = "agents: [{agent: null, claim: scope, value: s}]\n";
    for issuer in [
        "http://127.0.0.1:8080",
        "http://localhost:9000/realms/x",
        "http://[::1]:1",
    ] {
        assert!(
            parse(&format!("issuer: {issuer}\n{rules}")).is_ok(),
            "{issuer}"
        );
    }
    for (issuer, needle) in [
        ("http://idp.example", "must be `https://`"),
        ("http://10.0.0.1", "must be `https://`"),
        ("ftp://idp.example", "must be an `https://` URL"),
        ("https://user:pw@idp.example", "credentials"),
        ("https://idp.example/?x=1", "no query"),
        ("https://idp.example/#f", "no fragment"),
        ("idp.example", "not a URL"),
    ] {
        let err = parse(&format!("issuer: \"{issuer}\"\n{rules}")).unwrap_err();
        assert!(err.contains(needle), "{issuer}: {err}");
        assert!(err.starts_with("oauth.yaml: `issuer`"), "{err}");
    }
}

#[test]
fn every_rule_breaking_file_is_refused_naming_the_key() {
    let head = "issuer: https://idp.example\n";
    for (text, needle) in [
        ("".to_owned(), "is empty"),
        ("[1]".to_owned(), "must be a mapping"),
        (head.to_owned(), "`agents` is missing"),
        (
            "agents: [{agent: null, claim: scope, value: s}]".to_owned(),
            "`issuer` is missing",
        ),
        (format!("{head}agents: []"), "`agents` is empty"),
        (format!("{head}agents: {{}}"), "must be a list"),
        (
            format!("{head}agents: [{{agent: null, claim: scope, value: s, extra: 1}}]"),
            "agents[0]: unknown key `extra`",
        ),
        (
            format!("{head}agents: [{{agent: null, agent: support, claim: scope, value: s}}]"),
            "`agent` is written twice",
        ),
        (
            format!("{head}agents: [{{claim: scope, value: s}}]"),
            "agents[0]: `agent` is missing",
        ),
        (
            format!("{head}agents: [{{agent: null, value: s}}]"),
            "`claim` is missing",
        ),
        (
            format!("{head}agents: [{{agent: null, claim: scope}}]"),
            "`value` is missing",
        ),
        (
            format!("{head}agents: [{{agent: null, claim: scope, value: 12}}]"),
            "agents[0].value` (line 2) must be a string",
        ),
        (
            format!("{head}agents: [{{agent: null, claim: scope, value: ''}}]"),
            "1 to 2048 characters",
        ),
        (
            format!("{head}agents: [{{agent: other, claim: scope, value: s}}]"),
            "no agent `other`",
        ),
        (
            format!("{head}audience: &a x\nagents: [{{agent: null, claim: scope, value: *a}}]"),
            "anchors, aliases and tags",
        ),
        (
            format!("{head}audience: !!str x\nagents: [{{agent: null, claim: scope, value: s}}]"),
            "anchors, aliases and tags",
        ),
        (
            format!("{head}algorithms: []\nagents: [{{agent: null, claim: scope, value: s}}]"),
            "`algorithms` is empty",
        ),
        (
            format!(
                "{head}algorithms: [ES256, ES256]\nagents: [{{agent: null, claim: scope, value: s}}]"
            ),
            "`ES256` is written twice",
        ),
        (
            format!("{head}algorithms: [HS256]\nagents: [{{agent: null, claim: scope, value: s}}]"),
            "never HS*",
        ),
        (
            format!(
                "{head}public_url: https://skills.example/mcp\nagents: [{{agent: null, claim: scope, value: s}}]"
            ),
            "without a path",
        ),
        (
            format!("{head}1: x\nagents: [{{agent: null, claim: scope, value: s}}]"),
            "every key must be a string",
        ),
        (format!("{head}: bad: yaml: ["), "not YAML or JSON"),
    ] {
        let err = parse(&text).unwrap_err();
        assert!(err.contains(needle), "{text:?}: {err}");
    }
}

#[test]
fn a_file_is_read_within_its_bound_and_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    fs_err::write(&big, "#".repeat(MAX_OAUTH_BYTES as usize + 1)).unwrap();
    let err = OAuthConfig::read(&big, &agents()).unwrap_err();
    assert!(err.message.contains("over the bound"), "{err}");
    assert_eq!(err.code(), crate::mcp::code::ServeCode::InvalidOauth);
    let err = OAuthConfig::read(dir.path(), &agents()).unwrap_err();
    assert!(
        err.to_string().contains(&dir.path().display().to_string()),
        "{err}"
    );
}
