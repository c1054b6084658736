"""The official MCP Python SDK's server (`MCPServer`, stateful Streamable HTTP on uvicorn) with
a `load_skill` tool answering the same body as skillfold, for benches/http_peers.sh.

    python python_server.py PORT BODY_FILE HASH

The tool's output has skillfold's `load_skill` shape (name, version, hash, reference, content,
references), so the answer carries the same bytes of body as structured content and as text.
"""

import sys
from typing import TypedDict

import uvicorn
from mcp.server.mcpserver import MCPServer

port, body_file, digest = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(body_file, encoding="utf-8") as f:
    BODY = f.read()

server = MCPServer("peer-python", log_level="WARNING")


class LoadedSkill(TypedDict):
    name: str
    version: str
    hash: str
    reference: str | None
    content: str
    references: list[str]


@server.tool(description="Load an approved skill's instructions.")
def load_skill(name: str, reference: str | None) -> LoadedSkill:
    if name != "big" or reference is not None:
        raise ValueError(f"unknown skill or reference: {name} {reference}")
    return LoadedSkill(**{
        "name": "big",
        "version": "1",
        "hash": digest,
        "reference": None,
        "content": BODY,
        "references": [],
    })


app = server.streamable_http_app(host="127.0.0.1")
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
