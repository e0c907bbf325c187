"""The scale-out example: two worker processes on a SQLite system database, one killed; every order ships."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_runs_finish_when_a_worker_is_killed(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, '-m', 'examples.graph.scale_out', '--workers', '2', '--runs', '4', '--kill-one'],
        cwd=tmp_path,
        env={**os.environ, 'PYTHONPATH': str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "4 runs queued on 'orders', 2 workers" in lines
    killed = [line for line in lines if line.startswith('killed worker ')]
    assert len(killed) == 1
    orders = [re.sub(r' \(nodes ran in workers .*\)$', '', line) for line in lines if line.startswith('order ')]
    assert orders == [
        'order 0: charged 12.50, shipped',
        'order 1: charged 25.00, shipped',
        'order 2: charged 37.50, shipped',
        'order 3: charged 12.50, shipped',
    ]
    assert (tmp_path / 'scale_out.sqlite').exists()
