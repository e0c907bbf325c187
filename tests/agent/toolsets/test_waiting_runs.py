"""A stored run that stops on deferred tool calls is kept as waiting, with its pending calls, and resumes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, DeferredToolRequests, DeferredToolResults, RunContext, UserError
from edgewise.agent._loop.nodes import DeferredToolCallsNode
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.persistence.store import list_runs, persistence_from_url

pytestmark = pytest.mark.anyio

EDGEWISE = str(Path(sys.executable).with_name('edgewise'))


def payments_agent() -> tuple[Agent[None, Any], list[int]]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse([ToolCallPart('balance', {}, 'b1'), ToolCallPart('pay', {'amount': 30}, 'p1')])
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        return ModelResponse(
            [TextPart(' / '.join(str(p.content) for p in last.parts if isinstance(p, ToolReturnPart)))]
        )

    agent: Agent[None, Any] = Agent(FunctionModel(answer), output_type=[str, DeferredToolRequests])
    paid: list[int] = []

    @agent.tool_plain
    def balance() -> int:
        return 100

    @agent.tool(requires_approval=True)
    def pay(ctx: RunContext[None], amount: int) -> str:
        paid.append(amount)
        return f'paid {amount}'

    return agent, paid


async def test_a_run_stopping_for_approval_is_stored_as_waiting_with_its_pending_calls(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    agent, paid = payments_agent()

    async with persistence_from_url(url, 'run-1') as persistence:
        result = await agent.run('pay the bill', persistence=persistence)

    assert result.output == DeferredToolRequests(approvals=[ToolCallPart('pay', {'amount': 30}, 'p1')])
    assert paid == []
    assert [(r.run_id, r.status) for r in await list_runs(url)] == [('run-1', 'waiting')]
    async with persistence_from_url(url, 'run-1') as persistence:
        last = (await persistence.load_raw())[-1]
    assert last.kind == 'node'
    assert (last.node.node_id, last.status) == ('DeferredToolCallsNode', 'created')
    assert last.node.fields['waiting_for'] == 'approval'
    assert [c['tool_call_id'] for c in last.node.fields['requests']['approvals']] == ['p1']
    # the finished call's result is stored with the run, so that the resumed run does not call it again
    returns = [p for m in last.state['message_history'] for p in m['parts'] if p['part_kind'] == 'tool-return']
    assert [(p['tool_name'], p['content']) for p in returns] == [('balance', 100)]


async def test_resuming_the_stored_waiting_run_without_answers_is_a_user_error(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    agent, _ = payments_agent()
    async with persistence_from_url(url, 'run-1') as persistence:
        await agent.run('pay the bill', persistence=persistence)

    # The run's deps as a resumed run gets them (the durable agent runs build them the same way).
    async with agent.iter('unused') as unused:
        deps = unused.ctx.deps
    async with persistence_from_url(url, 'run-1') as persistence:
        with pytest.raises(UserError, match=r"The run is waiting for approval of tool calls \['p1'\]: resume it"):
            async with agent.graph.iter_from_persistence(persistence, deps=deps, infer_name=False) as run:
                await run.next()
    assert [r.status for r in await list_runs(url)] == ['failed']


async def test_agent_resume_without_answers_gives_the_pending_calls_again_and_the_run_keeps_waiting(
    tmp_path: Path,
) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    agent, paid = payments_agent()
    async with persistence_from_url(url, 'run-1') as persistence:
        await agent.run('pay the bill', persistence=persistence)

    async with persistence_from_url(url, 'run-1') as persistence:
        result = await agent.resume(persistence)

    assert result.output == DeferredToolRequests(approvals=[ToolCallPart('pay', {'amount': 30}, 'p1')])
    assert paid == []
    assert [r.status for r in await list_runs(url)] == ['waiting']


async def test_a_waiting_run_resumed_with_answers_goes_on_to_its_end(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    agent, paid = payments_agent()
    async with persistence_from_url(url, 'run-1') as persistence:
        await agent.run('pay the bill', persistence=persistence)

    async with persistence_from_url(url, 'run-1') as persistence:
        result = await agent.resume(persistence, deferred_tool_results=DeferredToolResults(approvals={'p1': True}))
    assert paid == [30]
    assert result.output == '100 / paid 30'
    # the resumed run's history is whole: the stored answer of the call that ran, then the new answer (as
    # pydantic-ai keeps them, in two requests, sent to the model as one)
    assert [type(m).__name__ for m in result.all_messages()] == [
        'ModelRequest', 'ModelResponse', 'ModelRequest', 'ModelRequest', 'ModelResponse'
    ]  # fmt: skip
    assert [r.status for r in await list_runs(url)] == ['finished']


async def test_a_waiting_run_resumes_from_its_messages_as_without_a_persistence(tmp_path: Path) -> None:
    agent, paid = payments_agent()
    async with persistence_from_url(f'sqlite:///{tmp_path / "runs.db"}', 'run-1') as persistence:
        first = await agent.run('pay the bill', persistence=persistence)

    result = await agent.run(message_history=first.all_messages(),
                             deferred_tool_results=DeferredToolResults(approvals={'p1': True}))  # fmt: skip

    assert result.output == '100 / paid 30'
    assert paid == [30]


async def test_iterating_a_stored_run_stops_at_the_wait(tmp_path: Path) -> None:
    agent, _ = payments_agent()
    async with (
        persistence_from_url(f'file://{tmp_path}', 'run-1') as persistence,
        agent.iter('pay the bill', persistence=persistence) as run,
    ):
        nodes = [type(node).__name__ async for node in run]
        assert isinstance(run.next_node, DeferredToolCallsNode)
        assert run.stops_at(run.next_node)
    # the iteration stops at the wait (where a finished run gives its `End`)
    assert nodes == ['UserPromptNode', 'ModelRequestNode', 'CallToolsNode']
    assert run.result is not None
    assert isinstance(run.result.output, DeferredToolRequests)


async def test_the_node_says_what_the_run_waits_for() -> None:
    call = ToolCallPart('x', {}, 'c')
    assert DeferredToolCallsNode(DeferredToolRequests(calls=[call])).waiting_for == 'tool results'
    both = DeferredToolCallsNode(DeferredToolRequests(calls=[call], approvals=[call]))
    assert both.waiting_for == 'approval and tool results'


def test_the_cli_lists_the_run_as_waiting_for_approval_and_shows_the_pending_calls(
    tmp_path: Path, anyio_backend: str
) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    agent, _ = payments_agent()

    async def store() -> None:
        async with persistence_from_url(url, 'run-1') as persistence:
            await agent.run('pay the bill', persistence=persistence)

    import anyio

    anyio.run(store, backend=anyio_backend)

    listed = subprocess.run([EDGEWISE, 'runs', 'list', '--store', url], capture_output=True, text=True, check=True)
    assert 'run-1' in listed.stdout
    assert 'waiting for approval' in listed.stdout
    shown = subprocess.run([EDGEWISE, 'runs', 'show', 'run-1', '--store', url], capture_output=True, text=True,
                           check=True)  # fmt: skip
    assert 'Waiting for approval: node DeferredToolCallsNode (step 4) holds the pending tool calls:\n' in shown.stdout
    assert '[p1]: needs approval' in shown.stdout
