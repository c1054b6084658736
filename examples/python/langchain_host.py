"""skillfold's tools as LangChain tools: one `StructuredTool` per tool of a catalogue.

    catalogue = skillfold.Runtime.load("skillfold.yaml").catalogue("writer")
    model = ChatAnthropic(...).bind_tools(structured_tools(catalogue))

Each tool takes skillfold's JSON Schema as its `args_schema` and answers with
`response_format="content_and_artifact"`: the content (the JSON output) goes to the model, the
artifact is skillfold's record of exactly what was served (skill, version, pinned hash, file,
SHA-256), kept on the `ToolMessage` for the host's transcript. A refused call becomes a
`ToolException` whose text is the `{"error": …}` object, returned to the model as the tool's
answer.
"""

import json

from langchain_core.tools import StructuredTool, ToolException

import skillfold


def structured_tools(catalogue: skillfold.Catalogue) -> list[StructuredTool]:
    """One `StructuredTool` per tool the catalogue offers."""
    return [_tool(catalogue, spec) for spec in catalogue.tools("anthropic")]


def _tool(catalogue, spec) -> StructuredTool:
    name = spec["name"]

    def call(**arguments):
        try:
            output, record = catalogue.call(name, arguments)
        except skillfold.ToolError as refused:
            raise ToolException(json.dumps({"error": refused.error})) from refused
        return json.dumps(output), record

    return StructuredTool.from_function(
        func=call,
        name=name,
        description=spec["description"],
        args_schema=spec["input_schema"],
        response_format="content_and_artifact",
        handle_tool_error=True,
    )
