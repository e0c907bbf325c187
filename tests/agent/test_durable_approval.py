"""An approval waiting in a stored agent run, given from other processes (Python and `edgewise runs resume`).

Each process is a real subprocess (see `_approval_worker`): one starts the run, which is stored waiting for the
approval of its `pay` call; another resumes it with the answer, and the run finishes with the tool run exactly
once. While a resume holds the run, a second one is refused. On SQLite, files and PostgreSQL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from edgewise.agent import UserError
from edgewise.graph.persistence.store import list_runs, persistence_from_url

from ..graph.persistence.conftest import postgres_schema_url
from . import _approval_worker as worker

ROOT = Path(__file__).resolve().parents[2]
EDGEWISE = str(Path(sys.executable).with_name('edgewise'))
AGENT = f'{worker.__name__}:agent'
WAIT_LIMIT = 60.0


@dataclass
class Stored:
    url: str
    run_id: str
    log: Path
    env: dict[str, str]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=WAIT_LIMIT, check=False
        )

    def worker(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, '-m', worker.__name__, args[0], self.url, self.run_id, *args[1:])

    def edgewise(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(EDGEWISE, 'runs', *args[:1], self.run_id, *args[1:], '--store', self.url)

    def tool_runs(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def status(self) -> str:
        async def read() -> str:
            return next(r.status for r in await list_runs(self.url) if r.run_id == self.run_id)

        return anyio.run(read)


@pytest.fixture(params=['sqlite', 'file', 'postgres'])
def waiting(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stored]:
    """A run started in a process of its own and stored waiting for the approval of its call `p1`."""
    with ExitStack() as stack:
        if request.param == 'sqlite':
            url = f'sqlite:///{tmp_path / "runs.db"}'
        elif request.param == 'file':
            (tmp_path / 'runs').mkdir()
            url = f'file://{tmp_path / "runs"}'
        else:
            url = stack.enter_context(postgres_schema_url())
        yield from _waiting(url, tmp_path)


def _waiting(url: str, tmp_path: Path) -> Iterator[Stored]:
    log = tmp_path / 'tool.log'
    env = {**os.environ, 'APPROVAL_LOG': str(log)}
    stored = Stored(url, f'approval-{uuid.uuid4().hex[:12]}', log, env)
    started = stored.worker('start')
    assert (started.returncode, started.stdout, started.stderr) == (0, "waiting for ['p1']\n", '')
    assert stored.status() == 'waiting'
    yield stored

    async def delete() -> None:
        async with persistence_from_url(url, stored.run_id) as persistence:
            await persistence.delete()

    anyio.run(delete)


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f'{path} never appeared'
        time.sleep(0.01)


def test_an_approval_given_from_another_process_finishes_the_run_and_a_second_resume_is_refused(
    waiting: Stored, tmp_path: Path
) -> None:
    hold = tmp_path / 'hold'
    hold.mkdir()
    resumer = subprocess.Popen(
        [sys.executable, '-m', worker.__name__, 'resume', waiting.url, waiting.run_id, 'approve'],
        cwd=ROOT,
        env={**waiting.env, 'APPROVAL_HOLD': str(hold)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(hold / 'started', resumer)  # the resumer holds the run, in the middle of the approved call

        second = waiting.worker('resume', 'approve')
        by_cli = waiting.edgewise('resume', AGENT, '--approve', 'p1')
    finally:
        (hold / 'go').touch()
        out, err = resumer.communicate(timeout=WAIT_LIMIT)

    assert second.returncode == 3
    assert f"Run '{waiting.run_id}' is in progress elsewhere" in second.stderr
    assert by_cli.returncode == 1
    assert f"Run '{waiting.run_id}' is in progress elsewhere" in by_cli.stderr
    assert (resumer.returncode, out, err) == (0, 'paid 30\n', '')
    assert waiting.tool_runs() == ['pay p1']
    assert waiting.status() == 'finished'


def test_a_denial_given_from_another_process_finishes_the_run_without_the_tool(waiting: Stored) -> None:
    resumed = waiting.worker('resume', 'deny')

    assert (resumed.returncode, resumed.stdout, resumed.stderr) == (0, 'Not today.\n', '')
    assert waiting.tool_runs() == []
    assert waiting.status() == 'finished'


def test_runs_resume_approve_finishes_the_run_with_the_tool_run_once(waiting: Stored) -> None:
    resumed = waiting.edgewise('resume', AGENT, '--approve', 'p1')

    assert (resumed.returncode, resumed.stderr) == (0, '')
    assert (
        resumed.stdout.splitlines()[-1]
        == "Finished: result FinalResult(output='paid 30', tool_name=None, tool_call_id=None)"
    )
    assert waiting.tool_runs() == ['pay p1']
    assert waiting.status() == 'finished'
    again = waiting.edgewise('resume', AGENT, '--approve', 'p1')
    assert again.returncode == 1
    assert 'already finished' in again.stderr
    assert waiting.tool_runs() == ['pay p1']


def test_runs_resume_deny_tells_the_model_the_deny_message(waiting: Stored) -> None:
    resumed = waiting.edgewise('resume', AGENT, '--deny', 'p1', '--deny-message', 'Over budget.')

    assert (resumed.returncode, resumed.stderr) == (0, '')
    assert "output='Over budget.'" in resumed.stdout.splitlines()[-1]
    assert waiting.tool_runs() == []


def test_runs_resume_without_an_answer_names_the_pending_calls_and_leaves_the_run_waiting(waiting: Stored) -> None:
    resumed = waiting.edgewise('resume', AGENT)

    assert (resumed.returncode, resumed.stdout) == (1, '')
    assert resumed.stderr == (
        f'edgewise: error: Run {waiting.run_id} is waiting for approval of tool calls p1. Answer them with '
        f'`edgewise runs resume {waiting.run_id} {AGENT} --store {waiting.url} --approve CALL_ID` or '
        '`--deny CALL_ID` (each may be repeated). Nothing was changed.\n'
    )
    assert waiting.status() == 'waiting'
    assert waiting.tool_runs() == []


@pytest.mark.parametrize(
    ('args', 'message'),
    [
        (('--approve', 'p9'), "waits for no approval of tool call 'p9'; the calls waiting for approval are p1."),
        (('--approve', 'p1', '--deny', 'p1'), 'Tool call p1 is both approved and denied: give it once.'),
        (('--approve', 'p1', '--deny-message', 'no'), '--deny-message is what the model is told of the calls given'),
    ],
)
def test_runs_resume_refuses_answers_that_do_not_fit_and_changes_nothing(
    waiting: Stored, args: tuple[str, ...], message: str
) -> None:
    resumed = waiting.edgewise('resume', AGENT, *args)

    assert resumed.returncode == 1
    assert message in resumed.stderr
    assert waiting.status() == 'waiting'
    assert waiting.tool_runs() == []


@pytest.mark.anyio
async def test_runs_resume_refuses_answers_to_a_run_that_waits_for_none(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    async with (
        persistence_from_url(url, 'r') as persistence,
        worker.agent.iter('pay the bill', persistence=persistence) as run,
    ):
        await run.next()  # stored with its model request next: resumable, waiting for no approval
    stored = Stored(url, 'r', tmp_path / 'tool.log', {**os.environ, 'APPROVAL_LOG': str(tmp_path / 'tool.log')})

    resumed = await anyio.to_thread.run_sync(lambda: stored.edgewise('resume', AGENT, '--approve', 'p1'))

    assert (resumed.returncode, resumed.stdout) == (1, '')
    assert resumed.stderr == (
        'edgewise: error: Run r is not waiting for approval: --approve and --deny answer the tool calls of an agent '
        'run stored waiting for them (`edgewise runs show` says when a run waits). Nothing was changed.\n'
    )
    assert [r.status for r in await list_runs(url)] == ['waiting']


@pytest.mark.anyio
async def test_resume_takes_the_answers_as_a_dict_of_json_values_and_names_what_is_wrong(tmp_path: Path) -> None:
    url = f'sqlite:///{tmp_path / "runs.db"}'
    async with persistence_from_url(url, 'r') as persistence:
        await worker.agent.run('pay the bill', persistence=persistence)

    async with persistence_from_url(url, 'r') as persistence:
        with pytest.raises(UserError, match=r'`deferred_tool_results` is not a DeferredToolResults \(approvals\.p1'):
            await worker.agent.resume(persistence, deferred_tool_results={'approvals': {'p1': 'yes please'}})
    assert [r.status for r in await list_runs(url)] == ['waiting']
