"""Durable builder runs killed (SIGKILL) at chosen points, resumed in a fresh process: mid `.map()` of 50 items,
inside a decision's predicate, inside a `BaseNode`; on file, SQLite and PostgreSQL stores.

The kill waits on what the child wrote (its log lines, and its store), never on time. Each resumed run must end
with the output of an uninterrupted run, run again only the code that was in flight, and keep the state
changes the stored steps made.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.graph.exceptions import PersistenceError

from ..persistence.conftest import postgres_schema
from ._crash_points import EXPECTED, HALF, ITEMS, KEY, open_store

ROOT = Path(__file__).parents[3]
SQUARE = KEY * KEY

pytestmark = pytest.mark.anyio


def child(mode: str, crash_point: str, kind: str, location: str, log: Path) -> subprocess.Popen[str]:
    args = [sys.executable, '-m', 'tests.graph.builder._crash_points', mode, crash_point, kind, location, str(log)]
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LOGFIRE_IGNORE_NO_CONFIG': '1'}
    env.pop('EDGEWISE_CRASH_POINT', None)
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def last_stored(kind: str, location: str) -> tuple[int | None, dict[str, Any]]:
    """The join's value and the state in the store's last snapshot (`None` and `{}` before there is one)."""
    store = open_store(kind, location)
    try:
        history = await store.load_raw()
    except PersistenceError:  # pragma: no cover - the store is still being created
        return None, {}
    finally:
        await store.aclose()
    if not history or history[-1].kind != 'node':  # pragma: no cover - before the first step is stored
        return None, {}
    progress = history[-1].node.fields.get('progress') or {}
    joins = progress.get('joins') or [{'current': None}]
    return joins[0]['current'], dict(history[-1].state or {})


def log_lines(log: Path) -> Counter[str]:
    return Counter(log.read_text().splitlines()) if log.exists() else Counter()


@pytest.fixture(params=['file', 'sqlite', 'postgres'])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    kind = str(request.param)
    if kind == 'postgres':
        with postgres_schema() as dsn:
            yield kind, dsn
    else:
        yield kind, str(tmp_path / ('run.json' if kind == 'file' else 'runs.db'))


def finished_items(lines: Counter[str], items: range, skip: int | None = None) -> bool:
    """Whether the log shows all the user code of these items run to its end (but for item `skip`'s `OddNode`)."""
    for n in items:
        value = n * n
        if not (lines[f'square end {n}'] and lines[f'decide {value}']):
            return False
        if value % 2 and n != skip and not lines[f'node end {value}']:
            return False
    return True


# For each point: what the log shows once the child is stopped there with everything else done, what the
# join then holds in the store, and how many times each line is logged in the end.
POINTS: dict[str, tuple[Callable[[Counter[str]], bool], int, Callable[[str], int]]] = {
    'map': (
        lambda lines: (
            all(lines[f'square start {n}'] for n in range(HALF, ITEMS)) and finished_items(lines, range(HALF))
        ),
        sum(n * n for n in range(HALF)),
        lambda line: 2 if line.startswith('square start ') and int(line.split()[-1]) >= HALF else 1,
    ),
    'decision': (
        lambda lines: lines[f'decide {SQUARE}'] == 1,  # the child is frozen in the predicate, all else stored
        EXPECTED - SQUARE,
        lambda line: 2 if line == f'decide {SQUARE}' else 1,
    ),
    'node': (
        lambda lines: lines[f'node start {SQUARE}'] == 1 and finished_items(lines, range(ITEMS), skip=KEY),
        EXPECTED - SQUARE,
        lambda line: 2 if line == f'node start {SQUARE}' else 1,
    ),
}


def expected_lines() -> list[str]:
    """Every line an uninterrupted run logs, once each."""
    lines = [f'square {what} {n}' for n in range(ITEMS) for what in ('start', 'end')]
    lines += [f'decide {n * n}' for n in range(ITEMS)]
    lines += [f'node {what} {n * n}' for n in range(1, ITEMS, 2) for what in ('start', 'end')]
    return lines


# One backend is enough for the parent: the children run asyncio, and the parent only reads files and the store.
@pytest.mark.parametrize('anyio_backend', ['asyncio'])
@pytest.mark.parametrize('crash_point', list(POINTS))
async def test_a_run_killed_at_a_point_resumes_with_the_uninterrupted_output(
    crash_point: str, store_location: tuple[str, str], tmp_path: Path
) -> None:
    kind, location = store_location
    log = tmp_path / 'effects.log'
    stopped, reduced, times = POINTS[crash_point]
    first = child('start', crash_point, kind, location, log)
    try:
        # Bounded by construction: everything but the blocked code finishes and is stored, then nothing moves. The
        # store is read only once the log shows everything else done (reading it competes with the child).
        with anyio.fail_after(600):
            while not (stopped(log_lines(log)) and (await last_stored(kind, location))[0] == reduced):
                assert first.poll() is None, first.stderr.read() if first.stderr else ''
                await anyio.sleep(0.1)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()  # waits for it, and closes its pipes
    assert first.returncode == -signal.SIGKILL
    _, state_at_kill = await last_stored(kind, location)

    second = child('resume', crash_point, kind, location, log)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    output, started, finished = (int(word) for word in out.split())
    assert output == EXPECTED
    assert finished == ITEMS  # each finished step's change is kept once
    rerun = ITEMS - HALF if crash_point == 'map' else 0
    # A step in flight whose change (`started += 1`) reached the store makes it again when it runs again.
    assert started == state_at_kill['started'] + rerun
    lines = log_lines(log)
    assert set(lines) == set(expected_lines())
    assert {line: count for line, count in lines.items() if count != times(line)} == {}
