"""`ToolDefinition.toolset_id` (pydantic-ai 2.x): the id of the toolset a tool comes from, set as a run collects
its tools."""

from __future__ import annotations

from dataclasses import replace

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import PrepareTools
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import CombinedToolset, FunctionToolset

pytestmark = pytest.mark.anyio


def _add(x: int) -> int:
    return x + 1


def _sub(x: int) -> int:
    return x - 1


async def test_a_runs_tools_carry_the_id_of_their_toolset() -> None:
    seen: dict[str, str | None] = {}

    async def record(ctx: RunContext[None], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen.update({d.name: d.toolset_id for d in tool_defs})
        return tool_defs

    named = FunctionToolset([_add], id='maths')
    unnamed = FunctionToolset([_sub])
    agent = Agent(TestModel(call_tools=[]), toolsets=[named, unnamed], capabilities=[PrepareTools(record)])
    await agent.run('hi')
    assert seen == {'_add': 'maths', '_sub': None}


async def test_an_id_already_set_is_kept() -> None:
    inner = FunctionToolset([_add], id='inner')
    combined = CombinedToolset([inner.prepared(lambda ctx, defs: [replace(d, toolset_id='given') for d in defs])])
    agent = Agent(TestModel(call_tools=[]), toolsets=[combined])
    async with agent.iter('hi') as run:
        tools = await combined.get_tools(run.ctx.deps.run_context(run.ctx.state))
    assert tools['_add'].tool_def.toolset_id == 'given'


async def test_an_agents_own_tools_carry_the_agent_id_when_they_are_its_only_tools() -> None:
    seen: dict[str, str | None] = {}

    async def record(ctx: RunContext[None], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen.update({d.name: d.toolset_id for d in tool_defs})
        return tool_defs

    agent = Agent(TestModel(call_tools=[]), tools=[_add], capabilities=[PrepareTools(record)])
    await agent.run('hi')
    assert seen == {'_add': '<agent>'}


def test_an_agents_function_toolset_holds_its_own_tools_and_timeout() -> None:
    agent = Agent(TestModel(), tools=[_add], tool_timeout=30.0)
    assert (list(agent._function_toolset.tools), agent._function_toolset.timeout) == (['_add'], 30.0)
