"""The instructions of a loaded deferred capability, stated in the history as the block `capability:<id>`
(pydantic-ai 2.68): restated when they change, not past a compaction (which unloads the capability), as a
`before_model_request` hook leaves them; and a history of an earlier Edgewise, whose `load_capability` return carries
them, replayed without stating them again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import Capability, Hooks
from edgewise.agent.messages import (
    CapabilityInstructionSource,
    CompactionPart,
    InstructionDeltaPart,
    InstructionId,
    LoadCapabilityCallPart,
    LoadCapabilityReturnPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio

BLOCK = InstructionId(CapabilityInstructionSource('refunds'))


@dataclass
class Seen:
    """What each request showed the model: the system prompts of its last message, and the run's load returns."""

    statements: list[list[str]] = field(default_factory=list)
    returns: list[list[Any]] = field(default_factory=list)


def watching(*responses: Sequence[ModelResponsePart], seen: Seen) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.statements.append([p.content for p in messages[-1].parts if isinstance(p, SystemPromptPart)])
        seen.returns.append([p.content for m in messages for p in m.parts if isinstance(p, LoadCapabilityReturnPart)])
        return ModelResponse(list(responses[sum(isinstance(m, ModelResponse) for m in messages) % len(responses)]))

    return FunctionModel(answer)


def load(call_id: str = 'load-1') -> ToolCallPart:
    return ToolCallPart('load_capability', {'id': 'refunds'}, call_id)


def stated(text: str) -> str:
    return f'<pyai:context id="capability:refunds">\n{text}\n</pyai:context>'


def statements_of(messages: Sequence[ModelMessage]) -> list[InstructionDeltaPart]:
    return [p for m in messages for p in m.parts if isinstance(p, InstructionDeltaPart)]


def earlier_edgewise_history() -> list[ModelMessage]:
    """A conversation an earlier Edgewise stored: the load's return carries the instructions."""
    stored = [
        {'kind': 'request', 'parts': [{'part_kind': 'user-prompt', 'content': 'refund?'}]},
        {
            'kind': 'response',
            'parts': [{'part_kind': 'tool-call', 'tool_name': 'load_capability', 'args': {'id': 'refunds'},
                       'tool_call_id': 'old-load', 'tool_kind': 'capability-load'}],
        },
        {
            'kind': 'request',
            'parts': [{'part_kind': 'tool-return', 'tool_name': 'load_capability', 'tool_call_id': 'old-load',
                       'content': {'instructions': 'Policy v1.'}, 'tool_kind': 'capability-load'}],
        },
        {'kind': 'response', 'parts': [{'part_kind': 'text', 'content': 'loaded'}]},
    ]  # fmt: skip
    return ModelMessagesTypeAdapter.validate_python(stored)


async def test_a_history_whose_load_return_carries_the_instructions_replays_without_stating_them_again() -> None:
    seen = Seen()
    refunds = Capability[None](id='refunds', description='Refunds.', instructions='Policy v1.', defer_loading=True)
    agent = Agent(watching([TextPart('done')], seen=seen), capabilities=[refunds])
    history = earlier_edgewise_history()
    assert isinstance(history[1].parts[0], LoadCapabilityCallPart)
    assert isinstance(history[2].parts[0], LoadCapabilityReturnPart)
    result = await agent.run('and now?', message_history=history)
    assert seen.returns == [[{'instructions': 'Policy v1.'}]]  # the model reads them where they were
    assert seen.statements == [[]]
    assert statements_of(result.all_messages()) == []


async def test_instructions_changed_since_an_earlier_versions_load_are_stated_in_full() -> None:
    seen = Seen()
    refunds = Capability[None](id='refunds', description='Refunds.', instructions='Policy v2.', defer_loading=True)
    agent = Agent(watching([TextPart('done')], seen=seen), capabilities=[refunds])
    result = await agent.run('and now?', message_history=earlier_edgewise_history())
    assert seen.statements == [[stated('Policy v2.')]]
    # the load return is tool output: the change is no diff against it
    assert statements_of(result.all_messages()) == [InstructionDeltaPart(id=BLOCK, content='Policy v2.')]


async def test_a_change_of_the_instructions_is_stated_against_the_text_stated_before() -> None:
    seen = Seen()
    version = ['v1']

    def policy() -> str:
        return f'Policy {version[0]}.'

    refunds = Capability[None](id='refunds', description='Refunds.', instructions=policy, defer_loading=True)
    agent = Agent(watching([load()], [TextPart('done')], seen=seen), capabilities=[refunds])
    first = await agent.run('refund?')
    version[0] = 'v2'
    second = await agent.run('again', message_history=first.all_messages())
    third = await agent.run('once more', message_history=second.all_messages())
    changes = statements_of(third.all_messages())
    assert [(c.content, c.base_hash is not None) for c in changes] == [('Policy v1.', False), ('Policy v2.', True)]
    assert seen.statements[1] == [stated('Policy v1.')]
    assert seen.statements[2][0].startswith('<pyai:context')  # the change, as a whole or as a diff
    assert seen.statements[3] == []  # unchanged since: not stated again


async def test_a_compaction_unloads_the_capability_until_the_model_loads_it_again() -> None:
    """As in pydantic-ai 2.x, only what follows the latest compaction loads a capability: past one, its block is not
    stated and its tools are hidden again; a new load states the block once more."""
    tools_seen: list[list[str]] = []
    loaded_seen: list[set[str]] = []
    refunds = Capability[None](id='refunds', description='Refunds.', instructions='Policy.', defer_loading=True)

    @refunds.tool_plain
    def refund(order: str) -> str:
        return f'{order} refunded'

    responses: list[list[ModelResponsePart]] = [
        [load()],
        [TextPart('done')],
        [TextPart('after the compaction')],
        [load('load-2')],
        [TextPart('ok')],
    ]
    script = iter(responses)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools_seen.append([t.name for t in info.function_tools])
        return ModelResponse(next(script))

    hooks = Hooks[None]()

    @hooks.on.before_model_request
    async def note(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        loaded_seen.append(set(ctx.loaded_capability_ids))
        return request_context

    agent = Agent(FunctionModel(answer), capabilities=[hooks, refunds])
    first = await agent.run('refund?')
    compacted: list[ModelMessage] = [
        *first.all_messages(),
        ModelResponse([CompactionPart('Earlier: the refunds capability was loaded.')]),
    ]
    second = await agent.run('again', message_history=compacted)
    assert [c.content for c in statements_of(second.all_messages())] == ['Policy.']  # the first run's only
    assert loaded_seen[2] == set()
    assert 'refund' in tools_seen[1]
    assert 'refund' not in tools_seen[2]  # hidden again past the compaction

    third = await agent.run('load it again', message_history=second.all_messages())
    assert [c.content for c in statements_of(third.all_messages())] == ['Policy.', 'Policy.']
    assert loaded_seen[-1] == {'refunds'}
    assert 'refund' in tools_seen[-1]


async def test_a_history_loading_a_capability_the_agent_no_longer_has_loads_nothing() -> None:
    loaded_seen: list[set[str]] = []
    refunds = Capability[None](id='refunds', description='Refunds.', instructions='Policy.', defer_loading=True)
    first = await Agent(watching([load()], [TextPart('done')], seen=Seen()), capabilities=[refunds]).run('refund?')
    hooks = Hooks[None]()

    @hooks.on.before_model_request
    async def note(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        loaded_seen.append(set(ctx.loaded_capability_ids))
        return request_context

    other = Capability[None](id='billing', description='Billing.', instructions='Bill.', defer_loading=True)
    agent = Agent(watching([TextPart('fine')], seen=Seen()), capabilities=[hooks, other])
    second = await agent.run('again', message_history=first.all_messages())
    assert loaded_seen == [set()]
    # its block, stated by the first run, is withdrawn (pydantic-ai 2.68), once
    assert statements_of(second.new_messages()) == [InstructionDeltaPart(id=BLOCK, content=None)]
    third = await agent.run('and again', message_history=second.all_messages())
    assert statements_of(third.new_messages()) == []


@pytest.mark.parametrize('with_hooks', [False, True])
async def test_a_stated_block_is_withdrawn_without_the_capability_and_kept_when_it_is_eager_again(
    with_hooks: bool,
) -> None:
    seen = Seen()
    refunds = Capability[None](id='refunds', description='Refunds.', instructions='Policy.', defer_loading=True)
    first = await Agent(watching([load()], [TextPart('done')], seen=Seen()), capabilities=[refunds]).run('refund?')
    extra = [Hooks[None]()] if with_hooks else []

    without = await Agent(watching([TextPart('fine')], seen=seen), capabilities=extra).run(
        'again', message_history=first.all_messages()
    )
    assert statements_of(without.new_messages()) == [InstructionDeltaPart(id=BLOCK, content=None)]
    assert seen.statements[0][-1].startswith('<pyai:context id="capability:refunds">')  # the withdrawal, as sent

    eager = Capability[None](id='refunds', instructions='Policy.')  # its instructions are in the prefix now
    kept = await Agent(watching([TextPart('fine')], seen=Seen()), capabilities=[*extra, eager]).run(
        'again', message_history=first.all_messages()
    )
    assert statements_of(kept.new_messages()) == []


async def test_a_request_hook_changing_the_block_changes_what_is_stated() -> None:
    seen = Seen()
    blocks_seen: list[list[tuple[str, str]]] = []
    hooks = Hooks[None]()

    @hooks.on.before_model_request
    async def edit(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        params = request_context.model_request_parameters
        blocks_seen.append([(str(p.id), params.instruction_visibility_of(p)) for p in params.instruction_parts or ()])
        params.instruction_parts = [
            p.__class__(p.content.upper(), id=p.id, dynamic=True) if p.id == BLOCK else p
            for p in params.instruction_parts or ()
        ]
        return request_context

    refunds = Capability[None](id='refunds', description='Refunds.', instructions='Policy.', defer_loading=True)
    agent = Agent(watching([load()], [TextPart('done')], seen=seen), capabilities=[hooks, refunds])
    result = await agent.run('refund?')
    assert blocks_seen == [[('None', 'prefix')], [('None', 'prefix'), ('capability:refunds', 'via_history')]]
    assert seen.statements[1] == [stated('POLICY.')]
    assert statements_of(result.all_messages()) == [InstructionDeltaPart(id=BLOCK, content='POLICY.')]
