"""Capabilities loaded on demand (`defer_loading=True`): the catalog in the instructions, the `load_capability`
tool, what a load brings (instructions in the return, tools, model settings, hooks), and the loaded state read
back from a history, from a stored run, and while streaming."""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.capabilities import AbstractCapability, Capability, CombinedCapability
from edgewise.agent.capabilities._loaded_on_demand import DeferredCapabilityGate
from edgewise.agent.messages import (
    CapabilityInstructionSource,
    InstructionDeltaPart,
    InstructionId,
    LoadCapabilityCallPart,
    LoadCapabilityReturnPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import CodeExecutionTool, WebSearchTool
from edgewise.agent.settings import ModelSettings
from edgewise.agent.usage import RunUsage
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from .._streaming_helpers import streamed

pytestmark = pytest.mark.anyio

CATALOG = (
    'The following capabilities are deferred and can be loaded using the `load_capability` tool. '
    "A capability's tools stay hidden until it is loaded:"
)


@dataclass
class Seen:
    """What each request of a run showed the model."""

    instructions: list[str | None] = field(default_factory=list)
    tools: list[list[str]] = field(default_factory=list)
    settings: list[ModelSettings | None] = field(default_factory=list)
    last_parts: list[list[Any]] = field(default_factory=list)


def scripted(*responses: Sequence[ModelResponsePart], seen: Seen) -> FunctionModel:
    """A model answering the n-th request of a conversation with `responses[n]`, recording what it was shown."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.instructions.append(info.instructions)
        seen.tools.append([t.name for t in info.function_tools])
        seen.settings.append(info.model_settings)
        seen.last_parts.append(list(messages[-1].parts))
        n = sum(isinstance(m, ModelResponse) for m in messages)
        return ModelResponse(list(responses[n]))

    return FunctionModel(answer)


def text_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse([TextPart('x')])


def load(capability_id: str, call_id: str = 'load-1') -> ToolCallPart:
    return ToolCallPart('load_capability', {'id': capability_id}, call_id)


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


@dataclass
class Warm(AbstractCapability[None]):
    """Model settings and a hook, recorded when the hook fires."""

    fired: list[int] = field(default_factory=list)

    def get_model_settings(self) -> ModelSettings:
        return {'temperature': 0.25}

    async def before_model_request(
        self, ctx: RunContext[None], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.fired.append(ctx.run_step)
        return request_context


# -- the catalog ---------------------------------------------------------------------------------------------------


async def test_the_catalog_lists_each_deferred_capability_with_its_description() -> None:
    seen = Seen()
    billing = Capability[None](id='billing', instructions='Billing rules.', defer_loading=True)
    eager = Capability[None](instructions='Always on.')
    agent = Agent(
        scripted([TextPart('ok')], seen=seen), instructions='Base.', capabilities=[refunds_capability(), billing, eager]
    )
    await agent.run('hi')
    assert seen.instructions == [f'Base.\nAlways on.\n\n{CATALOG}\n- refunds: Refund policy tools.\n- billing']
    assert seen.tools == [['load_capability']]


async def test_a_description_function_is_called_with_the_run_context_when_the_catalog_is_written() -> None:
    seen = Seen()

    def describe(ctx: RunContext[str]) -> str:
        return f'Tools for {ctx.deps} customers.'

    capability = Capability[str](id='accounts', description=describe, defer_loading=True)
    agent = Agent(scripted([TextPart('ok')], seen=seen), deps_type=str, capabilities=[capability])
    await agent.run('hi', deps='gold')
    assert seen.instructions == [f'{CATALOG}\n- accounts: Tools for gold customers.']


async def test_an_agent_without_deferred_capabilities_has_no_catalog_and_no_load_tool() -> None:
    seen = Seen()
    agent = Agent(scripted([TextPart('ok')], seen=seen), capabilities=[Capability[None](id='x', instructions='X.')])
    await agent.run('hi')
    assert seen.instructions == ['X.']
    assert seen.tools == [[]]


# -- loading -------------------------------------------------------------------------------------------------------


async def test_loading_returns_a_confirmation_states_the_instructions_and_shows_the_tools_next() -> None:
    seen = Seen()
    agent = Agent(
        scripted(
            [load('refunds')],
            [ToolCallPart('lookup_refund', {'order_id': 'A1'}, 'look-1')],
            [TextPart('done')],
            seen=seen,
        ),
        capabilities=[refunds_capability()],
    )
    result = await agent.run('Can I get a refund?')
    assert result.output == 'done'
    assert seen.tools == [
        ['load_capability'],
        ['load_capability', 'lookup_refund'],
        ['load_capability', 'lookup_refund'],
    ]
    call = result.all_messages()[1].parts[0]
    assert isinstance(call, LoadCapabilityCallPart)
    assert call.capability_id == 'refunds'
    returned, announced, stated = seen.last_parts[1]
    assert isinstance(returned, LoadCapabilityReturnPart)
    assert returned.content == {'message': "Capability 'refunds' loaded. Its instructions, if any, follow."}
    assert returned.tool_call_id == 'load-1'
    # as pydantic-ai 2.68: the instructions follow the return as the block `capability:refunds`, in the system voice
    assert stated == SystemPromptPart(
        '<pyai:context id="capability:refunds">\nCheck the refund policy first.\n</pyai:context>',
        timestamp=stated.timestamp,
    )
    assert result.all_messages()[2].parts[-1] == InstructionDeltaPart(
        id=InstructionId(CapabilityInstructionSource('refunds')), content='Check the refund policy first.'
    )
    # as pydantic-ai 2.x: the model is told which tools the load made available
    assert announced == SystemPromptPart(
        'The following tool(s) are now available: `lookup_refund`', timestamp=announced.timestamp
    )
    assert (
        ToolAvailabilityDeltaPart(tools_added=['lookup_refund'], tool_call_id='load-1')
        in result.all_messages()[2].parts
    )
    (looked_up,) = seen.last_parts[2]
    assert isinstance(looked_up, ToolReturnPart)
    assert looked_up.content == 'A1: refundable'
    # stated once, in the history: never in the requests' instructions, not again while they stay the same
    assert all(i is not None and 'refund policy first' not in i for i in seen.instructions)
    assert [p for m in result.all_messages() for p in m.parts if isinstance(p, InstructionDeltaPart)] == [
        result.all_messages()[2].parts[-1]
    ]


async def test_a_capability_without_instructions_returns_the_confirmation_and_states_nothing() -> None:
    seen = Seen()
    agent = Agent(
        scripted([load('warm')], [TextPart('done')], seen=seen), capabilities=[Warm(id='warm', defer_loading=True)]
    )
    result = await agent.run('hi')
    (returned,) = seen.last_parts[1]
    assert isinstance(returned, LoadCapabilityReturnPart)
    assert returned.content == {'message': "Capability 'warm' loaded. Its instructions, if any, follow."}
    assert not any(isinstance(p, InstructionDeltaPart) for m in result.all_messages() for p in m.parts)


async def test_a_toolsets_instructions_are_stated_with_the_capabilitys() -> None:
    from edgewise.agent.toolsets import FunctionToolset

    class Explained(FunctionToolset[None]):
        async def get_instructions(self, ctx: RunContext[None]) -> list[str] | None:
            return ['', '  ', 'Quote order ids exactly.']  # blank ones are dropped

    seen = Seen()
    capability = Capability[None](
        id='orders', instructions=['Orders first.', lambda: ''], toolsets=[Explained()], defer_loading=True
    )
    agent = Agent(scripted([load('orders')], [TextPart('done')], seen=seen), capabilities=[capability])
    await agent.run('hi')
    _, stated = seen.last_parts[1]
    assert stated.content == (
        '<pyai:context id="capability:orders">\nOrders first.\n\nQuote order ids exactly.\n</pyai:context>'
    )
    assert all('Quote order ids' not in (i or '') for i in seen.instructions)


async def test_model_settings_and_hooks_apply_only_after_the_load() -> None:
    seen = Seen()
    warm = Warm(id='warm', defer_loading=True)
    agent = Agent(
        scripted([ToolCallPart('noop', {}, 'noop-1')], [load('warm')], [TextPart('done')], seen=seen),
        capabilities=[warm],
        model_settings={'max_tokens': 9},
    )

    @agent.tool_plain
    def noop() -> str:
        return 'nothing'

    result = await agent.run('hi')
    assert result.output == 'done'
    assert seen.settings == [{'max_tokens': 9}, {'max_tokens': 9}, {'max_tokens': 9, 'temperature': 0.25}]
    assert warm.fired == [3]


async def test_an_unknown_id_asks_the_model_again() -> None:
    seen = Seen()
    agent = Agent(scripted([load('nope')], [TextPart('done')], seen=seen), capabilities=[refunds_capability()])
    await agent.run('hi')
    (retry,) = seen.last_parts[1]
    assert isinstance(retry, RetryPromptPart)
    assert (retry.tool_name, retry.content) == ('load_capability', "No capability found with id 'nope'.")


async def test_loading_a_loaded_or_eager_capability_asks_the_model_again() -> None:
    seen = Seen()
    eager = Capability[None](id='eager', instructions='On.')
    agent = Agent(
        scripted(
            [load('refunds')],
            [load('refunds', 'load-2'), load('eager', 'load-3')],
            [TextPart('done')],
            seen=seen,
        ),
        capabilities=[refunds_capability(), eager],
    )
    await agent.run('hi')
    again, eager_retry = seen.last_parts[2]
    assert isinstance(again, RetryPromptPart)
    assert isinstance(eager_retry, RetryPromptPart)
    assert again.content == (
        "Capability 'refunds' is already active. "
        'Use its existing instructions and any tools it provides; do not call `load_capability` for it again.'
    )
    assert isinstance(eager_retry.content, str)
    assert eager_retry.content.startswith("Capability 'eager' is already active.")


@pytest.mark.parametrize('sequential', [False, True])
async def test_the_first_of_two_loads_in_one_response_loads_and_the_second_is_told_so(sequential: bool) -> None:
    """Whichever runs first (in parallel the later call may), the model's first call loads the capability, once."""
    seen = Seen()
    agent = Agent(
        scripted([load('refunds', 'first'), load('refunds', 'second')], [TextPart('done')], seen=seen),
        capabilities=[refunds_capability()],
    )
    with agent.parallel_tool_call_execution_mode('sequential' if sequential else 'parallel'):
        result = await agent.run('hi')
    loaded, duplicate, reveal, stated = seen.last_parts[1]  # then the tools revealed and the block, once each
    assert isinstance(reveal, SystemPromptPart)
    assert 'lookup_refund' in reveal.content
    assert isinstance(stated, SystemPromptPart)
    assert 'capability:refunds' in stated.content
    assert isinstance(loaded, ToolReturnPart)
    assert (loaded.tool_call_id, loaded.content) == (
        'first',
        {'message': "Capability 'refunds' loaded. Its instructions, if any, follow."},
    )
    assert isinstance(duplicate, RetryPromptPart)
    assert (duplicate.tool_call_id, duplicate.content) == (
        'second',
        "Capability 'refunds' is already being loaded by an earlier `load_capability` call in this response; "
        'do not call `load_capability` for it again.',
    )
    assert 'lookup_refund' in seen.tools[1]
    assert sum(isinstance(p, InstructionDeltaPart) for m in result.all_messages() for p in m.parts) == 1


async def test_two_loads_of_a_capability_already_active_are_both_told_it_is_active() -> None:
    seen = Seen()
    agent = Agent(
        scripted(
            [load('refunds')],
            [load('refunds', 'again-1'), load('refunds', 'again-2')],
            [TextPart('done')],
            seen=seen,
        ),
        capabilities=[refunds_capability()],
    )
    await agent.run('hi')
    assert [type(p).__name__ for p in seen.last_parts[2]] == ['RetryPromptPart', 'RetryPromptPart']
    assert all(str(p.content).startswith("Capability 'refunds' is already active.") for p in seen.last_parts[2])


def test_the_loader_texts_and_the_older_constant_name() -> None:
    from edgewise.agent.toolsets import _deferred_capability_loader as loader

    assert loader.LOAD_CAPABILITY_TOOL_DESCRIPTION == (
        'Load a listed capability whenever it is plausibly relevant to the task. '
        'Loading makes the capability instructions and any tools it provides available.'
    )
    assert (
        loader.LOAD_CAPABILITY_ALREADY_AVAILABLE_MESSAGE_TEMPLATE
        is loader.LOAD_CAPABILITY_ALREADY_ACTIVE_MESSAGE_TEMPLATE
    )


async def test_ids_are_checked_when_the_agent_is_made_and_when_a_run_starts() -> None:
    with pytest.raises(UserError, match='Deferred capabilities must use stable explicit `id` values'):
        Agent(FunctionModel(text_model), capabilities=[Capability[None](defer_loading=True)])
    with pytest.raises(UserError, match="Capability id 'a' is used by multiple capabilities"):
        Agent(FunctionModel(text_model), capabilities=[Capability[None](id='a')] * 2)
    agent = Agent(FunctionModel(text_model), capabilities=[Capability[None](id='a')])
    with pytest.raises(UserError, match="Capability id 'a' is used by multiple capabilities"):
        await agent.run('hi', capabilities=[Capability[None](id='a')])


async def test_a_tool_named_load_capability_is_refused() -> None:
    agent = Agent(FunctionModel(text_model), capabilities=[refunds_capability()])

    @agent.tool_plain
    def load_capability() -> str:
        return 'mine'

    with pytest.raises(UserError, match="Tool name 'load_capability' is reserved for deferred capability loading"):
        await agent.run('hi')


async def test_the_run_context_lists_the_capabilities_and_the_loaded_ones() -> None:
    views: list[tuple[list[str], set[str], set[str]]] = []

    @dataclass
    class Watch(AbstractCapability[None]):
        async def before_model_request(
            self, ctx: RunContext[None], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            views.append((list(ctx.capabilities), set(ctx.loaded_capability_ids), ctx.active_capability_ids))
            return request_context

    agent = Agent(
        FunctionModel(lambda m, i: ModelResponse([load('refunds')] if len(m) == 1 else [TextPart('ok')])),
        capabilities=[Watch(), refunds_capability()],
    )
    await agent.run('hi')
    listed = ['deferred_capability_loader', 'watch', 'refunds']  # the loader goes outermost
    assert views == [
        (listed, set(), {'watch', 'deferred_capability_loader'}),
        (listed, {'refunds'}, {'watch', 'deferred_capability_loader', 'refunds'}),
    ]


# -- the loaded state read back ------------------------------------------------------------------------------------


async def test_a_run_given_the_history_has_the_capability_loaded() -> None:
    seen = Seen()
    warm = Warm(id='warm', defer_loading=True)
    agent = Agent(scripted([load('warm')], [TextPart('first')], [TextPart('second')], seen=seen), capabilities=[warm])
    first = await agent.run('hi')
    history = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(first.all_messages()))
    kinds = [type(p).__name__ for m in history for p in m.parts if getattr(p, 'tool_name', '') == 'load_capability']
    assert kinds == ['LoadCapabilityCallPart', 'LoadCapabilityReturnPart']
    warm.fired.clear()
    await agent.run('again', message_history=history)
    assert seen.settings[-1] == {'temperature': 0.25}
    assert warm.fired == [1]


async def test_a_load_call_without_its_return_loads_nothing() -> None:
    seen = Seen()
    agent = Agent(scripted([TextPart('ok')], [TextPart('ok')], seen=seen), capabilities=[refunds_capability()])
    history: list[ModelMessage] = [
        ModelRequest.user_text_prompt('hi'),
        ModelResponse([LoadCapabilityCallPart(args='{"id":', tool_call_id='partial')]),
        ModelRequest([LoadCapabilityReturnPart(content={}, tool_call_id='partial')]),
    ]
    await agent.run('again', message_history=history)
    assert seen.tools == [['load_capability']]


class Crash(BaseException):
    """Stands for the process dying (not an `Exception`: the node is left to run again)."""


async def test_a_stored_run_resumes_with_the_capability_loaded(tmp_path: Path) -> None:
    seen = Seen()
    warm = Warm(id='warm', defer_loading=True)
    crash = [True]
    agent = Agent(
        scripted([load('warm')], [ToolCallPart('stop', {}, 'stop-1')], [TextPart('done')], seen=seen),
        capabilities=[warm],
    )

    @agent.tool_plain
    def stop() -> str:
        if crash[0]:
            raise Crash
        return 'went on'

    with pytest.raises(Crash):
        await agent.run('hi', persistence=SqliteStatePersistence(tmp_path / 'runs.db', run_id='run-1'))
    assert seen.settings == [None, {'temperature': 0.25}]
    crash[0] = False
    warm.fired.clear()
    result = await agent.resume(SqliteStatePersistence(tmp_path / 'runs.db', run_id='run-1'))
    assert result.output == 'done'
    assert seen.settings[-1] == {'temperature': 0.25}
    assert warm.fired == [3]
    assert any(isinstance(p, LoadCapabilityReturnPart) for m in result.all_messages() for p in m.parts)


# -- streaming -----------------------------------------------------------------------------------------------------


async def test_a_streamed_run_loads_a_capability() -> None:
    refunds = refunds_capability()
    agent = Agent(
        streamed(
            [
                {0: DeltaToolCall(name='load_capability', json_args='{"id": ', tool_call_id='load-1')},
                {0: DeltaToolCall(json_args='"refunds"}')},
            ],
            [{0: DeltaToolCall(name='lookup_refund', json_args='{"order_id": "B2"}', tool_call_id='look-1')}],
            ['all ', 'done'],
        ),
        capabilities=[refunds],
    )
    async with agent.run_stream('refund?') as stream:
        output = await stream.get_output()
    messages = stream.all_messages()
    assert output == 'all done'
    call = messages[1].parts[0]
    assert isinstance(call, LoadCapabilityCallPart)
    assert call.capability_id == 'refunds'
    returned = messages[2].parts[0]
    assert isinstance(returned, LoadCapabilityReturnPart)
    assert returned.instructions is None
    assert messages[2].parts[-1] == InstructionDeltaPart(
        id=InstructionId(CapabilityInstructionSource('refunds')), content='Check the refund policy first.'
    )
    looked_up = messages[4].parts[0]
    assert isinstance(looked_up, ToolReturnPart)
    assert looked_up.content == 'B2: refundable'


async def test_a_wrapped_deferred_capability_stays_deferred_under_the_wrappers_tools() -> None:
    from edgewise.agent.capabilities import PrefixTools

    seen = Seen()
    wrapped = PrefixTools(refunds_capability(), prefix='refunds')
    agent = Agent(
        scripted(
            [load('refunds')], [ToolCallPart('refunds_lookup_refund', {'order_id': 'C3'}, 'l')], [TextPart('ok')],
            seen=seen,
        ),
        capabilities=[wrapped],
    )  # fmt: skip
    await agent.run('hi')
    assert seen.instructions[0] == f'{CATALOG}\n- refunds: Refund policy tools.'
    assert seen.tools == [
        ['load_capability'],
        ['load_capability', 'refunds_lookup_refund'],
        ['load_capability', 'refunds_lookup_refund'],
    ]
    (looked_up,) = seen.last_parts[2]
    assert looked_up.content == 'C3: refundable'


async def test_hooks_of_a_loaded_capability_see_capability_active() -> None:
    from edgewise.agent.capabilities import Hooks

    hooks = Hooks[None](id='audit', description='Audit.', defer_loading=True)
    flags: list[bool | None] = []

    @hooks.on.before_model_request
    async def record(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        flags.append(ctx.capability_active)
        return request_context

    agent = Agent(scripted([load('audit')], [TextPart('ok')], seen=Seen()), capabilities=[hooks])
    await agent.run('hi')
    assert flags == [True]


# -- the message parts ---------------------------------------------------------------------------------------------


def test_load_parts_are_told_by_tool_kind_when_read_back() -> None:
    stored = [
        {
            'kind': 'response',
            'parts': [
                {'part_kind': 'tool-call', 'tool_name': 'load_capability', 'tool_kind': 'capability-load',
                 'args': {'id': 'refunds'}, 'tool_call_id': 'c1'},
                {'part_kind': 'tool-call', 'tool_name': 'load_capability', 'args': {'x': 1}, 'tool_call_id': 'c2'},
            ],
        },
        {
            'kind': 'request',
            'parts': [
                {'part_kind': 'tool-return', 'tool_name': 'load_capability', 'tool_kind': 'capability-load',
                 'content': {'instructions': 'Be brief.'}, 'tool_call_id': 'c1'},
                {'part_kind': 'tool-return', 'tool_name': 'load_capability', 'content': 'mine', 'tool_call_id': 'c2'},
            ],
        },
    ]  # fmt: skip
    response, request = ModelMessagesTypeAdapter.validate_python(stored)
    assert [type(p) for p in response.parts] == [LoadCapabilityCallPart, ToolCallPart]
    assert [type(p) for p in request.parts] == [LoadCapabilityReturnPart, ToolReturnPart]
    call, returned = response.parts[0], request.parts[0]
    assert isinstance(call, LoadCapabilityCallPart)
    assert isinstance(returned, LoadCapabilityReturnPart)
    assert (call.capability_id, returned.instructions) == ('refunds', 'Be brief.')
    again = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json([response, request]))
    assert again == [response, request]


@pytest.mark.parametrize(
    ('args', 'expected'),
    [(None, None), ({'id': 'a'}, 'a'), ('{"id": "b"}', 'b'), ('{"id":', None), ('[1]', None)],
)
def test_a_load_calls_id_is_read_from_complete_arguments_only(args: Any, expected: str | None) -> None:
    assert LoadCapabilityCallPart(tool_call_id='c', args=args).capability_id == expected


def test_narrowing_a_part_gives_its_typed_part_once() -> None:
    call = ToolCallPart('load_capability', {'id': 'a'}, 'c', tool_kind='capability-load')
    typed = ToolCallPart.narrow_type(call)
    assert isinstance(typed, LoadCapabilityCallPart)
    assert ToolCallPart.narrow_type(typed) is typed
    returned = ToolReturnPart('load_capability', {}, 'c', tool_kind='capability-load')
    typed_return = ToolReturnPart.narrow_type(returned)
    assert isinstance(typed_return, LoadCapabilityReturnPart)
    assert typed_return.instructions is None
    plain = ToolCallPart('load_capability', {'id': 'a'}, 'c')
    assert ToolCallPart.narrow_type(plain) is plain


# -- native tools, per-run capabilities, event streams -------------------------------------------------------------


@dataclass
class Searching(AbstractCapability[None]):
    """A native tool given as is and one given as a function of the run context."""

    def get_native_tools(self) -> Sequence[Any]:
        from edgewise.agent.native_tools import CodeExecutionTool, WebSearchTool

        def code_tool(ctx: RunContext[None]) -> CodeExecutionTool:
            assert ctx.capability_active is True
            return CodeExecutionTool()

        return [WebSearchTool(), code_tool]


async def test_native_tools_are_sent_only_after_the_load() -> None:
    kinds: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        kinds.append(sorted(t.kind for t in info.model_request_parameters.native_tools))
        return ModelResponse([load('search')] if len(messages) == 1 else [TextPart('ok')])

    agent = Agent(FunctionModel(answer), capabilities=[Searching(id='search', defer_loading=True)])
    await agent.run('hi')
    assert kinds == [[], ['code_execution', 'web_search']]


@dataclass
class PerRun(AbstractCapability[None]):
    """Made again for each run (`for_run`), counting the requests of its run once loaded."""

    requests: list[int] = field(default_factory=list)
    made: list[PerRun] = field(default_factory=list)

    async def for_run(self, ctx: RunContext[None]) -> PerRun:
        fresh = PerRun(id=self.id, description=self.description, defer_loading=self.defer_loading)
        self.made.append(fresh)
        return fresh

    async def before_model_request(
        self, ctx: RunContext[None], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.requests.append(ctx.run_step)
        return request_context


async def test_a_capability_made_per_run_is_deferred_and_loaded_as_made() -> None:
    seen = Seen()
    template = PerRun(id='counting', description='Counts.', defer_loading=True)
    agent = Agent(scripted([load('counting')], [TextPart('ok')], seen=seen), capabilities=[template])
    await agent.run('hi')
    (made,) = template.made
    assert made.requests == [2]
    assert template.requests == []
    assert seen.instructions[0] == f'{CATALOG}\n- counting: Counts.'


async def test_an_event_stream_wrapper_applies_once_loaded() -> None:
    from edgewise.agent.messages import AgentStreamEvent, PartStartEvent

    @dataclass
    class Tagging(AbstractCapability[None]):
        tagged: list[int] = field(default_factory=list)

        async def wrap_run_event_stream(
            self, ctx: RunContext[None], *, stream: AsyncIterable[AgentStreamEvent]
        ) -> AsyncIterable[AgentStreamEvent]:
            async for event in stream:
                if isinstance(event, PartStartEvent):
                    self.tagged.append(ctx.run_step)
                yield event

    tagging = Tagging(id='tagging', defer_loading=True)
    agent = Agent(
        streamed(
            [{0: DeltaToolCall(name='load_capability', json_args='{"id": "tagging"}', tool_call_id='l')}],
            ['done'],
        ),
        capabilities=[tagging],
    )
    async with agent.run_stream_events('hi') as stream:
        events = [event async for event in stream]
    assert events
    assert tagging.tagged == [2]


def test_the_loader_and_the_gate_keep_their_place_and_names() -> None:
    from edgewise.agent.capabilities import CapabilityOrdering, Instrumentation
    from edgewise.agent.capabilities._loaded_on_demand import (
        DeferredCapabilityGate,
        DeferredCapabilityLoader,
        deferred_run_capabilities,
    )

    @dataclass
    class Placed(AbstractCapability[None]):
        def get_ordering(self) -> CapabilityOrdering:
            return CapabilityOrdering(position='innermost')

    loader = DeferredCapabilityLoader[None]()
    assert DeferredCapabilityLoader.get_serialization_name() is None
    assert loader.get_ordering() == CapabilityOrdering(position='outermost', wrapped_by=[Instrumentation])
    placed = Placed(id='p', defer_loading=True)
    gate = DeferredCapabilityGate(placed)
    assert gate.get_ordering() == CapabilityOrdering(position='innermost')
    assert (gate.id, gate.defer_loading, gate.get_instructions()) == ('p', True, None)
    # made again for a run: the gates and the loader already there are kept, not doubled
    again = deferred_run_capabilities([gate, loader])
    assert again[0] is gate
    assert again[1] is loader
    assert len(again) == 2


def test_a_capability_the_run_does_not_list_keeps_its_own_id() -> None:
    from edgewise.agent.models.test import TestModel
    from edgewise.agent.toolsets._capability_owned import resolve_capability_id
    from edgewise.agent.usage import RunUsage

    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    assert resolve_capability_id(ctx, Capability[None](id='own')) == 'own'


async def test_capabilities_without_an_id_are_listed_under_their_class_name() -> None:
    from edgewise.agent.capabilities import CombinedCapability

    listed: list[list[str]] = []

    @dataclass
    class Watch(AbstractCapability[None]):
        async def before_run(self, ctx: RunContext[None]) -> None:
            listed.append(list(ctx.capabilities))

    deferred, eager = Warm(id='warm', defer_loading=True), Warm()
    bundle = CombinedCapability[None]([deferred, eager])
    agent = Agent(scripted([load('warm')], [TextPart('ok')], seen=Seen()), capabilities=[Watch(), bundle, Warm()])
    await agent.run('hi')
    assert listed == [['deferred_capability_loader', 'watch', 'warm', 'warm_2', 'warm_3']]
    # the deferred one inside the bundle is gated too: its hook fires only after the load
    assert (deferred.fired, eager.fired) == ([2], [1, 2])


async def test_only_a_deferred_tool_outside_the_capabilities_brings_the_search_tool() -> None:
    seen = Seen()
    agent = Agent(scripted([TextPart('ok')], seen=seen), capabilities=[refunds_capability()])

    @agent.tool_plain(defer_loading=True)
    def weather() -> str:  # pragma: no cover - never called
        return 'sunny'

    await agent.run('hi')
    assert seen.tools == [['load_capability', 'search_tools']]


# -- a combined capability holding deferred ones -------------------------------------------------------------------


@dataclass
class _Settings(AbstractCapability[None]):
    settings: Any = None
    native: Any = None

    def get_model_settings(self) -> Any:
        return self.settings

    def get_native_tools(self) -> Any:
        return [] if self.native is None else [self.native]


def _loaded_ctx(*loaded: str) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), loaded_capability_ids=set(loaded))


def test_combined_settings_of_deferred_capabilities_count_once_loaded() -> None:
    seen_loaded: list[bool | None] = []

    def dynamic(ctx: RunContext[None]) -> ModelSettings:
        seen_loaded.append(ctx.capability_active)
        return ModelSettings(temperature=0.2)

    combined = CombinedCapability(
        [
            _Settings(ModelSettings(seed=1)),
            _Settings(ModelSettings(max_tokens=123), id='static', defer_loading=True),
            _Settings(dynamic, id='dynamic', defer_loading=True),
        ]
    )
    resolve = combined.get_model_settings()
    assert callable(resolve)
    assert [resolve(_loaded_ctx()), resolve(_loaded_ctx('static')), resolve(_loaded_ctx('static', 'dynamic'))] == [
        {'seed': 1},
        {'seed': 1, 'max_tokens': 123},
        {'seed': 1, 'max_tokens': 123, 'temperature': 0.2},
    ]
    assert seen_loaded == [True]


def test_combined_settings_give_an_empty_dict_when_no_deferred_one_is_loaded() -> None:
    resolve = CombinedCapability([_Settings(ModelSettings(seed=1), id='x', defer_loading=True)]).get_model_settings()
    assert callable(resolve)
    assert resolve(_loaded_ctx()) == {}


def test_combined_native_tools_of_deferred_capabilities_are_given_once_loaded() -> None:
    search = WebSearchTool()
    made: list[bool | None] = []

    def per_request(ctx: RunContext[None]) -> WebSearchTool:
        made.append(ctx.capability_active)
        return WebSearchTool(search_context_size='high')

    plain = CodeExecutionTool()
    combined = CombinedCapability(
        [
            _Settings(native=plain),
            _Settings(native=search, id='search', defer_loading=True),
            _Settings(native=per_request, id='made', defer_loading=True),
        ]
    )
    first, gated, gated_function = combined.get_native_tools()
    assert first is plain
    assert callable(gated)
    assert callable(gated_function)
    assert (gated(_loaded_ctx()), gated_function(_loaded_ctx())) == (None, None)
    assert gated(_loaded_ctx('search')) is search
    assert gated_function(_loaded_ctx('made')) == WebSearchTool(search_context_size='high')
    assert made == [True]


def test_a_combined_capability_leaves_a_gated_capability_to_its_gate() -> None:
    deferred = _Settings(ModelSettings(seed=1), native=WebSearchTool(), id='x', defer_loading=True)
    gate = DeferredCapabilityGate(deferred)
    combined = CombinedCapability([gate])
    [tool] = combined.get_native_tools()
    [own] = gate.get_native_tools()
    assert getattr(tool, '__qualname__', None) == getattr(own, '__qualname__', None)  # the gate's, not wrapped again
    resolve = combined.get_model_settings()
    assert callable(resolve)
    assert resolve(_loaded_ctx('x')) == {'seed': 1}
