"""Stores and message histories written by an earlier Edgewise (tools/make_store_fixtures.py) load and resume.

Each folder beside this file was written once by the Edgewise of its name and is never rewritten: the tests copy
it and check that today's code reads the history as it was written, resumes the runs that were left waiting or
interrupted, and reports the finished one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tools.make_store_fixtures import history

from edgewise.agent.messages import ModelMessagesTypeAdapter, ToolReturnPart
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from tests.agent.stored import agents

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
VERSIONS = sorted(path.name for path in HERE.iterdir() if (path / 'messages.json').exists())

Store = Callable[[Path, str], SqliteStatePersistence | FileStatePersistence]


def _sqlite(folder: Path, run_id: str) -> SqliteStatePersistence:
    return SqliteStatePersistence(folder / 'runs.db', run_id=run_id)


def _file(folder: Path, run_id: str) -> FileStatePersistence:
    return FileStatePersistence(folder / 'runs' / f'{run_id}.json')


STORES = [pytest.param(_sqlite, id='sqlite'), pytest.param(_file, id='file')]


@pytest.fixture(params=VERSIONS)
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A copy of one version's fixtures, so that nothing a test does changes them."""
    copy: Path = tmp_path / request.param
    shutil.copytree(HERE / request.param, copy)
    agents.held.clear()
    return copy


def test_versions_exist() -> None:
    assert 'pre-2x' in VERSIONS


def test_message_history_loads_as_written(stored: Path) -> None:
    assert ModelMessagesTypeAdapter.validate_json((stored / 'messages.json').read_bytes()) == history()


@pytest.mark.parametrize('store', STORES)
async def test_run_waiting_for_approval_is_answered(stored: Path, store: Store) -> None:
    async with store(stored, agents.RUN_IDS['waiting']) as persistence:
        result = await agents.refund_agent.resume(persistence, deferred_tool_results={'approvals': {'r1': True}})
    assert result.output == 'refund done'
    returns = [part for message in result.all_messages() for part in message.parts if isinstance(part, ToolReturnPart)]
    assert [(part.tool_call_id, part.content) for part in returns] == [('r1', 'refunded 4200 on A-1001')]


@pytest.mark.parametrize('store', STORES)
async def test_interrupted_run_resumes_without_repeating_a_finished_call(stored: Path, store: Store) -> None:
    async with store(stored, agents.RUN_IDS['interrupted']) as persistence:
        result = await agents.seat_agent.resume(persistence)
    assert result.output == 'seats held'
    assert agents.held == ['1B']
    assert result.usage.requests == 2


@pytest.mark.parametrize('url', ['sqlite:///{folder}/runs.db', 'file://{folder}/runs'])
def test_finished_run_is_listed_and_shown(stored: Path, url: str) -> None:
    store = url.format(folder=stored)
    listed = subprocess.run(
        [sys.executable, '-m', 'edgewise.graph.cli', 'runs', 'list', '--store', store],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    finished = next(line for line in listed.splitlines() if line.startswith(agents.RUN_IDS['finished']))
    assert 'finished' in finished.split()
    shown = subprocess.run(
        [sys.executable, '-m', 'edgewise.graph.cli', 'runs', 'show', agents.RUN_IDS['finished'], '--store', store],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "model: 'seats held'" in shown
    assert 'hold_seat returned' in shown
