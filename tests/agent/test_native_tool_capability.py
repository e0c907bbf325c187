"""`capabilities.NativeTool`: a native tool given as a capability reaches the model's request like one given to
the agent, in the agent's order (agent, capabilities, run), and can be built from data."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import CombinedCapability, NativeTool
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.native_tools import AbstractNativeTool, CodeExecutionTool, MCPServerTool, WebSearchTool

pytestmark = pytest.mark.anyio


def _recording_model(seen: list[list[AbstractNativeTool]]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(info.model_request_parameters.native_tools))
        return ModelResponse(parts=[TextPart('done')])

    return FunctionModel(answer)


async def test_a_native_tool_capability_reaches_the_request_in_order() -> None:
    seen: list[list[AbstractNativeTool]] = []
    agent = Agent(
        _recording_model(seen),
        capabilities=[
            NativeTool(CodeExecutionTool()),
            CombinedCapability([NativeTool(WebSearchTool(search_context_size='high'))]),
        ],
    )
    deprecated: dict[str, Any] = {'builtin_tools': [WebSearchTool()]}  # not in `run`'s signature, as in 1.107
    with pytest.warns(DeprecationWarning, match='builtin_tools'):
        await agent.run('hi', **deprecated)
    # One tool per `unique_id`: the run's web search takes the place of the agent's (as in pydantic-ai 1.107).
    assert seen[0] == [CodeExecutionTool(), WebSearchTool()]


async def test_a_runs_native_tool_replaces_the_agents_with_the_same_id_in_its_place() -> None:
    seen: list[list[AbstractNativeTool]] = []
    agent = Agent(
        _recording_model(seen),
        capabilities=[
            NativeTool(WebSearchTool()),
            NativeTool(MCPServerTool(id='wiki', url='https://wiki.example/mcp')),
            NativeTool(MCPServerTool(id='code', url='https://code.example/mcp')),
        ],
    )
    await agent.run(
        'hi',
        capabilities=[
            NativeTool(MCPServerTool(id='code', url='https://code.example/mcp', authorization_token='t')),
            NativeTool(MCPServerTool(id='new', url='https://new.example/mcp')),
        ],
    )
    assert seen[0] == [
        WebSearchTool(),
        MCPServerTool(id='wiki', url='https://wiki.example/mcp'),
        MCPServerTool(id='code', url='https://code.example/mcp', authorization_token='t'),
        MCPServerTool(id='new', url='https://new.example/mcp'),
    ]


async def test_a_tool_built_per_request_can_be_left_out() -> None:
    seen: list[list[AbstractNativeTool]] = []

    def maybe(ctx: RunContext[bool]) -> WebSearchTool | None:
        return WebSearchTool() if ctx.deps else None

    agent = Agent(_recording_model(seen), deps_type=bool, capabilities=[NativeTool(maybe)])
    await agent.run('hi', deps=True)
    await agent.run('hi', deps=False)
    assert [[type(t) for t in tools] for tools in seen] == [[WebSearchTool], []]


@pytest.mark.parametrize(
    'spec',
    [
        {'tool': {'kind': 'web_search', 'search_context_size': 'low'}},
        {'kind': 'web_search', 'search_context_size': 'low'},
    ],
    ids=['explicit', 'flat'],
)
def test_from_spec(spec: dict[str, Any]) -> None:
    capability = NativeTool.from_spec(**spec)
    assert capability.tool == WebSearchTool(search_context_size='low')


def test_from_spec_needs_a_tool() -> None:
    with pytest.raises(TypeError, match=r'`NativeTool.from_spec\(\)` requires either a `tool` argument'):
        NativeTool.from_spec()


async def test_an_override_of_native_tools_replaces_the_agents_own_and_its_capabilities_but_not_the_runs() -> None:
    seen: list[list[AbstractNativeTool]] = []
    agent = Agent(_recording_model(seen), capabilities=[NativeTool(WebSearchTool())])
    with agent.override(native_tools=[]):
        await agent.run('a')
    with agent.override(native_tools=[CodeExecutionTool()]):
        await agent.run('b', capabilities=[NativeTool(WebSearchTool(max_uses=1))])
    await agent.run('c')

    assert seen == [[], [CodeExecutionTool(), WebSearchTool(max_uses=1)], [WebSearchTool()]]
