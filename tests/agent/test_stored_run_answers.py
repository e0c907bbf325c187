"""Answers to a stored agent run are checked against the calls it waits for before anything is written.

A wrong answer (a call id the run does not wait for, a run that never asked) is refused with a clear error and
changes nothing stored; a run that waits for people stays waiting, the same in every view (Python, `runs list`,
`runs show`, `runs resume`), until it is answered. The command-line checks run in processes of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from edgewise.agent import DeferredToolRequests, UserError
from edgewise.agent.stored_runs import AnswersRefused
from edgewise.graph.persistence.store import list_runs, persistence_from_url

from . import _approval_worker as worker

ROOT = Path(__file__).resolve().parents[2]
EDGEWISE = str(Path(sys.executable).with_name('edgewise'))
AGENT = f'{worker.__name__}:agent'


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv('APPROVAL_LOG', str(tmp_path / 'tool.log'))
    return f'sqlite:///{tmp_path / "runs.db"}'


def _tool_runs() -> list[str]:
    log = Path(os.environ['APPROVAL_LOG'])
    return log.read_text().splitlines() if log.exists() else []


async def _statuses(url: str) -> list[tuple[str, str | None]]:
    async with persistence_from_url(url, 'r') as persistence:
        return [(s.kind, getattr(s, 'status', None)) for s in await persistence.load_raw()]


async def _waiting_run(url: str) -> None:
    async with persistence_from_url(url, 'r') as persistence:
        result = await worker.agent.run('pay the bill', persistence=persistence)
    assert isinstance(result.output, DeferredToolRequests)


def _edgewise(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EDGEWISE, 'runs', *args, '--store', url], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.anyio
async def test_an_answer_to_a_call_the_run_does_not_wait_for_is_refused_and_changes_nothing(store: str) -> None:
    await _waiting_run(store)
    before = await _statuses(store)

    async with persistence_from_url(store, 'r') as persistence:
        with pytest.raises(AnswersRefused, match=r"Run 'r' waits for no approval of tool call 'p9'") as refused:
            await worker.agent.resume(persistence, deferred_tool_results={'approvals': {'p9': True}})
    assert isinstance(refused.value, UserError)
    assert refused.value.reason == 'unknown call'
    assert 'the calls waiting for approval are p1. Nothing was changed.' in str(refused.value)
    assert await _statuses(store) == before
    assert [r.status for r in await list_runs(store)] == ['waiting']

    async with persistence_from_url(store, 'r') as persistence:
        result = await worker.agent.resume(persistence, deferred_tool_results={'approvals': {'p1': True}})
    assert result.output == 'paid 30'
    assert _tool_runs() == ['pay p1']


@pytest.mark.anyio
async def test_answers_that_leave_a_waiting_call_unanswered_are_refused_and_change_nothing(store: str) -> None:
    await _waiting_run(store)
    before = await _statuses(store)

    async with persistence_from_url(store, 'r') as persistence:
        with pytest.raises(AnswersRefused, match=r"Run 'r' waits for tool calls p1; answer each of them") as refused:
            await worker.agent.resume(persistence, deferred_tool_results={'calls': {}})
    assert refused.value.reason == 'unanswered call'
    assert await _statuses(store) == before


@pytest.mark.anyio
async def test_a_result_given_for_a_call_that_waits_for_approval_is_refused(store: str) -> None:
    await _waiting_run(store)

    async with persistence_from_url(store, 'r') as persistence:
        with pytest.raises(AnswersRefused, match=r"tool call 'p1' waits for approval, not for a result"):
            await worker.agent.resume(persistence, deferred_tool_results={'calls': {'p1': 'paid'}})
    assert _tool_runs() == []
    assert [r.status for r in await list_runs(store)] == ['waiting']


@pytest.mark.anyio
async def test_an_approval_for_a_run_that_never_asked_is_refused_and_the_tool_does_not_run(store: str) -> None:
    async with (
        persistence_from_url(store, 'r') as persistence,
        worker.agent.iter('pay the bill', persistence=persistence) as run,
    ):
        await run.next()  # interrupted before its model request: it has asked for nothing
    before = await _statuses(store)

    async with persistence_from_url(store, 'r') as persistence:
        with pytest.raises(AnswersRefused, match=r"Run 'r' is not waiting for approval") as refused:
            await worker.agent.resume(persistence, deferred_tool_results={'approvals': {'p1': True}})
    assert refused.value.reason == 'not waiting'
    assert _tool_runs() == []
    assert await _statuses(store) == before

    async with persistence_from_url(store, 'r') as persistence:
        result = await worker.agent.resume(persistence)  # it asks now, and the tool waits for the answer
    assert isinstance(result.output, DeferredToolRequests)
    assert _tool_runs() == []


@pytest.mark.anyio
async def test_a_run_resumed_without_answers_stays_waiting_for_approval_in_every_view(store: str) -> None:
    await _waiting_run(store)
    async with persistence_from_url(store, 'r') as persistence:
        again = await worker.agent.resume(persistence)
    assert isinstance(again.output, DeferredToolRequests)
    assert [c.tool_call_id for c in again.output.approvals] == ['p1']

    listed = await anyio.to_thread.run_sync(lambda: _edgewise(store, 'list'))
    shown = await anyio.to_thread.run_sync(lambda: _edgewise(store, 'show', 'r'))
    unanswered = await anyio.to_thread.run_sync(lambda: _edgewise(store, 'resume', 'r', AGENT))
    assert 'waiting for approval' in listed.stdout
    assert 'Waiting for approval: node DeferredToolCallsNode (step 4) holds the pending tool calls:' in shown.stdout
    assert 'process that has ended' not in shown.stdout
    step_4 = next(line for line in shown.stdout.splitlines() if line.startswith('4 '))
    assert '  waiting  ' in step_4
    assert '  pending  ' not in step_4
    assert unanswered.returncode == 1
    assert 'is waiting for approval of tool calls p1' in unanswered.stderr

    approved = await anyio.to_thread.run_sync(lambda: _edgewise(store, 'resume', 'r', AGENT, '--approve', 'p1'))
    assert (approved.returncode, approved.stderr) == (0, '')
    assert _tool_runs() == ['pay p1']
    # Read in a process of its own: see the report of this change (an in-process reader of the SQLite file here
    # sees it as malformed after the other processes' writes, a defect of the SQLite backend left to its owner).
    listed = await anyio.to_thread.run_sync(lambda: _edgewise(store, 'list'))
    assert ' finished ' in listed.stdout
