//! `skillfold serve --listen --oauth FILE` against a real identity provider: npm `oidc-provider`
//! (`tests/oidc/provider.mjs`, installed by `npm ci` under the target directory) issuing JWT
//! access tokens by the client-credentials grant with resource indicators, one client per
//! agent. Which endpoint each token opens (200, 403), every refusal (401 with the RFC 9728
//! challenge: no token, another issuer, another audience, expired, an unknown key, `alg: none`,
//! HS256 keyed with the public key, a forged claim, and hand-made malformed tokens), the
//! metadata documents, key rotation, an identity provider that stops, readiness before the keys,
//! sessions bound to the subject (and to the claim that named it), the metrics, the refusals of a
//! bad `--oauth` file, a `public_url` used in its canonical form, and the official Python and
//! TypeScript SDKs' own client-credentials flows with `audience` configured.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::http_raw::{Answer, INITIALIZE, post, send};
use super::mcp_client::{Listening, npm_installed};
use super::serve_http::tokens_world;
use super::support::bin::{skillfold_in, stderr};
use super::support::world::World;

/// The clients of every provider: id (its secret is `<id>-secret`), scope, signing algorithm,
/// how it authenticates.
const CLIENTS: [(&str, &str, &str, &str); 5] = [
    ("writer-bot", "skills.writer", "ES256", "client_secret_post"),
    (
        "default-bot",
        "skills.default",
        "RS256",
        "client_secret_post",
    ),
    (
        "other-default-bot",
        "skills.default",
        "EdDSA",
        "client_secret_post",
    ),
    ("pss-bot", "skills.default", "PS256", "client_secret_post"),
    // The TypeScript SDK's `ClientCredentialsProvider` sends its secret the basic way only.
    (
        "basic-bot",
        "skills.default",
        "ES256",
        "client_secret_basic",
    ),
];

/// The folder with oidc-provider installed and `provider.mjs`.
fn provider_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| npm_installed("tests/oidc", "oidc-provider", Some("provider.mjs")))
}

/// A running `provider.mjs`; stopped when dropped.
struct Idp {
    child: Child,
    port: u16,
}

impl Idp {
    /// Starts a provider signing with the keys in `keys` (made there on first use), on `port`
    /// (any free one if `None`).
    fn start(keys: &Path, port: Option<u16>) -> Idp {
        let clients: Vec<Value> = CLIENTS
            .iter()
            .map(|(id, scope, alg, auth)| {
                json!({"client_id": id, "client_secret": format!("{id}-secret"), "scope": scope, "alg": alg, "auth": auth})
            })
            .collect();
        let config = json!({"keys": keys, "port": port, "clients": clients});
        let mut child = Command::new("node")
            .arg(provider_dir().join("provider.mjs"))
            .arg(config.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node (scripts/test installs nodejs and npm)");
        // Its first line within a minute, or the test fails rather than waits for ever.
        let stdout = child.stdout.take().expect("stdout");
        let (sent, first) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = sent.send(line);
        });
        let Ok(line) = first.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the provider did not say where it listens within 60 s");
        };
        let port = line
            .strip_prefix("LISTENING ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the provider did not start: {line:?}"));
        Idp { child, port }
    }

    fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// An access token of `client` for `resource`, by the client-credentials grant.
    fn token(&self, client: &str, resource: &str) -> String {
        let (_, scope, ..) = CLIENTS
            .iter()
            .find(|(id, ..)| *id == client)
            .expect("client");
        let encode = |s: &str| {
            s.replace('%', "%25")
                .replace(':', "%3A")
                .replace('/', "%2F")
        };
        let body = format!(
            "grant_type=client_credentials&client_id={client}&client_secret={client}-secret&scope={scope}&resource={}",
            encode(resource)
        );
        let answer = send(
            self.port,
            "POST",
            "/token",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &body,
        );
        assert_eq!(answer.status, 200, "token: {}", answer.body);
        let value: Value = serde_json::from_str(&answer.body).expect("token JSON");
        value["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    fn control(&self, path: &str) {
        let answer = send(self.port, "POST", path, &[], "");
        assert_eq!(answer.status, 204, "{path}: {}", answer.body);
    }

    /// How many times the key set was fetched.
    fn jwks_requests(&self) -> u64 {
        let answer = send(self.port, "GET", "/_control/stats", &[], "");
        let value: Value = serde_json::from_str(&answer.body).expect("stats");
        value["jwks"].as_u64().expect("jwks")
    }

    /// The provider's public key set.
    fn jwks(&self) -> Value {
        serde_json::from_str(&send(self.port, "GET", "/jwks", &[], "").body).expect("jwks")
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `--oauth` file in `dir` for `issuer` (with `extra` lines), for the agents of [`World`].
fn oauth_file(dir: &Path, issuer: &str, extra: &str) -> PathBuf {
    let path = dir.join("oauth.yaml");
    fs_err::write(
        &path,
        format!(
            "issuer: {issuer}\n{extra}agents:\n  - {{ agent: writer, claim: client_id, value: writer-bot }}\n  - {{ agent: null, claim: scope, value: skills.default }}\n"
        ),
    )
    .expect("write");
    path
}

fn start(world: &World, oauth: &Path, extra: &[&str]) -> Listening {
    let mut args = vec!["--oauth", oauth.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    Listening::start(&world.tmp.path().join("skillfold.yaml"), &args, &[])
}

/// A provider (its keys file, itself) and a server of `world` with the default `--oauth` file
/// (`writer-bot` for the writer, `skills.default` for `/mcp`), ready: it has the keys.
fn serving(world: &World) -> (PathBuf, Idp, Listening) {
    let keys = world.tmp.path().join("keys.json");
    let idp = Idp::start(&keys, None);
    let oauth = oauth_file(world.tmp.path(), &idp.issuer(), "");
    let server = start(world, &oauth, &[]);
    assert_eq!(wait_ready(server.port, 200).status, 200);
    (keys, idp, server)
}

/// Waits until `/readyz` answers `status` (the first key fetch is retried every 2 s).
fn wait_ready(port: u16, status: u16) -> Answer {
    let start = Instant::now();
    loop {
        let answer = send(port, "GET", "/readyz", &[], "");
        if answer.status == status || start.elapsed() > Duration::from_secs(60) {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn part(token: &str, index: usize) -> Value {
    let text = token.split('.').nth(index).expect("part");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON")
}

/// Asserts a 401 with the challenge naming the endpoint's metadata, and `error="invalid_token"`
/// when `given`, at `/mcp` (whose rules name the scope `skills.default`).
fn assert_unauthorized(answer: &Answer, metadata: &str, given: bool, what: &str) {
    assert_eq!(answer.status, 401, "{what}: {}", answer.body);
    let challenge = answer.header("www-authenticate").expect("WWW-Authenticate");
    let mut expected = format!("Bearer resource_metadata=\"{metadata}\", scope=\"skills.default\"");
    if given {
        expected.push_str(", error=\"invalid_token\"");
    }
    assert_eq!(challenge, expected, "{what}");
}

fn metrics(port: u16) -> String {
    send(port, "GET", "/metrics", &[], "").body
}

#[test]
fn a_token_opens_its_agents_endpoint_loads_a_skill_and_is_403_elsewhere() {
    let world = tokens_world();
    let keys = world.tmp.path().join("keys.json");
    let idp = Idp::start(&keys, None);
    // One audience for every endpoint: the same token reaches both, the rules decide.
    let audience = "https://skills.example.test";
    let oauth = oauth_file(
        world.tmp.path(),
        &idp.issuer(),
        &format!("audience: {audience}\n"),
    );
    let audit = world.tmp.path().join("audit.jsonl");
    let server = start(
        &world,
        &oauth,
        &["--audit-log", audit.to_str().expect("utf8")],
    );
    let port = server.port;
    let ready = wait_ready(port, 200);
    assert_eq!(ready.status, 200, "{}", ready.body);

    let writer = idp.token("writer-bot", audience);
    let opened = post(port, "/agents/writer/mcp", Some(&writer), &[], INITIALIZE);
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened.header("mcp-session-id").expect("session").to_owned();
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let ack = post(
        port,
        "/agents/writer/mcp",
        Some(&writer),
        &with_session,
        initialized,
    );
    assert_eq!(ack.status, 202, "{}", ack.body);
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"beta","reference":null}}}"#;
    let called = post(
        port,
        "/agents/writer/mcp",
        Some(&writer),
        &with_session,
        call,
    );
    assert_eq!(called.status, 200, "{}", called.body);
    assert!(called.body.contains("# beta"), "{}", called.body);
    // The audit record names the agent, the issuer and the token's subject; never the token.
    let log = fs_err::read_to_string(&audit).expect("audit log");
    assert!(!log.contains(&writer), "the token is in the audit log");
    let line: Value = serde_json::from_str(log.lines().next().expect("a line")).expect("JSON");
    assert_eq!(line["agent"], "writer");
    assert_eq!(line["skill"], "beta");
    assert_eq!(line["issuer"], idp.issuer());
    assert_eq!(line["sub"], "writer-bot");
    assert_eq!(line["client_id"], "writer-bot");

    // The same valid token at the default endpoint: 403, insufficient_scope.
    let elsewhere = post(port, "/mcp", Some(&writer), &[], INITIALIZE);
    assert_eq!(elsewhere.status, 403, "{}", elsewhere.body);
    assert_eq!(
        elsewhere.header("www-authenticate"),
        Some(
            format!(
                "Bearer resource_metadata=\"{}\", scope=\"skills.default\", error=\"insufficient_scope\"",
                server.url("/.well-known/oauth-protected-resource/mcp")
            )
            .as_str()
        )
    );
    // The writer's endpoint has no rule on `scope`: its challenge names none.
    let anonymous = post(port, "/agents/writer/mcp", None, &[], INITIALIZE);
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
    assert_eq!(
        anonymous.header("www-authenticate"),
        Some(
            format!(
                "Bearer resource_metadata=\"{}\"",
                server.url("/.well-known/oauth-protected-resource/agents/writer/mcp")
            )
            .as_str()
        )
    );
    // Every algorithm the provider signs with: RS256, EdDSA, PS256 at the default endpoint.
    for client in ["default-bot", "other-default-bot", "pss-bot"] {
        let token = idp.token(client, audience);
        let answer = post(port, "/mcp", Some(&token), &[], INITIALIZE);
        assert_eq!(answer.status, 200, "{client}: {}", answer.body);
        // ... and none of them opens the writer's endpoint.
        let answer = post(port, "/agents/writer/mcp", Some(&token), &[], INITIALIZE);
        assert_eq!(answer.status, 403, "{client}: {}", answer.body);
    }

    // The metadata documents, without a token.
    for (path, endpoint, scopes) in [
        (
            "/.well-known/oauth-protected-resource",
            "/mcp",
            json!(["skills.default"]),
        ),
        (
            "/.well-known/oauth-protected-resource/mcp",
            "/mcp",
            json!(["skills.default"]),
        ),
        (
            "/.well-known/oauth-protected-resource/agents/writer/mcp",
            "/agents/writer/mcp",
            json!([]),
        ),
    ] {
        let answer = send(port, "GET", path, &[], "");
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        let document: Value = serde_json::from_str(&answer.body).expect("JSON");
        assert_eq!(
            document,
            json!({
                "resource": server.url(endpoint),
                "authorization_servers": [idp.issuer()],
                "bearer_methods_supported": ["header"],
                "scopes_supported": scopes,
            }),
            "{path}"
        );
    }
    let unknown = send(
        port,
        "GET",
        "/.well-known/oauth-protected-resource/agents/nobody/mcp",
        &[],
        "",
    );
    assert_eq!(unknown.status, 404);

    let metrics = metrics(port);
    for expected in [
        r#"skillfold_oauth_validations_total{outcome="ok"} 6"#,
        r#"skillfold_oauth_validations_total{outcome="no_rule"} 4"#,
        r#"skillfold_oauth_jwks_refreshes_total{outcome="ok"} 1"#,
    ] {
        assert!(metrics.contains(expected), "{expected} in:\n{metrics}");
    }
}

#[test]
fn every_token_that_fails_a_check_is_401_with_the_challenge() {
    let world = tokens_world();
    let (keys, idp, server) = serving(&world);
    let port = server.port;
    let resource = server.url("/mcp");
    let metadata = server.url("/.well-known/oauth-protected-resource/mcp");

    let good = idp.token("default-bot", &resource);
    assert_eq!(post(port, "/mcp", Some(&good), &[], INITIALIZE).status, 200);

    // No token, or not a bearer token.
    assert_unauthorized(
        &post(port, "/mcp", None, &[], INITIALIZE),
        &metadata,
        false,
        "none",
    );
    let basic = send(
        port,
        "POST",
        "/mcp",
        &[("Authorization", "Basic ZGVmYXVsdA==")],
        INITIALIZE,
    );
    assert_unauthorized(&basic, &metadata, false, "basic");

    let mut refused: Vec<(&str, String)> = Vec::new();
    // Another audience: the writer's endpoint's URL, presented at /mcp (each endpoint is its
    // own audience by default).
    refused.push((
        "another audience",
        idp.token("default-bot", &server.url("/agents/writer/mcp")),
    ));
    // Expired: issued by the provider an hour ago.
    idp.control("/_control/clock?offset=-3600");
    refused.push(("expired", idp.token("default-bot", &resource)));
    idp.control("/_control/clock?offset=0");
    // Another issuer that signs with the very same keys.
    let twin = Idp::start(&keys, None);
    refused.push(("another issuer", twin.token("default-bot", &resource)));
    // A key the issuer's key set does not hold.
    let stranger = Idp::start(&world.tmp.path().join("other-keys.json"), None);
    refused.push(("an unknown key", stranger.token("default-bot", &resource)));
    // `alg: none`, the real claims, no signature.
    let header = part(&good, 0);
    let claims = part(&good, 1);
    let none_header = json!({"alg": "none", "typ": "at+jwt", "kid": header["kid"]});
    refused.push((
        "alg none",
        format!(
            "{}.{}.",
            b64(none_header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        ),
    ));
    // HS256 keyed with the issuer's public RSA key (the algorithm-confusion attack).
    let jwks = idp.jwks();
    let rsa = jwks["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .find(|k| k["kid"] == header["kid"])
        .expect("the token's key")
        .clone();
    for secret in [
        rsa.to_string().into_bytes(),
        rsa["n"].as_str().expect("n").as_bytes().to_vec(),
    ] {
        let hs_header = json!({"alg": "HS256", "typ": "at+jwt", "kid": header["kid"]});
        let signed = format!(
            "{}.{}",
            b64(hs_header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret);
        let tag = ring::hmac::sign(&key, signed.as_bytes());
        refused.push((
            "HS256 with the public key",
            format!("{signed}.{}", b64(tag.as_ref())),
        ));
    }
    // A forged claim under the real signature.
    let mut forged = claims.clone();
    forged["scope"] = json!("skills.default skills.writer");
    let pieces: Vec<&str> = good.split('.').collect();
    refused.push((
        "a forged claim",
        format!(
            "{}.{}.{}",
            pieces[0],
            b64(forged.to_string().as_bytes()),
            pieces[2]
        ),
    ));
    // Malformed: bad base64, a huge header, deeply nested JSON, a key written twice, two parts.
    refused.push(("bad base64", format!("{}.!!!.{}", pieces[0], pieces[2])));
    let huge = json!({"alg": "RS256", "kid": header["kid"], "pad": "x".repeat(20_000)});
    refused.push((
        "a huge header",
        format!(
            "{}.{}.{}",
            b64(huge.to_string().as_bytes()),
            pieces[1],
            pieces[2]
        ),
    ));
    let nested = format!(
        r#"{{"alg":"RS256","kid":{},"x":{}{}}}"#,
        header["kid"],
        "[".repeat(64),
        "]".repeat(64)
    );
    refused.push((
        "nested JSON",
        format!("{}.{}.{}", b64(nested.as_bytes()), pieces[1], pieces[2]),
    ));
    let text = claims.to_string();
    let twice = format!(r#"{{"iss":"https://evil.example",{}"#, &text[1..]);
    refused.push((
        "a key written twice",
        format!("{}.{}.{}", pieces[0], b64(twice.as_bytes()), pieces[2]),
    ));
    refused.push(("two parts", format!("{}.{}", pieces[0], pieces[1])));

    for (what, token) in &refused {
        let answer = post(port, "/mcp", Some(token), &[], INITIALIZE);
        assert_unauthorized(&answer, &metadata, true, what);
        assert!(
            !answer.body.contains(token.as_str()),
            "{what}: the token is echoed"
        );
    }
    // The server still serves the good token, and the log never holds a token.
    assert_eq!(post(port, "/mcp", Some(&good), &[], INITIALIZE).status, 200);
    let log = server.log();
    for (what, token) in &refused {
        assert!(
            !log.contains(token.as_str()),
            "{what}: the token is in the log:\n{log}"
        );
    }
    let metrics = metrics(port);
    for expected in [
        r#"outcome="wrong_audience"} 1"#,
        r#"outcome="expired"} 1"#,
        r#"outcome="wrong_issuer"} 1"#,
        r#"outcome="unknown_key"} 1"#,
        r#"outcome="bad_algorithm"} 3"#,
        r#"outcome="bad_signature"} 1"#,
        r#"outcome="malformed"} 5"#,
        r#"outcome="ok"} 2"#,
    ] {
        assert!(metrics.contains(expected), "{expected} in:\n{metrics}");
    }
}

#[test]
fn rotated_keys_are_fetched_once_and_cached_keys_outlive_the_provider() {
    let world = tokens_world();
    let (_keys, idp, server) = serving(&world);
    let port = server.port;
    let resource = server.url("/mcp");
    let before = idp.token("default-bot", &resource);
    assert_eq!(
        post(port, "/mcp", Some(&before), &[], INITIALIZE).status,
        200
    );
    assert_eq!(idp.jwks_requests(), 1);

    idp.control("/_control/rotate");
    let after = idp.token("default-bot", &resource);
    assert_ne!(
        part(&after, 0)["kid"],
        part(&before, 0)["kid"],
        "the provider signs with its new key"
    );
    assert_eq!(
        post(port, "/mcp", Some(&after), &[], INITIALIZE).status,
        200
    );
    assert_eq!(
        idp.jwks_requests(),
        2,
        "the new kid fetched the key set once"
    );
    let again = idp.token("default-bot", &resource);
    assert_eq!(
        post(port, "/mcp", Some(&again), &[], INITIALIZE).status,
        200
    );
    // The old key is still in the set, so old tokens still pass.
    assert_eq!(
        post(port, "/mcp", Some(&before), &[], INITIALIZE).status,
        200
    );
    // A kid no set holds, within the cool-down: refused without another fetch.
    let stranger = Idp::start(&world.tmp.path().join("other-keys.json"), None);
    let foreign = stranger.token("default-bot", &resource);
    assert_eq!(
        post(port, "/mcp", Some(&foreign), &[], INITIALIZE).status,
        401
    );
    assert_eq!(idp.jwks_requests(), 2, "the cool-down holds the next fetch");

    // The provider stops: the cached keys keep the server serving.
    drop(idp);
    assert_eq!(
        post(port, "/mcp", Some(&after), &[], INITIALIZE).status,
        200
    );
    assert_eq!(send(port, "GET", "/readyz", &[], "").status, 200);
    let metrics = metrics(port);
    assert!(
        metrics.contains(r#"skillfold_oauth_jwks_refreshes_total{outcome="ok"} 2"#),
        "{metrics}"
    );
}

#[test]
fn the_server_is_not_ready_and_refuses_tokens_until_the_keys_are_in() {
    let world = tokens_world();
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let idp_port = free.local_addr().expect("addr").port();
    drop(free);
    let oauth = oauth_file(
        world.tmp.path(),
        &format!("http://127.0.0.1:{idp_port}"),
        "",
    );
    let server = start(&world, &oauth, &[]);
    let port = server.port;
    let ready = send(port, "GET", "/readyz", &[], "");
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(
        ready.body.contains("identity provider's keys"),
        "{}",
        ready.body
    );
    // A token cannot be judged yet: 503 with Retry-After (not accepted, not called invalid).
    let claims =
        json!({"iss": format!("http://127.0.0.1:{idp_port}"), "sub": "x", "exp": 4_000_000_000u64});
    let unsigned = format!(
        "{}.{}.{}",
        b64(br#"{"alg":"ES256","kid":"k"}"#),
        b64(claims.to_string().as_bytes()),
        b64(b"signature")
    );
    let answer = post(port, "/mcp", Some(&unsigned), &[], INITIALIZE);
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(answer.header("retry-after"), Some("1"));

    // The provider comes up where the file says: the next retry brings the keys.
    let idp = Idp::start(&world.tmp.path().join("keys.json"), Some(idp_port));
    let ready = wait_ready(port, 200);
    assert_eq!(ready.status, 200, "{}", ready.body);
    let token = idp.token("default-bot", &server.url("/mcp"));
    assert_eq!(
        post(port, "/mcp", Some(&token), &[], INITIALIZE).status,
        200
    );
}

#[test]
fn sessions_are_bound_to_the_subject_and_a_token_expired_mid_session_is_refused() {
    let world = tokens_world();
    let keys = world.tmp.path().join("keys.json");
    let idp = Idp::start(&keys, None);
    let oauth = oauth_file(world.tmp.path(), &idp.issuer(), "");
    let static_tokens = world.tmp.path().join("tokens.json");
    // Static tokens too: either accepts.
    let server = start(
        &world,
        &oauth,
        &["--tokens", static_tokens.to_str().expect("utf8")],
    );
    let port = server.port;
    assert_eq!(wait_ready(port, 200).status, 200);
    let resource = server.url("/mcp");
    let first = idp.token("default-bot", &resource);
    let opened = post(port, "/mcp", Some(&first), &[], INITIALIZE);
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened.header("mcp-session-id").expect("session").to_owned();
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(port, "/mcp", Some(&first), &with_session, initialized).status,
        202
    );
    // A fresh token of the same client carries the session on (the client refreshed).
    let refreshed = idp.token("default-bot", &resource);
    assert_ne!(refreshed, first);
    assert_eq!(
        post(port, "/mcp", Some(&refreshed), &with_session, list).status,
        200
    );
    // Another subject valid for the endpoint, or a static token of it: not this session.
    let other = idp.token("other-default-bot", &resource);
    assert_eq!(
        post(port, "/mcp", Some(&other), &with_session, list).status,
        403
    );
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &with_session, list).status,
        403
    );
    // The static token still opens its own session.
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
    // The same subject's token, expired: 401 on the session's next request.
    idp.control("/_control/clock?offset=-3600");
    let expired = idp.token("default-bot", &resource);
    let answer = post(port, "/mcp", Some(&expired), &with_session, list);
    assert_unauthorized(
        &answer,
        &server.url("/.well-known/oauth-protected-resource/mcp"),
        true,
        "expired mid-session",
    );
    // ... and after the refresh, on again.
    idp.control("/_control/clock?offset=0");
    let renewed = idp.token("default-bot", &resource);
    assert_eq!(
        post(port, "/mcp", Some(&renewed), &with_session, list).status,
        200
    );
}

#[test]
fn a_bad_oauth_file_is_refused_at_start_naming_the_key() {
    let world = tokens_world();
    let dir = world.tmp.path();
    let agents = "agents:\n  - { agent: null, claim: scope, value: s }\n";
    for (text, needle) in [
        (
            format!("issuer: https://idp.example\nisuer: x\n{agents}"),
            "unknown key `isuer`",
        ),
        (
            format!("issuer: https://idp.example\nissuer: https://other.example\n{agents}"),
            "`issuer` is written twice",
        ),
        (
            format!("issuer: http://idp.example\n{agents}"),
            "`issuer` must be `https://`",
        ),
        (
            "issuer: https://idp.example\nagents:\n  - { agent: nobody, claim: scope, value: s }\n"
                .to_owned(),
            "no agent `nobody`",
        ),
        (
            "issuer: https://idp.example\nagents:\n  - { claim: scope, value: s }\n".to_owned(),
            "`agent` is missing",
        ),
        (
            format!("issuer: https://idp.example\nalgorithms: [HS256]\n{agents}"),
            "`HS256` is not one of",
        ),
        (
            format!("issuer: https://idp.example\nalgorithms: [none]\n{agents}"),
            "`none` is not one of",
        ),
        (
            r#"{"issuer": "https://idp.example", "issuer": "https://idp.example", "agents": []}"#
                .to_owned(),
            "`issuer` is written twice",
        ),
        (
            format!(
                "issuer: https://idp.example\npublic_url: https://skills.example/mcp\n{agents}"
            ),
            "`public_url` must be an origin",
        ),
    ] {
        let file = dir.join("oauth.yaml");
        fs_err::write(&file, &text).expect("write");
        let out = skillfold_in(
            dir,
            &[
                "serve",
                "-c",
                "skillfold.yaml",
                "--listen",
                "127.0.0.1:0",
                "--oauth",
                "oauth.yaml",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{text}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("[invalid_oauth]"), "{text}: {err}");
        assert!(err.contains("oauth.yaml"), "{text}: {err}");
        assert!(err.contains(needle), "{needle} for {text}: {err}");
    }
    // Every interface without `public_url`: no one URL to be the audience.
    fs_err::write(
        dir.join("oauth.yaml"),
        format!("issuer: https://idp.example\n{agents}"),
    )
    .expect("write");
    let out = skillfold_in(
        dir,
        &[
            "serve",
            "-c",
            "skillfold.yaml",
            "--listen",
            "0.0.0.0:0",
            "--oauth",
            "oauth.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`public_url` is required"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_typescript_sdk_client_works_through_it_with_an_access_token() {
    let world = super::mcp::ReloadWorld::new();
    let idp = Idp::start(&world.tmp.path().join("keys.json"), None);
    let oauth = world.tmp.path().join("oauth.yaml");
    fs_err::write(
        &oauth,
        format!(
            "issuer: {}\nagents:\n  - {{ agent: null, claim: client_id, value: default-bot }}\n",
            idp.issuer()
        ),
    )
    .expect("write");
    let server = Listening::start(
        &world.config,
        &[
            "--watch",
            "--poll-interval",
            "0.2",
            "--oauth",
            oauth.to_str().expect("utf8"),
        ],
        &[],
    );
    assert_eq!(wait_ready(server.port, 200).status, 200);
    let token = idp.token("default-bot", &server.url("/mcp"));
    let (node, _stderr_lines, seen) =
        super::mcp_client::typescript_session(&server.url("/mcp"), &token);
    // A reload tells the session, as with static tokens.
    world.switch_to("v2.yaml");
    let out = node.wait_with_output().expect("client");
    assert!(
        out.status.success(),
        "client failed: {seen}\n{}",
        server.log()
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(r["skills"], json!(["alpha"]));
    assert!(
        r["body"]["structuredContent"]["content"]
            .as_str()
            .expect("content")
            .contains("# alpha"),
        "{r}"
    );
    assert_eq!(r["list_changed"], true, "{}", server.log());
    assert_eq!(r["skills_after"], json!(["alpha", "beta"]));
    assert!(!server.log().contains(&token), "the token is in the log");
    // Without the token the SDK is refused at once.
    let refused = Command::new("node")
        .arg(super::mcp_client::typescript_client().join("client.mjs"))
        .arg(server.url("/mcp"))
        .output()
        .expect("node");
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("401") || said.contains("Unauthorized"),
        "{said}"
    );
}

/// MCP Inspector (`tests/inspector`, installed by `npm ci` under the target directory) in its
/// CLI mode: `mcp-inspector --cli URL --header … --method …`, one connection a run.
fn inspector(url: &str, header: Option<&str>, method: &[&str]) -> std::process::Output {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| npm_installed("tests/inspector", "mcp-inspector", None));
    let mut cmd = Command::new("node");
    cmd.arg(
        dir.join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
    )
    .args(["--cli", url, "--transport", "http"]);
    if let Some(header) = header {
        cmd.args(["--header", header]);
    }
    cmd.args(method)
        .env("MCP_CATALOG_PATH", dir.join("catalog.json"))
        .stdin(Stdio::null())
        .output()
        .expect("node")
}

#[test]
fn mcp_inspector_lists_and_calls_with_an_access_token_and_is_refused_without() {
    let world = tokens_world();
    let (_keys, idp, server) = serving(&world);
    let url = server.url("/mcp");
    let token = idp.token("default-bot", &url);
    let bearer = format!("Authorization: Bearer {token}");

    let listed = inspector(&url, Some(&bearer), &["--method", "tools/list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.status.success(),
        "{text}\n{}\n{}",
        String::from_utf8_lossy(&listed.stderr),
        server.log()
    );
    assert!(text.contains("\"load_skill\""), "{text}");

    let called = inspector(
        &url,
        Some(&bearer),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "load_skill",
            "--tool-arg",
            "name=alpha",
        ],
    );
    let text = String::from_utf8_lossy(&called.stdout);
    assert!(
        called.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&called.stderr)
    );
    assert!(text.contains("# alpha"), "{text}");

    // No token, and a token for another audience: the Inspector is refused.
    let refused = inspector(&url, None, &["--method", "tools/list"]);
    assert!(
        !refused.status.success(),
        "{}",
        String::from_utf8_lossy(&refused.stdout)
    );
    let elsewhere = idp.token("default-bot", &server.url("/agents/writer/mcp"));
    let refused = inspector(
        &url,
        Some(&format!("Authorization: Bearer {elsewhere}")),
        &["--method", "tools/list"],
    );
    assert!(
        !refused.status.success(),
        "{}",
        String::from_utf8_lossy(&refused.stdout)
    );
}

#[test]
fn the_kubernetes_examples_oauth_file_is_accepted_with_its_descriptor() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes/server.yaml");
    let text = fs_err::read_to_string(&manifest).expect("server.yaml");
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML"))
        .collect();
    let data = |name: &str, key: &str| {
        docs.iter()
            .find(|d| d["metadata"]["name"].as_str() == Some(name))
            .and_then(|d| d["data"][key].as_str())
            .unwrap_or_else(|| panic!("{name}: {key}"))
            .to_owned()
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("skillfold.yaml");
    fs_err::write(&config, data("skillfold-server-config", "skillfold.yaml")).expect("write");
    let oauth = tmp.path().join("oauth.yaml");
    fs_err::write(&oauth, data("skillfold-server-oauth", "oauth.yaml")).expect("write");
    // The file names the descriptor's agents and is accepted; with no identity provider to
    // reach here, the server waits for its keys, unready.
    let server = Listening::start(&config, &["--oauth", oauth.to_str().expect("utf8")], &[]);
    let ready = send(server.port, "GET", "/readyz", &[], "");
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(
        ready.body.contains("identity provider's keys"),
        "{}",
        ready.body
    );
    let metadata = send(
        server.port,
        "GET",
        "/.well-known/oauth-protected-resource/agents/support/mcp",
        &[],
        "",
    );
    assert_eq!(metadata.status, 200, "{}", metadata.body);
    let document: Value = serde_json::from_str(&metadata.body).expect("JSON");
    assert_eq!(
        document["resource"],
        "https://skills.example.com/agents/support/mcp"
    );
    assert_eq!(
        document["authorization_servers"],
        json!(["https://keycloak.example.com/realms/agents"])
    );
}

/// A token signed with the provider's own ES256 key (from its keys file) with `claims`: what the
/// provider would issue for a client configured that way.
fn signed_by_provider(keys: &Path, claims: &Value) -> String {
    let set: Vec<Value> =
        serde_json::from_str(&fs_err::read_to_string(keys).expect("keys")).expect("keys JSON");
    let key = set
        .iter()
        .find(|k| k["alg"] == "ES256")
        .expect("an ES256 key");
    let decode = |name: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(key[name].as_str().expect(name))
            .expect("base64url")
    };
    let mut point = vec![4];
    point.extend(decode("x"));
    point.extend(decode("y"));
    let rng = ring::rand::SystemRandom::new();
    let pair = ring::signature::EcdsaKeyPair::from_private_key_and_public_key(
        &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        &decode("d"),
        &point,
        &rng,
    )
    .expect("the provider's ES256 key");
    let header = json!({"alg": "ES256", "kid": key["kid"], "typ": "at+jwt"});
    let signed = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let signature = pair.sign(&rng, signed.as_bytes()).expect("sign");
    format!("{signed}.{}", b64(signature.as_ref()))
}

/// Issue 33 item 6: a session opened by a token whose `sub` is `alice` is not continued by a
/// token without `sub` whose `client_id` is `alice`, nor the other way round; the same claim
/// with the same value continues it.
#[test]
fn a_session_is_bound_to_the_claim_that_named_the_principal() {
    let world = tokens_world();
    let (keys, idp, server) = serving(&world);
    let port = server.port;
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 300;
    let token = |claim: &str| {
        signed_by_provider(
            &keys,
            &json!({"iss": idp.issuer(), "aud": server.url("/mcp"), claim: "alice",
                    "scope": "skills.default", "exp": exp}),
        )
    };
    let by_sub = token("sub");
    let by_client = token("client_id");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    for (opener, other) in [(&by_sub, &by_client), (&by_client, &by_sub)] {
        let opened = post(port, "/mcp", Some(opener), &[], INITIALIZE);
        assert_eq!(opened.status, 200, "{}", opened.body);
        let session = opened.header("mcp-session-id").expect("session").to_owned();
        let with_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(
            post(port, "/mcp", Some(opener), &with_session, initialized).status,
            202
        );
        assert_eq!(
            post(port, "/mcp", Some(opener), &with_session, list).status,
            200
        );
        let answer = post(port, "/mcp", Some(other), &with_session, list);
        assert_eq!(answer.status, 403, "{}", answer.body);
    }
}

/// Issue 33 item 6: `public_url` written with an uppercase host, the default port and a trailing
/// `/` is used in its canonical form: the metadata's `resource` and the audience a token for it
/// holds.
#[test]
fn public_url_is_used_in_its_canonical_form() {
    let world = tokens_world();
    let keys = world.tmp.path().join("keys.json");
    let idp = Idp::start(&keys, None);
    let oauth = oauth_file(
        world.tmp.path(),
        &idp.issuer(),
        "public_url: https://Skills.Example:443/\n",
    );
    let server = start(&world, &oauth, &[]);
    assert_eq!(wait_ready(server.port, 200).status, 200);
    let metadata = send(
        server.port,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    let document: Value = serde_json::from_str(&metadata.body).expect("JSON");
    assert_eq!(document["resource"], "https://skills.example/mcp");
    let token = idp.token("default-bot", "https://skills.example/mcp");
    let answer = post(server.port, "/mcp", Some(&token), &[], INITIALIZE);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let challenge = post(server.port, "/mcp", None, &[], INITIALIZE);
    assert_eq!(
        challenge.header("www-authenticate"),
        Some(
            "Bearer resource_metadata=\"https://skills.example/.well-known/oauth-protected-resource/mcp\", scope=\"skills.default\""
        )
    );
}

/// Issue 33 item 9: with `audience:` in the file (as the Keycloak and Entra examples have it),
/// the official SDKs' own client-credentials flows (Python `ClientCredentialsOAuthProvider`,
/// TypeScript `ClientCredentialsProvider`) ask the provider for a token for the endpoint's URL,
/// the RFC 9728 document's `resource` (RFC 8707), and get in with it; a token for the configured
/// audience gets in too, and one for another endpoint's URL does not.
#[test]
fn the_sdks_client_credentials_flows_get_in_with_an_audience_configured() {
    let world = tokens_world();
    let keys = world.tmp.path().join("keys.json");
    let idp = Idp::start(&keys, None);
    let audience = "https://skills.example.test";
    let oauth = oauth_file(
        world.tmp.path(),
        &idp.issuer(),
        &format!("audience: {audience}\n"),
    );
    let server = start(&world, &oauth, &[]);
    assert_eq!(wait_ready(server.port, 200).status, 200);
    let url = server.url("/mcp");
    let issuer = idp.issuer();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client_credentials.py");
    let python = Command::new(super::mcp_client::python())
        .arg(&script)
        .args([
            url.as_str(),
            issuer.as_str(),
            "default-bot",
            "default-bot-secret",
        ])
        .output()
        .expect("python");
    let dir = npm_installed(
        "tests/mcp-ts",
        "mcp-ts-client",
        Some("client_credentials.mjs"),
    );
    let typescript = Command::new("node")
        .arg(dir.join("client_credentials.mjs"))
        .args([
            url.as_str(),
            issuer.as_str(),
            "basic-bot",
            "basic-bot-secret",
            "skills.default",
        ])
        .output()
        .expect("node");
    for (sdk, out) in [("Python", python), ("TypeScript", typescript)] {
        assert!(
            out.status.success(),
            "{sdk}: {}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            server.log()
        );
        let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
        assert_eq!(report["aud"], url.as_str(), "{sdk}: {report}");
        assert!(
            report["tools"]
                .as_array()
                .expect("tools")
                .contains(&json!("load_skill")),
            "{sdk}: {report}"
        );
    }
    let configured = idp.token("default-bot", audience);
    assert_eq!(
        post(server.port, "/mcp", Some(&configured), &[], INITIALIZE).status,
        200
    );
    let elsewhere = idp.token("default-bot", &server.url("/agents/writer/mcp"));
    assert_eq!(
        post(server.port, "/mcp", Some(&elsewhere), &[], INITIALIZE).status,
        401
    );
}
