"""Enqueued content in durable agent runs: the queue is stored with the run's state, a resumed run still delivers
it, the request made for it at the end of a run is stored at once, and runs stored before the queue existed load."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent._loop.nodes import CallToolsNode, ModelRequestNode, agent_graph
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph import End
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ..graph.persistence.conftest import DURABLE, Store, opened_store
from .test_enqueue import outline

pytestmark = pytest.mark.anyio


class Crash(BaseException):
    """Stands for the process dying: not an `Exception`, so the node is left to run again."""


async def stored(store: Store, run_id: str) -> list[Any]:
    """The snapshots of a stored agent run."""
    persistence = store(run_id)
    persistence.set_graph_types(agent_graph())
    snapshots: list[Any] = await persistence.load_all()
    return snapshots


@pytest.fixture(params=DURABLE)
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with opened_store(request.param, tmp_path) as made:
        yield made


def counting_model(asked: list[int]) -> FunctionModel:
    """Calls `inject` first, then answers `answer <n>` (n: the responses so far); notes each request's n."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(isinstance(m, ModelResponse) for m in messages)
        asked.append(done)
        return ModelResponse([ToolCallPart('inject', {}, 'c1')] if done == 0 else [TextPart(f'answer {done}')])

    return FunctionModel(respond)


EXPECTED = [
    ('request', [('user-prompt', 'hello')]),
    ('response', [('tool-call', 'inject')]),
    ('request', [('tool-return', 'ok')]),
    ('response', [('text', 'answer 1')]),
    ('request', [('user-prompt', 'follow-up')]),
    ('response', [('text', 'answer 2')]),
]


def idle_agent(asked: list[int]) -> Agent[None, str]:
    agent = Agent(counting_model(asked))

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('follow-up', priority='when_idle')
        return 'ok'

    return agent


async def test_the_queue_is_stored_with_the_run_and_a_resumed_run_delivers_it(durable: Store) -> None:
    asked: list[int] = []
    agent = idle_agent(asked)
    async with agent.iter('hello', persistence=durable('r')) as run:
        node: Any = run.next_node
        while not isinstance(node, CallToolsNode) or node.model_response.tool_calls:
            node = await run.next(node)
        # The tools have run: the queue holds the content, and so does the stored state of the next node.
        assert [p.priority for p in run.pending_messages] == ['when_idle']
    last = (await stored(durable, 'r'))[-1]
    assert outline(last.state.pending_messages[0].messages) == [('request', [('user-prompt', 'follow-up')])]

    result = await agent.resume(durable('r'))
    assert result.output == 'answer 2'
    assert outline(result.all_messages()) == EXPECTED
    assert asked == [0, 1, 2]


async def test_the_request_made_for_the_queue_at_the_end_is_stored_at_once(durable: Store) -> None:
    asked: list[int] = []
    agent = idle_agent(asked)
    async with agent.iter('hello', persistence=durable('r')) as run:
        node: Any = run.next_node
        while not (isinstance(node, ModelRequestNode) and node.request.parts[0].part_kind == 'user-prompt'
                   and node.request.parts[0].content == 'follow-up'):  # fmt: skip
            assert not isinstance(node, End)
            node = await run.next(node)
        assert run.pending_messages == []
    # The run was stored as ended, then as going on with the request: a resume sends it.
    kinds = [snapshot.kind for snapshot in await stored(durable, 'r')]
    assert kinds[-2:] == ['end', 'node']

    result = await agent.resume(durable('r'))
    assert result.output == 'answer 2'
    assert outline(result.all_messages()) == EXPECTED
    assert asked == [0, 1, 2]
    assert (await stored(durable, 'r'))[-1].kind == 'end'


async def test_a_run_stored_without_a_queue_in_its_state_still_resumes(tmp_path: Path) -> None:
    asked: list[int] = []
    crash = [True]
    agent = Agent(counting_model(asked))

    @agent.tool_plain
    def inject() -> str:
        if crash[0]:
            raise Crash
        return 'ok'

    db = tmp_path / 'runs.db'
    with pytest.raises((Crash, BaseExceptionGroup)):
        async with SqliteStatePersistence(db, 'old') as persistence:
            await agent.run('hello', persistence=persistence)
    with sqlite3.connect(db) as connection:  # as a version of Edgewise without the queue stored it
        changed = connection.execute(
            "UPDATE edgewise_snapshots SET data = json_remove(data, '$.state.pending_messages') "
            "WHERE json_extract(data, '$.state.pending_messages') IS NOT NULL"
        ).rowcount
    assert changed >= 2
    crash[0] = False
    async with SqliteStatePersistence(db, 'old') as persistence:
        result = await agent.resume(persistence)
        assert all(snapshot.state.pending_messages == [] for snapshot in await persistence.load_all())
    assert result.output == 'answer 1'
    assert asked == [0, 1]
