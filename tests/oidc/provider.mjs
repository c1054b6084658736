// A real OAuth 2.1 / OpenID Connect provider (npm oidc-provider) on 127.0.0.1 for
// tests/it/serve_oauth.rs: the client-credentials grant, resource indicators (RFC 8707) and JWT
// access tokens (RFC 9068), one client per agent.
//
// Usage: node provider.mjs CONFIG_JSON
//   CONFIG_JSON  {"keys": PATH, "port": N, "clients": [{"client_id", "client_secret", "scope", "alg", "auth"}]}
//                `keys`: a file of private JWKs, made on first use and shared by every provider
//                started with it (a second issuer that signs with the same keys); `alg`: the
//                access tokens' signature algorithm (RS256, PS256, ES256 or EdDSA); `port`:
//                where to listen (default: any free port); `auth`: how the client authenticates
//                (default `client_secret_post`).
// Prints `LISTENING <port>` on stdout once it serves `http://127.0.0.1:<port>`. Besides the
// provider's own routes, for the test only:
//   POST /_control/rotate       new signing keys (first in the key set), the old ones kept
//   POST /_control/clock?offset=SECONDS   the provider's clock moved (tokens issued in the past)
//   GET  /_control/stats        {"jwks": requests of the key set, "discovery": of the metadata}
import { execFileSync } from "node:child_process";
import { createPrivateKey, randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import Provider from "oidc-provider";

const config = JSON.parse(process.argv[2]);
const realNow = Date.now;
let offset = 0;
Date.now = () => realNow() + offset * 1000;

// The keys are made by the openssl CLI, not node's `generateKeyPairSync`: node 20 can deadlock
// when a garbage collection finalizes a finished key generation job while a key is exported
// (`~KeyGenJob` waiting on a mutex its own thread holds), and the provider then never listens.
function newKeys() {
  const jwk = (args, extra) => {
    const pem = execFileSync("openssl", ["genpkey", ...args], { encoding: "utf8" });
    return { ...createPrivateKey(pem).export({ format: "jwk" }), kid: randomUUID(), ...extra };
  };
  const rsa = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"];
  return [
    jwk(rsa, { alg: "RS256", use: "sig" }),
    jwk(rsa, { alg: "PS256", use: "sig" }),
    jwk(["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], { alg: "ES256", use: "sig" }),
    jwk(["-algorithm", "ED25519"], { alg: "EdDSA", use: "sig" }),
  ];
}

let keys;
if (existsSync(config.keys)) {
  keys = JSON.parse(readFileSync(config.keys, "utf8"));
} else {
  keys = newKeys();
  writeFileSync(config.keys, JSON.stringify(keys));
}
const algOf = Object.fromEntries(config.clients.map((c) => [c.client_id, c.alg ?? "ES256"]));
const stats = { jwks: 0, discovery: 0 };
let issuer;
let provider;

function build() {
  provider = new Provider(issuer, {
    clients: config.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      token_endpoint_auth_method: c.auth ?? "client_secret_post",
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      scope: c.scope,
    })),
    jwks: { keys },
    scopes: ["openid", ...new Set(config.clients.flatMap((c) => c.scope.split(" ")))],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: client.scope,
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: algOf[client.clientId] } },
        }),
      },
    },
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, issuer);
  if (url.pathname === "/_control/rotate" && req.method === "POST") {
    keys = [...newKeys(), ...keys];
    build();
    res.writeHead(204).end();
    return;
  }
  if (url.pathname === "/_control/clock" && req.method === "POST") {
    offset = Number(url.searchParams.get("offset"));
    res.writeHead(204).end();
    return;
  }
  if (url.pathname === "/_control/stats") {
    const body = JSON.stringify(stats);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
    return;
  }
  if (url.pathname === "/jwks") stats.jwks += 1;
  if (url.pathname.startsWith("/.well-known/")) stats.discovery += 1;
  provider.callback()(req, res);
});
server.listen(config.port ?? 0, "127.0.0.1", () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  build();
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
