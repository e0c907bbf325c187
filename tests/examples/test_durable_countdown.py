"""The durable countdown example: killed with SIGKILL mid-run, started again, it resumes and finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def start(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, '-m', 'examples.graph.durable_countdown', '--db', str(db), *args],
        cwd=ROOT,
        env={**os.environ, 'PYTHONPATH': str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_countdown_resumes_after_being_killed(tmp_path: Path) -> None:
    db = tmp_path / 'countdown.db'
    first = start(db, '--start', '5', '--delay', '0.5')
    assert first.stdout is not None
    seen = [first.stdout.readline() for _ in range(3)]
    first.send_signal(signal.SIGKILL)
    first.communicate()
    assert seen == [f'starting run {"countdown"!r} in {db}\n', f'T-5 (pid {first.pid})\n', f'T-4 (pid {first.pid})\n']

    second = start(db)
    out, err = second.communicate(timeout=60)

    lines = out.splitlines()
    assert second.returncode == 0, err
    assert lines[0].startswith("resuming run 'countdown' (")
    # The step that was cut off (T-4) runs again; the finished one (T-5) does not.
    assert lines[1:-1] == [f'T-{n} (pid {second.pid})' for n in (4, 3, 2, 1)]
    assert lines[-1] == 'liftoff after 5 ticks: [5, 4, 3, 2, 1]'


def test_a_finished_countdown_is_not_run_again(tmp_path: Path) -> None:
    db = tmp_path / 'countdown.db'
    done = start(db, '--start', '2', '--delay', '0')
    assert done.communicate(timeout=60)[0].splitlines()[-1] == 'liftoff after 2 ticks: [2, 1]'

    again = start(db)
    out, _ = again.communicate(timeout=60)
    assert out.splitlines() == [
        "run 'countdown' has finished already; pass --fresh to start over",
        'liftoff after 2 ticks: [2, 1]',
    ]

    fresh = start(db, '--fresh', '--start', '1', '--delay', '0')
    assert fresh.communicate(timeout=60)[0].splitlines()[-1] == 'liftoff after 1 ticks: [1]'
