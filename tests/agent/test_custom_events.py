"""Events that applications and capabilities define (pydantic-ai 2.68): `CustomEvent` and `CapabilityEvent` families
(registration, checks, wire format, unknown envelopes), `RunContext.emit` / `AgentRun.emit`, and capabilities'
listeners (`on_event`)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from pydantic import TypeAdapter, ValidationError

from edgewise.agent import (
    Agent,
    CapabilityEvent,
    CustomEvent,
    RunContext,
    UnknownCapabilityEvent,
    UnknownCustomEvent,
    UserError,
)
from edgewise.agent._message_flow.custom_events import EventRegistry, event_registry_version
from edgewise.agent.capabilities import AbstractCapability, on_event
from edgewise.agent.capabilities._on_event import collect_on_event_methods
from edgewise.agent.messages import (
    CAPABILITY_EVENT_TYPES,
    CUSTOM_EVENT_TYPES,
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelResponse,
    PartStartEvent,
    TextPart,
    ToolCallPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.tools import ToolDefinition

pytestmark = pytest.mark.anyio


def stream_adapter() -> TypeAdapter[list[AgentStreamEvent]]:
    """A type adapter built now: its schema holds the event classes registered by then (one built before a class
    is defined treats that class's events as unknown)."""
    return TypeAdapter(list[AgentStreamEvent])


@dataclass(kw_only=True)
class OperationProgressEvent(CustomEvent):
    done: int
    total: int


@dataclass(kw_only=True)
class AuditEvent(CustomEvent, name='audit.entry', ui=False):
    entry: str


@dataclass(kw_only=True)
class CheckpointStartEvent(CapabilityEvent, namespace='checkpoint', dispatch='immediate'):
    cancelled: bool = False


@dataclass(kw_only=True)
class CheckpointDoneEvent(CheckpointStartEvent, name='done', dispatch='stream'):
    label: str = ''


@dataclass(kw_only=True)
class RetryBase(CapabilityEvent, namespace='retrying.v1', abstract=True):
    attempt: int = 0


@dataclass(kw_only=True)
class RetryScheduledEvent(RetryBase):
    pass


# -- the families -----------------------------------------------------------------------------------------------------


def test_a_subclass_registers_under_a_name_from_its_class_or_the_one_given() -> None:
    assert CUSTOM_EVENT_TYPES['operation_progress'] is OperationProgressEvent
    assert CUSTOM_EVENT_TYPES['audit.entry'] is AuditEvent
    event = OperationProgressEvent(done=1, total=3)
    assert event.name == 'operation_progress'
    assert event.to_payload() == {'done': 1, 'total': 3}
    assert (OperationProgressEvent.ui, AuditEvent.ui) == (True, False)


def test_a_capability_event_registers_under_its_namespaced_kind() -> None:
    assert CAPABILITY_EVENT_TYPES['checkpoint.checkpoint_start'] is CheckpointStartEvent
    assert CAPABILITY_EVENT_TYPES['checkpoint.done'] is CheckpointDoneEvent  # the namespace is inherited
    assert CAPABILITY_EVENT_TYPES['retrying.v1.retry_scheduled'] is RetryScheduledEvent  # from an abstract base
    assert (CheckpointStartEvent.event_dispatch, CheckpointDoneEvent.event_dispatch) == ('immediate', 'stream')
    assert CheckpointDoneEvent().kind == 'checkpoint.done'


def test_events_round_trip_as_their_own_class_in_the_stream() -> None:
    events: list[AgentStreamEvent] = [
        OperationProgressEvent(done=1, total=3, tool_call_id='c1', tool_name='work'),
        CheckpointDoneEvent(capability_id='checkpointer', label='saved'),
    ]
    dumped = stream_adapter().dump_json(events)
    assert json.loads(dumped) == [
        {'name': 'operation_progress', 'tool_call_id': 'c1', 'tool_name': 'work', 'event_kind': 'custom', 'done': 1,
         'total': 3},
        {'kind': 'checkpoint.done', 'capability_id': 'checkpointer', 'tool_call_id': None, 'tool_name': None,
         'event_kind': 'capability', 'cancelled': False, 'label': 'saved'},
    ]  # fmt: skip
    assert stream_adapter().validate_json(dumped) == events


def test_an_event_no_class_here_has_loads_as_an_unknown_envelope_and_is_written_back_flat() -> None:
    wire = [
        {'name': 'elsewhere', 'tool_call_id': None, 'tool_name': None, 'event_kind': 'custom', 'step': 2, 'data': 'x'},
        {'kind': 'other.thing', 'capability_id': 'c', 'event_kind': 'capability'},
    ]
    with pytest.warns(UserWarning, match='Unknown event') as warned:
        loaded = stream_adapter().validate_python(wire)
    assert [str(w.message).split(':')[0] for w in warned] == [
        "Unknown event name 'elsewhere'",
        "Unknown event kind 'other.thing'",
    ]
    assert loaded[0] == UnknownCustomEvent(name='elsewhere', data={'step': 2, 'data': 'x'})
    assert repr(loaded[0]) == "UnknownCustomEvent(name='elsewhere', data={'step': 2, 'data': 'x'})"
    assert repr(loaded[1]) == "UnknownCapabilityEvent(kind='other.thing', capability_id='c')"
    assert loaded[1] == UnknownCapabilityEvent(kind='other.thing', capability_id='c')
    assert isinstance(loaded[0], UnknownCustomEvent)
    assert loaded[0].to_payload() == {'step': 2, 'data': 'x'}
    dumped = json.loads(stream_adapter().dump_json(loaded))
    assert dumped[0] == wire[0]
    assert dumped[1] == {'kind': 'other.thing', 'capability_id': 'c', 'tool_call_id': None, 'tool_name': None,
                         'event_kind': 'capability', 'data': None}  # fmt: skip


def test_event_objects_validate_by_their_tag() -> None:
    unknown = UnknownCustomEvent(name='elsewhere')
    progress = OperationProgressEvent(done=0, total=1)
    assert stream_adapter().validate_python([progress, unknown]) == [progress, unknown]
    with pytest.raises(ValidationError):
        TypeAdapter(CustomEvent).validate_python(CheckpointDoneEvent())


def test_the_base_classes_and_misdeclared_events_are_refused() -> None:
    with pytest.raises(UserError, match='`CustomEvent` is a base class'):
        CustomEvent(name='x')
    with pytest.raises(UserError, match='`CapabilityEvent` is a base class'):
        CapabilityEvent(kind='x.y')
    with pytest.raises(UserError, match='abstract=True'):
        RetryBase()

    @dataclass(kw_only=True)
    class Shared(CustomEvent, abstract=True):
        pass

    @dataclass(kw_only=True)
    class SharedCapabilityEvent(CapabilityEvent, abstract=True):
        pass

    with pytest.raises(UserError, match='abstract=True'):
        Shared()
    with pytest.raises(UserError, match='abstract=True'):
        SharedCapabilityEvent()
    with pytest.raises(UserError, match='needs a `name`'):
        UnknownCustomEvent()
    with pytest.raises(UserError, match="registered as 'operation_progress'"):
        OperationProgressEvent(name='other', done=1, total=1)
    with pytest.raises(UserError, match=re.escape("registered as 'checkpoint.done'")):
        CheckpointDoneEvent(kind='checkpoint.other')


def test_an_undecorated_subclass_cannot_be_made() -> None:
    class Undecorated(CustomEvent, name='tests.undecorated'):
        pass

    class UndecoratedCapabilityEvent(CapabilityEvent, namespace='tests', name='undecorated'):
        pass

    with pytest.raises(UserError, match='must be decorated with `@dataclass`'):
        Undecorated()
    with pytest.raises(UserError, match='must be decorated with `@dataclass`'):
        UndecoratedCapabilityEvent()
    del CUSTOM_EVENT_TYPES['tests.undecorated']
    del CAPABILITY_EVENT_TYPES['tests.undecorated']


def test_misdeclared_classes_are_refused_when_defined() -> None:
    class FieldsWithoutDataclass(CustomEvent, abstract=True):
        shared: int

    class SettingsOnly(CustomEvent, abstract=True):
        flag: ClassVar[bool] = True

    with pytest.raises(UserError, match='declares fields without being a dataclass'):

        @dataclass(kw_only=True)
        class Lost(FieldsWithoutDataclass):
            pass

    @dataclass(kw_only=True)
    class Kept(SettingsOnly, name='tests.kept'):
        pass

    assert Kept().name == 'tests.kept'
    with pytest.raises(UserError, match='no name to derive'):

        @dataclass(kw_only=True)
        class Event(CustomEvent):
            pass

    with pytest.raises(UserError, match='is reserved'):

        @dataclass(kw_only=True)
        class Reserved(CustomEvent, name='__unknown__'):
            pass

    with pytest.raises(UserError, match="Duplicate custom event name 'operation_progress'"):

        @dataclass(kw_only=True)
        class OperationProgress(CustomEvent):
            pass

    with pytest.raises(UserError, match='envelope: tool_call_id'):

        @dataclass(kw_only=True)
        class Shadowing(CustomEvent, name='tests.shadowing'):
            tool_call_id: str | None = 'mine'

    with pytest.raises(UserError, match='declares `ui`'):

        @dataclass(kw_only=True)
        class WithUi(CustomEvent, name='tests.with_ui'):
            ui: ClassVar[bool] = False

    del CUSTOM_EVENT_TYPES['tests.kept']


def test_misdeclared_capability_events_are_refused_when_defined() -> None:
    with pytest.raises(UserError, match="`dispatch` must be 'stream' or 'immediate'"):

        class BadDispatch(CapabilityEvent, namespace='tests', dispatch='later'):  # type: ignore[arg-type]
            pass

    class Fields:
        pass

    class FieldsBase(CapabilityEvent, abstract=True, namespace='tests'):
        shared: int

    with pytest.raises(UserError, match='declares fields without being a dataclass'):

        @dataclass(kw_only=True)
        class Lost(FieldsBase):
            pass

    with pytest.raises(UserError, match='invalid namespace'):

        class Dotted(CapabilityEvent, abstract=True, namespace='a..b'):
            pass

    with pytest.raises(UserError, match='needs a namespace'):

        @dataclass(kw_only=True)
        class Homeless(CapabilityEvent):
            pass

    with pytest.raises(UserError, match='invalid namespace'):

        @dataclass(kw_only=True)
        class Empty(CapabilityEvent, namespace=''):
            pass

    with pytest.raises(UserError, match='no name to derive'):

        @dataclass(kw_only=True)
        class Event(CapabilityEvent, namespace='tests'):
            pass

    with pytest.raises(UserError, match=re.escape("Duplicate capability event kind 'checkpoint.done'")):

        @dataclass(kw_only=True)
        class Done(CapabilityEvent, namespace='checkpoint'):
            pass

    with pytest.raises(UserError, match='envelope: data'):

        @dataclass(kw_only=True)
        class Shadowing(CapabilityEvent, namespace='tests', name='shadowing'):
            data: int = 0

    @dataclass(kw_only=True)
    class Mixed(Fields, CapabilityEvent, namespace='tests', name='mixed'):
        pass

    assert Mixed().kind == 'tests.mixed'
    del CAPABILITY_EVENT_TYPES['tests.mixed']


def test_a_class_defined_again_replaces_its_registration() -> None:
    made = []
    for _ in range(2):

        @dataclass(kw_only=True)
        class Again(CustomEvent, name='tests.again'):
            n: int = 0

        made.append(Again)
    assert CUSTOM_EVENT_TYPES['tests.again'] is made[1]
    del CUSTOM_EVENT_TYPES['tests.again']


def test_a_slots_dataclass_keeps_its_registration() -> None:
    @dataclass(kw_only=True, slots=True)
    class Slotted(CustomEvent, name='tests.slotted'):
        n: int = 0

    @dataclass(kw_only=True, slots=True)
    class SlottedCapabilityEvent(CapabilityEvent, namespace='tests', name='slotted'):
        n: int = 0

    assert CUSTOM_EVENT_TYPES['tests.slotted'] is Slotted
    assert Slotted(n=2).name == 'tests.slotted'
    assert CAPABILITY_EVENT_TYPES['tests.slotted'] is SlottedCapabilityEvent
    CUSTOM_EVENT_TYPES.pop('tests.slotted')
    CAPABILITY_EVENT_TYPES.pop('tests.slotted')


def test_a_subclass_post_init_cannot_skip_the_checks() -> None:
    @dataclass(kw_only=True)
    class Renaming(CustomEvent, name='tests.renaming'):
        def __post_init__(self) -> None:
            self.name = 'renamed'

    @dataclass(kw_only=True)
    class Child(Renaming, name='tests.renaming_child'):
        pass

    with pytest.raises(UserError, match=re.escape("registered as 'tests.renaming'")):
        Renaming()
    with pytest.raises(UserError, match=re.escape("registered as 'tests.renaming_child'")):
        Child()
    del CUSTOM_EVENT_TYPES['tests.renaming']
    del CUSTOM_EVENT_TYPES['tests.renaming_child']


def test_the_registries_count_their_changes() -> None:
    registry: EventRegistry[type[Any]] = EventRegistry()
    start = event_registry_version()
    registry['a'] = int
    registry['b'] = str
    del registry['a']
    assert registry.pop('b') is str
    assert registry.pop('missing', None) is None
    assert event_registry_version() == start + 5


# -- emitting in a run ------------------------------------------------------------------------------------------------


@dataclass
class Script:
    """A model answering with the given parts, one list per request, in whole or streamed."""

    replies: list[list[Any]]
    count: int = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.count += 1
        return ModelResponse(parts=self.replies[self.count - 1])

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for index, part in enumerate(self(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                yield {index: DeltaToolCall(name=part.tool_name, json_args='{}', tool_call_id=part.tool_call_id)}


def _model() -> FunctionModel:
    script = Script([[ToolCallPart('work', {}, 'c1')], [TextPart('ok')]])
    return FunctionModel(script, stream_function=script.stream)


async def test_a_tools_events_come_between_its_call_and_its_result_stamped_with_the_call() -> None:
    agent = Agent(_model())

    @agent.tool
    async def work(ctx: RunContext[None]) -> str:
        await ctx.emit(OperationProgressEvent(done=1, total=2))
        await ctx.emit(OperationProgressEvent(done=2, total=2, tool_call_id='own'))
        return 'done'

    async with agent.run_stream_events('go') as stream:
        events = [event async for event in stream]
    kinds = [type(event).__name__ for event in events]
    start = kinds.index('FunctionToolCallEvent')
    assert kinds[start : start + 4] == [
        'FunctionToolCallEvent', 'OperationProgressEvent', 'OperationProgressEvent', 'FunctionToolResultEvent',
    ]  # fmt: skip
    assert events[start + 1] == OperationProgressEvent(done=1, total=2, tool_call_id='c1', tool_name='work')
    assert events[start + 2] == OperationProgressEvent(done=2, total=2, tool_call_id='own')


async def test_the_code_driving_a_run_emits_into_the_next_nodes_stream() -> None:
    agent = Agent(_model())

    @agent.tool_plain
    def work() -> str:
        return 'done'

    seen: list[Any] = []
    async with agent.iter('go') as run:
        with pytest.raises(UserError, match='belongs to a capability'):
            await run.emit(CheckpointDoneEvent())  # type: ignore[type-var]
        async for node in run:
            if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                emitted = await run.emit(AuditEvent(entry=type(node).__name__))
                async with node.stream(run.ctx) as events:
                    seen.extend([event async for event in events])
        assert emitted.entry == 'CallToolsNode'
        with pytest.raises(UserError, match='after the run has ended'):
            await run.emit(AuditEvent(entry='late'))
    audits = [i for i, event in enumerate(seen) if isinstance(event, AuditEvent)]
    assert [seen[i].entry for i in audits] == ['ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode']
    assert audits[-1] == len(seen) - 1  # a node whose stream has nothing else gives it at its end
    assert isinstance(seen[audits[0] + 1], PartStartEvent)
    assert isinstance(seen[audits[1] + 1], FunctionToolCallEvent)
    assert isinstance(seen[audits[1] + 2], FunctionToolResultEvent)


async def test_emit_needs_a_running_agent() -> None:
    ctx = RunContext(deps=None, model=_model(), usage=None)  # type: ignore[arg-type]
    with pytest.raises(UserError, match='only available during an agent run'):
        await ctx.emit(AuditEvent(entry='x'))


def _stamp_owner(owner: str) -> Callable[[RunContext[None], ToolDefinition], Awaitable[ToolDefinition]]:
    async def prepare(ctx: RunContext[None], tool_def: ToolDefinition) -> ToolDefinition:
        return dataclasses.replace(tool_def, capability_id=owner)

    return prepare


@dataclass
class Checkpointer(AbstractCapability[None]):
    """A capability listening to checkpoint events (an immediate one it cancels) and to progress."""

    seen: list[Any] = field(default_factory=list)
    id: str | None = 'checkpointer'

    @on_event(CheckpointStartEvent)
    async def _start(self, ctx: RunContext[None], event: CheckpointStartEvent) -> None:
        self.seen.append(type(event).__name__)
        if type(event) is CheckpointStartEvent:
            event.cancelled = True

    @on_event(OperationProgressEvent)
    async def _progress(self, ctx: RunContext[None], event: OperationProgressEvent) -> None:
        self.seen.append(f'progress {event.done}')


async def test_a_capabilitys_tool_emits_its_events_and_listeners_decide_immediate_ones_before_emit_returns() -> None:
    checkpointer = Checkpointer()
    agent = Agent(_model(), capabilities=[checkpointer])
    answers: list[Any] = []

    @agent.tool(prepare=_stamp_owner('checkpointer'))
    async def work(ctx: RunContext[None]) -> str:
        start = await ctx.emit(CheckpointStartEvent())
        answers.append((start.capability_id, start.cancelled, list(checkpointer.seen)))
        await ctx.emit(OperationProgressEvent(done=1, total=1))
        await ctx.emit(CheckpointDoneEvent(label='x'))
        return 'done'

    result = await agent.run('go')
    assert result.output == 'ok'
    assert answers == [('checkpointer', True, ['CheckpointStartEvent'])]
    # the stream dispatch gives each other event once, at its place; the immediate one is not given again
    assert checkpointer.seen == ['CheckpointStartEvent', 'progress 1', 'CheckpointDoneEvent']


async def test_a_capability_event_must_belong_to_a_capability_of_the_run() -> None:
    agent = Agent(_model(), capabilities=[Checkpointer()])
    raised: list[str] = []

    @agent.tool(prepare=_stamp_owner('nobody'))
    async def work(ctx: RunContext[None]) -> str:
        for event in (CheckpointDoneEvent(), CheckpointDoneEvent(capability_id='nobody')):
            try:
                await ctx.emit(event)
            except UserError as error:
                raised.append(str(error).split(':')[0].split(',')[0])
        named = await ctx.emit(CheckpointDoneEvent(capability_id='checkpointer'))
        return str(named.capability_id)

    await agent.run('go')
    assert raised == [
        'A capability event belongs to a capability',
        "Capability event 'checkpoint.done' names capability 'nobody'",
    ]


async def test_a_tool_without_an_owner_cannot_emit_a_capability_event() -> None:
    agent = Agent(_model())
    raised: list[bool] = []

    @agent.tool
    async def work(ctx: RunContext[None]) -> str:
        with pytest.raises(UserError, match='belongs to a capability'):
            await ctx.emit(CheckpointDoneEvent())
        raised.append(True)
        return 'done'

    await agent.run('go')
    assert raised == [True]


@dataclass
class EverythingListener(AbstractCapability[None]):
    """Overrides `on_event`: every event, whatever its class."""

    kinds: list[str] = field(default_factory=list)

    async def on_event(self, ctx: RunContext[None], *, event: AgentStreamEvent) -> None:
        self.kinds.append(event.event_kind)


@dataclass
class BareListener(AbstractCapability[None]):
    kinds: list[str] = field(default_factory=list)

    @on_event
    async def _all(self, ctx: RunContext[None], event: AgentStreamEvent) -> None:
        self.kinds.append(event.event_kind)


class QuietListener(BareListener):
    _all = None  # type: ignore[assignment]  # redefined without the mark: no listener left


async def test_a_capability_without_listeners_passes_events_on_as_they_are() -> None:
    async def two() -> AsyncIterator[AgentStreamEvent]:
        yield AuditEvent(entry='a')
        yield AuditEvent(entry='b')

    ctx = RunContext(deps=None, model=_model(), usage=None)  # type: ignore[arg-type]
    passed = [event async for event in AbstractCapability[None]().wrap_run_event_stream(ctx, stream=two())]
    assert passed == [AuditEvent(entry='a'), AuditEvent(entry='b')]


async def test_listeners_get_the_events_they_take() -> None:
    everything, bare = EverythingListener(), BareListener()
    agent = Agent(_model(), capabilities=[everything, bare])

    @agent.tool_plain
    def work() -> str:
        return 'done'

    await agent.run('go')
    assert everything.kinds == bare.kinds
    assert 'function_tool_result' in everything.kinds
    assert (everything.has_on_event, bare.has_on_event, QuietListener().has_on_event) == (True, True, False)
    assert not QuietListener().overrides('wrap_run_event_stream')
    assert collect_on_event_methods(QuietListener) == ()


def test_a_listener_cannot_be_named_on_event() -> None:
    with pytest.raises((UserError, RuntimeError)) as raised:  # Python 3.11 wraps errors of `__set_name__`

        class Bad(AbstractCapability[None]):
            @on_event
            async def on_event(self, ctx: RunContext[None], event: AgentStreamEvent) -> None:  # type: ignore[override]
                pass

    error = raised.value if isinstance(raised.value, UserError) else raised.value.__cause__
    assert "cannot mark a method named 'on_event'" in str(error)

    assert isinstance(Checkpointer.__dict__['_start'], type(Checkpointer._start))


async def test_emit_outside_a_tool_checks_the_capability_and_reaches_only_listeners() -> None:
    buffer: list[Any] = []
    quiet, checkpointer = QuietListener(), Checkpointer()
    ctx = RunContext(
        deps=None,
        model=_model(),
        usage=None,  # type: ignore[arg-type]
        capabilities={'quiet': quiet, 'checkpointer': checkpointer},
        _event_stream_buffer=buffer,
    )
    with pytest.raises(UserError, match='belongs to a capability'):
        await ctx.emit(CheckpointDoneEvent())
    start = await ctx.emit(CheckpointStartEvent(capability_id='checkpointer'))
    assert start.cancelled
    assert (buffer, quiet.kinds, checkpointer.seen) == ([start], [], ['CheckpointStartEvent'])


# -- UI event streams -------------------------------------------------------------------------------------------------


def _ui_events() -> list[Any]:
    from ag_ui.core import StateSnapshotEvent

    from edgewise.agent.messages import ModelSettingsDeltaEvent, ModelSettingsDeltaPart
    from edgewise.agent.ui.vercel_ai.response_types import DataChunk

    @dataclass(kw_only=True)
    class Passthrough(CustomEvent, name='tests.passthrough'):
        chunk: Any

        def to_payload(self) -> Any:
            return self.chunk

    events: list[Any] = [
        OperationProgressEvent(done=1, total=2, tool_call_id='c1'),
        AuditEvent(entry='server only'),
        UnknownCustomEvent(name='elsewhere', data={'x': 1}),
        CheckpointDoneEvent(capability_id='checkpointer'),
        ModelSettingsDeltaEvent(part=ModelSettingsDeltaPart(settings={'thinking': 'low'})),
        Passthrough(chunk=StateSnapshotEvent(snapshot={'n': 1})),
        Passthrough(chunk=DataChunk(type='data-own', data=[1])),
    ]
    del CUSTOM_EVENT_TYPES['tests.passthrough']
    return events


async def _iterate(events: list[Any]) -> AsyncIterator[Any]:
    for event in events:
        yield event


async def test_ui_streams_forward_only_the_custom_events_a_frontend_may_see() -> None:
    from edgewise.agent.ui.ag_ui import AGUIEventStream
    from edgewise.agent.ui.vercel_ai import VercelAIEventStream

    ag_ui: AGUIEventStream[None, Any] = AGUIEventStream(thread_id='t', run_id='r')
    sent = [
        json.loads(ag_ui.encode_event(e).removeprefix('data: '))
        async for e in ag_ui.transform_stream(_iterate(_ui_events()))
    ]
    custom = [{k: v for k, v in e.items() if k in ('type', 'name', 'value', 'snapshot')} for e in sent[1:-1]]
    assert custom == [
        {'type': 'CUSTOM', 'name': 'operation_progress', 'value': {'done': 1, 'total': 2}},
        {'type': 'STATE_SNAPSHOT', 'snapshot': {'n': 1}},
        {
            'type': 'CUSTOM',
            'name': 'tests.passthrough',
            'value': {'type': 'data-own', 'id': None, 'data': [1], 'transient': None},
        },
    ]

    from edgewise.agent.ui import UIEventStream

    base = UIEventStream.handle_custom_event(ag_ui, OperationProgressEvent(done=0, total=0))
    assert [event async for event in base] == []  # a protocol that has no word for them sends nothing

    vercel: VercelAIEventStream[None, Any] = VercelAIEventStream()
    chunks = [chunk async for chunk in vercel.transform_stream(_iterate(_ui_events()))]
    data = [chunk.model_dump(exclude_none=True) for chunk in chunks if chunk.type.startswith('data-')]
    assert data == [
        {'type': 'data-operation_progress', 'data': {'done': 1, 'total': 2}},
        {'type': 'data-tests.passthrough', 'data': {'snapshot': {'n': 1}, 'type': 'STATE_SNAPSHOT'}},
        {'type': 'data-own', 'data': [1]},
    ]
