"""skillfold's tools as OpenAI Agents SDK tools: one `FunctionTool` per tool of a catalogue.

    from agents import Agent
    catalogue = skillfold.Runtime.load("skillfold.yaml").catalogue("writer")
    agent = Agent(name="writer", instructions=base + catalogue.prompt(),
                  tools=function_tools(catalogue, on_record=transcript.append))

The SDK passes the model's arguments as JSON text, which `Catalogue.call` accepts as it is. A
refused call goes back to the model as `{"error": {code, message, valid}}` so it can correct
itself; the record of what was served goes to `on_record`, never to the model. Calls run in a
worker thread (the native call releases the interpreter), so the event loop keeps running while a
helper script runs.
"""

import asyncio
import json
from typing import Any, Callable, Optional

from agents import FunctionTool
from agents.tool_context import ToolContext

import skillfold


def function_tools(
    catalogue: skillfold.Catalogue,
    on_record: Optional[Callable[[dict], None]] = None,
) -> list[FunctionTool]:
    """One `FunctionTool` per tool the catalogue offers, with skillfold's strict schemas."""
    return [_tool(catalogue, spec, on_record) for spec in catalogue.tools("openai-responses")]


def _tool(catalogue, spec, on_record) -> FunctionTool:
    name = spec["name"]

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        try:
            output, record = await asyncio.to_thread(catalogue.call, name, arguments)
        except skillfold.ToolError as refused:
            return json.dumps({"error": refused.error})
        if on_record is not None:
            on_record(record)
        return json.dumps(output)

    return FunctionTool(
        name=name,
        description=spec["description"],
        params_json_schema=spec["parameters"],
        on_invoke_tool=invoke,
        strict_json_schema=True,
    )
