"""What pydantic-ai 2.68 added to `RunContext`, read and called by tools and hooks during real runs: `model_id`,
`root_capability`, `capability_active` (with `capability_loaded` deprecated), `active_capability_ids` (with
`available_capability_ids` deprecated), `trace_include_content`, `dequeue` and `set_enqueue_priority`."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from typing import Any

import pytest

from edgewise.agent import Agent, EnqueuedMessagesEvent, RunContext, UserError, _instrument
from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.capabilities import AbstractCapability, CombinedCapability, Hooks
from edgewise.agent.capabilities.instrumentation import Instrumentation
from edgewise.agent.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.models.instrumented import InstrumentationSettings
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def scripted(*responses: Sequence[ModelResponsePart], sent: list[list[str]] | None = None) -> FunctionModel:
    """A model answering its n-th request with `responses[n]`; `sent` gets the user prompts of each request."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if sent is not None:
            sent.append(prompts(messages))
        return ModelResponse(list(responses[sum(isinstance(m, ModelResponse) for m in messages)]))

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for part in answer(messages, info).parts:
            if isinstance(part, TextPart):
                yield part.content
            else:
                assert isinstance(part, ToolCallPart)
                yield {0: DeltaToolCall(name=part.tool_name, json_args='{}', tool_call_id=part.tool_call_id)}

    return FunctionModel(answer, stream_function=stream)


def prompts(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def call(tool: str, call_id: str = 'c1') -> ToolCallPart:
    return ToolCallPart(tool, {}, call_id)


def load(capability_id: str) -> ToolCallPart:
    return ToolCallPart('load_capability', {'id': capability_id}, 'load-1')


# -- model_id -------------------------------------------------------------------------------------------------------


async def test_model_id_is_the_id_the_agents_model_was_resolved_from() -> None:
    seen: list[str | None] = []
    agent = Agent('test')

    @agent.tool_plain
    def noop() -> str:
        return 'ok'

    @agent.output_validator
    def check(ctx: RunContext[None], output: str) -> str:
        seen.append(ctx.model_id)
        return output

    await agent.run('x')
    await agent.run('x', model=TestModel())
    assert seen == ['test', None]


async def test_model_id_is_none_for_a_model_given_as_an_instance_and_the_runs_own_id_otherwise() -> None:
    seen: list[str | None] = []
    agent = Agent(TestModel())

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(ctx.model_id)
        return 'ok'

    await agent.run('x')
    await agent.run('x', model='test')
    assert seen == [None, 'test']


def test_model_id_is_read_only() -> None:
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    assert ctx.model_id is None
    with pytest.raises(AttributeError):
        ctx.model_id = 'test'  # type: ignore[misc]


# -- root_capability ------------------------------------------------------------------------------------------------


async def test_root_capability_runs_the_agents_and_the_runs_capabilities() -> None:
    agents = Hooks[None](id='agents')
    runs = Hooks[None](id='runs')
    roots: list[Any] = []
    agent = Agent(scripted([call('look')], [TextPart('done')]), capabilities=[agents])

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        roots.append(ctx.root_capability)
        return 'ok'

    await agent.run('x', capabilities=[runs])
    [root] = roots
    assert isinstance(root, CombinedCapability)
    visited: list[AbstractCapability[Any]] = []
    root.apply(visited.append)
    assert agents in visited
    assert runs in visited


async def test_root_capability_is_none_in_a_run_without_capabilities() -> None:
    roots: list[Any] = []
    agent = Agent(scripted([call('look')], [TextPart('done')]))

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        roots.append(ctx.root_capability)
        return 'ok'

    await agent.run('x')
    assert roots == [None]


# -- capability_active and its deprecated name ------------------------------------------------------------------


async def test_capability_active_is_true_in_a_loaded_capabilitys_hooks_and_none_in_tools() -> None:
    flags: list[tuple[str, bool | None]] = []
    audit = Hooks[None](id='audit', description='Audit.', defer_loading=True)

    @audit.on.before_model_request
    async def record(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        flags.append(('hook', ctx.capability_active))
        return request_context

    agent = Agent(scripted([load('audit'), call('look', 'c2')], [TextPart('done')]), capabilities=[audit])

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        flags.append(('tool', ctx.capability_active))
        return 'ok'

    await agent.run('x')
    assert flags == [('tool', None), ('hook', True)]


async def test_capability_loaded_still_reads_and_writes_capability_active_with_a_warning() -> None:
    read: list[bool | None] = []
    audit = Hooks[None](id='audit', description='Audit.', defer_loading=True)

    @audit.on.before_model_request
    async def record(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        with pytest.warns(
            PydanticAIDeprecationWarning, match='`capability_loaded` is deprecated, use `capability_active`'
        ):
            read.append(ctx.capability_loaded)
        with pytest.warns(PydanticAIDeprecationWarning, match='`capability_loaded` is deprecated'):
            ctx.capability_loaded = False
        read.append(ctx.capability_active)
        return request_context

    agent = Agent(scripted([load('audit')], [TextPart('done')]), capabilities=[audit])
    await agent.run('x')
    assert read == [True, False]


def test_capability_loaded_given_to_the_constructor_sets_capability_active_with_a_warning() -> None:
    with pytest.warns(PydanticAIDeprecationWarning, match='`capability_loaded` is deprecated'):
        ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage(), capability_loaded=True)  # type: ignore[call-arg]
    assert ctx.capability_active is True
    # Copies do not pass the old name on (no warning: warnings are errors here).
    assert dataclasses.replace(ctx, run_step=2).capability_active is True
    assert ctx.replace_with(retry=1).capability_active is True


# -- active_capability_ids and its deprecated name --------------------------------------------------------------


async def test_active_capability_ids_are_the_always_on_ones_and_the_loaded_deferred_ones() -> None:
    views: list[tuple[set[str], set[str]]] = []
    always = Hooks[None](id='always')
    refunds = Hooks[None](id='refunds', description='Refunds.', defer_loading=True)
    agent = Agent(scripted([load('refunds')], [call('look', 'c2')], [TextPart('done')]), capabilities=[always, refunds])

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        views.append((ctx.active_capability_ids, set(ctx.loaded_capability_ids)))
        return 'ok'

    @agent.output_validator
    def check(ctx: RunContext[None], output: str) -> str:
        views.append((ctx.active_capability_ids, set(ctx.loaded_capability_ids)))
        return output

    await agent.run('x')
    assert views == [({'always', 'refunds', 'deferred_capability_loader'}, {'refunds'})] * 2


async def test_before_a_load_a_deferred_capability_is_not_active() -> None:
    views: list[set[str]] = []
    refunds = Hooks[None](id='refunds', description='Refunds.', defer_loading=True)
    agent = Agent(scripted([call('look')], [TextPart('done')]), capabilities=[refunds])

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        views.append(ctx.active_capability_ids)
        with pytest.warns(PydanticAIDeprecationWarning, match='`available_capability_ids` is deprecated, use `active'):
            views.append(ctx.available_capability_ids)
        return 'ok'

    await agent.run('x')
    assert views == [{'deferred_capability_loader'}] * 2


# -- trace_include_content ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('capabilities', 'expected'),
    [
        ([], True),  # Edgewise traces every agent by default
        ([Instrumentation(settings=InstrumentationSettings())], True),
        ([Instrumentation(settings=InstrumentationSettings(include_content=False))], False),
    ],
    ids=['default', 'instrumented', 'instrumented-without-content'],
)
async def test_trace_include_content_follows_the_runs_instrumentation(
    capabilities: list[AbstractCapability[None]], expected: bool
) -> None:
    seen: list[bool] = []
    agent = Agent(scripted([call('look')], [TextPart('done')]), capabilities=capabilities)

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(ctx.trace_include_content)
        return 'ok'

    await agent.run('x')
    assert seen == [expected]


async def test_trace_include_content_is_false_in_a_run_that_makes_no_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    agent = Agent(scripted([call('look')], [TextPart('done')]))

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(ctx.trace_include_content)
        return 'ok'

    agent.instrument = False
    await agent.run('x')
    agent.instrument = None
    monkeypatch.setattr(_instrument, 'TRACING', False)  # as without logfire
    await agent.run('x')
    assert seen == [False, False]


# -- dequeue --------------------------------------------------------------------------------------------------------


async def test_dequeued_content_never_reaches_the_model_and_gives_no_event() -> None:
    sent: list[list[str]] = []
    answers: list[bool] = []
    agent = Agent(scripted([call('steer')], [TextPart('done')], sent=sent))
    kept: list[str | None] = []

    @agent.tool
    def steer(ctx: RunContext[None]) -> str:
        kept.append(ctx.enqueue('keep this'))
        dropped = ctx.enqueue('drop this')
        assert dropped is not None
        answers.extend([ctx.dequeue(dropped), ctx.dequeue(dropped), ctx.dequeue('never-queued')])
        return 'ok'

    events: list[AgentStreamEvent] = []

    async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
        events.extend([event async for event in stream])

    result = await agent.run('go', event_stream_handler=handler)
    assert answers == [True, False, False]
    assert sent == [['go'], ['go', 'keep this']]
    assert [e.enqueue_id for e in events if isinstance(e, EnqueuedMessagesEvent)] == kept
    assert 'drop this' not in prompts(result.all_messages())


async def test_content_already_delivered_cannot_be_dequeued_or_reprioritized() -> None:
    ids: list[str] = []
    answers: list[bool] = []
    agent = Agent(scripted([call('steer')], [call('steer', 'c2')], [TextPart('done')]))

    @agent.tool
    def steer(ctx: RunContext[None]) -> str:
        if not ids:
            enqueue_id = ctx.enqueue('hint')
            assert enqueue_id is not None
            ids.append(enqueue_id)
        else:
            answers.extend([ctx.set_enqueue_priority(ids[0], 'when_idle'), ctx.dequeue(ids[0])])
        return 'ok'

    result = await agent.run('go')
    assert answers == [False, False]
    assert prompts(result.all_messages()) == ['go', 'hint']


# -- set_enqueue_priority -------------------------------------------------------------------------------------------


async def test_when_idle_content_promoted_to_asap_goes_with_the_next_request() -> None:
    sent: list[list[str]] = []
    answers: list[bool] = []
    agent = Agent(scripted([call('steer')], [TextPart('done')], sent=sent))

    @agent.tool
    def steer(ctx: RunContext[None]) -> str:
        enqueue_id = ctx.enqueue('later', priority='when_idle')
        assert enqueue_id is not None
        answers.extend([ctx.set_enqueue_priority(enqueue_id, 'asap'), ctx.set_enqueue_priority('never', 'asap')])
        assert ctx.pending_messages is not None
        assert [item.priority for item in ctx.pending_messages] == ['asap']
        return 'ok'

    result = await agent.run('go')
    assert answers == [True, False]
    assert sent == [['go'], ['go', 'later']]  # no extra request at the end
    assert result.output == 'done'


async def test_asap_content_demoted_to_when_idle_waits_for_the_run_to_end_and_keeps_its_id() -> None:
    sent: list[list[str]] = []
    ids: list[str] = []
    agent = Agent(scripted([call('steer')], [TextPart('first answer')], [TextPart('second answer')], sent=sent))

    @agent.tool
    def steer(ctx: RunContext[None]) -> str:
        first = ctx.enqueue('first')
        hint = ctx.enqueue('hint')
        assert first is not None
        assert hint is not None
        ids.extend([first, hint])
        assert ctx.set_enqueue_priority(first, 'when_idle') is True
        return 'ok'

    events: list[AgentStreamEvent] = []

    async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
        events.extend([event async for event in stream])

    result = await agent.run('go', event_stream_handler=handler)
    assert sent == [['go'], ['go', 'hint'], ['go', 'hint', 'first']]
    assert result.output == 'second answer'
    first, hint = ids
    assert [e.enqueue_id for e in events if isinstance(e, EnqueuedMessagesEvent)] == [hint, first]


@pytest.mark.parametrize('method', ['dequeue', 'set_enqueue_priority'])
def test_a_run_context_of_no_running_agent_has_no_queue_to_change(method: str) -> None:
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    args = ('some-id',) if method == 'dequeue' else ('some-id', 'asap')
    with pytest.raises(
        UserError, match=f'^`{method}` is only available during an agent run .* no pending-message queue to change'
    ):
        getattr(ctx, method)(*args)
