"""`RunContext.capability_active` as pydantic-ai 2.68 sets it: `True` in the hooks of a capability in effect (one
always on, or a deferred one once loaded), `None` where no capability's hook runs (tools, output validators)."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import AbstractCapability, CombinedCapability, Hooks
from edgewise.agent.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.run import AgentRunResult
from edgewise.agent.tools import ToolDefinition

pytestmark = pytest.mark.anyio


def calls_then_answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('look', {}, 'c1')])
    return ModelResponse([TextPart('done')])


@dataclass
class Watching(AbstractCapability[None]):
    """Records `capability_active` in each hook it implements."""

    seen: list[tuple[str, bool | None]] = field(default_factory=list)

    async def before_run(self, ctx: RunContext[None]) -> None:
        self.seen.append(('before_run', ctx.capability_active))

    async def before_model_request(
        self, ctx: RunContext[None], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.seen.append(('before_model_request', ctx.capability_active))
        return request_context

    async def after_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        self.seen.append(('after_model_request', ctx.capability_active))
        return response

    async def before_tool_execute(
        self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        self.seen.append(('before_tool_execute', ctx.capability_active))
        return args

    async def after_run(self, ctx: RunContext[None], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        self.seen.append(('after_run', ctx.capability_active))
        return result


@dataclass
class WatchingEvents(Watching):
    """`Watching`, and the event stream hook too (a run with it streams its model requests)."""

    async def wrap_run_event_stream(
        self, ctx: RunContext[None], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterator[AgentStreamEvent]:
        self.seen.append(('wrap_run_event_stream', ctx.capability_active))
        async for event in stream:
            yield event


def with_look(agent: Agent[None, Any], seen: list[tuple[str, bool | None]]) -> None:
    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(('tool', ctx.capability_active))
        return 'ok'


async def test_an_always_on_capability_is_active_in_each_of_its_hooks_and_a_tool_is_in_no_capability() -> None:
    watching = Watching()
    agent = Agent(FunctionModel(calls_then_answers), capabilities=[watching])
    with_look(agent, watching.seen)
    await agent.run('x')
    assert watching.seen == [
        ('before_run', True),
        ('before_model_request', True),
        ('after_model_request', True),
        ('before_tool_execute', True),
        ('tool', None),
        ('before_model_request', True),
        ('after_model_request', True),
        ('after_run', True),
    ]


async def test_the_event_stream_hook_of_an_always_on_capability_sees_it_active() -> None:
    watching = WatchingEvents()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if len(messages) == 1:
            yield {0: DeltaToolCall(name='look', json_args='{}', tool_call_id='c1')}
        else:
            yield 'done'

    agent = Agent(FunctionModel(calls_then_answers, stream_function=stream), capabilities=[watching])
    with_look(agent, watching.seen)

    async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
        async for _event in stream:
            pass

    await agent.run('x', event_stream_handler=handler)
    assert ('wrap_run_event_stream', True) in watching.seen
    assert ('tool', None) in watching.seen


async def test_the_capabilities_of_a_run_and_those_inside_a_combined_one_are_active_in_their_hooks() -> None:
    inner, given = Watching(), Watching()
    agent = Agent(FunctionModel(calls_then_answers), capabilities=[CombinedCapability([inner])])
    with_look(agent, [])
    await agent.run('x', capabilities=[given])
    for watching in (inner, given):
        assert {flag for _, flag in watching.seen} == {True}
        assert watching.seen[0] == ('before_run', True)


async def test_hook_functions_of_hooks_see_it_active_and_the_run_context_outside_them_is_unchanged() -> None:
    seen: list[tuple[str, bool | None]] = []
    hooks = Hooks[None]()

    @hooks.on.before_model_request
    async def before(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        seen.append(('hook', ctx.capability_active))
        return request_context

    agent = Agent(FunctionModel(calls_then_answers), capabilities=[hooks])
    with_look(agent, seen)

    @agent.output_validator
    def check(ctx: RunContext[None], output: str) -> str:
        seen.append(('output_validator', ctx.capability_active))
        return output

    await agent.run('x')
    assert seen == [('hook', True), ('tool', None), ('hook', True), ('output_validator', None)]


async def test_a_deferred_capability_never_loaded_runs_no_hook() -> None:
    watching = Watching(id='audit', description='Audit.', defer_loading=True)
    agent = Agent(FunctionModel(calls_then_answers), capabilities=[watching])
    with_look(agent, watching.seen)
    await agent.run('x')
    assert watching.seen == [('tool', None)]
