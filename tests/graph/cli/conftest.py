"""Running the `edgewise` command as a subprocess, and a project directory with stores to point it at."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

EDGEWISE = str(Path(sys.executable).with_name('edgewise'))
"""The console script installed with the graph package."""


class CliResult(NamedTuple):
    """What a finished command did."""

    code: int
    out: str
    err: str


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env.pop('FAKE_MMDC_MODE', None)
    return env


class RunningCommand:
    """A command started in the background, to read its progress and send it signals."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._out = b''

    def read_until(self, text: str, timeout: float = 30.0) -> None:
        """Read stdout until `text` appears (progress lines end without a newline while a node runs)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while text.encode() not in self._out:
            left = deadline - time.monotonic()
            readable, _, _ = select.select([fd], [], [], max(left, 0))
            assert readable, f'{text!r} never appeared within {timeout} s; output so far: {self._out!r}'
            chunk = os.read(fd, 4096)
            assert chunk, f'the command ended before {text!r}; output: {self._out!r}'
            self._out += chunk

    def send_signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def finish(self, timeout: float = 60.0) -> CliResult:
        """Wait for the command to end; one still going after `timeout` seconds is killed (so that it outlives
        neither the test nor its pipes) and fails the test with what it printed."""
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            pytest.fail(f'the command did not end within {timeout} s; stdout: {self._out + out!r}, stderr: {err!r}')
        return CliResult(self.process.returncode, (self._out + out).decode(), err.decode())


class Edgewise:
    """Runs `edgewise ARGS...` in a directory."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def __call__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> CliResult:
        completed = subprocess.run(
            [EDGEWISE, *args], cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=60, check=False
        )
        return CliResult(completed.returncode, completed.stdout, completed.stderr)

    def start(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> RunningCommand:
        process = subprocess.Popen(
            [EDGEWISE, *args], cwd=cwd, env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.started.append(process)
        return RunningCommand(process)

    def kill_the_rest(self) -> None:
        """Kill the commands a failed test left running, and close their pipes."""
        for process in self.started:
            if process.poll() is None:
                process.kill()
            process.communicate()


@pytest.fixture
def edgewise() -> Iterator[Edgewise]:
    commands = Edgewise()
    yield commands
    commands.kill_the_rest()


@pytest.fixture(scope='module')
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of cli/project whose runs.db holds runs in every state (see project/seed.py); not to be changed."""
    project = tmp_path_factory.mktemp('seeded') / 'project'
    shutil.copytree(Path(__file__).with_name('project'), project)
    subprocess.run([sys.executable, 'seed.py'], cwd=project, check=True, timeout=60)
    return project


@pytest.fixture
def project(seeded: Path, tmp_path: Path) -> Path:
    """A copy of the seeded project, for commands that change its runs."""
    copy = tmp_path / 'project'
    shutil.copytree(seeded, copy)
    return copy
