"""`PrefixTools`: the tools of one capability renamed with a prefix, the agent's other tools left alone."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import (
    CAPABILITY_TYPES,
    AbstractCapability,
    IncludeToolReturnSchemas,
    PrefixTools,
    Toolset,
    WrapperCapability,
)
from edgewise.agent.exceptions import SpecError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.toolsets import AbstractToolset, FunctionToolset, PrefixedToolset

pytestmark = pytest.mark.anyio


def _lookup_toolset() -> FunctionToolset[None]:
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    def lookup(key: str) -> str:
        return f'value of {key}'

    return toolset


def _call_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Lists the tools it is given; calls `ns_lookup` once, then answers with what it returned."""
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(f'{returns[0].tool_name}={returns[0].content}')])
    names = sorted(t.name for t in info.function_tools)
    assert names == ['ns_lookup', 'own'], names
    return ModelResponse(parts=[ToolCallPart('ns_lookup', {'key': 'k'})])


async def test_the_wrapped_capability_tools_are_prefixed_and_called_by_their_own_name() -> None:
    agent = Agent(FunctionModel(_call_then_answer), capabilities=[PrefixTools(Toolset(_lookup_toolset()), prefix='ns')])

    @agent.tool_plain
    def own() -> str:
        return 'own'  # pragma: no cover - listed, not called

    result = await agent.run('hi')
    assert result.output == 'ns_lookup=value of k'


async def test_a_wrapped_toolset_function_is_prefixed_too() -> None:
    def build(ctx: RunContext[None]) -> AbstractToolset[None]:
        return _lookup_toolset()

    seen: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([t.name for t in info.function_tools])
        return ModelResponse(parts=[TextPart('done')])

    await Agent(FunctionModel(answer), capabilities=[PrefixTools(Toolset(build), prefix='dyn')]).run('hi')
    assert seen == [['dyn_lookup']]


def test_any_capability_can_be_prefixed_with_its_prefix_tools_method() -> None:
    toolset = Toolset(_lookup_toolset())
    assert toolset.prefix_tools('ns') == PrefixTools(toolset, prefix='ns')


def test_no_toolset_gives_none_and_the_toolset_is_a_prefixed_one() -> None:
    assert PrefixTools[None](wrapped=IncludeToolReturnSchemas(), prefix='ns').get_toolset() is None
    toolset = PrefixTools(wrapped=Toolset(_lookup_toolset()), prefix='ns').get_toolset()
    assert isinstance(toolset, PrefixedToolset)
    assert toolset.prefix == 'ns'


async def test_the_other_hooks_are_the_wrapped_capability_ones() -> None:
    calls: list[str] = []

    class Counting(AbstractCapability[None]):
        def get_instructions(self) -> Any:
            return 'be nice'

        async def before_run(self, ctx: RunContext[None]) -> None:
            calls.append('before_run')

    prefixed = PrefixTools(Counting(), prefix='x')
    assert isinstance(prefixed, WrapperCapability)
    instructions: list[str | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        instructions.append(info.instructions)
        return ModelResponse(parts=[TextPart('done')])

    await Agent(FunctionModel(answer), capabilities=[prefixed]).run('hi')
    assert calls == ['before_run']
    assert instructions == ['be nice']


async def test_prefix_tools_from_a_spec_with_a_nested_capability() -> None:
    assert CAPABILITY_TYPES['PrefixTools'] is PrefixTools
    spec = {'prefix': 'web', 'capability': {'IncludeToolReturnSchemas': {'tools': ['a']}}}
    agent = Agent.from_spec({'model': 'test', 'capabilities': [{'PrefixTools': spec}]})
    [capability] = agent.root_capability.capabilities
    assert isinstance(capability, PrefixTools)
    assert capability.prefix == 'web'
    assert capability.wrapped == IncludeToolReturnSchemas(tools=['a'])


async def test_a_nested_custom_capability_comes_from_the_spec_registry() -> None:
    from dataclasses import dataclass

    @dataclass
    class Tools(AbstractCapability[None]):
        def get_toolset(self) -> AbstractToolset[None]:
            return _lookup_toolset()

    spec = {'model': 'test', 'capabilities': [{'PrefixTools': {'prefix': 'c', 'capability': 'Tools'}}]}
    agent = Agent.from_spec(spec, custom_capability_types=[Tools])
    [capability] = agent.root_capability.capabilities
    assert isinstance(capability, PrefixTools)
    assert isinstance(capability.wrapped, Tools)
    with pytest.raises(SpecError, match="'Tools' is not in the provided `custom_capability_types`"):
        Agent.from_spec(spec)


def test_from_spec_outside_an_agent_spec_uses_the_default_registry() -> None:
    capability = PrefixTools.from_spec(prefix='ws', capability={'IncludeToolReturnSchemas': {}})
    assert capability == PrefixTools(IncludeToolReturnSchemas(), prefix='ws')
    with pytest.raises(SpecError, match="'Nope' is not in"):
        PrefixTools.from_spec(prefix='ws', capability='Nope')
