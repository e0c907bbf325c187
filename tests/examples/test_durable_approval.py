"""The durable approval example: a run stored waiting for approval in one process, answered in others."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def example(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', 'examples.agent.durable_approval', *args, '--db', str(tmp_path / 'refunds.db')],
        cwd=ROOT,
        env={**os.environ, 'PYTHONPATH': str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_request_and_the_approval_each_in_a_process_of_its_own(tmp_path: Path) -> None:
    both = example(tmp_path)

    assert (both.returncode, both.stderr) == (0, '')
    assert both.stdout.splitlines() == [
        "waiting for approval: refund({'order': 'A-1001', 'cents': 4500}) [r1]",
        'refunding 45.00 EUR for A-1001 (idempotency key r1)',
        'Dear customer: order A-1001 is refunded.',
    ]


def test_a_denied_refund_does_not_run_and_the_customer_is_told_why(tmp_path: Path) -> None:
    requested = example(tmp_path, 'request')
    denied = example(tmp_path, 'deny')

    assert (requested.returncode, denied.returncode, denied.stderr) == (0, 0, '')
    assert denied.stdout == 'Dear customer: Refunds of opened goods need a manager.\n'


def test_the_approval_given_with_the_edgewise_command(tmp_path: Path) -> None:
    assert example(tmp_path, 'request').returncode == 0
    store = f'sqlite:///{tmp_path / "refunds.db"}'
    agent = 'examples.agent.durable_approval:agent'

    resumed = subprocess.run(
        [str(Path(sys.executable).with_name('edgewise')), 'runs', 'resume', 'refund-42', agent, '--store', store,
         '--approve', 'r1'],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert (resumed.returncode, resumed.stderr) == (0, '')
    lines = resumed.stdout.splitlines()
    assert resumed.stdout.count('refunding 45.00 EUR for A-1001 (idempotency key r1)') == 1
    assert lines[-1] == (
        "Finished: result FinalResult(output='Dear customer: order A-1001 is refunded.', tool_name=None, "
        'tool_call_id=None)'
    )
