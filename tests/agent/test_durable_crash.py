"""Durable agent runs killed with SIGKILL at 100 moments per backend, each resumed and finished.

Each agent run is started in a process of its own (forked by a fork server that has imported the agent, so a
cycle costs milliseconds), which SIGKILLs itself at a kill point chosen at random among the ones a whole run
passes (see `_durable_crash_worker`). The test then reads what the store holds, resumes the run in this process
and checks, from the log of model requests and tool calls:

- the run finishes with its output;
- a model request is asked again only when its response was not stored (the one in flight), and at most one;
- a tool call runs again only when its result was not stored, and then exactly once; no stored one runs again.
"""

from __future__ import annotations

import multiprocessing
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.agent import ModelRequestNode
from edgewise.agent.agent._resume import fold_history
from edgewise.agent.messages import ModelResponse, ToolReturnPart
from edgewise.graph import NodeSnapshot
from edgewise.graph.exceptions import RunInProgressError

from ..graph.persistence.conftest import postgres_schema
from . import _durable_crash_worker as worker

KILLS = 100
MODES = ('run', 'stream')
BACKENDS = ('asyncio', 'trio')


@pytest.fixture(scope='module')
def fork_server() -> Any:
    context = multiprocessing.get_context('forkserver')
    # '__main__' too: else each forked process imports the main module (pytest's) again, which costs more than a run.
    context.set_forkserver_preload(['__main__', worker.__name__])
    return context


def _start(context: Any, *args: Any) -> int:
    process = context.Process(target=worker.child, args=args)
    process.start()
    process.join()
    exitcode: int = process.exitcode
    return exitcode


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def _stored(kind: str, location: str, run_id: str) -> tuple[int, set[str]]:
    """How many model responses the stored run holds, and the ids of the tool calls whose result it holds."""
    async with worker.open_run(kind, location, run_id) as persistence:
        persistence.set_graph_types(worker.agent.graph)
        snapshots = await persistence.load_all()
    history, _, _ = fold_history(snapshots)
    responses = sum(isinstance(m, ModelResponse) for m in history)
    # A tool call's result is stored in the history, in the request of the node that sends it, or checkpointed
    # in the snapshot of the step that ran it.
    parts = [p for m in history for p in m.parts]
    for snapshot in snapshots:
        if isinstance(snapshot, NodeSnapshot):
            parts += snapshot.state.step_results
            if isinstance(snapshot.node, ModelRequestNode):
                parts += snapshot.node.request.parts
    return responses, {p.tool_call_id for p in parts if isinstance(p, ToolReturnPart)}


async def _resume(kind: str, location: str, run_id: str, log: Path) -> str:
    worker.control.log, worker.control.kill_at = str(log), 0
    for _ in range(200):
        try:
            async with worker.open_run(kind, location, run_id) as persistence:
                result = await worker.agent.resume(persistence, deps='parent')
            return result.output
        except RunInProgressError:  # PostgreSQL: the dead child's session is not closed by the server yet
            await anyio.sleep(0.05)
    raise AssertionError(f'run {run_id} stayed held')  # pragma: no cover


@contextmanager
def _location(kind: str, tmp_path: Path) -> Iterator[str]:
    with postgres_schema() if kind == 'postgres' else nullcontext(str(tmp_path)) as location:
        yield location


@pytest.mark.parametrize('kind', ['sqlite', 'file', 'postgres'])
def test_agent_runs_killed_at_random_moments_finish_after_resume(
    kind: str, tmp_path: Path, fork_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(f'durable-agent-{kind}')
    with _location(kind, tmp_path) as location:
        points: dict[str, int] = {}
        for mode in MODES:  # a whole run, to count the kill points of each mode
            log = tmp_path / f'dry-{mode}.log'
            assert _start(fork_server, kind, location, f'dry-{mode}', mode, 0, str(log), 'asyncio') == 0
            points[mode] = int(_lines(log)[-1].split()[1])
        assert points == {'run': 9, 'stream': 12}

        where: Counter[str] = Counter()
        reasked = rerun = stored_tools = 0
        for i in range(KILLS):
            mode, backend = MODES[i % 2], BACKENDS[i // 2 % 2]
            run_id, log = f'run-{i}', tmp_path / f'run-{i}.log'
            kill_at = rng.randint(1, points[mode])
            assert _start(fork_server, kind, location, run_id, mode, kill_at, str(log), backend) == -9
            before = _lines(log)
            assert before[-1].startswith('killed at ')
            where[before[-1].removeprefix('killed at ').split(' chunk')[0]] += 1
            responses, done = anyio.run(_stored, kind, location, run_id, backend=backend)

            assert anyio.run(_resume, kind, location, run_id, log, backend=backend) == worker.OUTPUT

            after = _lines(log)
            asked = Counter(line for line in after if line.startswith('request '))
            in_flight = {line for line in before if line.startswith('request ')} - {
                f'request {n}' for n in range(responses)
            }
            assert len(in_flight) <= 1
            assert asked == {f'request {n}': 2 if f'request {n}' in in_flight else 1 for n in range(2)}, (i, after)
            reasked += len(in_flight)
            started_before = Counter(line for line in before if line.startswith('start '))
            started = Counter(line for line in after if line.startswith('start '))
            for call in worker.CALLS:
                again = started_before[f'start {call}'] > 0 and call not in done
                assert started[f'start {call}'] == 1 + again, (i, call, after)
                rerun += again
            stored_tools += len(done)
        with capsys.disabled():
            print(
                f'\n{kind}: {KILLS} kills ({dict(sorted(where.items()))}), all finished after resume; model requests '
                f'asked again (in flight): {reasked}; tool calls run again (running, not stored): {rerun}; tool '
                f'results found stored and not run again: {stored_tools}'
            )
        assert sum(where.values()) == KILLS
