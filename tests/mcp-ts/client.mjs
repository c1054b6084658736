// Drives `skillfold serve --listen` with the official MCP TypeScript SDK over Streamable HTTP
// and prints a JSON report on stdout; the assertions live in tests/it/mcp.rs.
//
// Usage: node client.mjs URL
//   MCP_BEARER_TOKEN  the bearer token sent with every request
// It initializes, lists the tools, calls `load_skill` for the first skill's body and for
// `references/guide.md`, reads `skill://<first>/SKILL.md`, then prints `READY` on stderr and
// waits (at most 30 s) for `notifications/tools/list_changed`, after which it lists the tools
// again and prints the report.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const token = process.env.MCP_BEARER_TOKEN;
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
});
const client = new Client({ name: "skillfold-ts-test", version: "1.0.0" });
let changed;
const listChanged = new Promise((resolve) => {
  changed = resolve;
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed(true));

const report = {};
await client.connect(transport);
report.protocol_version = transport.protocolVersion ?? null;
report.server = client.getServerVersion();
report.instructions = client.getInstructions();
const tools = await client.listTools();
report.tools = tools.tools.map((t) => t.name);
const skills = tools.tools.find((t) => t.name === "load_skill").inputSchema.properties.name.enum;
report.skills = skills;
report.body = await client.callTool({ name: "load_skill", arguments: { name: skills[0], reference: null } });
report.reference = await client.callTool({
  name: "load_skill",
  arguments: { name: skills[0], reference: "references/guide.md" },
});
report.resource = await client.readResource({ uri: `skill://${skills[0]}/SKILL.md` });
process.stderr.write("READY\n");
const timeout = new Promise((resolve) => setTimeout(() => resolve(false), 30000));
report.list_changed = await Promise.race([listChanged, timeout]);
report.skills_after = (await client.listTools()).tools
  .find((t) => t.name === "load_skill").inputSchema.properties.name.enum;
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0);
