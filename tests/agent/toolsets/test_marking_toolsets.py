"""Toolsets that mark the wrapped tools: deferred loading, return schemas, metadata."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import (
    DeferredLoadingToolset,
    DeferredToolset,  # pyright: ignore[reportDeprecated]
    ExternalToolset,
    FunctionToolset,
    IncludeReturnSchemasToolset,
    SetMetadataToolset,
)
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def ctx() -> RunContext[Any]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


def tools() -> FunctionToolset[Any]:
    toolset = FunctionToolset[Any]()

    @toolset.tool_plain
    def area(width: int, height: int) -> int:
        """The area of a rectangle."""
        return width * height

    @toolset.tool_plain(metadata={'owner': 'geo', 'cost': 1})
    def perimeter(width: int, height: int) -> int:
        """The perimeter of a rectangle."""
        return 2 * (width + height)

    @toolset.tool_plain(include_return_schema=False)
    def secret(width: int) -> int:
        return width

    return toolset


async def definitions(toolset: Any) -> dict[str, ToolDefinition]:
    return {name: tool.tool_def for name, tool in (await toolset.get_tools(ctx())).items()}


async def test_defer_loading_marks_every_tool() -> None:
    wrapped = tools().defer_loading()
    assert isinstance(wrapped, DeferredLoadingToolset)
    assert wrapped.tool_names is None
    assert {name: d.defer_loading for name, d in (await definitions(wrapped)).items()} == {
        'area': True,
        'perimeter': True,
        'secret': True,
    }


async def test_defer_loading_marks_only_the_named_tools() -> None:
    wrapped = tools().defer_loading(['area'])
    assert isinstance(wrapped, DeferredLoadingToolset)
    assert wrapped.tool_names == frozenset({'area'})
    assert {name: d.defer_loading for name, d in (await definitions(wrapped)).items()} == {
        'area': True,
        'perimeter': False,
        'secret': False,
    }


async def test_include_return_schemas_sets_the_flag_where_unset() -> None:
    wrapped = tools().include_return_schemas()
    assert isinstance(wrapped, IncludeReturnSchemasToolset)
    found = await definitions(wrapped)
    assert {name: d.include_return_schema for name, d in found.items()} == {
        'area': True,
        'perimeter': True,
        'secret': False,
    }


async def test_the_model_is_told_the_return_schema_of_the_marked_tools() -> None:
    seen: dict[str, str | None] = {}

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.update({t.name: t.description for t in info.function_tools})
        return ModelResponse(parts=[TextPart('ok')])

    await Agent(FunctionModel(respond), toolsets=[tools().include_return_schemas()]).run('go')
    assert seen == {
        'area': 'The area of a rectangle.\n\nReturn schema:\n\n{\n  "type": "integer"\n}',
        'perimeter': 'The perimeter of a rectangle.\n\nReturn schema:\n\n{\n  "type": "integer"\n}',
        'secret': None,
    }


async def test_with_metadata_merges_over_each_tools_own() -> None:
    wrapped = tools().with_metadata(owner='billing', audited=True)
    assert isinstance(wrapped, SetMetadataToolset)
    assert wrapped.metadata == {'owner': 'billing', 'audited': True}
    found = await definitions(wrapped)
    assert found['area'].metadata == {'owner': 'billing', 'audited': True}
    assert found['perimeter'].metadata == {'owner': 'billing', 'cost': 1, 'audited': True}


async def test_marked_tools_are_still_called_through_the_wrapper() -> None:
    toolset = tools().with_metadata(owner='x').include_return_schemas()
    agent = Agent(TestModel(call_tools=['area']), toolsets=[toolset])
    result = await agent.run('area')
    assert result.output == '{"area":0}'


def test_deferred_toolset_is_the_deprecated_name_of_external_toolset() -> None:
    with pytest.warns(DeprecationWarning, match='`DeferredToolset` is deprecated, use `ExternalToolset` instead'):
        toolset = DeferredToolset([ToolDefinition(name='later')])  # pyright: ignore[reportDeprecated]
    assert isinstance(toolset, ExternalToolset)
