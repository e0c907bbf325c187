"""SIGKILL in the middle of a fan-out and inside a subgraph: a new process resumes only what had not finished."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import anyio
import pytest

from ._fanout_worker import BRANCHES, FAST
from ._worker import open_run
from .conftest import DURABLE, postgres_schema

ROOT = Path(__file__).parents[3]


def _worker(workflow: str, kind: str, location: str, directory: Path, mode: str) -> subprocess.Popen[str]:
    args = [sys.executable, '-m', 'tests.graph.persistence._fanout_worker', workflow, kind, location, 'order-1']
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LOGFIRE_IGNORE_NO_CONFIG': '1'}
    return subprocess.Popen(
        [*args, str(directory), mode], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@contextmanager
def _location(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == 'postgres':
        with postgres_schema() as dsn:
            yield dsn
    else:
        with nullcontext():
            yield str(tmp_path / ('order-1.json' if kind == 'file' else 'runs.db'))


async def _finished_branches(kind: str, location: str) -> int:
    """How many branches of the run's fan-out have an end snapshot in the store."""
    async with open_run(kind, location, 'order-1') as persistence:
        forks = [s.id for s in await persistence.load_raw() if s.kind == 'node' and s.node.node_id == 'Fork']
        if not forks:
            return 0
        finished = 0
        for index in range(BRANCHES):
            async with persistence.child(f'{forks[0]}/{index}') as branch:
                info = await branch.info()
                finished += info is not None and info.status == 'finished'
        return finished


def _wait_for(condition: object, worker: subprocess.Popen[str]) -> None:
    """Wait until `condition()` holds, failing at once if the worker exits first."""
    while not condition():  # type: ignore[operator]
        if worker.poll() is not None:
            pytest.fail(f'the worker exited early: {worker.stderr.read() if worker.stderr else ""}')
        anyio.run(anyio.sleep, 0.01)


def _effects(directory: Path) -> Counter[str]:
    return Counter((directory / 'effects.log').read_text().splitlines())


def _resume(workflow: str, kind: str, location: str, directory: Path) -> str:
    worker = _worker(workflow, kind, location, directory, 'resume')
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    return out.strip()


@pytest.mark.parametrize('kind', DURABLE)
def test_sigkill_mid_fan_out_resumes_only_unfinished_branches(kind: str, tmp_path: Path) -> None:
    with _location(kind, tmp_path) as location:
        worker = _worker('fanout', kind, location, tmp_path, 'start')
        try:
            blocked = [tmp_path / f'blocked-item-{i}' for i in range(FAST, BRANCHES)]
            _wait_for(lambda: all(p.exists() for p in blocked), worker)
            _wait_for(lambda: anyio.run(_finished_branches, kind, location) == FAST, worker)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.communicate()
        for path in blocked:
            path.unlink()

        assert _resume('fanout', kind, location, tmp_path) == '55 [0, 1, 2, 3, 4, 5]'
    effects = _effects(tmp_path)
    # Finished branches ran once; the blocked ones ran their first node again; the fan-out's node once.
    assert effects == Counter(
        {
            'Scatter': 1,
            **{f'Item {i}': 1 for i in range(FAST)},
            **{f'Square {i}': 1 for i in range(BRANCHES)},
            **{f'Item {i}': 2 for i in range(FAST, BRANCHES)},
            'Total': 1,
        }
    )


@pytest.mark.parametrize('kind', DURABLE)
def test_sigkill_inside_a_subgraph_resumes_inside_it(kind: str, tmp_path: Path) -> None:
    with _location(kind, tmp_path) as location:
        worker = _worker('subgraph', kind, location, tmp_path, 'start')
        try:
            _wait_for((tmp_path / 'blocked-confirm').exists, worker)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.communicate()
        assert _resume('subgraph', kind, location, tmp_path) == 'charged [1]'
    # `Charge` committed before `Confirm` started: the resumed child run starts at `Confirm`.
    assert _effects(tmp_path) == Counter({'Pay': 2, 'Charge': 1, 'Confirm': 2})


@pytest.mark.parametrize('kind', DURABLE)
def test_sigkill_inside_a_subgraph_on_part_of_the_state_keeps_its_changes(kind: str, tmp_path: Path) -> None:
    uninterrupted = anyio.run(_run_part_uninterrupted)
    with _location(kind, tmp_path) as location:
        worker = _worker('part', kind, location, tmp_path, 'start')
        try:
            _wait_for((tmp_path / 'blocked-confirm').exists, worker)  # `Charge` changed the part and was stored
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.communicate()
        resumed = _resume('part', kind, location, tmp_path)
    # What `Charge` did to the run's state before the crash is in the state the resumed run ends with.
    assert resumed == uninterrupted == 'charged [1], state Basket(part=Done(items=[1]), paid=True)'
    assert _effects(tmp_path) == Counter({'Pay': 2, 'Charge': 1, 'Confirm': 2})


async def _run_part_uninterrupted() -> str:
    from edgewise.graph import FullStatePersistence

    from ._fanout_worker import Basket, Env, PayPart, basket_shop

    with tempfile.TemporaryDirectory() as directory:
        result = await basket_shop.run(
            PayPart(), state=Basket(), deps=Env(Path(directory), block=False), persistence=FullStatePersistence()
        )
    return result.output
