"""`edgewise runs show` and `runs resume MODULE:AGENT` on a stored agent run (the command run as a subprocess)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ._helpers import as_written_before_response_in_node

EDGEWISE = str(Path(sys.executable).with_name('edgewise'))

AGENT_MODULE = """
import os
import sys

from edgewise.agent import Agent
from edgewise.agent.messages import ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import FunctionModel
from edgewise.graph.persistence.sqlite import SqliteStatePersistence


def answer(messages, info):
    if sum(isinstance(m, ModelResponse) for m in messages) == 0:
        calls = [ToolCallPart('lookup', {'key': key}, f'call-{key}') for key in 'ab']
        return ModelResponse(calls)
    return ModelResponse([TextPart('all looked up')])


support = Agent(FunctionModel(answer))


@support.tool_plain(sequential=True)
def lookup(key: str) -> str:
    if key == 'b' and os.environ.get('CRASH') == '1':
        os._exit(9)  # the process dies in the middle of the step
    return f'value of {key}'


if __name__ == '__main__':
    support.run_sync('look up a and b', persistence=SqliteStatePersistence('runs.db', 'ticket-7'))
"""


def _edgewise(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EDGEWISE, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(params=['this version', 'an earlier version'])
def crashed(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A crashed run's store, as this version wrote it or as versions before `response_in_node` did."""
    (tmp_path / 'support.py').write_text(textwrap.dedent(AGENT_MODULE))
    died = subprocess.run(
        [sys.executable, 'support.py'], cwd=tmp_path, env={**_env(), 'CRASH': '1'}, timeout=60, check=False
    )
    assert died.returncode == 9
    if request.param == 'an earlier version':
        assert as_written_before_response_in_node(tmp_path / 'runs.db', 'ticket-7') == 1
    return tmp_path


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_runs_show_gives_an_agent_runs_messages_usage_and_pending_tool_calls(crashed: Path) -> None:
    listed = _edgewise('runs', 'list', '--store', 'sqlite:///runs.db', cwd=crashed)
    assert listed.returncode == 0, listed.stderr
    assert 'ticket-7' in listed.stdout
    assert 'Agent' in listed.stdout
    shown = _edgewise('runs', 'show', 'ticket-7', '--store', 'sqlite:///runs.db', cwd=crashed)
    assert shown.returncode == 0, shown.stderr
    tail = shown.stdout[shown.stdout.index('Messages') :]
    assert tail.splitlines()[:9] == [
        'Messages (2):',
        "  user: 'look up a and b'",
        "  model calls lookup(key='a') [call-a]",
        "  model calls lookup(key='b') [call-b]",
        'Usage: 1 requests, 55 input tokens, 10 output tokens, 0 tool calls',
        'Tool calls of the next step:',
        '  lookup [call-a]: finished (its result is stored)',
        '  lookup [call-b]: pending',
        '',
    ]


def test_runs_resume_finishes_an_agent_run_given_module_agent(crashed: Path) -> None:
    resumed = _edgewise('runs', 'resume', 'ticket-7', 'support.py:support', '--store', 'sqlite:///runs.db', cwd=crashed)
    assert resumed.returncode == 0, resumed.stderr
    assert 'CallToolsNode ... ok' in resumed.stdout
    assert "Finished: result FinalResult(output='all looked up'" in resumed.stdout
    shown = _edgewise('runs', 'show', 'ticket-7', '--store', 'sqlite:///runs.db', cwd=crashed)
    assert "  lookup returned 'value of a' [call-a]" in shown.stdout
    assert "  model: 'all looked up'" in shown.stdout
    again = _edgewise('runs', 'resume', 'ticket-7', 'support.py:support', '--store', 'sqlite:///runs.db', cwd=crashed)
    assert again.returncode == 1
    assert 'already finished' in again.stderr
