"""Connects to `skillfold serve --listen --oauth` through the official MCP Python SDK's own
client-credentials flow and prints a JSON report.

tests/it/serve_oauth.rs runs this in the venv of tests/mcp/requirements.txt. The SDK does
everything a real agent host does: the 401 challenge, the RFC 9728 document, the identity
provider's metadata, the token request with the RFC 8707 `resource` the document names, then
the session with that token. The assertions live in the Rust test.

Usage: client_credentials.py URL ISSUER CLIENT_ID CLIENT_SECRET
Prints {"tools": [...], "aud": <the access token's aud>, "scope": <its scope>}.
"""

import asyncio
import base64
import json
import sys
from typing import Any

from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class MemoryStorage:
    """The SDK's `TokenStorage`, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def claims_of(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


async def main(url: str, issuer: str, client_id: str, client_secret: str) -> None:
    storage = MemoryStorage()
    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        client_secret=client_secret,
        token_endpoint_auth_method="client_secret_post",
        issuer=issuer,
    )
    async with create_mcp_http_client(auth=auth) as http:
        async with Client(streamable_http_client(url, http_client=http), cache=None) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
    claims = claims_of(storage.tokens.access_token)
    print(json.dumps({"tools": tools, "aud": claims.get("aud"), "scope": claims.get("scope")}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
