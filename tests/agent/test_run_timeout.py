"""`timeout=` on the agent run methods (pydantic-ai 2.68): a run past it stops like a cancelled run, with
`RunTimedOut`, keeping what it completed. The models and tools here wait forever, so the deadline ends each test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone

import anyio
import pytest

from edgewise.agent import Agent, RunCancelled, RunContext, RunTimedOut
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, DeltaToolCalls, FunctionModel

pytestmark = pytest.mark.anyio


async def _never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    await anyio.sleep_forever()
    raise AssertionError('unreachable')


def _call_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('wait', {}, tool_call_id='c1')])
    return ModelResponse(parts=[TextPart('done')])


def _waiting_agent() -> Agent[None, str]:
    agent = Agent(FunctionModel(_call_then_answer))

    @agent.tool_plain
    async def wait() -> str:
        await anyio.sleep_forever()
        return 'never'

    return agent


async def test_a_run_past_its_timeout_raises_run_timed_out_with_what_it_completed() -> None:
    with pytest.raises(RunTimedOut) as caught:
        await _waiting_agent().run('hi', timeout=0.05)
    error = caught.value
    assert isinstance(error, RunCancelled)
    assert isinstance(error, TimeoutError)
    assert str(error) == 'The agent run timed out.'
    messages = error.all_messages()
    assert isinstance(messages[0], ModelRequest)
    assert isinstance(messages[1], ModelResponse)
    assert messages[1].parts == [ToolCallPart('wait', {}, tool_call_id='c1')]
    assert error.run_id is not None


async def test_a_model_request_past_the_runs_timeout_is_stopped_too() -> None:
    with pytest.raises(RunTimedOut) as caught:
        await Agent(FunctionModel(_never)).run('hi', timeout=0.05)
    assert [type(m) for m in caught.value.all_messages()] == [ModelRequest]


async def test_a_run_that_ends_in_time_is_not_affected() -> None:
    result = await Agent(FunctionModel(_call_then_answer)).run('hi', timeout=60)
    assert result.output == 'done'


async def _silent_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    await anyio.sleep_forever()
    yield 'never'


async def test_iter_takes_the_timeout() -> None:
    async def drive() -> None:
        async with _waiting_agent().iter('hi', timeout=0.05) as run:
            async for _ in run:
                pass

    with pytest.raises(RunTimedOut):
        await drive()


async def test_run_stream_takes_the_timeout() -> None:
    async def read() -> None:
        async with Agent(FunctionModel(stream_function=_silent_stream)).run_stream('hi', timeout=0.05) as streamed:
            await streamed.get_output()

    with pytest.raises(RunTimedOut):
        await read()


def test_run_sync_takes_the_timeout() -> None:
    with pytest.raises(RunTimedOut):
        _waiting_agent().run_sync('hi', timeout=0.05)


async def test_a_run_started_inside_a_timed_run_stops_at_the_outer_deadline() -> None:
    inner = Agent(FunctionModel(_never))
    outer = Agent(FunctionModel(_call_then_answer))

    @outer.tool_plain
    async def wait() -> str:
        return (await inner.run('go on')).output

    with pytest.raises(RunTimedOut) as caught:
        await outer.run('hi', timeout=0.05)
    assert str(caught.value) == 'The agent run timed out.'
    assert len(caught.value.all_messages()) == 2  # the prompt, and the call whose tool ran the inner agent


async def test_run_context_tells_the_deadline_and_the_time_left() -> None:
    seen: list[tuple[datetime | None, float | None]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('look', {}, tool_call_id='c1')])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(answer))

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append((ctx.deadline, ctx.remaining_time()))
        return 'ok'

    before = datetime.now(tz=timezone.utc)
    await agent.run('hi', timeout=60)
    await agent.run('hi')
    (deadline, left), (no_deadline, no_time) = seen
    assert deadline is not None
    assert before + timedelta(seconds=60) <= deadline <= datetime.now(tz=timezone.utc) + timedelta(seconds=60)
    assert left is not None
    assert 0 < left <= 60
    assert (no_deadline, no_time) == (None, None)


async def test_a_run_started_inside_a_run_inherits_its_deadline_unless_its_own_is_earlier() -> None:
    seen: list[datetime | None] = []
    inner = Agent(FunctionModel(_call_then_answer))

    @inner.tool
    def wait(ctx: RunContext[None]) -> str:
        seen.append(ctx.deadline)
        return 'ok'

    outer = Agent(FunctionModel(_call_then_answer))

    @outer.tool_plain(name='wait')
    async def delegate() -> str:
        await inner.run('inherit')
        await inner.run('earlier', timeout=1)
        await inner.run('later', timeout=3600)
        return 'ok'

    await outer.run('hi', timeout=60)
    await inner.run('alone')  # the outer run has ended: nothing is inherited
    inherited, earlier, later, alone = seen
    assert inherited is not None
    assert earlier is not None
    assert earlier < inherited
    assert later == inherited
    assert alone is None
