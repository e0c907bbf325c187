"""Durable agent runs: stored by a file, SQLite or PostgreSQL persistence, resumed by `Agent.resume`.

A "crash" here is a `BaseException` raised by a tool (the node is left unfinished, as a killed process leaves
it); tests/agent/test_durable_crash.py kills real processes.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, ModelRetry, RunContext, UserError
from edgewise.agent.agent._resume import fold_history
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.graph import GraphRuntimeError
from edgewise.graph.exceptions import RunInProgressError
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ..graph.persistence.conftest import DURABLE, Store, opened_store
from ._helpers import as_written_before_response_in_node

pytestmark = pytest.mark.anyio


class Crash(BaseException):
    """Stands for the process dying: not an `Exception`, so the node is left to run again."""


@pytest.fixture(params=DURABLE)
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with opened_store(request.param, tmp_path) as made:
        yield made


def by_position(*responses: Sequence[ModelResponsePart], log: list[int] | None = None) -> FunctionModel:
    """A model answering the n-th request of a conversation with `responses[n]` (whatever process asks)."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = sum(isinstance(m, ModelResponse) for m in messages)
        if log is not None:
            log.append(n)
        return ModelResponse(list(responses[n]))

    return FunctionModel(answer)


def three_calls_then(text: str) -> list[Sequence[ModelResponsePart]]:
    return [[ToolCallPart('work', {'n': n}, f'call-{n}') for n in (1, 2, 3)], [TextPart(text)]]


async def test_a_resumed_step_runs_only_the_tool_calls_that_had_not_finished(durable: Store) -> None:
    requests: list[int] = []
    ran: list[str] = []
    crash = [True]
    agent = Agent(by_position(*three_calls_then('done'), log=requests), deps_type=str)

    @agent.tool(sequential=True)
    def work(ctx: RunContext[str], n: int) -> str:
        ran.append(f'{ctx.tool_call_id} {ctx.deps}')
        if n == 3 and crash[0]:
            raise Crash
        return f'{n} done'

    with pytest.raises(Crash):
        await agent.run('go', deps='first', persistence=durable('order-42'))
    assert ran == ['call-1 first', 'call-2 first', 'call-3 first']
    crash[0] = False

    result = await agent.resume(durable('order-42'), deps='second')

    assert result.output == 'done'
    assert ran == ['call-1 first', 'call-2 first', 'call-3 first', 'call-3 second']
    assert requests == [0, 1]  # the first response was stored: asked once; then the request after the tools
    messages = result.all_messages()
    assert [type(m).__name__ for m in messages] == ['ModelRequest', 'ModelResponse', 'ModelRequest', 'ModelResponse']
    returns = messages[2].parts
    assert [(p.tool_call_id, p.content) for p in returns] == [  # type: ignore[union-attr]
        ('call-1', '1 done'),
        ('call-2', '2 done'),
        ('call-3', '3 done'),
    ]
    assert result.new_messages() == messages
    assert result.usage.requests == 2
    assert result.usage.tool_calls == 3


@pytest.mark.parametrize('written_by', ['this version', 'an earlier version'])
async def test_a_run_resumes_from_snapshots_holding_the_response_once_or_as_earlier_versions_did(
    tmp_path: Path, written_by: str
) -> None:
    # This version stores a step's response in its `CallToolsNode` only (`response_in_node`); earlier ones stored
    # it in the state's messages too. Both resume with the same history, the response once.
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('earlier')]), ModelResponse([TextPart('ok')])]
    crash = [True]
    agent = Agent(by_position(*([TextPart('x')],), *three_calls_then('done')))

    @agent.tool_plain(sequential=True)
    def work(n: int) -> int:
        if n == 2 and crash[0]:
            raise Crash
        return n

    db = tmp_path / 'runs.db'
    with pytest.raises(Crash):
        await agent.run('go', message_history=history, persistence=SqliteStatePersistence(db, 'r'))
    if written_by == 'an earlier version':
        assert as_written_before_response_in_node(db, 'r') == 1
    crash[0] = False
    async with SqliteStatePersistence(db, 'r') as persistence:
        result = await agent.resume(persistence)

    assert result.output == 'done'
    messages = result.all_messages()
    assert messages[:2] == history
    assert [(type(m).__name__, [p.part_kind for p in m.parts]) for m in messages[2:]] == [
        ('ModelRequest', ['user-prompt']),
        ('ModelResponse', ['tool-call', 'tool-call', 'tool-call']),
        ('ModelRequest', ['tool-return', 'tool-return', 'tool-return']),
        ('ModelResponse', ['text']),
    ]
    assert result.new_messages() == messages[2:]


async def test_a_response_a_hook_rejects_is_stored_in_the_history_before_the_retry(tmp_path: Path) -> None:
    # The rejected response is recorded, but the node that follows is the retry's `ModelRequestNode`, which does not
    # hold it: the snapshot's messages must (see `GraphAgentState.response_in_node`).
    class RejectFirst(AbstractCapability[None]):
        rejected = False

        async def after_model_request(
            self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
        ) -> ModelResponse:
            if not self.rejected:
                self.rejected = True
                raise ModelRetry('say it again')
            return response

    agent = Agent(TestModel(custom_output_text='hello'), capabilities=[RejectFirst()])
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        result = await agent.run('go', persistence=persistence)
        stored, _, _ = fold_history(await persistence.load_all())

    assert [type(p).__name__ for m in stored for p in m.parts] == [
        'UserPromptPart', 'TextPart', 'RetryPromptPart', 'TextPart'
    ]  # fmt: skip
    assert stored == result.all_messages()


async def test_a_resumed_run_goes_on_after_the_history_it_was_given(durable: Store) -> None:
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('earlier')]), ModelResponse([TextPart('ok')])]
    crash = [True]
    agent = Agent(by_position(*([TextPart('x')],), *three_calls_then('done')))

    @agent.tool_plain
    def work(n: int) -> int:
        if crash[0]:
            raise Crash
        return n

    with pytest.raises((Crash, BaseExceptionGroup)):
        await agent.run('go', message_history=history, persistence=durable('r'))
    crash[0] = False
    result = await agent.resume(durable('r'))
    assert result.output == 'done'
    assert result.all_messages()[:2] == history
    assert len(result.new_messages()) == 4
    assert result.new_messages()[0].parts[0].content == 'go'  # type: ignore[union-attr]


async def test_each_snapshot_stores_only_the_messages_added_since_the_one_before(tmp_path: Path) -> None:
    counts: dict[int, list[int]] = {}
    for length in (10, 200):
        history: list[ModelMessage] = []
        for i in range(length // 2):
            history += [ModelRequest([UserPromptPart(f'q{i}')]), ModelResponse([TextPart(f'a{i}')])]
        agent = Agent(by_position(*([[TextPart('x')]] * (length // 2)), *three_calls_then('done')))

        @agent.tool_plain
        def work(n: int) -> int:
            return n

        async with SqliteStatePersistence(tmp_path / 'runs.db', f'run-{length}') as persistence:
            result = await agent.run('go', message_history=history, persistence=persistence)
            assert len(result.all_messages()) == length + 4
            raw = await persistence.load_raw()
        counts[length] = [len(s.state['message_history']) for s in raw]
    # The first snapshot holds the history the run was given; every later one only what its step added (the
    # response of a step is held by the snapshot's node, and stored there only).
    assert counts[10] == [10, 0, 1, 0, 1, 0]
    assert counts[200] == [200, 0, 1, 0, 1, 0]


async def test_deps_are_checked_again_on_resume(durable: Store) -> None:
    crash = [True]
    agent = Agent(by_position(*three_calls_then('done')), deps_type=int)

    @agent.tool_plain
    def work(n: int) -> int:
        if crash[0]:
            raise Crash
        return n

    with pytest.raises((Crash, BaseExceptionGroup)):
        await agent.run('go', deps=1, persistence=durable('r'))
    crash[0] = False
    with pytest.raises(UserError, match='expects deps of type int, got str'):
        await agent.resume(durable('r'), deps='one')  # type: ignore[arg-type]
    assert (await agent.resume(durable('r'), deps=2)).output == 'done'


async def test_a_second_resume_while_one_is_live_is_refused(durable: Store) -> None:
    crash = [True]
    agent = Agent(by_position(*three_calls_then('done')))

    @agent.tool_plain
    def work(n: int) -> int:
        if crash[0]:
            raise Crash
        return n

    with pytest.raises((Crash, BaseExceptionGroup)):
        await agent.run('go', persistence=durable('r'))
    crash[0] = False
    async with agent.iter_from_persistence(durable('r')) as run:
        with pytest.raises(RunInProgressError, match="Run 'r' is in progress elsewhere"):
            await agent.resume(durable('r'))
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.output == 'done'
    with pytest.raises(GraphRuntimeError, match="Nothing to resume for run 'r'"):
        await agent.resume(durable('r'))


async def test_a_stream_left_in_the_middle_leaves_a_resumable_run(durable: Store) -> None:
    requests: list[int] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        requests.append(len(messages))
        for word in ('one ', 'two ', 'three'):
            yield word

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(len(messages))
        return ModelResponse([TextPart('one two three')])

    agent = Agent(FunctionModel(answer, stream_function=stream))
    async with agent.run_stream('go', persistence=durable('streamed')) as result:
        async for text in result.stream_text(delta=True, debounce_by=None):
            assert text == 'one '
            break  # the client went away
    assert requests == [1]

    resumed = await agent.resume(durable('streamed'))
    assert resumed.output == 'one two three'
    assert requests == [1, 1]  # the request in flight was asked again, and only it
    assert [type(m).__name__ for m in resumed.all_messages()] == ['ModelRequest', 'ModelResponse']


async def test_a_durable_run_stores_offsets_and_checkpointed_results(tmp_path: Path) -> None:
    agent = Agent(by_position(*three_calls_then('done')))

    @agent.tool_plain
    def work(n: int) -> int:
        return n

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        await agent.run('go', persistence=persistence)
        raw = await persistence.load_raw()
    offsets = [s.state['message_offset'] for s in raw]
    assert offsets == [0, 0, 0, 2, 2, 4]
    # Each snapshot stores only the messages after its offset: the request of its step, and the response the
    # snapshot's node holds (there only).
    assert [[m['kind'] for m in s.state['message_history']] for s in raw] == [[], [], ['request'], [], ['request'], []]
    assert [s.state['response_in_node'] for s in raw] == [False, False, True, False, True, False]
    assert [getattr(s.node, 'node_id', 'end') for s in raw] == [
        'UserPromptNode', *['ModelRequestNode', 'CallToolsNode'] * 2, 'end'
    ]  # fmt: skip
    # The tool calls' step keeps the results it checkpointed as each call finished, but the last one's, stored
    # with the next snapshot.
    assert [len(s.state['step_results']) for s in raw] == [0, 0, 2, 0, 0, 0]


async def test_resume_streams_events_to_a_handler_and_takes_overridden_tools(durable: Store) -> None:
    crash = [True]
    agent = Agent(by_position(*three_calls_then('done')))

    @agent.tool_plain
    def work(n: int) -> int:
        if crash[0]:
            raise Crash
        return n

    with pytest.raises((Crash, BaseExceptionGroup)):
        await agent.run('go', persistence=durable('r'))

    def replacement(n: int) -> int:
        return -n

    replacement.__name__ = 'work'
    seen: list[str] = []

    async def handler(ctx: Any, events: AsyncIterable[Any]) -> None:
        async for event in events:
            seen.append(event.event_kind)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'done'

    with agent.override(tools=[replacement]):
        model = FunctionModel(stream_function=stream)
        result = await agent.resume(durable('r'), model=model, event_stream_handler=handler)
    assert result.output == 'done'
    returns = result.all_messages()[2].parts
    assert [p.content for p in returns] == [-1, -2, -3]  # type: ignore[union-attr]
    assert seen.count('function_tool_result') == 3


def test_fold_history_skips_snapshots_that_are_not_an_agent_runs() -> None:
    from edgewise.agent._run.state import GraphAgentState
    from edgewise.agent.agent._resume import fold_history
    from edgewise.graph import End, EndSnapshot

    message = ModelRequest([UserPromptPart('hi')])
    snapshots = [
        EndSnapshot(state={'not': 'an agent state'}, result=End(1)),
        EndSnapshot(state=GraphAgentState(message_history=[message]), result=End(2)),
    ]
    assert fold_history(snapshots) == ([message], None, 0)
