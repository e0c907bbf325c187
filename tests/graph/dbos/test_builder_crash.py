"""A builder graph on DBOS, its worker killed (SIGKILL) mid `.map()` of 50 items: another worker recovers the run
and finishes it, with the output of an uninterrupted run; only the step in flight runs again.

Two worker processes with executor ids of their own: the first takes the run from the queue and stops for good
in the 26th item's step; once its log shows that, it is killed and the second is started; the second finds
the first dead (its liveness lock is free) and has DBOS hand its run back to the queue, then takes it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ..builder._crash_points import EXPECTED, HALF, ITEMS, Counts
from ._builder_worker import QUEUE, dbos_points
from .conftest import ROOT

DEADLINE = 600.0  # seconds: only a broken run gets near it, however loaded the machine


def start_worker(url: str, vmid: str, crash_point: str, log: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LOGFIRE_IGNORE_NO_CONFIG': '1', 'DBOS__VMID': vmid}
    env.update(EDGEWISE_CRASH_POINT=crash_point, EDGEWISE_CRASH_LOG=str(log))
    with open(out, 'wb') as sink:
        return subprocess.Popen(
            [sys.executable, '-m', 'tests.graph.dbos._builder_worker', url], cwd=ROOT, env=env, stdout=sink, stderr=sink
        )


def wait_for(what: str, done: object, worker: subprocess.Popen[bytes], out: Path) -> None:
    """Wait (bounded) until `done()` is true, failing at once if the worker died."""
    deadline = time.monotonic() + DEADLINE
    while not done():  # type: ignore[operator]
        assert worker.poll() is None, f'the worker died waiting for {what}:\n{out.read_text(errors="replace")}'
        assert time.monotonic() < deadline, f'no {what}:\n{out.read_text(errors="replace")}'
        time.sleep(0.05)


def lines_of(log: Path) -> Counter[str]:
    return Counter(log.read_text().splitlines()) if log.exists() else Counter()


@pytest.mark.parametrize('database', ['sqlite', 'postgres'])
def test_a_builder_run_killed_mid_map_is_finished_by_another_worker(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from dbos import DBOSClient

    url = str(request.getfixturevalue(f'{database}_url'))
    log = tmp_path / 'effects.log'
    first_out, second_out = tmp_path / 'first.out', tmp_path / 'second.out'
    first = start_worker(url, 'first', 'map', log, first_out)
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_for('ready', lambda: b'ready' in first_out.read_bytes(), first, first_out)
        client = DBOSClient(system_database_url=url)
        try:
            run_id = dbos_points.enqueue_sync(QUEUE, inputs=list(range(ITEMS)), state=Counts(), client=client)
            # The first worker's steps run one at a time: items below HALF are recorded, item HALF stops for good.
            wait_for('the stop', lambda: lines_of(log)[f'square start {HALF}'] == 1, first, first_out)
            first.send_signal(signal.SIGKILL)
            first.wait()
            second = start_worker(url, 'second', 'none', log, second_out)

            def finished() -> bool:
                (workflow,) = client.list_workflows(workflow_ids=[run_id], load_input=False, load_output=False)
                assert workflow.status in ('PENDING', 'ENQUEUED', 'SUCCESS'), (workflow.status, workflow.error)
                return bool(workflow.status == 'SUCCESS')

            wait_for('the end of the run', finished, second, second_out)
            result = dbos_points.result_sync(run_id, client=client)
            (workflow,) = client.list_workflows(workflow_ids=[run_id], load_input=False, load_output=False)
            steps = Counter(step['function_name'] for step in client.list_workflow_steps(run_id))
        finally:
            client.destroy()
    finally:
        for worker in (first, second):
            if worker is not None and worker.poll() is None:
                worker.send_signal(signal.SIGKILL)
                worker.wait()

    assert result.output == EXPECTED
    # Steps run one at a time from the state the step before recorded: the one in flight left nothing behind.
    assert result.state == Counts(started=ITEMS, finished=ITEMS)
    assert workflow.executor_id == 'edgewise-second'
    assert steps == {'square': ITEMS, 'parity': ITEMS, 'OddNode': ITEMS // 2}
    lines = lines_of(log)
    reran = {line: count for line, count in lines.items() if count != 1}
    assert reran == {f'square start {HALF}': 2}
    assert len(lines) == 2 * ITEMS + ITEMS + ITEMS  # square start/end, decide, node start/end of the odd half
