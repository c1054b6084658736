-- wrk script: `tools/call load_skill` over Streamable HTTP, every request with its own JSON-RPC
-- id, all connections on one MCP session (SESSION in the environment; see wrk_load_skill.sh).
local session = os.getenv("SESSION")
local skill = os.getenv("SKILL") or "big"
-- TOKEN: the bearer token of every request (AUTH=static or oauth in wrk_load_skill.sh).
local token = os.getenv("TOKEN")
local counter = 0

function setup(thread)
  thread:set("first", counter)
  counter = counter + 1000000000
end

function init(args)
  id = first
end

function request()
  id = id + 1
  local body = '{"jsonrpc":"2.0","id":' .. id ..
    ',"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"' .. skill ..
    '","reference":null}}}'
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session,
    ["MCP-Protocol-Version"] = "2025-06-18",
  }
  if token then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("POST", "/mcp", headers, body)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"structuredContent"', 1, true) then
    errors_seen = (errors_seen or 0) + 1
    if errors_seen == 1 then io.stderr:write("bad answer: " .. status .. " " .. string.sub(body, 1, 300) .. "\n") end
  end
end
