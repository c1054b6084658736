"""The framework adapters of examples/python, exercised without a network: each framework's tool
object is invoked the way the framework invokes it after a model asks for a call."""

import asyncio
import json
import sys

import pytest

from conftest import REPO, SKILLS, sha256

sys.path.insert(0, str(REPO / "examples" / "python"))

BODY = {"name": "csv-profiler", "reference": None}
REFERENCE = {"name": "csv-profiler", "reference": "references/interpreting-profiles.md"}
HOSTILE = {"name": "csv-profiler", "reference": "../../etc/passwd"}


def test_openai_agents_function_tools_serve_skills_and_keep_records(runtime):
    from agents import FunctionTool
    from agents.tool_context import ToolContext
    from openai_agents_host import function_tools

    records = []
    catalogue = runtime.catalogue("analyst")
    tools = function_tools(catalogue, on_record=records.append)
    assert [t.name for t in tools] == ["load_skill"]
    [tool] = tools
    assert isinstance(tool, FunctionTool) and tool.strict_json_schema
    assert tool.params_json_schema["required"] == ["name", "reference"]

    def invoke(arguments):
        text = json.dumps(arguments)
        context = ToolContext(context=None, tool_name=tool.name, tool_call_id="call_1", tool_arguments=text)
        return json.loads(asyncio.run(tool.on_invoke_tool(context, text)))

    body = invoke(BODY)
    assert "csv" in body["content"].lower()
    reference = invoke(REFERENCE)
    assert reference["content"] == (SKILLS / "csv-profiler" / REFERENCE["reference"]).read_text()
    refused = invoke(HOSTILE)
    assert refused["error"]["code"] == "validation_error"
    assert [r["reference"] for r in records] == [None, REFERENCE["reference"]]
    assert records[0]["sha256"] == sha256(body["content"].encode())


def test_langchain_structured_tools_return_the_record_as_artifact(runtime):
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool
    from langchain_host import structured_tools

    [tool] = structured_tools(runtime.catalogue("analyst"))
    assert isinstance(tool, StructuredTool) and tool.name == "load_skill"
    assert tool.args["reference"]  # the schema's properties are the tool's arguments

    # A tool call as a chat model emits it: the answer is a ToolMessage with the record.
    message = tool.invoke({"type": "tool_call", "id": "toolu_1", "name": "load_skill", "args": REFERENCE})
    assert isinstance(message, ToolMessage) and message.tool_call_id == "toolu_1"
    assert json.loads(message.content)["content"] == (SKILLS / "csv-profiler" / REFERENCE["reference"]).read_text()
    assert message.artifact["skill"] == "csv-profiler"
    assert message.artifact["reference"] == REFERENCE["reference"]

    refused = tool.invoke({"type": "tool_call", "id": "toolu_2", "name": "load_skill", "args": HOSTILE})
    assert json.loads(refused.content)["error"]["code"] == "validation_error"
    assert refused.status == "error"
