"""`WrapperAgent`: an agent handing every call to another; its run entry points go through its own `iter`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from edgewise.agent import Agent, AgentRun, RunContext
from edgewise.agent.agent import WrapperAgent
from edgewise.agent.messages import PartDeltaEvent, TextPartDelta
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import AgentRunResultEvent

pytestmark = pytest.mark.anyio


def _agent() -> Agent[None, str]:
    return Agent(TestModel(custom_output_text='hello there'), name='inner', description='says hello')


def test_the_wrapper_has_pydantic_ais_public_module() -> None:
    from edgewise.agent.agent.wrapper import WrapperAgent as from_module

    assert from_module is WrapperAgent
    assert from_module.__module__ == 'edgewise.agent.agent.wrapper'


async def test_the_wrapper_shows_the_wrapped_agents_configuration() -> None:
    agent = _agent()
    wrapper = WrapperAgent(agent)
    assert wrapper.model is agent.model
    assert wrapper.name == 'inner'
    assert wrapper.description == 'says hello'
    assert wrapper.deps_type is object
    assert wrapper.output_type is str
    assert wrapper.toolsets == agent.toolsets
    assert wrapper.output_json_schema() == agent.output_json_schema()
    assert wrapper.root_capability.capabilities == agent.root_capability.capabilities == []
    wrapper.name = 'renamed'
    wrapper.description = 'changed'
    assert (agent.name, agent.description) == ('renamed', 'changed')
    assert agent.render_description() == 'changed'


async def test_every_run_entry_point_runs_the_wrapped_agent() -> None:
    wrapper = WrapperAgent(_agent())
    assert (await wrapper.run('hi')).output == 'hello there'
    async with wrapper.run_stream('hi') as stream:
        assert [t async for t in stream.stream_text(delta=True, debounce_by=None)] == ['hello ', 'there']
    async with wrapper.run_stream_events('hi') as events:
        seen = [e async for e in events]
    assert [e.delta.content_delta for e in seen if isinstance(e, PartDeltaEvent) and
            isinstance(e.delta, TextPartDelta)] == ['hello ', 'there']  # fmt: skip
    assert isinstance(seen[-1], AgentRunResultEvent)
    assert seen[-1].result.output == 'hello there'
    async with wrapper.iter('hi') as run:
        nodes = [node async for node in run]
    assert wrapper.is_end_node(nodes[-1])
    async with wrapper:
        assert (await wrapper.run('again')).output == 'hello there'


def test_run_sync_and_run_stream_sync() -> None:
    wrapper = WrapperAgent(_agent())
    assert wrapper.run_sync('hi').output == 'hello there'
    assert wrapper.run_stream_sync('hi').get_output() == 'hello there'


async def test_override_reaches_the_wrapped_agent() -> None:
    wrapper = WrapperAgent(_agent())
    with wrapper.override(model=TestModel(custom_output_text='overridden')):
        assert (await wrapper.run('hi')).output == 'overridden'
    assert (await wrapper.run('hi')).output == 'hello there'


async def test_a_subclass_overriding_iter_changes_every_entry_point() -> None:
    class Counting(WrapperAgent[None, str]):
        runs = 0

        @asynccontextmanager
        async def iter(self, user_prompt: Any = None, **kwargs: Any) -> AsyncIterator[AgentRun[None, Any]]:
            type(self).runs += 1
            async with super().iter(user_prompt, **kwargs) as run:
                yield run

    wrapper = Counting(_agent())
    await wrapper.run('a')
    async with wrapper.run_stream('b') as stream:
        await stream.get_output()
    async with wrapper.run_stream_events('c') as events:
        async for _ in events:
            pass
    assert Counting.runs == 3


async def test_an_unnamed_wrapped_agent_is_named_after_the_wrapper_variable() -> None:
    my_wrapper = WrapperAgent(Agent(TestModel()))
    await my_wrapper.run('hi')
    assert my_wrapper.name == 'my_wrapper'


async def test_the_deprecated_agent_event_stream_handler_is_the_default_handler() -> None:
    seen: list[str] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for event in events:
            seen.append(type(event).__name__)

    with pytest.warns(DeprecationWarning, match=r'`Agent\(event_stream_handler=\.\.\.\)` is deprecated'):
        agent = Agent(TestModel(custom_output_text='hi'), event_stream_handler=handler)
    wrapper = WrapperAgent(agent)
    assert wrapper.event_stream_handler is agent.event_stream_handler is handler
    await agent.run('go')
    assert 'PartStartEvent' in seen
    seen.clear()
    await wrapper.run('go')
    assert 'PartStartEvent' in seen
    seen.clear()
    async with agent.run_stream('go') as stream:
        await stream.get_output()
    assert 'PartStartEvent' in seen
    assert Agent(TestModel()).event_stream_handler is None


async def test_system_prompt_parts_resolve_the_agents_system_prompts() -> None:
    agent = Agent(TestModel(), system_prompt='Be brief.', deps_type=str)

    @agent.system_prompt
    def greet(ctx: RunContext[str]) -> str:
        return f'The user is {ctx.deps}, step {ctx.run_step}.'

    @agent.system_prompt(dynamic=True)
    def empty() -> str:
        return ''

    parts = await WrapperAgent(agent).system_prompt_parts(deps='Ann')
    assert [p.content for p in parts] == ['Be brief.', 'The user is Ann, step 1.', '']
    assert parts[2].dynamic_ref == empty.__qualname__
