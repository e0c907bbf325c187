"""`wrap_run_event_stream` as the run calls it (run, run_stream, run_stream_events) and `ProcessEventStream`."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import AbstractCapability, Hooks, ProcessEventStream
from edgewise.agent.messages import AgentStreamEvent, FunctionToolCallEvent, FunctionToolResultEvent, PartStartEvent
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


@dataclass
class Seen(AbstractCapability[Any]):
    """Records the kinds of the events it passes on, under its name."""

    name: str = 'seen'
    log: list[str] = field(default_factory=list)

    async def wrap_run_event_stream(
        self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        async for event in stream:
            self.log.append(f'{self.name}:{type(event).__name__}')
            yield event


def _agent(*capabilities: AbstractCapability[Any]) -> Agent[None, str]:
    agent = Agent(TestModel(), capabilities=list(capabilities))

    @agent.tool_plain
    def double(x: int) -> int:
        return 2 * x

    return agent


EVENTS = [
    'PartStartEvent', 'PartEndEvent', 'FunctionToolCallEvent', 'FunctionToolResultEvent', 'PartStartEvent',
    'FinalResultEvent', 'PartDeltaEvent', 'PartDeltaEvent', 'PartEndEvent',
]  # fmt: skip


async def test_run_streams_its_nodes_through_the_hook_without_a_handler() -> None:
    seen = Seen()
    result = await _agent(seen).run('go')
    assert result.output == '{"double":0}'
    assert [e.split(':')[1] for e in seen.log] == EVENTS


async def test_the_handler_gets_the_wrapped_events() -> None:
    @dataclass
    class DropToolEvents(AbstractCapability[Any]):
        async def wrap_run_event_stream(
            self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
        ) -> AsyncIterable[AgentStreamEvent]:
            async for event in stream:
                if not isinstance(event, FunctionToolCallEvent | FunctionToolResultEvent):
                    yield event

    got: list[str] = []

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for event in events:
            got.append(type(event).__name__)

    await _agent(DropToolEvents()).run('go', event_stream_handler=handler)
    assert got == [e for e in EVENTS if not e.startswith('FunctionTool')]


async def test_what_the_handler_leaves_unread_still_goes_through_the_hook() -> None:
    seen = Seen()

    async def reads_nothing(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        return None

    await _agent(seen).run('go', event_stream_handler=reads_nothing)
    assert [e.split(':')[1] for e in seen.log] == EVENTS


async def test_several_hooks_nest_first_outermost() -> None:
    log: list[str] = []
    await _agent(Seen('outer', log), Seen('inner', log)).run('go')
    assert log[:2] == ['inner:PartStartEvent', 'outer:PartStartEvent']
    assert len(log) == 2 * len(EVENTS)


async def test_run_stream_events_yields_the_wrapped_events() -> None:
    @dataclass
    class Tag(AbstractCapability[Any]):
        async def wrap_run_event_stream(
            self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
        ) -> AsyncIterable[AgentStreamEvent]:
            async for event in stream:
                if isinstance(event, PartStartEvent):
                    yield event
                    yield event  # doubled

    kinds: list[str] = []
    async with _agent(Tag()).run_stream_events('go') as events:
        async for event in events:
            kinds.append(type(event).__name__)
    assert kinds == ['PartStartEvent'] * 4 + ['AgentRunResultEvent']


async def test_run_stream_passes_the_events_up_to_the_final_result() -> None:
    seen = Seen()
    async with _agent(seen).run_stream('go') as result:
        assert await result.get_output() == '{"double":0}'
    assert [e.split(':')[1] for e in seen.log] == EVENTS[:6]


async def test_process_event_stream_with_a_handler_sees_every_event() -> None:
    got: list[str] = []

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for event in events:
            got.append(type(event).__name__)

    seen = Seen()
    await _agent(ProcessEventStream(handler), seen).run('go')
    assert got == EVENTS
    assert [e.split(':')[1] for e in seen.log] == EVENTS  # passed on unchanged


async def test_process_event_stream_handler_that_stops_early_leaves_the_others_their_events() -> None:
    got: list[str] = []

    async def first_only(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for event in events:
            got.append(type(event).__name__)
            return

    seen = Seen()
    result = await _agent(ProcessEventStream(first_only), seen).run('go')
    assert result.output == '{"double":0}'
    assert got == ['PartStartEvent', 'FunctionToolCallEvent', 'PartStartEvent']  # one per node
    assert [e.split(':')[1] for e in seen.log] == EVENTS


async def test_process_event_stream_handler_error_fails_the_run() -> None:
    async def broken(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for _ in events:
            raise ValueError('handler broke')

    with pytest.raises(ValueError, match='handler broke'):
        await _agent(ProcessEventStream(broken)).run('go')


async def test_process_event_stream_with_a_generator_replaces_the_events() -> None:
    async def only_tool_events(
        ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterator[AgentStreamEvent]:
        async for event in events:
            if isinstance(event, FunctionToolCallEvent | FunctionToolResultEvent):
                yield event

    got: list[str] = []

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        async for event in events:
            got.append(type(event).__name__)

    await _agent(ProcessEventStream(only_tool_events)).run('go', event_stream_handler=handler)
    assert got == ['FunctionToolCallEvent', 'FunctionToolResultEvent']


def test_process_event_stream_is_not_in_agent_specs() -> None:
    assert ProcessEventStream.get_serialization_name() is None


async def test_hooks_event_functions_see_each_event() -> None:
    hooks = Hooks()
    seen: list[str] = []

    @hooks.on.event
    async def each(ctx: RunContext[None], event: AgentStreamEvent) -> AgentStreamEvent:
        seen.append(type(event).__name__)
        return event

    await _agent(hooks).run('go')
    assert seen == EVENTS


@dataclass
class NodeLog(AbstractCapability[Any]):
    """Logs the node hooks around each node, into `log`."""

    log: list[str] = field(default_factory=list)

    async def before_node_run(self, ctx: RunContext[Any], *, node: Any) -> Any:
        self.log.append(f'before {type(node).__name__}')
        return node

    async def wrap_node_run(self, ctx: RunContext[Any], *, node: Any, handler: Any) -> Any:
        self.log.append(f'enter {type(node).__name__}')
        result = await handler(node)
        self.log.append(f'exit {type(node).__name__}')
        return result

    async def after_node_run(self, ctx: RunContext[Any], *, node: Any, result: Any) -> Any:
        self.log.append(f'after {type(node).__name__}')
        return result


async def test_an_event_stream_handler_reads_each_node_inside_its_wrap_node_run_hooks() -> None:
    nodes = NodeLog()

    async def handler(ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]) -> None:
        kinds = [type(event).__name__ async for event in events]
        nodes.log.append(f'read {kinds[0]}..{kinds[-1]}' if kinds else 'read nothing')

    assert (await _agent(nodes).run('go', event_stream_handler=handler)).output == '{"double":0}'
    assert nodes.log == [
        'before UserPromptNode', 'enter UserPromptNode', 'exit UserPromptNode', 'after UserPromptNode',
        'before ModelRequestNode', 'enter ModelRequestNode', 'read PartStartEvent..PartEndEvent',
        'exit ModelRequestNode', 'after ModelRequestNode',
        'before CallToolsNode', 'enter CallToolsNode', 'read FunctionToolCallEvent..FunctionToolResultEvent',
        'exit CallToolsNode', 'after CallToolsNode',
        'before ModelRequestNode', 'enter ModelRequestNode', 'read PartStartEvent..PartEndEvent',
        'exit ModelRequestNode', 'after ModelRequestNode',
        'before CallToolsNode', 'enter CallToolsNode', 'read nothing', 'exit CallToolsNode', 'after CallToolsNode',
    ]  # fmt: skip
