"""`AgentRunEvents`, the handle `run_stream_events` gives: the run starts with the first event asked for, and the
handle cancels the run and reads its messages, usage and result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import pytest

import edgewise.agent
from edgewise.agent import Agent, AgentRunEvents, AgentRunResultEvent, RunContext
from edgewise.agent.agent import AgentRunEvents as AgentRunEventsOfAgentModule
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.exceptions import RunCancelled, UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, FunctionModel
from edgewise.agent.result import AgentEventStream

pytestmark = pytest.mark.anyio

requests: list[int] = []


async def say_done(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    requests.append(len(messages))
    for piece in ('all ', 'done'):
        yield piece


async def call_wait(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    requests.append(len(messages))
    if len(messages) == 1:
        yield {0: DeltaToolCall(name='wait', json_args='{}')}
        return
    yield 'waited'


def waiting_agent(started: anyio.Event) -> Agent[None, str]:
    agent = Agent(FunctionModel(stream_function=call_wait))

    @agent.tool_plain
    async def wait() -> str:
        started.set()
        await anyio.Event().wait()  # until the run is cancelled
        raise AssertionError('not reached')

    return agent


async def drain(events: AgentRunEvents[str]) -> None:
    async for _ in events:
        pass


@pytest.fixture(autouse=True)
def no_requests() -> None:
    requests.clear()


def test_it_is_importable_where_pydantic_ai_has_it() -> None:
    assert edgewise.agent.AgentRunEvents is AgentRunEvents
    assert AgentRunEventsOfAgentModule is AgentRunEvents
    assert AgentEventStream is AgentRunEvents


async def test_run_stream_events_hands_out_the_handle() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        assert isinstance(events, AgentRunEvents)
        kinds = [type(event).__name__ async for event in events]
    assert kinds == ['PartStartEvent', 'FinalResultEvent', 'PartDeltaEvent', 'PartEndEvent', 'AgentRunResultEvent']


async def test_entering_without_iterating_never_starts_the_run() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        pass
    assert requests == []
    assert events.result is None
    with pytest.raises(UserError, match=r'The run has not started; iterate the events first\.'):
        events.all_messages()


async def test_the_state_is_read_only_once_the_run_started() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        with pytest.raises(UserError, match='The run has not started'):
            events.new_messages()
        with pytest.raises(UserError, match='The run has not started'):
            _ = events.usage
        last = [event async for event in events][-1]
    assert isinstance(last, AgentRunResultEvent)
    assert events.result is last.result
    assert events.all_messages() == last.result.all_messages()
    assert events.new_messages() == last.result.new_messages()
    assert [type(m) for m in events.all_messages()] == [ModelRequest, ModelResponse]
    assert events.usage.requests == 1


async def test_the_messages_are_read_while_the_run_goes() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        await events.__anext__()
        assert [type(m) for m in events.all_messages()] == [ModelRequest]
        assert events.result is None


async def test_cancel_mid_iteration_ends_the_run_with_run_cancelled() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        first = await events.__anext__()
        events.cancel()
        with pytest.raises(RunCancelled):
            await drain(events)
    assert type(first).__name__ == 'PartStartEvent'
    assert type(events.all_messages()[0]) is ModelRequest
    assert events.result is None


async def test_cancel_before_iterating_never_starts_the_run() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        events.cancel()
        with pytest.raises(RunCancelled, match=r'^The agent run was cancelled\.$') as caught:
            await events.__anext__()
    assert caught.value.all_messages() == []
    assert requests == []
    assert events.result is None
    with pytest.raises(UserError, match='The run has not started'):
        events.all_messages()


async def test_cancel_after_the_result_changes_nothing() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        async for _ in events:
            pass
        result = events.result
        events.cancel()
    assert result is not None
    assert result.output == 'all done'
    assert events.result is result


async def test_cancel_from_another_task_stops_a_run_waiting_in_a_tool() -> None:
    started = anyio.Event()
    outcome: list[BaseException] = []
    async with waiting_agent(started).run_stream_events('go') as events:

        async def consume() -> None:
            try:
                async for _ in events:
                    pass
            except RunCancelled as error:
                outcome.append(error)

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await started.wait()
            events.cancel()
    assert len(outcome) == 1
    assert [type(m) for m in events.all_messages()][:2] == [ModelRequest, ModelResponse]
    assert events.result is None


async def test_cancel_from_a_worker_thread_stops_the_run() -> None:
    started = anyio.Event()
    async with waiting_agent(started).run_stream_events('go') as events, anyio.create_task_group() as tg:

        async def cancel_once_started() -> None:
            await started.wait()
            await anyio.to_thread.run_sync(events.cancel)

        tg.start_soon(cancel_once_started)
        with pytest.raises(RunCancelled):
            async for _ in events:
                pass
    assert events.result is None


async def test_a_cancel_asked_while_the_run_is_entered_reaches_it() -> None:
    @dataclass
    class CancelOnEntry(AbstractCapability[None]):
        async def for_run(self, ctx: RunContext[None]) -> AbstractCapability[None]:
            events.cancel()  # the handle knows of no run yet: the run is being entered
            return self

    agent = Agent(FunctionModel(stream_function=say_done), capabilities=[CancelOnEntry()])
    async with agent.run_stream_events('go') as events:
        with pytest.raises(RunCancelled):
            async for _ in events:
                pass
    assert requests == []


async def test_cancel_reaches_a_run_whose_before_run_hook_blocks() -> None:
    blocked = anyio.Event()

    @dataclass
    class BlockingBeforeRun(AbstractCapability[None]):
        async def before_run(self, ctx: RunContext[None]) -> None:
            blocked.set()
            await anyio.Event().wait()  # until the run is cancelled

    agent = Agent(FunctionModel(stream_function=say_done), capabilities=[BlockingBeforeRun()])
    outcome: list[RunCancelled] = []
    async with agent.run_stream_events('go') as events:

        async def consume() -> None:
            try:
                await drain(events)
            except RunCancelled as error:
                outcome.append(error)

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await blocked.wait()
            events.cancel()
    (error,) = outcome
    assert error.all_messages() == []
    assert requests == []


async def test_leaving_early_gives_no_result() -> None:
    agent = Agent(FunctionModel(stream_function=say_done))
    async with agent.run_stream_events('go') as events:
        async for _ in events:
            break
    assert events.result is None


async def test_a_run_nested_in_a_tool_keeps_its_own_handle() -> None:
    inner = Agent(FunctionModel(stream_function=say_done))
    outer = Agent(FunctionModel(stream_function=call_wait))
    inner_handles: list[AgentRunEvents[str]] = []

    @outer.tool_plain
    async def wait() -> str:
        async with inner.run_stream_events('inner') as inner_events:
            inner_handles.append(inner_events)
            async for _ in inner_events:
                pass
        assert inner_events.result is not None
        return inner_events.result.output

    async with outer.run_stream_events('outer') as events:
        async for _ in events:
            pass
    assert events.result is not None
    assert events.result.output == 'waited'
    assert len(events.all_messages()) == 4
    (inner_events,) = inner_handles
    assert len(inner_events.all_messages()) == 2
    assert inner_events.result is not None
    assert inner_events.result.output == 'all done'
