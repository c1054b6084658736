-- wrk script: `tools/call load_skill` over Streamable HTTP, every request with its own JSON-RPC
-- id (see benches/http_peers.sh). The environment chooses the way in:
--   SESSION=<id>   every connection on that MCP session (the stateful revisions), PROTOCOL
--                  (default 2025-06-18) in MCP-Protocol-Version;
--   STATELESS=1    no session: the 2026-07-28 path, its `_meta` and Mcp-Method/Mcp-Name headers;
--   STATIC=1       a GET of the URL's path (the static file of the ceiling), checked the same way.
-- With CHECK_EACH=1 every answer that is not 200 with `structuredContent` is counted (`done`
-- prints the count); wrk then buffers each answer and hands it to Lua, which costs the client
-- more than some servers cost (the check is off by default: benches/http_peers.sh checks the
-- bytes read per answer instead).
local session = os.getenv("SESSION")
local stateless = os.getenv("STATELESS") == "1"
local static = os.getenv("STATIC") == "1"
local protocol = os.getenv("PROTOCOL") or (stateless and "2026-07-28" or "2025-06-18")
local skill = os.getenv("SKILL") or "big"
-- TOKEN: the bearer token of every request (AUTH=static or oauth in http_peers.sh).
local token = os.getenv("TOKEN")
local path = os.getenv("MCP_PATH") or "/mcp"
local counter = 0
local threads = {}

function setup(thread)
  thread:set("first", counter)
  counter = counter + 1000000000
  table.insert(threads, thread)
end

function init(args)
  id = first
  bad = 0
end

function request()
  if static then return wrk.format("GET", wrk.path) end
  id = id + 1
  local meta = ""
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = protocol,
  }
  if stateless then
    meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. protocol ..
      '","io.modelcontextprotocol/clientCapabilities":{}}'
    headers["Mcp-Method"] = "tools/call"
    headers["Mcp-Name"] = "load_skill"
  else
    headers["Mcp-Session-Id"] = session
  end
  local body = '{"jsonrpc":"2.0","id":' .. id ..
    ',"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"' .. skill ..
    '","reference":null}' .. meta .. '}}'
  if token then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("POST", path, headers, body)
end

if os.getenv("CHECK_EACH") == "1" then
  function response(status, headers, body)
    if status ~= 200 or not string.find(body, '"structuredContent"', 1, true) then
      bad = bad + 1
      if bad == 1 then io.stderr:write("bad answer: " .. status .. " " .. string.sub(body, 1, 300) .. "\n") end
    end
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + (thread:get("bad") or 0)
  end
  io.write(string.format("bad answers: %d\n", total))
end
