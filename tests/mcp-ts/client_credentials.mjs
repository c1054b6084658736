// Connects to `skillfold serve --listen --oauth` through the official MCP TypeScript SDK's own
// client-credentials flow (`ClientCredentialsProvider`) and prints a JSON report on stdout; the
// assertions live in tests/it/serve_oauth.rs. The SDK does what a real agent host does: the 401
// challenge, the RFC 9728 document, the identity provider's metadata, the token request with
// the RFC 8707 `resource` the document names, then the session with that token.
//
// Usage: node client_credentials.mjs URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE
// SCOPE is the provider's `scope` option: the SDK (1.32.2) asks for it in its token request (it
// does not take the scope of the server's challenge or RFC 9728 document there).
// Prints {"tools": [...], "aud": <the access token's aud>, "scope": <its scope>}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, issuer, clientId, clientSecret, scope] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: "skillfold-ts-client-credentials", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
await client.close();
const claims = JSON.parse(Buffer.from(authProvider.tokens().access_token.split(".")[1], "base64url"));
process.stdout.write(JSON.stringify({ tools, aud: claims.aud ?? null, scope: claims.scope ?? null }) + "\n");
process.exit(0);
