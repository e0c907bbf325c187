"""What pydantic-ai 2.68 added to `RunContext`, read and called by tools and hooks during real runs: `model_id`,
`root_capability`, `capability_active` (with `capability_loaded` deprecated), `active_capability_ids` (with
`available_capability_ids` deprecated), `trace_include_content`, `dequeue` and `set_enqueue_priority`."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, EnqueuedMessagesEvent, RunContext, ToolOutput, UserError, _instrument
from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.capabilities import AbstractCapability, Capability, CombinedCapability, Hooks
from edgewise.agent.capabilities.instrumentation import Instrumentation
from edgewise.agent.messages import (
    AgentStreamEvent,
    CapabilityInstructionSource,
    CapabilityLoadDeltaEvent,
    CapabilityLoadDeltaPart,
    InstructionDeltaPart,
    InstructionId,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
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


# -- load_capability ------------------------------------------------------------------------------------------------


@dataclass
class Seen:
    """What each request of a run showed the model: its instructions and tools, and its last message's parts."""

    instructions: list[str | None] = field(default_factory=list)
    tools: list[list[str]] = field(default_factory=list)
    last_parts: list[list[Any]] = field(default_factory=list)


def watching(*responses: Sequence[ModelResponsePart], seen: Seen) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.instructions.append(info.instructions)
        seen.tools.append([t.name for t in info.function_tools])
        seen.last_parts.append(list(messages[-1].parts))
        return ModelResponse(list(responses[sum(isinstance(m, ModelResponse) for m in messages)]))

    return FunctionModel(answer)


def refunds_capability() -> Capability[None]:
    refunds = Capability[None](
        id='refunds', description='Refund policy tools.', instructions='Check the refund policy first.',
        defer_loading=True,
    )  # fmt: skip

    @refunds.tool_plain
    def lookup_refund(order_id: str) -> str:
        """Look up whether an order can be refunded."""
        return f'{order_id}: refundable'

    return refunds


async def test_a_tool_loads_a_capability_for_the_next_request_recorded_in_the_history() -> None:
    seen = Seen()
    answers: list[bool] = []
    refunds = refunds_capability()
    agent = Agent(
        watching([call('triage')], [ToolCallPart('lookup_refund', {'order_id': 'A1'}, 'c2')], [TextPart('done')],
                 seen=seen),
        capabilities=[refunds],
    )  # fmt: skip

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        answers.append(ctx.load_capability('refunds'))
        answers.append(ctx.load_capability(refunds))  # already queued in this step
        answers.append('refunds' in ctx.active_capability_ids)  # not before the next request
        return 'routed'

    result = await agent.run('refund A1')
    assert answers == [True, False, False]
    assert seen.tools == [
        ['load_capability', 'triage'],
        ['load_capability', 'triage', 'lookup_refund'],
        ['load_capability', 'triage', 'lookup_refund'],
    ]
    # the instructions are stated in the history (`capability:refunds`), never in the prefix
    assert all('Check the refund policy first.' not in (i or '') for i in seen.instructions)
    request = result.all_messages()[2]
    assert isinstance(request, ModelRequest)
    assert [type(p).__name__ for p in request.parts] == [
        'ToolReturnPart', 'CapabilityLoadDeltaPart', 'ToolAvailabilityDeltaPart', 'InstructionDeltaPart'
    ]  # fmt: skip
    assert [p.content for p in seen.last_parts[1] if isinstance(p, SystemPromptPart)][-1] == (
        '<pyai:context id="capability:refunds">\nCheck the refund policy first.\n</pyai:context>'
    )
    load_part, reveal = request.parts[1:3]
    assert isinstance(load_part, CapabilityLoadDeltaPart)
    assert (load_part.loaded, load_part.tool_call_id) == (['refunds'], 'c1')
    assert isinstance(reveal, ToolAvailabilityDeltaPart)
    assert (list(reveal.tools_added), reveal.tool_call_id) == (['lookup_refund'], 'c1')
    assert seen.last_parts[2][0].content == 'A1: refundable'


async def test_a_load_from_code_holds_in_a_run_given_the_history() -> None:
    seen = Seen()
    agent = Agent(watching([call('triage')], [TextPart('done')], seen=seen), capabilities=[refunds_capability()])

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        ctx.load_capability('refunds')
        return 'routed'

    first = await agent.run('refund A1')
    later: list[list[str]] = []

    def look_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        later.append([t.name for t in info.function_tools])
        if any(isinstance(part, ToolReturnPart) and part.tool_name == 'look' for part in messages[-1].parts):
            return ModelResponse([TextPart('done')])
        return ModelResponse([call('look', 'c9')])

    actives: list[set[str]] = []
    again = Agent(FunctionModel(look_then_answer), capabilities=[refunds_capability()])

    @again.tool
    def look(ctx: RunContext[None]) -> str:
        actives.append(ctx.active_capability_ids)
        assert ctx.load_capability('refunds') is False  # loaded already
        return 'ok'

    await again.run('and now?', message_history=first.all_messages())
    assert 'refunds' in actives[0]
    assert later[0] == ['load_capability', 'look', 'lookup_refund']


async def test_the_load_events_follow_the_tool_results_in_the_stream() -> None:
    agent = Agent(scripted([call('triage')], [TextPart('done')]), capabilities=[refunds_capability()])

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        ctx.load_capability('refunds')
        return 'routed'

    events: list[AgentStreamEvent] = []

    async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
        events.extend([event async for event in stream])

    await agent.run('refund A1', event_stream_handler=handler)
    kinds = [type(e).__name__ for e in events]
    start = kinds.index('FunctionToolResultEvent')
    assert kinds[start : start + 3] == [
        'FunctionToolResultEvent',
        'CapabilityLoadDeltaEvent',
        'ToolAvailabilityDeltaEvent',
    ]
    load_event = events[start + 1]
    assert isinstance(load_event, CapabilityLoadDeltaEvent)
    assert load_event.part.loaded == ['refunds']


class Answer(BaseModel):
    text: str


async def test_a_load_is_dropped_when_the_step_ends_the_run() -> None:
    answers: list[bool] = []
    agent = Agent(
        scripted([call('triage'), ToolCallPart('final_result', {'text': 'done'}, 'c2')]),
        output_type=Answer,
        capabilities=[refunds_capability()],
    )

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        answers.append(ctx.load_capability('refunds'))
        return 'routed'

    result = await agent.run('refund A1')
    assert answers == [True]
    assert result.output == Answer(text='done')
    parts = [part for message in result.all_messages() for part in message.parts]
    assert not any(isinstance(part, CapabilityLoadDeltaPart | ToolAvailabilityDeltaPart) for part in parts)


async def test_loading_an_active_capability_or_one_the_model_is_loading_queues_nothing() -> None:
    answers: list[bool] = []
    always = Hooks[None](id='always')
    agent = Agent(
        scripted([load('refunds'), call('triage', 'c2')], [TextPart('done')]),
        capabilities=[always, refunds_capability()],
    )

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        answers.extend([ctx.load_capability('always'), ctx.load_capability('refunds')])
        return 'routed'

    result = await agent.run('refund A1')
    assert answers == [False, False]
    parts = [part for message in result.all_messages() for part in message.parts]
    assert not any(isinstance(part, CapabilityLoadDeltaPart) for part in parts)


async def test_loading_a_capability_the_run_does_not_have_is_refused() -> None:
    errors: list[str] = []
    agent = Agent(scripted([call('triage')], [TextPart('done')]), capabilities=[refunds_capability()])

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        for capability in ['billing', Hooks[None](id='stranger'), Hooks[None]()]:
            with pytest.raises(UserError) as info:
                ctx.load_capability(capability)
            errors.append(str(info.value))
        return 'routed'

    await agent.run('x')
    assert errors == [
        "No capability with id 'billing' is registered in this run.",
        "Capability Hooks(id='stranger') is not registered in this run.",
        'Capability Hooks(id=None) is not registered in this run.',
    ]


async def test_a_capability_without_an_id_is_found_by_identity() -> None:
    answers: list[bool] = []
    plain = Hooks[None]()
    agent = Agent(scripted([call('triage')], [TextPart('done')]), capabilities=[plain, refunds_capability()])

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        answers.append(ctx.load_capability(plain))  # always on: active already
        return 'routed'

    await agent.run('x')
    assert answers == [False]


async def test_a_load_where_no_model_request_follows_is_refused() -> None:
    errors: list[str] = []
    hooks = Hooks[None]()

    @hooks.on.after_run
    async def late(ctx: RunContext[None], *, result: Any) -> Any:
        with pytest.raises(UserError) as info:
            ctx.load_capability('refunds')
        errors.append(str(info.value))
        return result

    agent = Agent(scripted([TextPart('done')]), capabilities=[hooks, refunds_capability()])
    await agent.run('x')
    assert errors == [
        '`ctx.load_capability()` can only be called where a model request follows: from a `before_run` or '
        '`before_model_request` hook, from `after_model_request` on a response with tool calls the run answers, '
        'from a tool function, or from a tool hook such as `after_tool_execute`.'
    ]
    bare = RunContext[None](deps=None, model=TestModel(), usage=RunUsage(), tool_call_id='c1')
    with pytest.raises(UserError, match='can only be called where a model request follows'):
        bare.load_capability('refunds')


async def test_a_load_from_an_output_tool_is_refused() -> None:
    errors: list[str] = []

    def finish(ctx: RunContext[None], text: str) -> str:
        with pytest.raises(UserError) as info:
            ctx.load_capability('refunds')
        errors.append(str(info.value))
        return text

    agent = Agent(
        scripted([ToolCallPart('final_result', {'text': 'done'}, 'o1')]),
        output_type=ToolOutput(finish),
        capabilities=[refunds_capability()],
    )
    result = await agent.run('x')
    assert result.output == 'done'
    assert errors == ['`ctx.load_capability()` cannot be called from an output tool, which ends the run.']


async def test_a_capability_without_tools_loaded_from_code_states_its_instruction_functions() -> None:
    seen = Seen()

    def policy(ctx: RunContext[None]) -> str:
        return f'Policy for step {ctx.run_step}.'

    tone = Capability[None](id='tone', description='Tone.', instructions=[policy, 'Be brief.'], defer_loading=True)
    agent = Agent(watching([call('triage')], [TextPart('done')], seen=seen), capabilities=[tone])

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        assert ctx.load_capability(tone) is True
        return 'routed'

    result = await agent.run('x')
    assert seen.instructions[0] is not None
    assert seen.instructions[0].startswith('The following capabilities are deferred')
    assert seen.instructions[1] == seen.instructions[0]
    request = result.all_messages()[2]
    assert [type(p).__name__ for p in request.parts] == [
        'ToolReturnPart', 'CapabilityLoadDeltaPart', 'InstructionDeltaPart'
    ]  # fmt: skip
    assert request.parts[-1] == InstructionDeltaPart(
        id=InstructionId(CapabilityInstructionSource('tone')), content='Policy for step 2.\n\nBe brief.'
    )


# -- in_durable_context (in a DBOS workflow: tests/agent/dbos/test_dbos_in_durable_context.py) ---------------------


async def test_a_run_without_a_durability_capability_is_not_in_a_durable_context() -> None:
    seen: list[bool] = []
    agent = Agent(scripted([call('look')], [TextPart('done')]), capabilities=[Hooks[None](id='plain')])

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(ctx.in_durable_context)
        return 'ok'

    await agent.run('x')
    assert seen == [False]
    assert RunContext[None](deps=None, model=TestModel(), usage=RunUsage()).in_durable_context is False
