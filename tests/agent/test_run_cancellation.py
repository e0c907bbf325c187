"""Run cancellation (pydantic-ai 2.x): `CancellationToken`, `AgentRun.cancel()`, `RunContext.cancel()` and
`RunCancelled`; what a cancelled run keeps (`ModelRequest.state`, the half response, the finished tool results);
a cancellation from outside the run. Ordering comes from events, never from sleeps."""

from __future__ import annotations

import pickle
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import pytest

from edgewise.agent import (
    Agent,
    AgentRun,
    CancellationToken,
    RunCancelled,
    RunContext,
    UnexpectedModelBehavior,
    UserError,
    capture_run_messages,
)
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def _waiting_model(started: anyio.Event, calls: list[int] | None = None) -> FunctionModel:
    """A model whose request waits for ever once `started` is set."""

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if calls is not None:
            calls.append(len(messages))
        started.set()
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    return FunctionModel(model)


async def test_a_token_cancels_the_run_from_another_task_while_the_model_request_is_in_flight() -> None:
    started = anyio.Event()
    token = CancellationToken()
    agent = Agent(_waiting_model(started))
    caught: list[RunCancelled] = []

    async def run() -> None:
        with pytest.raises(RunCancelled) as info:
            await agent.run('hello', cancellation_token=token, metadata={'customer': 7})
        caught.append(info.value)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await started.wait()
        assert not token.cancelled
        token.cancel()
    assert token.cancelled
    (error,) = caught
    assert str(error) == 'The agent run was cancelled.'
    assert [type(m).__name__ for m in error.all_messages()] == ['ModelRequest']
    assert error.new_messages() == error.all_messages()
    assert error.metadata == {'customer': 7}
    assert error.run_id is not None
    assert error.conversation_id is not None
    assert error.usage == RunUsage()


async def test_a_token_cancelled_from_another_thread_cancels_the_run() -> None:
    started = anyio.Event()
    token = CancellationToken()
    agent = Agent(_waiting_model(started))
    async with anyio.create_task_group() as tg:

        async def cancel_from_a_thread() -> None:
            await started.wait()
            await anyio.to_thread.run_sync(token.cancel)

        tg.start_soon(cancel_from_a_thread)
        with pytest.raises(RunCancelled):
            await agent.run('hello', cancellation_token=token)


async def test_a_token_cancelled_before_the_run_stops_it_before_it_starts() -> None:
    calls: list[int] = []
    token = CancellationToken()
    token.cancel()
    token.cancel()  # again: nothing more
    with pytest.raises(RunCancelled) as info:
        await Agent(_waiting_model(anyio.Event(), calls)).run('hello', cancellation_token=token)
    assert info.value.all_messages() == []
    assert info.value.run_id is None
    assert calls == []
    assert repr(token) == 'CancellationToken(cancelled=True)'


async def test_one_token_cancels_every_run_it_was_given() -> None:
    started = [anyio.Event(), anyio.Event()]
    token = CancellationToken()
    outcomes: list[str] = []

    async def run(index: int) -> None:
        try:
            await Agent(_waiting_model(started[index])).run(str(index), cancellation_token=token)
        except RunCancelled:
            outcomes.append('cancelled')

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 0)
        tg.start_soon(run, 1)
        for event in started:
            await event.wait()
        token.cancel()
    assert outcomes == ['cancelled', 'cancelled']


async def test_every_entry_point_takes_a_token() -> None:
    agent = Agent(TestModel())
    for method in ('iter', 'run_stream', 'run_stream_events'):
        token = CancellationToken()
        token.cancel()

        async def enter(method: str, token: CancellationToken) -> None:
            async with getattr(agent, method)('hello', cancellation_token=token) as value:
                if method == 'run_stream_events':  # pragma: no branch
                    async for _ in value:  # pragma: no cover
                        pass

        with pytest.raises(RunCancelled):
            await enter(method, token)
    token = CancellationToken()
    result = await agent.run('hello', cancellation_token=token)
    token.cancel()  # after the run: nothing happens
    assert result.output == 'success (no tool calls)'


def _parallel_tools_agent(sync_stop: bool = False) -> tuple[Agent[None, str], list[list[ModelMessage]]]:
    """The model calls `fast` and `stop` together; `stop` cancels the run once `fast` has finished."""
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart('fast', {}, tool_call_id='c1'), ToolCallPart(stop_name, {}, tool_call_id='c2')]
            )
        return ModelResponse(parts=[TextPart('done')])

    agent: Agent[None, str] = Agent(FunctionModel(model))
    fast_done = anyio.Event()
    stop_name = 'stop_now' if sync_stop else 'stop_later'

    @agent.tool_plain
    async def fast() -> str:
        fast_done.set()
        return 'fast result'

    if sync_stop:

        @agent.tool(sequential=True)
        def stop_now(ctx: RunContext[object]) -> str:  # runs in a worker thread, after `fast`
            ctx.cancel()
            return 'dropped'

    else:

        @agent.tool
        async def stop_later(ctx: RunContext[object]) -> str:
            await fast_done.wait()
            ctx.cancel()
            await anyio.sleep_forever()  # the cancellation reaches the tool at its next checkpoint
            return 'never'  # pragma: no cover

    return agent, seen


async def test_a_tool_cancels_the_run_and_the_finished_result_is_kept_for_a_new_run() -> None:
    agent, seen = _parallel_tools_agent()
    with capture_run_messages() as captured, pytest.raises(RunCancelled) as info:
        await agent.run('go')

    error = info.value
    messages = error.all_messages()
    assert messages == captured
    assert messages is not captured
    assert [(type(m).__name__, m.state) for m in messages] == [
        ('ModelRequest', 'complete'),
        ('ModelResponse', 'complete'),
        ('ModelRequest', 'interrupted'),
    ]
    interrupted = messages[-1]
    assert isinstance(interrupted, ModelRequest)
    assert [(p.tool_name, p.content) for p in interrupted.parts if isinstance(p, ToolReturnPart)] == [
        ('fast', 'fast result')
    ]
    assert error.response is messages[1]
    assert error.usage.requests == 1
    assert "state='interrupted'" in repr(interrupted)

    restored = ModelMessagesTypeAdapter.validate_json(error.all_messages_json())
    assert restored == messages
    result = await agent.run('wrap up', message_history=restored)
    assert result.output == 'done'
    sent = seen[-1][-1]
    assert isinstance(sent, ModelRequest)
    returns = [p for p in sent.parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_name, p.content, p.outcome) for p in returns] == [
        ('fast', 'fast result', 'success'),
        ('stop_later', 'The tool call was interrupted before a result was produced.', 'interrupted'),
    ]
    assert returns[1].metadata == {'pydantic_ai_synthesized_tool_return': True}
    assert isinstance(sent.parts[-1], UserPromptPart)


async def test_a_history_ending_in_an_interrupted_request_is_sent_again_without_a_new_prompt() -> None:
    agent, seen = _parallel_tools_agent()
    with pytest.raises(RunCancelled) as info:
        await agent.run('go')
    result = await agent.run(message_history=info.value.all_messages())
    assert result.output == 'done'
    assert [p.tool_name for p in seen[-1][-1].parts if isinstance(p, ToolReturnPart)] == ['fast', 'stop_later']


async def test_a_sync_tool_cancels_the_run_from_its_worker_thread() -> None:
    agent, _ = _parallel_tools_agent(sync_stop=True)
    with pytest.raises(RunCancelled) as info:
        await agent.run('go')
    last = info.value.all_messages()[-1]  # the results built, never sent: kept as interrupted
    assert isinstance(last, ModelRequest)
    assert last.state == 'interrupted'
    assert [p.tool_name for p in last.parts if isinstance(p, ToolReturnPart)] == ['fast', 'stop_now']


async def test_run_context_cancel_outside_a_run_is_a_user_error() -> None:
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    with pytest.raises(UserError, match='`cancel` is only available during an agent run'):
        ctx.cancel()


async def test_agent_run_cancel_from_another_task_while_a_tool_runs() -> None:
    started = anyio.Event()
    agent = Agent(TestModel())
    stopped: list[str] = []

    @agent.tool_plain
    async def slow() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append('slow')
        return 'never'  # pragma: no cover

    runs: list[AgentRun[object, str]] = []
    seen_inside: list[bool] = []

    async def iterate() -> None:
        async with agent.iter('go') as agent_run:
            runs.append(agent_run)
            try:
                async for _ in agent_run:
                    pass
            except anyio.get_cancelled_exc_class():
                seen_inside.append(True)  # the code driving the run sees the cancellation itself
                raise

    async def drive() -> None:
        with pytest.raises(RunCancelled):
            await iterate()

    async with anyio.create_task_group() as tg:
        tg.start_soon(drive)
        await started.wait()
        runs[0].cancel()
        runs[0].cancel()  # again: nothing more
    assert stopped == ['slow']
    assert seen_inside == [True]
    assert runs[0].result is None


async def test_cancel_after_the_run_reached_its_end_inside_the_block_still_ends_it_cancelled() -> None:
    agent = Agent(TestModel())

    async def run_then_cancel() -> None:
        async with agent.iter('go') as agent_run:
            async for _ in agent_run:
                pass
            agent_run.cancel()
            with pytest.raises(StopAsyncIteration):
                await agent_run.__anext__()
            assert agent_run.result is not None

    with pytest.raises(RunCancelled) as info:
        await run_then_cancel()
    assert [type(m).__name__ for m in info.value.all_messages()] == ['ModelRequest', 'ModelResponse']


async def test_cancel_after_the_block_is_a_no_op() -> None:
    agent = Agent(TestModel())
    async with agent.iter('go') as agent_run:
        async for _ in agent_run:
            pass
    agent_run.cancel()
    await anyio.lowlevel.checkpoint()  # a cancellation would be delivered here
    assert agent_run.result is not None


async def test_a_cancellation_asked_between_steps_stops_the_next_step() -> None:
    calls: list[int] = []
    agent = Agent(_waiting_model(anyio.Event(), calls))

    async def cancel_between_steps() -> None:
        async with agent.iter('go') as agent_run:
            node = await agent_run.next()  # the user prompt: the model request is next
            assert Agent.is_model_request_node(node)
            agent_run.cancel()
            await agent_run.next(node)  # pragma: no cover

    with pytest.raises(RunCancelled):
        await cancel_between_steps()
    assert calls == []


async def test_a_capability_can_cancel_the_run_in_for_run_before_any_model_request() -> None:
    calls: list[int] = []

    class CancelsInForRun(AbstractCapability[Any]):
        async def for_run(self, ctx: RunContext[Any]) -> CancelsInForRun:
            ctx.cancel()
            return self

    agent = Agent(_waiting_model(anyio.Event(), calls), capabilities=[CancelsInForRun()])
    with pytest.raises(RunCancelled) as info:
        await agent.run('hello')
    assert info.value.all_messages() == []
    assert calls == []


async def test_a_capability_cannot_turn_a_cancellation_into_a_result() -> None:
    class Recovers(AbstractCapability[Any]):
        async def after_run(self, ctx: RunContext[Any], *, result: Any) -> Any:
            ctx.cancel()
            try:
                await anyio.lowlevel.checkpoint()
            except anyio.get_cancelled_exc_class():
                pass  # swallowed: the run still ends cancelled
            return result

    with pytest.raises(RunCancelled):
        await Agent(TestModel(), capabilities=[Recovers()]).run('go')


async def test_an_outside_cancellation_is_not_turned_into_run_cancelled_and_carries_the_run_state() -> None:
    started = anyio.Event()
    agent = Agent(_waiting_model(started))
    carried: list[RunCancelled | None] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_outside() -> None:
                await started.wait()
                scope.cancel()

            tg.start_soon(cancel_outside)
            try:
                await agent.run('hello')
            except anyio.get_cancelled_exc_class() as exc:
                carried.append(RunCancelled.from_cancellation(exc))
                raise
    assert scope.cancelled_caught
    (state,) = carried
    assert state is not None
    assert state.message == 'The agent run was cancelled from outside.'
    assert [type(m).__name__ for m in state.all_messages()] == ['ModelRequest']


async def test_streamed_response_cut_by_a_cancellation_is_kept_as_interrupted_with_its_usage() -> None:
    streaming = anyio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'hello '
        streaming.set()
        await anyio.sleep_forever()
        yield 'never'  # pragma: no cover

    agent = Agent(FunctionModel(stream_function=stream))
    runs: list[AgentRun[object, str]] = []

    async def stream_the_run() -> None:
        async with agent.iter('go') as agent_run:
            runs.append(agent_run)
            async for node in agent_run:
                if Agent.is_model_request_node(node):
                    async with node.stream(agent_run.ctx) as events:
                        async for _ in events:
                            pass

    async def drive() -> None:
        with pytest.raises(RunCancelled) as info:
            await stream_the_run()
        error = info.value
        last = error.all_messages()[-1]
        assert isinstance(last, ModelResponse)
        assert (last.state, last.parts) == ('interrupted', [TextPart('hello ')])
        assert error.usage.requests == 1
        assert error.usage.output_tokens == last.usage.output_tokens > 0

    with capture_run_messages() as captured:
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            await streaming.wait()
            runs[0].cancel()
    assert captured[-1].state == 'interrupted'


async def test_a_failing_tool_leaves_the_finished_results_in_an_interrupted_request() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[ToolCallPart('ok', {}, tool_call_id='a'), ToolCallPart('boom', {}, tool_call_id='b')]
        )

    agent = Agent(FunctionModel(model))
    ok_done = anyio.Event()

    @agent.tool_plain
    async def ok() -> str:
        ok_done.set()
        return 'fine'

    @agent.tool_plain
    async def boom() -> str:
        await ok_done.wait()
        raise UnexpectedModelBehavior('broken')

    with capture_run_messages() as captured, pytest.raises(UnexpectedModelBehavior):
        await agent.run('go')
    last = captured[-1]
    assert isinstance(last, ModelRequest)
    assert last.state == 'interrupted'
    assert [p.content for p in last.parts if isinstance(p, ToolReturnPart)] == ['fine']


async def test_a_response_cut_with_tool_calls_is_closed_when_a_new_prompt_follows() -> None:
    cut = ModelResponse(parts=[ToolCallPart('look', {}, tool_call_id='c1')], state='interrupted')
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart('ok')])

    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('first')]), cut]
    result = await Agent(FunctionModel(model)).run('again', message_history=history)
    assert result.output == 'ok'
    closing = seen[0][-1]
    assert isinstance(closing, ModelRequest)
    assert [(type(p).__name__, getattr(p, 'outcome', None)) for p in closing.parts] == [
        ('ToolReturnPart', 'interrupted'),
        ('UserPromptPart', None),
    ]


async def test_run_sync_works_in_a_worker_thread_of_a_running_loop() -> None:
    result = await anyio.to_thread.run_sync(lambda: Agent(TestModel()).run_sync('hello'))
    assert result.output == 'success (no tool calls)'


async def test_run_sync_is_cancelled_by_a_token_from_the_loop_thread() -> None:
    started = threading.Event()

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    token = CancellationToken()
    agent = Agent(FunctionModel(model))
    outcome: list[BaseException] = []

    def run_in_thread() -> None:
        try:
            agent.run_sync('hello', cancellation_token=token)
        except RunCancelled as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, run_in_thread)
        await anyio.to_thread.run_sync(started.wait)
        token.cancel()
    assert [type(e) for e in outcome] == [RunCancelled]


def test_run_cancelled_keeps_its_state_through_pickle_and_reads_like_a_result() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')]), ModelResponse(parts=[TextPart('x')])]
    error = RunCancelled(
        'cancelled', messages=messages, new_message_index=1, usage=RunUsage(requests=1), metadata={'a': 1},
        run_id='r', conversation_id='c',
    )  # fmt: skip
    restored = pickle.loads(pickle.dumps(error))
    assert restored.all_messages() == messages
    assert restored.new_messages() == messages[1:]
    assert restored.new_messages_json() == ModelMessagesTypeAdapter.dump_json(messages[1:])
    assert (restored.usage, restored.metadata, restored.run_id, restored.conversation_id) == (
        RunUsage(requests=1), {'a': 1}, 'r', 'c'
    )  # fmt: skip
    assert restored.timestamp == messages[1].timestamp
    assert RunCancelled.from_cancellation(restored) is restored
    assert RunCancelled.from_cancellation(ValueError('other')) is None
    chained = RuntimeError('outer')
    chained.__context__ = ExceptionGroup('group', [ValueError('inner')])
    assert RunCancelled.from_cancellation(chained) is None

    empty = RunCancelled('cancelled')
    assert (empty.all_messages(), empty.usage, empty.run_id) == ([], RunUsage(), None)
    with pytest.raises(ValueError, match='No response found in the message history'):
        _ = empty.response


def test_a_request_stored_before_requests_had_a_state_loads_as_complete() -> None:
    stored = (
        b'[{"parts":[{"content":"hi","timestamp":"2026-01-01T00:00:00Z","part_kind":"user-prompt"}],"kind":"request"}]'
    )
    (request,) = ModelMessagesTypeAdapter.validate_json(stored)
    assert isinstance(request, ModelRequest)
    assert request.state == 'complete'
    assert "state='interrupted'" not in repr(request)


async def test_a_cancelled_stored_run_stays_stored_where_it_stopped_and_resume_goes_on_from_there(
    tmp_path: Any,
) -> None:
    from edgewise.graph.persistence.sqlite import SqliteStatePersistence

    agent = Agent(TestModel(call_tools=['stop']))
    calls: list[str] = []

    @agent.tool
    async def stop(ctx: RunContext[object]) -> str:
        calls.append(ctx.tool_call_id or '')
        if len(calls) == 1:
            ctx.cancel()
            await anyio.sleep_forever()
        return 'ok'

    db = tmp_path / 'runs.db'
    with pytest.raises(RunCancelled) as info:
        await agent.run('go', persistence=SqliteStatePersistence(db, 'r'))
    assert info.value.all_messages()[-1].kind == 'response'  # the call was cut: no result kept
    result = await agent.resume(SqliteStatePersistence(db, 'r'))  # the cancelled tool call runs again
    assert result.output == '{"stop":"ok"}'
    assert calls[0] == calls[1]
    assert [type(m).__name__ for m in result.all_messages()] == [
        'ModelRequest', 'ModelResponse', 'ModelRequest', 'ModelResponse'
    ]  # fmt: skip


async def test_a_sub_agent_cancelled_inside_a_tool_ends_the_parent_with_the_parent_history() -> None:
    inner = Agent(TestModel(call_tools=['halt']))

    @inner.tool
    async def halt(ctx: RunContext[object]) -> str:
        ctx.cancel()
        await anyio.sleep_forever()
        return 'never'  # pragma: no cover

    outer = Agent(TestModel(call_tools=['delegate']))

    @outer.tool_plain
    async def delegate() -> str:
        result = await inner.run('inner prompt')
        return result.output  # pragma: no cover

    with pytest.raises(RunCancelled) as info:
        await outer.run('outer prompt')
    error = info.value
    assert error.message == 'The agent run was cancelled by a nested run.'
    first = error.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert [p.content for p in first.parts if isinstance(p, UserPromptPart)] == ['outer prompt']
    assert isinstance(error.__cause__, RunCancelled)


async def test_a_tool_failing_after_a_barrier_keeps_the_results_of_the_calls_before_it() -> None:
    def two_sequential_calls(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ToolCallPart('first', {'n': 6}, tool_call_id='c1'),
                ToolCallPart('second', {'n': 6}, tool_call_id='c2'),
            ]
        )

    agent = Agent(FunctionModel(two_sequential_calls))

    @agent.tool_plain(sequential=True)
    def first(n: int) -> int:
        return n**3

    @agent.tool_plain(sequential=True)
    def second(n: int) -> int:
        raise RuntimeError('missing density')

    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='missing density'):
        await agent.run('go')
    interrupted = messages[-1]
    assert isinstance(interrupted, ModelRequest)
    assert interrupted.state == 'interrupted'
    assert [(p.tool_name, p.content) for p in interrupted.parts if isinstance(p, ToolReturnPart)] == [('first', 216)]


async def test_a_batch_failing_after_a_barrier_keeps_the_earlier_results_before_its_own() -> None:
    def calls(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ToolCallPart('barrier', {}, tool_call_id='c1'),
                ToolCallPart('fine', {}, tool_call_id='c2'),
                ToolCallPart('broken', {}, tool_call_id='c3'),
            ]
        )

    agent = Agent(FunctionModel(calls))
    fine_done = anyio.Event()

    @agent.tool_plain(sequential=True)
    def barrier() -> str:
        return 'first'

    @agent.tool_plain
    async def fine() -> str:
        fine_done.set()
        return 'second'

    @agent.tool_plain
    async def broken() -> str:
        await fine_done.wait()  # `fine` has finished when this call fails
        raise RuntimeError('broken')

    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='broken'):
        await agent.run('go')
    interrupted = messages[-1]
    assert isinstance(interrupted, ModelRequest)
    assert interrupted.state == 'interrupted'
    assert [(p.tool_name, p.content) for p in interrupted.parts if isinstance(p, ToolReturnPart)] == [
        ('barrier', 'first'),
        ('fine', 'second'),
    ]
