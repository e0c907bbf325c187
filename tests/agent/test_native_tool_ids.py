"""Native tools of one layer (the agent with its capabilities, an `override(spec=)`'s capabilities, a run's
capabilities, an `override(native_tools=)`) that share an id must be equal (pydantic-ai 2.x); across layers a later
one takes the place of an earlier one."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.capabilities import AbstractCapability, NativeTool
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.native_tools import AbstractNativeTool, MCPServerTool, WebSearchTool

pytestmark = pytest.mark.anyio

TENANT_A = MCPServerTool(id='api', url='https://mcp.example.com/a')
TENANT_B = MCPServerTool(id='api', url='https://mcp.example.com/b')


def conflict(source: str) -> str:
    return (
        f"Native tool id 'mcp_server:api' maps to conflicting definitions in {source}. "
        'Give each native tool of one layer (the agent, a run, an override) its own id.'
    )


def recording(seen: list[list[AbstractNativeTool]]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(info.model_request_parameters.native_tools))
        return ModelResponse([TextPart('done')])

    return FunctionModel(answer)


def tenant_a(ctx: RunContext[object]) -> AbstractCapability[object]:
    return NativeTool(TENANT_A)


def tenant_b(ctx: RunContext[object]) -> AbstractCapability[object]:
    return NativeTool(TENANT_B)


def test_an_agents_capabilities_with_different_tools_of_one_id_are_refused() -> None:
    with pytest.raises(UserError) as info:
        Agent(recording([]), capabilities=[NativeTool(TENANT_A), NativeTool(TENANT_B)])
    assert str(info.value) == conflict('agent capabilities')


async def test_equal_tools_of_one_id_are_allowed_and_sent_once() -> None:
    seen: list[list[AbstractNativeTool]] = []
    agent = Agent(recording(seen), capabilities=[NativeTool(TENANT_A), NativeTool(TENANT_A)])
    await agent.run('hi')
    assert seen == [[TENANT_A]]


async def test_a_runs_capabilities_with_different_tools_of_one_id_are_refused() -> None:
    agent = Agent(recording([]))
    with pytest.raises(UserError) as info:
        await agent.run('hi', capabilities=[NativeTool(TENANT_A), NativeTool(TENANT_B)])
    assert str(info.value) == conflict('run capabilities')


async def test_capability_functions_of_a_run_are_checked_as_the_run_makes_them() -> None:
    agent = Agent(recording([]))
    with pytest.raises(UserError) as info:
        await agent.run('hi', capabilities=[tenant_a, tenant_b])
    assert str(info.value) == conflict('run capabilities')


async def test_capability_functions_of_the_agent_are_checked_as_a_run_makes_them() -> None:
    agent = Agent(recording([]), capabilities=[tenant_a, tenant_b])
    with pytest.raises(UserError) as info:
        await agent.run('hi')
    assert str(info.value) == conflict('agent capabilities')


async def test_an_overrides_native_tools_of_one_id_that_differ_are_refused() -> None:
    agent = Agent(recording([]))
    with agent.override(native_tools=[TENANT_A, TENANT_B]), pytest.raises(UserError) as info:
        await agent.run('hi')
    assert str(info.value) == conflict('override native_tools')


async def test_an_override_specs_capabilities_are_checked_as_the_base_layer() -> None:
    agent = Agent(recording([]))
    tool = {'kind': 'mcp_server', 'id': 'api'}
    spec = {
        'capabilities': [
            {'NativeTool': {'tool': {**tool, 'url': 'https://mcp.example.com/a'}}},
            {'NativeTool': {'tool': {**tool, 'url': 'https://mcp.example.com/b'}}},
        ]
    }
    with agent.override(spec=spec), pytest.raises(UserError) as info:
        await agent.run('hi')
    assert str(info.value) == conflict('override spec capabilities')


async def test_a_runs_tool_of_an_id_the_agent_has_takes_its_place() -> None:
    seen: list[list[AbstractNativeTool]] = []
    agent = Agent(recording(seen), capabilities=[NativeTool(TENANT_A), NativeTool(WebSearchTool())])
    await agent.run('hi', capabilities=[NativeTool(TENANT_B)])
    assert seen == [[TENANT_B, WebSearchTool()]]


async def test_an_overrides_native_tools_replace_the_agents_and_keep_the_runs() -> None:
    seen: list[list[AbstractNativeTool]] = []
    agent = Agent(recording(seen), capabilities=[NativeTool(WebSearchTool())])
    with agent.override(native_tools=[TENANT_A]):
        await agent.run('hi', capabilities=[tenant_b])
    assert seen == [[TENANT_B]]


async def test_native_tool_functions_are_not_checked_for_ids() -> None:
    seen: list[list[AbstractNativeTool]] = []

    def per_run(ctx: RunContext[object]) -> AbstractNativeTool:
        return TENANT_B

    agent = Agent(recording(seen), capabilities=[NativeTool(TENANT_A), NativeTool(per_run)])
    await agent.run('hi')
    assert seen == [[TENANT_B]]
