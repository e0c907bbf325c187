"""LangChain tools as Edgewise tools, with a tool of LangChain's shape (no LangChain installed)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.ext.langchain import LangChainToolset, tool_from_langchain
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


class FileSearch:
    """The shape of a LangChain `BaseTool` (what `langchain_community`'s `FileSearchTool` has)."""

    name = 'file_search'
    description = 'Recursively search for files in a subdirectory that match the regex pattern'

    def __init__(self) -> None:
        self.calls: list[tuple[Any, str]] = []

    @property
    def args(self) -> dict[str, Any]:
        return {
            'dir_path': {
                'default': '.',
                'description': 'Subdirectory to search in.',
                'title': 'Dir Path',
                'type': 'string',
            },
            'pattern': {
                'description': 'Unix shell regex, where * matches everything.',
                'title': 'Pattern',
                'type': 'string',
            },
        }

    def get_input_jsonschema(self) -> dict[str, Any]:
        return {'title': 'FileSearchInput', 'type': 'object', 'properties': self.args, 'required': ['pattern']}

    def run(self, tool_input: Any, **kwargs: Any) -> str:
        self.calls.append((tool_input, threading.current_thread().name))
        return f'found {tool_input["pattern"]} in {tool_input["dir_path"]}'


def test_the_tool_keeps_the_name_description_and_schema() -> None:
    tool = tool_from_langchain(FileSearch())
    assert (tool.name, tool.description) == (
        'file_search',
        'Recursively search for files in a subdirectory that match the regex pattern',
    )
    assert tool.function_schema.json_schema == {
        'title': 'FileSearchInput',
        'type': 'object',
        'properties': FileSearch().args,
        'required': ['pattern'],
        'additionalProperties': False,
    }


def test_a_schema_that_allows_more_properties_keeps_saying_so() -> None:
    class Open(FileSearch):
        def get_input_jsonschema(self) -> dict[str, Any]:
            return {'type': 'object', 'properties': {}, 'additionalProperties': True}

        @property
        def args(self) -> dict[str, Any]:
            return {'x': {'type': 'integer', 'default': 1}}

    assert tool_from_langchain(Open()).function_schema.json_schema == {
        'type': 'object',
        'properties': {},
        'additionalProperties': True,
    }


async def test_an_agent_calls_it_with_the_defaults_filled_in() -> None:
    search = FileSearch()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('file_search', {'pattern': '*.py'})])
        return ModelResponse(parts=[TextPart('done')])

    result = await Agent(FunctionModel(model), toolsets=[LangChainToolset([search], id='lc')]).run('find')
    returns = [p.content for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert returns == ['found *.py in .']
    assert [call for call, _ in search.calls] == [{'dir_path': '.', 'pattern': '*.py'}]
    # LangChain's `run` blocks, so it runs off the event loop's thread.
    assert search.calls[0][1] != threading.current_thread().name


def test_the_toolset_has_one_tool_per_langchain_tool() -> None:
    class Other(FileSearch):
        name = 'other'

    toolset = LangChainToolset([FileSearch(), Other()], id='lc')
    assert (list(toolset.tools), toolset.id) == (['file_search', 'other'], 'lc')
