"""Toolsets: a function tool rebuilt from a definition listed before, renames that would lose a tool, and several
member toolsets failing at once."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from edgewise.agent import CombinedToolset, FunctionToolset, RunContext, Tool, UserError, WrapperToolset
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import ToolsetTool
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def ctx_of(retries: int = 1) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), max_retries=retries)


def a(x: int) -> int:
    return x


def b(x: int) -> int:
    return -x


async def test_a_tool_rebuilt_from_its_listed_definition_keeps_the_rename_and_the_budget() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    async def rename(ctx: RunContext[None], tool_def: ToolDefinition) -> ToolDefinition:
        return dataclasses.replace(tool_def, name='renamed')

    @toolset.tool_plain(prepare=rename)
    def original(value: int) -> int:
        return value * 2

    listed = (await toolset.get_tools(ctx_of(retries=5)))['renamed']
    rebuilt = toolset.tool_for_tool_def(listed.tool_def, ctx=ctx_of(retries=5), original_name='original')

    assert (rebuilt.tool_def, rebuilt.original_name, rebuilt.max_retries) == (listed.tool_def, 'original', 5)
    assert await toolset.call_tool('renamed', {'value': 3}, ctx_of(), rebuilt) == 6


async def test_a_tool_rebuilt_without_an_original_name_is_found_by_its_definitions_name() -> None:
    toolset: FunctionToolset[None] = FunctionToolset([Tool(a, max_retries=2)])
    tool_def = (await toolset.get_tools(ctx_of()))['a'].tool_def

    rebuilt = toolset.tool_for_tool_def(tool_def, ctx=ctx_of(retries=9))

    assert (rebuilt.original_name, rebuilt.max_retries) == ('a', 2)
    with pytest.raises(KeyError):
        toolset.tool_for_tool_def(dataclasses.replace(tool_def, name='missing'), ctx=ctx_of())


async def test_renaming_a_tool_onto_a_kept_name_is_an_error() -> None:
    toolset: FunctionToolset[None] = FunctionToolset([a, b])
    with pytest.raises(UserError, match=r"^Renaming tool 'b' to 'a' conflicts with existing tool\.$"):
        await toolset.renamed({'a': 'b'}).get_tools(ctx_of())


async def test_keeping_a_name_a_renamed_tool_took_is_an_error() -> None:
    toolset: FunctionToolset[None] = FunctionToolset([a, b])
    with pytest.raises(UserError, match=r"^Tool name conflicts with previously renamed tool: 'b'\.$"):
        await toolset.renamed({'b': 'a'}).get_tools(ctx_of())


async def test_swapping_two_names_keeps_both_tools() -> None:
    toolset: FunctionToolset[None] = FunctionToolset([a, b])
    tools = await toolset.renamed({'b': 'a', 'a': 'b'}).get_tools(ctx_of())
    assert {name: tool.tool_def.name for name, tool in tools.items()} == {'b': 'b', 'a': 'a'}
    assert await tools['b'].toolset.call_tool('b', {'x': 1}, ctx_of(), tools['b']) == 1


@dataclass
class _Failing(WrapperToolset[Any]):
    message: str = ''

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        raise RuntimeError(self.message)  # before any checkpoint: the other member is not cancelled before it fails


async def test_members_failing_together_are_raised_as_a_group() -> None:
    inner: FunctionToolset[None] = FunctionToolset()
    combined = CombinedToolset([_Failing(inner, 'first'), _Failing(inner, 'second')])

    with pytest.raises(ExceptionGroup) as info:
        await combined.get_tools(ctx_of())

    assert sorted(str(error) for error in info.value.exceptions) == ['first', 'second']


async def test_one_member_failing_is_raised_as_it_is() -> None:
    combined = CombinedToolset([_Failing(FunctionToolset(), 'only'), FunctionToolset([a])])
    with pytest.raises(RuntimeError, match=r'^only$'):
        await combined.get_tools(ctx_of())
