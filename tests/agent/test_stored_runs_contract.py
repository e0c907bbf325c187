"""The contract between the agent package and the `edgewise runs` command (`edgewise.agent.stored_runs`).

The command (in edgewise-graph) reads stored agent runs only through this contract, found by its entry point;
these tests break when the two drift apart: the module no longer fits the command's `StoredRunsContract` (checked
by mypy below and by the version at run time), or a stored run of a real agent is no longer read right (a field
of the agent's stored state renamed, say).
"""

from __future__ import annotations

from dataclasses import replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import edgewise.agent.stored_runs as stored_runs
from edgewise.agent import Agent, DeferredToolRequests, RunContext
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.stored_runs import AnswersRefused, PendingCall, Waiting, check_answers
from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.cli import _agent_runs
from edgewise.graph.cli._agent_runs import StoredRunsContract, stored_runs_contract
from edgewise.graph.persistence.raw import RawNode, RawSnapshot
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

CONTRACT: StoredRunsContract = stored_runs  # mypy checks the module against the command's protocol here


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('look', {'q': 'x'}, 'l1'), ToolCallPart('pay', {'amount': 5}, 'p1')])
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return ModelResponse([TextPart('done')])


agent: Agent[None, Any] = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests])


@agent.tool_plain
def look(q: str) -> str:
    return f'found {q}'


@agent.tool(requires_approval=True)
def pay(ctx: RunContext[None], amount: int) -> str:
    return f'paid {amount}'


async def _history(path: Path, run_id: str = 'r') -> list[RawSnapshot]:
    async with SqliteStatePersistence(path, run_id) as persistence:
        return await persistence.load_raw()


def test_the_command_finds_the_contract_by_its_entry_point_and_reads_its_version() -> None:
    (found,) = [ep for ep in entry_points(group=_agent_runs.ENTRY_POINT_GROUP) if ep.name == 'agent']
    assert found.load() is stored_runs
    assert stored_runs_contract() is stored_runs
    assert stored_runs.CONTRACT_VERSION == _agent_runs.CONTRACT_VERSION


@pytest.mark.anyio
async def test_a_stored_run_waiting_for_approval_is_described_from_its_stored_json(tmp_path: Path) -> None:
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        result = await agent.run('pay', persistence=persistence)
    assert isinstance(result.output, DeferredToolRequests)
    history = await _history(tmp_path / 'runs.db')

    described = CONTRACT.describe(history)

    assert described is not None
    assert described.message_count == 3
    assert [(p.who, p.tool_name, p.tool_call_id) for p in described.parts] == [
        ('user', None, None),
        ('tool call', 'look', 'l1'),
        ('tool call', 'pay', 'p1'),
        ('tool return', 'look', 'l1'),
    ]
    assert described.parts[3].content == 'found x'
    assert (described.usage.requests, described.usage.tool_calls) == (1, 1)
    assert described.step_calls == ()
    waits = described.waiting
    assert waits == Waiting(
        what='approval', calls=(PendingCall(tool_name='pay', tool_call_id='p1', args={'amount': 5}, needs='approval'),)
    )
    assert CONTRACT.waiting(history[-1]) == waits
    assert CONTRACT.build_answers(approve=['p1'], deny=['p2'], deny_message='no') == {
        'approvals': {'p1': True, 'p2': {'kind': 'tool-denied', 'message': 'no'}}
    }


@pytest.mark.anyio
async def test_a_run_stopped_in_its_tool_step_shows_which_calls_finished(tmp_path: Path) -> None:
    async with (
        SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence,
        agent.iter('pay', persistence=persistence) as run,
    ):
        await run.next()
        await run.next()  # stored with its CallToolsNode next
    described = CONTRACT.describe(await _history(tmp_path / 'runs.db'))

    assert described is not None
    assert [(c.tool_name, c.finished) for c in described.step_calls] == [('look', False), ('pay', False)]
    assert described.waiting is None


@pytest.mark.anyio
async def test_a_run_of_another_graph_or_an_empty_history_is_no_agent_run(tmp_path: Path) -> None:
    from dataclasses import dataclass

    @dataclass
    class Only(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext[None, None]) -> End[int]:
            return End(1)

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'g') as persistence:
        await Graph(nodes=[Only]).run(Only(), persistence=persistence)
    history = await _history(tmp_path / 'runs.db', 'g')

    assert CONTRACT.describe(history) is None
    assert CONTRACT.describe([]) is None
    assert CONTRACT.waiting(history[-1]) is None


WAITS = Waiting(
    what='approval and tool results',
    calls=(
        PendingCall(tool_name='pay', tool_call_id='p1', args={}, needs='approval'),
        PendingCall(tool_name='fetch', tool_call_id='c1', args={}, needs='result'),
    ),
)


@pytest.mark.parametrize(
    ('approvals', 'calls', 'reason', 'message'),
    [
        (['p1'], ['p1'], 'twice', "Tool call 'p1' is answered twice"),
        (['c1'], [], 'wrong kind', "tool call 'c1' waits for result, not for an approval: answer it under `calls`"),
        (
            ['p1'],
            ['p1x'],
            'unknown call',
            "waits for no result of tool call 'p1x'; the calls waiting for result are c1",
        ),
        (['p1'], [], 'unanswered call', r'waits for tool calls p1, c1; answer each of them \(unanswered: c1\)'),
    ],
)
def test_answers_that_do_not_fit_are_refused_with_the_reason(
    approvals: list[str], calls: list[str], reason: str, message: str
) -> None:
    with pytest.raises(AnswersRefused, match=message) as refused:
        check_answers('r', WAITS, approvals=approvals, calls=calls)
    assert refused.value.reason == reason
    assert refused.value.waiting is WAITS


def test_answers_that_fit_pass() -> None:
    check_answers('r', WAITS, approvals=['p1'], calls=['c1'])


@pytest.mark.anyio
async def test_stored_data_the_contract_cannot_read_is_no_wait_and_no_agent_run(tmp_path: Path) -> None:
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        await agent.run('pay', persistence=persistence)
    history = await _history(tmp_path / 'runs.db')
    last = history[-1]
    assert last.kind == 'node'

    assert CONTRACT.waiting(replace(last, status='pending'), held=True) is None  # a live process answers it
    assert CONTRACT.waiting(replace(last, status='pending')) is not None
    damaged_node = replace(last, node=RawNode(last.node.node_id, {**last.node.fields, 'requests': 'damaged'}))
    assert CONTRACT.waiting(damaged_node) is None
    assert CONTRACT.describe([*history[:-1], replace(last, state={'usage': 'damaged'})]) is None
    calls = next(s for s in history if s.kind == 'node' and s.node.node_id == 'CallToolsNode')
    damaged_response = replace(calls, node=RawNode('CallToolsNode', {'model_response': 'damaged'}))
    described = CONTRACT.describe([history[0], damaged_response])
    assert described is not None
    assert described.step_calls == ()


def test_a_retry_prompt_is_shown_as_a_retry() -> None:
    part = stored_runs._part(RetryPromptPart('try again', tool_name='pay', tool_call_id='p1'))
    assert (part.who, part.content, part.tool_name) == ('retry', 'try again', 'pay')
