// The official MCP TypeScript SDK's server (McpServer over StreamableHTTPServerTransport,
// stateful: one transport per session, on node:http) with a `load_skill` tool answering the
// same body as skillfold, for benches/http_peers.sh.
//
//   NODE_PATH=target/mcp-ts-client/node_modules node ts_server.cjs PORT BODY_FILE HASH
//
// The tool's output has skillfold's `load_skill` shape, so the answer carries the same bytes of
// body as structured content and as text.
"use strict";
const http = require("node:http");
const fs = require("node:fs");
const { randomUUID } = require("node:crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const { z } = require("zod");

const [port, bodyFile, digest] = process.argv.slice(2);
const body = fs.readFileSync(bodyFile, "utf8");

function server() {
  const mcp = new McpServer({ name: "peer-typescript", version: "1" });
  mcp.registerTool(
    "load_skill",
    {
      description: "Load an approved skill's instructions.",
      inputSchema: { name: z.string(), reference: z.string().nullable() },
    },
    async ({ name, reference }) => {
      if (name !== "big" || reference !== null) {
        return { isError: true, content: [{ type: "text", text: "unknown skill or reference" }] };
      }
      const output = { name: "big", version: "1", hash: digest, reference: null, content: body, references: [] };
      return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
    },
  );
  return mcp;
}

const transports = new Map();

http
  .createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const parsed = text ? JSON.parse(text) : undefined;
      const id = req.headers["mcp-session-id"];
      let transport = id && transports.get(id);
      if (!transport) {
        if (req.method !== "POST" || !isInitializeRequest(parsed)) {
          res.writeHead(400).end("no session");
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => transports.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
        await server().connect(transport);
      }
      await transport.handleRequest(req, res, parsed);
    });
  })
  .listen(Number(port), "127.0.0.1");
