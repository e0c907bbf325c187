"""A DBOSAgent run, or a workflow running an agent with DBOSDurability, killed with SIGKILL mid-way is recovered by
a new process without repeating completed steps."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
DEADLINE = 600.0  # seconds: only a broken run gets near it, however loaded the machine
# The workers import this checkout's tests, and its sources ahead of an installed copy when PYTHONPATH names them.
PYTHONPATH = os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))


@pytest.mark.parametrize('database', ['sqlite_url', 'postgres_url'])
def test_killed_run_is_recovered_by_a_new_process(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(database)
    effects = tmp_path / 'effects.txt'
    env = {**os.environ, 'PYTHONPATH': PYTHONPATH, 'DBOS__VMID': 'agent-crash-test', 'LOGFIRE_IGNORE_NO_CONFIG': '1'}
    command = [sys.executable, '-m', 'tests.agent.dbos._crash_worker', url, str(effects)]
    log = tmp_path / 'first.log'
    with log.open('wb') as output:
        first = subprocess.Popen([*command, 'start'], cwd=ROOT, env=env, stdout=output, stderr=output)
    deadline = time.monotonic() + DEADLINE
    while not (effects.exists() and 'tool:2' in effects.read_text().split()):
        assert first.poll() is None, log.read_text()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first.kill()  # SIGKILL, inside the second tool call
    first.wait()
    assert effects.read_text().split() == ['model:1', 'tool:1', 'model:2', 'tool:2']

    second = subprocess.run([*command, 'recover'], cwd=ROOT, env=env, capture_output=True, timeout=DEADLINE)
    assert second.returncode == 0, second.stderr.decode()
    assert second.stdout.decode().split() == ['output=finished']
    # Completed steps (both model requests, the first tool call) did not run again; the interrupted tool call did.
    assert effects.read_text().split() == ['model:1', 'tool:1', 'model:2', 'tool:2', 'tool:2', 'model:3']


@pytest.mark.parametrize('database', ['sqlite_url', 'postgres_url'])
def test_killed_workflow_of_a_durability_agent_is_recovered_by_a_new_process(
    tmp_path: Path, database: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(database)
    effects = tmp_path / 'effects.txt'
    env = {**os.environ, 'PYTHONPATH': PYTHONPATH, 'DBOS__VMID': 'durability-crash-test'}
    env['LOGFIRE_IGNORE_NO_CONFIG'] = '1'
    command = [sys.executable, '-m', 'tests.agent.dbos._durability_crash_worker', url, str(effects)]
    log = tmp_path / 'first.log'
    with log.open('wb') as output:
        first = subprocess.Popen([*command, 'start'], cwd=ROOT, env=env, stdout=output, stderr=output)
    deadline = time.monotonic() + DEADLINE
    while not (effects.exists() and 'tool:2' in effects.read_text().split()):
        assert first.poll() is None, log.read_text()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first.kill()  # SIGKILL, inside the second tool call (its step)
    first.wait()
    assert effects.read_text().split() == ['model:1', 'tool:1', 'model:2', 'tool:2']

    second = subprocess.run([*command, 'recover'], cwd=ROOT, env=env, capture_output=True, timeout=DEADLINE)
    assert second.returncode == 0, second.stderr.decode()
    assert second.stdout.decode().split() == ['output=finished']
    # Completed steps (both model requests, the first tool step) did not run again; the interrupted one did.
    assert effects.read_text().split() == ['model:1', 'tool:1', 'model:2', 'tool:2', 'tool:2', 'model:3']
