"""Drives `skillfold serve` with the official MCP Python SDK client and prints a JSON report.

The integration tests (tests/it/mcp.rs) run this in a virtual environment holding the pinned
`mcp` package (tests/mcp/requirements.txt) and assert on the report. The script only talks to the
server and measures; the assertions live in the Rust tests.

The server is either a command to launch (stdio) or, when the only word after `--` is an
`http://` URL, a running `skillfold serve --listen` reached over Streamable HTTP, with the bearer
token in MCP_BEARER_TOKEN (if set); MCP_SERVER_PID names that server's process for SIGHUP.

Usage:
  client.py session MODE -- SERVER_COMMAND...
      MODE is `legacy` (the initialize handshake) or `auto` (2026-07-28 discovery, with a fallback).
      Initialize, list tools, call every tool case, list and get skills, read every listed file
      and check its digest and size against the listing, read directories, provoke errors.
      With MCP_RUN_SCRIPT='{"skill": ..., "script": ..., "args": [...]}' it also calls
      `skill_run_script` with that input when the server offers the tool.
  client.py reload CONFIG NEXT BROKEN LAST -- SERVER_COMMAND...
      Hot reload: swap CONFIG for NEXT and wait for the new skills, swap in BROKEN and check the
      previous catalogue keeps serving, send SIGHUP, then swap in LAST and wait again.
  client.py crowd TOKENS [BARRIER PARTIES] -- URL
      One session per token (TOKENS: a file of tokens, one a line), all at once: each initializes,
      lists tools, holds its GET stream until every session's is open, then lists tools again.
      Reports every HTTP status the sessions got, the GET streams opened and any error. With
      BARRIER (a folder) and PARTIES, several such processes hold their streams together: each,
      once all of its own are open, writes a file there and waits until PARTIES files are.
  client.py bench N BODY_SKILL -- SERVER_COMMAND...
      Start to the `initialize` answer and to the first `tools/list` answer, then N `load_skill`
      round trips for BODY_SKILL's body (benches/mcp_roundtrip.py).
"""

import asyncio
import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Literal

import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class UriParams(types.RequestParams):
    uri: str


class GetSkillRequest(types.Request[UriParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class ReadDirectoryRequest(types.Request[UriParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


class ListSkillsResult(types.Result):
    skills: list[dict[str, Any]]


class GetSkillResult(types.Result):
    skill: dict[str, Any]


class ReadDirectoryResult(types.Result):
    resources: list[dict[str, Any]]


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def error_of(awaitable: Any) -> dict[str, Any]:
    try:
        result = await awaitable
    except MCPError as e:
        return {"code": e.error.code, "message": e.error.message}
    return {"unexpected_result": dump(result)}


def server_params(command: list[str]) -> Any:
    if len(command) == 1 and command[0].startswith(("http://", "https://")):
        token = os.environ.get("MCP_BEARER_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else None
        return streamable_http_client(command[0], http_client=create_mcp_http_client(headers=headers))
    return StdioServerParameters(command=command[0], args=command[1:])


async def list_skills(client: Client) -> list[dict[str, Any]]:
    result = await client.session.send_request(ListSkillsRequest(), ListSkillsResult)
    return result.skills


async def get_skill(client: Client, uri: str) -> dict[str, Any]:
    result = await client.session.send_request(GetSkillRequest(params=UriParams(uri=uri)), GetSkillResult)
    return result.skill


async def session(mode: str, command: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    async with Client(server_params(command), mode=mode, cache=None) as client:
        report["protocol_version"] = client.protocol_version
        report["capabilities"] = dump(client.server_capabilities)
        report["instructions"] = client.instructions
        tools = (await client.list_tools()).tools
        report["tools"] = [dump(t) for t in tools]
        names = [t.name for t in tools]
        skills = await list_skills(client)
        report["skills"] = skills
        first = skills[0]["frontmatter"]["name"]
        calls = {
            "body": ("load_skill", {"name": first, "reference": None}),
            "reference": ("load_skill", {"name": first, "reference": "references/guide.md"}),
            "refused_reference": ("load_skill", {"name": first, "reference": "../secrets"}),
            "unknown_skill": ("load_skill", {"name": "nope", "reference": None}),
            "bad_input": ("load_skill", {"name": first, "extra": 1}),
            "omitted_reference": ("load_skill", {"name": first}),
            "unknown_tool": ("no_such_tool", {}),
        }
        report["calls"] = {}
        # `call_tool` validates each successful result against the tool's `outputSchema` (and
        # raises when it does not match).
        for key, (tool, arguments) in calls.items():
            report["calls"][key] = dump(await client.call_tool(tool, arguments))
        report["output_schema_checks"] = await output_schema_checks(client, tools)
        run_script = os.environ.get("MCP_RUN_SCRIPT")
        if run_script and "skill_run_script" in names:
            report["calls"]["run_script"] = dump(await client.call_tool("skill_run_script", json.loads(run_script)))
        report["get"] = await get_skill(client, skills[0]["uri"])
        report["get_unknown"] = await error_of(
            client.session.send_request(GetSkillRequest(params=UriParams(uri="skill://nope/SKILL.md")), GetSkillResult)
        )
        # Read every listed file and check it against the listing, as a host must.
        reads = []
        for skill in skills:
            for entry in skill["resources"]:
                contents = (await client.read_resource(entry["uri"])).contents
                data = contents[0].text.encode("utf-8")
                reads.append(
                    {
                        "uri": entry["uri"],
                        "mime_type": contents[0].mime_type,
                        "size": len(data),
                        "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                        "listed_size": entry["size"],
                        "listed_digest": entry["digest"],
                    }
                )
        report["reads"] = reads
        report["resources"] = [dump(r) for r in (await client.list_resources()).resources]
        report["read_unknown"] = await error_of(client.read_resource("skill://nope/SKILL.md"))
        root = skills[0]["uri"].removesuffix("/SKILL.md")
        directory = await client.session.send_request(
            ReadDirectoryRequest(params=UriParams(uri=root)), ReadDirectoryResult
        )
        report["directory"] = directory.resources
        report["directory_of_file"] = await error_of(
            client.session.send_request(
                ReadDirectoryRequest(params=UriParams(uri=skills[0]["uri"])), ReadDirectoryResult
            )
        )
    return report


async def output_schema_checks(client: Client, tools: list[Any]) -> dict[str, Any]:
    """Whether `load_skill` lists an output schema, and whether the SDK refuses a result that
    breaks it (the validation `call_tool` runs on every successful result)."""
    tool = next(t for t in tools if t.name == "load_skill")
    arguments = {"name": tool.input_schema["properties"]["name"]["enum"][0], "reference": None}
    result = await client.call_tool("load_skill", arguments)
    tampered = result.model_copy(update={"structured_content": {**result.structured_content, "hash": 7}})
    try:
        await client.session.validate_tool_result("load_skill", tampered)
        refused = False
    except RuntimeError:
        refused = True
    return {"listed": tool.output_schema is not None, "tampered_refused": refused}


def replace(path: Path, source: Path) -> None:
    """Writes `source`'s bytes over `path` the way editors do: a new file renamed into place."""
    staged = path.with_name(path.name + ".new")
    staged.write_bytes(source.read_bytes())
    os.replace(staged, path)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


async def skill_names(client: Client) -> list[str]:
    return [s["frontmatter"]["name"] for s in await list_skills(client)]


async def wait_for_change(client: Client, before: list[str], limit: float = 30.0) -> tuple[list[str], float]:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        names = await skill_names(client)
        if names != before:
            return names, time.monotonic() - start
        await asyncio.sleep(0.05)
    return before, time.monotonic() - start


async def reload(config: Path, next_: Path, broken: Path, last: Path, command: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"notifications": []}

    async def on_message(message: Any) -> None:
        method = getattr(message, "method", None)
        if method:
            report["notifications"].append(method)

    async with Client(server_params(command), mode="legacy", cache=None, message_handler=on_message) as client:
        report["list_changed_declared"] = dump(client.server_capabilities)
        report["start"] = await skill_names(client)
        before_tools = (await client.list_tools()).tools
        report["start_enum"] = before_tools[0].input_schema["properties"]["name"]["enum"]

        replace(config, next_)
        names, elapsed = await wait_for_change(client, report["start"])
        report["next"] = names
        report["next_seconds"] = elapsed
        report["next_enum"] = (await client.list_tools()).tools[0].input_schema["properties"]["name"]["enum"]
        report["next_call"] = dump(await client.call_tool("load_skill", {"name": names[-1], "reference": None}))

        replace(config, broken)
        await asyncio.sleep(2.0)  # a failure and two retries at a 0.2 s poll interval
        report["broken"] = await skill_names(client)
        report["broken_call"] = dump(await client.call_tool("load_skill", {"name": names[-1], "reference": None}))

        pid = os.environ.get("MCP_SERVER_PID")
        servers = [int(pid)] if pid else children_of(os.getpid())
        report["server_pids"] = len(servers)
        for pid in servers:
            os.kill(pid, signal.SIGHUP)
        await asyncio.sleep(0.5)
        report["after_sighup"] = await skill_names(client)

        replace(config, last)
        names, elapsed = await wait_for_change(client, report["broken"])
        report["last"] = names
        report["last_seconds"] = elapsed
    return report


async def crowd(tokens_file: Path, barrier: list[str], command: list[str]) -> dict[str, Any]:
    tokens = tokens_file.read_text().split()
    statuses: dict[str, int] = {}
    streams = 0
    all_open = asyncio.Event()

    async def on_response(response: Any) -> None:
        nonlocal streams
        key = f"{response.request.method} {response.status_code}"
        statuses[key] = statuses.get(key, 0) + 1
        if response.request.method == "GET" and response.status_code == 200:
            streams += 1
            settle()

    failed = 0

    def settle() -> None:
        # Every session holds its stream, or has failed (then nobody waits for it).
        if streams + failed >= len(tokens):
            all_open.set()

    async def one(token: str) -> int:
        nonlocal failed
        try:
            return await session_of(token)
        except BaseException:
            failed += 1
            settle()
            raise

    async def session_of(token: str) -> int:
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx2.Timeout(60, read=300),
            event_hooks={"response": [on_response]},
        )
        async with http:
            transport = streamable_http_client(command[0], http_client=http)
            async with Client(transport, mode="legacy", cache=None) as client:
                await client.list_tools()
                await asyncio.wait_for(every_one_open.wait(), 120)
                return len((await client.list_tools()).tools)

    async def together() -> None:
        await asyncio.wait_for(all_open.wait(), 120)
        if barrier:
            folder, parties = Path(barrier[0]), int(barrier[1])
            (folder / f"{os.getpid()}.ready").write_text("")
            while len(list(folder.glob("*.ready"))) < parties:
                await asyncio.sleep(0.05)
        every_one_open.set()

    every_one_open = asyncio.Event()
    waiting = asyncio.create_task(together())
    results = await asyncio.gather(*(one(t) for t in tokens), return_exceptions=True)
    waiting.cancel()
    return {
        "sessions": len(tokens),
        "streams": streams,
        "statuses": statuses,
        "listed": sum(1 for r in results if isinstance(r, int) and r > 0),
        "errors": [repr(r) for r in results if isinstance(r, BaseException)],
    }


async def bench(n: int, skill: str, command: list[str]) -> dict[str, Any]:
    start = time.perf_counter()
    async with Client(server_params(command), mode="legacy", cache=None) as client:
        initialized = time.perf_counter() - start
        tools = await client.list_tools()
        first_response = time.perf_counter() - start
        assert tools.tools, "no tools"
        arguments = {"name": skill, "reference": None}
        result = await client.call_tool("load_skill", arguments)
        body_bytes = len(result.structured_content["content"].encode("utf-8"))
        for _ in range(min(200, n)):  # warm up
            await client.call_tool("load_skill", arguments)
        samples = []
        for _ in range(n):
            t = time.perf_counter()
            await client.call_tool("load_skill", arguments)
            samples.append(time.perf_counter() - t)
    samples.sort()
    return {
        "start_to_initialize_ms": initialized * 1000,
        "start_to_first_response_ms": first_response * 1000,
        "body_bytes": body_bytes,
        "calls": n,
        "p50_ms": samples[len(samples) // 2] * 1000,
        "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000,
    }


def main() -> None:
    args = sys.argv[1:]
    split = args.index("--")
    own, command = args[:split], args[split + 1 :]
    if own[0] == "session":
        report = asyncio.run(session(own[1], command))
    elif own[0] == "reload":
        report = asyncio.run(reload(*(Path(p) for p in own[1:5]), command))
    elif own[0] == "crowd":
        report = asyncio.run(crowd(Path(own[1]), own[2:4], command))
    elif own[0] == "bench":
        report = asyncio.run(bench(int(own[1]), own[2], command))
    else:
        raise SystemExit(f"unknown scenario {own[0]!r}")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
