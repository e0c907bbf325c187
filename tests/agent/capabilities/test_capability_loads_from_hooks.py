"""`RunContext.load_capability` from capability hooks (pydantic-ai 2.68): `before_run` for the first request,
`before_model_request` for the request being prepared, `after_model_request` on a response whose tool calls the
run answers, tool hooks for the next request; and the instruction block `capability:<id>` a load from code
states in the history."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.capabilities import Capability, Hooks
from edgewise.agent.messages import (
    AgentStreamEvent,
    CapabilityLoadDeltaEvent,
    CapabilityLoadDeltaPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ToolAvailabilityDeltaEvent,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.tools import ToolDefinition

pytestmark = pytest.mark.anyio

POLICY = 'Check the refund policy first.'
STATED = f'<pyai:context id="capability:refunds">\n{POLICY}\n</pyai:context>'


@dataclass
class Seen:
    """What each request showed the model: its tools, its instructions and the ids of its instruction blocks."""

    tools: list[list[str]] = field(default_factory=list)
    instructions: list[str | None] = field(default_factory=list)
    block_ids: list[list[str | None]] = field(default_factory=list)
    statements: list[list[str]] = field(default_factory=list)
    """The loaded blocks stated in the request's last message, as the model reads them."""


def watching(*responses: Sequence[ModelResponsePart], seen: Seen) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.tools.append([t.name for t in info.function_tools])
        seen.instructions.append(info.instructions)
        parts = info.model_request_parameters.instruction_parts or []
        seen.block_ids.append([None if p.id is None else str(p.id) for p in parts])
        seen.statements.append(
            [p.content for p in messages[-1].parts if isinstance(p, SystemPromptPart) and 'capability:' in p.content]
        )
        return ModelResponse(list(responses[sum(isinstance(m, ModelResponse) for m in messages)]))

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for index, part in enumerate(answer(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            else:
                assert isinstance(part, ToolCallPart)
                yield {index: DeltaToolCall(part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id)}

    return FunctionModel(answer, stream_function=stream)


def refunds_capability() -> Capability[None]:
    refunds = Capability[None](id='refunds', description='Refund tools.', instructions=POLICY, defer_loading=True)

    @refunds.tool_plain
    def lookup_refund(order_id: str) -> str:
        """Look up whether an order can be refunded."""
        return f'{order_id}: refundable'

    return refunds


def tool_returns(message: ModelMessage) -> list[Any]:
    return [p.content for p in message.parts if isinstance(p, ToolReturnPart)]


def load_parts(message: ModelMessage) -> list[Any]:
    return [p for p in message.parts if isinstance(p, CapabilityLoadDeltaPart | ToolAvailabilityDeltaPart)]


async def test_a_load_from_before_run_goes_on_the_first_request_with_the_capabilitys_tools_and_instructions() -> None:
    seen = Seen()
    answers: list[bool] = []
    hooks = Hooks[None]()

    @hooks.on.before_run
    async def start(ctx: RunContext[None]) -> None:
        answers.extend([ctx.load_capability('refunds'), ctx.load_capability('refunds')])

    agent = Agent(
        watching([ToolCallPart('lookup_refund', {'order_id': 'A1'}, 'c1')], [TextPart('done')], seen=seen),
        capabilities=[hooks, refunds_capability()],
    )
    events: list[AgentStreamEvent] = []

    async def handler(_: RunContext[None], stream: AsyncIterable[AgentStreamEvent]) -> None:
        events.extend([event async for event in stream])

    result = await agent.run('refund A1', event_stream_handler=handler)
    assert answers == [True, False]  # the second: queued already
    assert seen.tools[0] == ['load_capability', 'lookup_refund']
    assert seen.statements == [[STATED], []]
    assert POLICY not in (seen.instructions[0] or '')
    first = result.all_messages()[0]
    assert [type(p).__name__ for p in load_parts(first)] == ['CapabilityLoadDeltaPart', 'ToolAvailabilityDeltaPart']
    assert type(first.parts[-1]).__name__ == 'InstructionDeltaPart'
    load, reveal = load_parts(first)
    assert (load.loaded, load.tool_call_id) == (['refunds'], None)
    assert list(reveal.tools_added) == ['lookup_refund']
    assert tool_returns(result.all_messages()[2]) == ['A1: refundable']
    assert [
        type(e).__name__ for e in events if isinstance(e, CapabilityLoadDeltaEvent | ToolAvailabilityDeltaEvent)
    ] == [
        'CapabilityLoadDeltaEvent',
        'ToolAvailabilityDeltaEvent',
    ]


async def test_a_load_from_before_model_request_goes_on_the_request_being_prepared() -> None:
    seen = Seen()
    answers: list[bool] = []
    hooks = Hooks[None]()

    @hooks.on.before_model_request
    async def prepare(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        answers.append(ctx.load_capability('refunds'))
        return request_context

    agent = Agent(
        watching([ToolCallPart('lookup_refund', {'order_id': 'A1'}, 'c1')], [TextPart('done')], seen=seen),
        capabilities=[hooks, refunds_capability()],
    )
    result = await agent.run('refund A1')
    assert answers == [True, False]  # at the second request the capability is active
    assert seen.tools == [['load_capability', 'lookup_refund'], ['load_capability', 'lookup_refund']]
    assert seen.statements == [[STATED], []]
    assert 'capability:refunds' not in seen.block_ids[0]
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert POLICY not in (first.instructions or '')
    assert [type(p).__name__ for p in load_parts(first)] == ['CapabilityLoadDeltaPart', 'ToolAvailabilityDeltaPart']
    assert tool_returns(result.all_messages()[2]) == ['A1: refundable']


async def test_a_load_from_after_model_request_on_tool_calls_goes_on_the_next_request() -> None:
    seen = Seen()
    answers: list[bool] = []
    hooks = Hooks[None]()

    @hooks.on.after_model_request
    async def after(
        ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        if response.tool_calls:
            answers.append(ctx.load_capability('refunds'))
        return response

    agent = Agent(
        watching([ToolCallPart('triage', {}, 'c1')], [TextPart('done')], seen=seen),
        capabilities=[hooks, refunds_capability()],
    )

    @agent.tool_plain
    def triage() -> str:
        return 'routed'

    result = await agent.run('refund A1')
    assert answers == [True]
    assert seen.tools == [['load_capability', 'triage'], ['load_capability', 'triage', 'lookup_refund']]
    second = result.all_messages()[2]
    assert [type(p).__name__ for p in second.parts] == [
        'ToolReturnPart',
        'CapabilityLoadDeltaPart',
        'ToolAvailabilityDeltaPart',
        'InstructionDeltaPart',
    ]
    assert seen.statements == [[], [STATED]]


async def test_a_load_from_after_model_request_on_a_final_response_is_refused() -> None:
    errors: list[str] = []
    hooks = Hooks[None]()

    @hooks.on.after_model_request
    async def after(
        ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        with pytest.raises(UserError, match='can only be called where a model request follows') as info:
            ctx.load_capability('refunds')
        errors.append(str(info.value))
        return response

    agent = Agent(watching([TextPart('done')], seen=Seen()), capabilities=[hooks, refunds_capability()])
    assert (await agent.run('x')).output == 'done'
    assert len(errors) == 1


async def test_after_model_request_does_not_load_what_the_response_loads_itself() -> None:
    answers: list[bool] = []
    hooks = Hooks[None]()

    @hooks.on.after_model_request
    async def after(
        ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        if response.tool_calls:
            answers.append(ctx.load_capability('refunds'))
        return response

    agent = Agent(
        watching([ToolCallPart('load_capability', {'id': 'refunds'}, 'l1')], [TextPart('done')], seen=Seen()),
        capabilities=[hooks, refunds_capability()],
    )
    result = await agent.run('x')
    assert answers == [False]
    assert not any(isinstance(p, CapabilityLoadDeltaPart) for m in result.all_messages() for p in m.parts)


async def test_a_load_from_a_tool_hook_goes_on_the_next_request() -> None:
    seen = Seen()
    answers: list[bool] = []
    hooks = Hooks[None]()

    @hooks.on.after_tool_execute
    async def after_tool(
        ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, result: Any
    ) -> Any:
        answers.append(ctx.load_capability('refunds'))
        return result

    agent = Agent(
        watching([ToolCallPart('triage', {}, 'c1')], [TextPart('done')], seen=seen),
        capabilities=[hooks, refunds_capability()],
    )

    @agent.tool_plain
    def triage() -> str:
        return 'routed'

    result = await agent.run('x')
    assert answers == [True]
    assert seen.tools[1] == ['load_capability', 'triage', 'lookup_refund']
    load = next(p for p in result.all_messages()[2].parts if isinstance(p, CapabilityLoadDeltaPart))
    assert (load.loaded, load.tool_call_id) == (['refunds'], 'c1')


async def test_the_instructions_of_a_capability_loaded_from_code_are_stated_as_the_block_capability_id() -> None:
    seen = Seen()
    agent = Agent(
        watching([ToolCallPart('triage', {}, 'c1')], [TextPart('done')], seen=seen),
        instructions='Be kind.',
        capabilities=[refunds_capability()],
    )

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        assert ctx.load_capability('refunds') is True
        return 'routed'

    await agent.run('x')
    assert seen.block_ids == [[None, None], [None, None]]  # the agent's, the catalog: the block is not in the prefix
    assert seen.statements == [[], [STATED]]
    assert all(POLICY not in (i or '') for i in seen.instructions)


async def test_a_capability_without_instructions_loaded_from_code_adds_no_block() -> None:
    seen = Seen()
    quiet = Capability[None](id='quiet', description='No instructions.', defer_loading=True)
    agent = Agent(watching([ToolCallPart('triage', {}, 'c1')], [TextPart('done')], seen=seen), capabilities=[quiet])

    @agent.tool
    def triage(ctx: RunContext[None]) -> str:
        assert ctx.load_capability('quiet') is True
        return 'routed'

    await agent.run('x')
    assert not any(block_id and block_id.startswith('capability:') for ids in seen.block_ids for block_id in ids)


async def test_a_run_inside_a_hook_does_not_load_through_the_window_of_the_run_around_it() -> None:
    errors: list[str] = []
    inner_hooks = Hooks[None]()

    @inner_hooks.on.after_run
    async def inner_done(ctx: RunContext[None], *, result: Any) -> Any:
        with pytest.raises(UserError, match='can only be called where a model request follows') as info:
            ctx.load_capability('refunds')  # the inner run's own: no request of it follows
        errors.append(str(info.value))
        return result

    inner = Agent(watching([TextPart('inner done')], seen=Seen()), capabilities=[inner_hooks, refunds_capability()])
    outer_hooks = Hooks[None]()

    @outer_hooks.on.before_model_request
    async def prepare(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        await inner.run('inner')
        return request_context

    outer = Agent(watching([TextPart('done')], seen=Seen()), capabilities=[outer_hooks, refunds_capability()])
    result = await outer.run('x')
    assert len(errors) == 1
    assert not any(isinstance(p, CapabilityLoadDeltaPart) for m in result.all_messages() for p in m.parts)
