"""Tools revealed mid-run (pydantic-ai 2.x): a tool's `ToolReturn(tools=...)` makes deferred tools available from
the next request on; the history records it as a `ToolAvailabilityDeltaPart`, the stream gives a
`ToolAvailabilityDeltaEvent`, and the model is told in a system prompt (`Model.prepare_messages`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from dirty_equals import IsDatetime

from edgewise.agent import (
    Agent,
    RunContext,
    SpeechPart,
    ToolAvailabilityDeltaEvent,
    ToolAvailabilityDeltaPart,
    ToolReturn,
    UserError,
)
from edgewise.agent.capabilities import AbstractCapability, Capability
from edgewise.agent.messages import (
    CompactionPart,
    HandleResponseEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext, ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio

ANNOUNCED = 'The following tool(s) are now available: {}'


@dataclass
class Script:
    """A model answering with the given parts, one list per request; it keeps what each request showed it."""

    replies: list[list[Any]]
    tools: list[list[str]] = field(default_factory=list)
    sent: list[list[ModelMessage]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools.append([t.name for t in info.function_tools])
        self.sent.append(messages)
        return ModelResponse(parts=self.replies[len(self.sent) - 1])


def revealing_agent(script: Script, reveal: list[str]) -> Agent[None, str]:
    agent = Agent(FunctionModel(script))

    @agent.tool_plain
    def open_drawer() -> ToolReturn:
        return ToolReturn(return_value='opened', tools=reveal)

    @agent.tool_plain(defer_loading=True)
    def take_key() -> str:
        return 'key taken'

    @agent.tool_plain
    def look() -> str:
        return 'a drawer'

    return agent


def deltas(messages: list[ModelMessage]) -> list[ToolAvailabilityDeltaPart]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolAvailabilityDeltaPart)]


async def test_a_tool_return_reveals_a_deferred_tool_from_the_next_request_on() -> None:
    script = Script([[ToolCallPart('open_drawer', {}, 'c1')], [ToolCallPart('take_key', {}, 'c2')], [TextPart('ok')]])
    result = await revealing_agent(script, ['take_key', 'take_key']).run('go')

    assert script.tools == [
        ['open_drawer', 'look', 'search_tools'],
        ['open_drawer', 'look', 'take_key', 'search_tools'],
        ['open_drawer', 'look', 'take_key', 'search_tools'],
    ]
    recorded = result.all_messages()[2]
    assert isinstance(recorded, ModelRequest)
    assert recorded.parts[1] == ToolAvailabilityDeltaPart(tools_added=['take_key'], tool_call_id='c1')
    # the model is told in a system prompt after the tool results; the history keeps the delta part
    sent = script.sent[1][-1]
    assert isinstance(sent, ModelRequest)
    assert [type(p) for p in sent.parts] == [ToolReturnPart, SystemPromptPart]
    assert sent.parts[1] == SystemPromptPart(ANNOUNCED.format('`take_key`'), timestamp=sent.parts[1].timestamp)  # type: ignore[union-attr]
    assert result.output == 'ok'


async def test_the_stream_gives_the_delta_after_the_tool_results() -> None:
    script = Script([[ToolCallPart('open_drawer', {}, 'c1'), ToolCallPart('look', {}, 'c3')], [TextPart('ok')]])
    agent = revealing_agent(script, ['take_key'])
    events: list[HandleResponseEvent] = []
    async with agent.iter('go') as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    events.extend([event async for event in stream])

    kinds = [event.event_kind for event in events]
    assert kinds == [
        'function_tool_call', 'function_tool_call', 'function_tool_result', 'function_tool_result',
        'tool_availability_delta',
    ]  # fmt: skip
    assert events[-1] == ToolAvailabilityDeltaEvent(
        part=ToolAvailabilityDeltaPart(tools_added=['take_key'], tool_call_id='c1')
    )


async def test_tools_revealed_before_are_left_out() -> None:
    first = Script([[ToolCallPart('open_drawer', {}, 'c1')], [TextPart('ok')]])
    history = (await revealing_agent(first, ['take_key']).run('go')).all_messages()

    again = Script([[ToolCallPart('open_drawer', {}, 'c2')], [TextPart('ok')]])
    result = await revealing_agent(again, ['take_key']).run('again', message_history=history)

    assert again.tools[0] == ['open_drawer', 'look', 'take_key', 'search_tools']  # the history revealed it
    assert deltas(result.new_messages()) == []
    assert len(again.sent[1]) == len(history) + 3  # the old announcement is sent again, no new one


async def test_two_calls_revealing_one_tool_record_it_once_in_call_order() -> None:
    calls = [ToolCallPart('open_drawer', {}, 'c1'), ToolCallPart('open_drawer', {}, 'c2')]
    script = Script([calls, [TextPart('ok')]])
    result = await revealing_agent(script, ['take_key']).run('go')

    assert deltas(result.all_messages()) == [ToolAvailabilityDeltaPart(tools_added=['take_key'], tool_call_id='c1')]


async def test_names_that_are_not_deferred_tools_are_recorded_but_not_announced() -> None:
    script = Script([[ToolCallPart('open_drawer', {}, 'c1')], [TextPart('ok')]])
    result = await revealing_agent(script, ['look', 'no_such_tool']).run('go')

    assert deltas(result.all_messages()) == [
        ToolAvailabilityDeltaPart(tools_added=['look', 'no_such_tool'], tool_call_id='c1')
    ]
    sent = script.sent[1][-1]
    assert isinstance(sent, ModelRequest)
    assert [p.part_kind for p in sent.parts] == ['tool-return']


async def test_a_spoken_history_announces_only_the_deferred_tools_of_the_request() -> None:
    # Spoken turns and revealed tools go through `prepare_messages` together: the request's tools still decide what
    # is announced (`look` is not deferred, `no_such_tool` is no tool).
    script = Script([[ToolCallPart('open_drawer', {}, 'c1')], [TextPart('ok')]])
    history: list[ModelMessage] = [ModelRequest(parts=[SpeechPart(speaker='user', transcript='Open it')])]
    result = await revealing_agent(script, ['take_key', 'look', 'no_such_tool']).run(message_history=history)

    assert result.output == 'ok'
    assert [m.parts for m in script.sent[0]] == [[UserPromptPart('Open it', timestamp=IsDatetime())]]  # type: ignore[arg-type]
    sent = script.sent[1][-1]
    assert isinstance(sent, ModelRequest)
    assert [p.part_kind for p in sent.parts] == ['tool-return', 'system-prompt']
    assert sent.parts[1] == SystemPromptPart(ANNOUNCED.format('`take_key`'), timestamp=IsDatetime())  # type: ignore[arg-type]


async def test_a_tool_of_an_unloaded_deferred_capability_cannot_be_revealed_by_name() -> None:
    refunds = Capability[None](id='refunds', defer_loading=True)

    @refunds.tool_plain
    def refund() -> str:  # pragma: no cover - never revealed
        return 'refunded'

    script = Script([[ToolCallPart('open_drawer', {}, 'c1')], [TextPart('ok')]])
    agent = Agent(FunctionModel(script), capabilities=[refunds])

    @agent.tool_plain
    def open_drawer() -> ToolReturn:
        return ToolReturn(return_value='opened', tools=['refund'])

    with pytest.raises(UserError, match=r"cannot reveal 'refund': it belongs to capability 'refunds'"):
        await agent.run('go')


@pytest.mark.parametrize('tools', ['take_key', 7, [7], [['take_key']]])
async def test_tools_to_reveal_that_are_not_a_list_of_names_are_refused(tools: Any) -> None:
    script = Script([[ToolCallPart('open_drawer', {}, 'c1')], [TextPart('ok')]])
    with pytest.raises(UserError, match=r'^`ToolReturn\.tools` must be a list of tool names: pass a list of strings'):
        await revealing_agent(script, tools).run('go')
    assert len(script.sent) == 1


async def test_a_history_with_a_delta_shows_the_tool_at_the_first_step() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('go')]),
        ModelResponse(parts=[TextPart('revealing')]),
        ModelRequest(parts=[ToolAvailabilityDeltaPart(tools_added=['take_key'])]),
    ]
    script = Script([[TextPart('ok')]])
    await revealing_agent(script, []).run(message_history=history)

    assert script.tools == [['open_drawer', 'look', 'take_key', 'search_tools']]
    last = script.sent[0][-1]
    assert isinstance(last, ModelRequest)
    assert [p.content for p in last.parts] == [ANNOUNCED.format('`take_key`')]  # type: ignore[union-attr]


async def test_a_compaction_hides_a_revealed_tool_again() -> None:
    """As in pydantic-ai 2.x, a reveal counts from the latest compaction on: one before it is forgotten."""
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('go')]),
        ModelResponse(parts=[TextPart('revealing')]),
        ModelRequest(parts=[ToolAvailabilityDeltaPart(tools_added=['take_key'])]),
        ModelResponse(parts=[TextPart('noted'), CompactionPart('Earlier: a drawer was opened.')]),
    ]
    script = Script([[TextPart('ok')]])
    await revealing_agent(script, []).run('and now?', message_history=history)
    assert script.tools == [['open_drawer', 'look', 'search_tools']]


async def test_test_model_calls_the_revealed_tool() -> None:
    model = TestModel(call_tools=['open_drawer'])
    agent = Agent(model)

    @agent.tool_plain
    def open_drawer() -> ToolReturn:
        return ToolReturn(return_value='opened', tools=['take_key'])

    @agent.tool_plain(defer_loading=True)
    def take_key() -> str:  # pragma: no cover - TestModel calls only `open_drawer`
        return 'key taken'

    result = await agent.run('go')
    assert deltas(result.all_messages()) == [
        ToolAvailabilityDeltaPart(tools_added=['take_key'], tool_call_id='pyd_ai_tool_call_id__open_drawer')
    ]
    assert result.output == '{"open_drawer":"opened"}'


# -- the run context -------------------------------------------------------------------------------------------


async def test_run_context_tells_which_tools_are_available() -> None:
    seen: list[tuple[set[str], bool, bool, bool]] = []

    @dataclass
    class Watch(AbstractCapability[None]):
        def look(self, ctx: RunContext[None]) -> None:
            hidden = ToolDefinition(name='take_key', defer_loading=True)
            seen.append(
                (ctx.available_tool_names, ctx.is_tool_available('take_key'), ctx.is_tool_available(hidden),
                 ctx.is_tool_available('no_such_tool'))
            )  # fmt: skip

        async def before_run(self, ctx: RunContext[None]) -> None:
            self.look(ctx)

        async def before_model_request(
            self, ctx: RunContext[None], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            self.look(ctx)
            return request_context

    script = Script([[ToolCallPart('open_drawer', {}, 'c1')], [ToolCallPart('look', {}, 'c2')], [TextPart('ok')]])
    agent = revealing_agent(script, ['take_key'])
    await agent.run('go', capabilities=[Watch()])

    visible = {'open_drawer', 'look', 'search_tools'}
    assert seen == [
        (set(), False, False, False),  # before the first step's tools are listed
        (visible, False, False, False),
        (visible | {'take_key'}, True, True, False),
        (visible | {'take_key'}, True, True, False),
    ]


def test_run_context_falls_back_to_the_revealed_names_before_the_tools_are_listed() -> None:
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage(), discovered_tool_names={'take_key'})

    assert ctx.tools == {}
    assert ctx.available_tool_names == {'take_key'}
    assert ctx.is_tool_available('take_key')
    assert not ctx.is_tool_available('other')
    assert ctx.is_tool_available(ToolDefinition(name='always'))
    assert not ctx.is_tool_available(ToolDefinition(name='other', defer_loading=True))


def test_run_context_a_loaded_capability_reveals_its_tools() -> None:
    refunds = Capability[None](id='refunds', defer_loading=True)
    owned = ToolDefinition(name='refund', defer_loading=True, capability_id='refunds')
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage(), capabilities={'refunds': refunds})

    assert not ctx.is_tool_available(owned)
    ctx.discovered_tool_names.add('refund')
    assert not ctx.is_tool_available(owned)  # named, but its capability is not loaded
    ctx.loaded_capability_ids.add('refunds')
    assert ctx.is_tool_available(owned)
    ctx.discovered_tool_names.clear()
    assert ctx.is_tool_available(owned)  # loading is the reveal


# -- what the model is sent ------------------------------------------------------------------------------------


def test_prepare_messages_leaves_a_history_without_deltas_as_it_is() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')])]
    assert TestModel().prepare_messages(messages) is messages


def test_prepare_messages_announces_only_deferred_tools_of_the_request() -> None:
    params = ModelRequestParameters(
        function_tools=[
            ToolDefinition(name='a', defer_loading=True),
            ToolDefinition(name='b'),
            ToolDefinition(name='c'),
        ]
    )
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('rules'), ToolAvailabilityDeltaPart(tools_added=['a', 'b'])]),
        ModelResponse(parts=[TextPart('ok')]),
        ModelRequest(parts=[ToolAvailabilityDeltaPart(tools_added=['b'])]),  # nothing left: dropped
        ModelRequest(parts=[UserPromptPart('x'), ToolAvailabilityDeltaPart(tools_added=['a']), ToolReturnPart('t', 1)]),
    ]
    prepared = TestModel().prepare_messages(messages, params)

    assert [[(p.part_kind, getattr(p, 'content', None)) for p in m.parts] for m in prepared] == [
        [('system-prompt', 'rules'), ('system-prompt', ANNOUNCED.format('`a`'))],
        [('text', 'ok')],
        [('tool-return', 1), ('user-prompt', 'x'), ('system-prompt', ANNOUNCED.format('`a`'))],
    ]
    assert isinstance(messages[0].parts[1], ToolAvailabilityDeltaPart)  # the history itself is unchanged
    unfiltered = TestModel().prepare_messages(messages[:1])
    assert unfiltered[0].parts[1].content == ANNOUNCED.format('`a`, `b`')  # type: ignore[union-attr]


# -- stored histories ------------------------------------------------------------------------------------------


def test_delta_parts_round_trip_and_load_pydantic_ais_older_field_name() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[ToolReturnPart('t', 'x', 'c1'), ToolAvailabilityDeltaPart(tools_added=['a'], tool_call_id='c1')]
        )
    ]
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)) == messages
    loaded = ModelMessagesTypeAdapter.validate_python(
        [{'kind': 'request', 'parts': [{'part_kind': 'tool-availability-delta', 'added': ['b']}]}]
    )
    assert loaded == [ModelRequest(parts=[ToolAvailabilityDeltaPart(tools_added=['b'])])]
    assert repr(loaded[0].parts[0]) == "ToolAvailabilityDeltaPart(tools_added=['b'])"


def test_delta_events_round_trip_in_the_event_union() -> None:
    import pydantic

    from edgewise.agent.messages import AgentStreamEvent

    adapter: pydantic.TypeAdapter[AgentStreamEvent] = pydantic.TypeAdapter(AgentStreamEvent)
    event = ToolAvailabilityDeltaEvent(part=ToolAvailabilityDeltaPart(tools_added=['a'], tool_call_id='c'))
    assert adapter.validate_json(adapter.dump_json(event)) == event


async def test_the_request_parameters_name_the_revealed_tools() -> None:
    revealed: list[set[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        revealed.append(set(info.model_request_parameters.revealed_tool_names))
        if len(revealed) == 1:
            return ModelResponse(parts=[ToolCallPart('open_drawer', {}, 'c1')])
        return ModelResponse(parts=[TextPart('ok')])

    agent = revealing_agent(Script([]), ['take_key'])
    await agent.run('go', model=FunctionModel(model))

    assert revealed == [set(), {'take_key'}]


async def test_a_delta_part_can_be_enqueued_with_a_prompt() -> None:
    script = Script([[ToolCallPart('announce', {}, 'c1')], [ToolCallPart('take_key', {}, 'c2')], [TextPart('ok')]])
    agent = revealing_agent(script, [])

    @agent.tool
    def announce(ctx: RunContext[None]) -> str:
        ctx.enqueue(ToolAvailabilityDeltaPart(tools_added=['take_key']), 'Use it.')
        return 'ok'

    result = await agent.run('go')

    queued = result.all_messages()[3]
    assert isinstance(queued, ModelRequest)
    assert [p.part_kind for p in queued.parts] == ['tool-availability-delta', 'user-prompt']
    assert script.tools[1] == ['open_drawer', 'look', 'announce', 'take_key', 'search_tools']
    sent = script.sent[1][-1]  # the queued request is sent merged with the tool's return
    assert isinstance(sent, ModelRequest)
    assert [p.part_kind for p in sent.parts] == ['tool-return', 'system-prompt', 'user-prompt']
