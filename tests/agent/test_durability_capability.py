"""`EdgewiseDurability`: an agent's runs stored by a capability, resumed by run id after a SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, UserError
from edgewise.agent.capabilities import EdgewiseDurability
from edgewise.agent.durable_exec import EdgewiseDurability as ExportedDurability
from edgewise.agent.models.test import TestModel
from edgewise.graph.persistence.in_mem import FullStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import list_runs

from . import _durability_worker as worker

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
WAIT_LIMIT = 60.0


def _child(db: Path, log: Path, kill_at: str, backend: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', worker.__name__, str(db), str(log), kill_at, backend],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_LIMIT,
        check=False,
    )


@pytest.mark.parametrize('kill_at', ['call-1', 'call-2'])
async def test_a_run_killed_mid_tool_call_resumes_by_id_and_ends_as_an_uninterrupted_run(
    tmp_path: Path, anyio_backend: str, kill_at: str
) -> None:
    uninterrupted = worker.make_agent(str(tmp_path / 'whole.db'), str(tmp_path / 'whole.log'), kill_at='none')
    whole = await uninterrupted.run('go')

    db, log = tmp_path / 'runs.db', tmp_path / 'runs.log'
    killed = _child(db, log, kill_at, anyio_backend)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    lines = log.read_text().splitlines()
    run_id = lines[0].removeprefix('run ')
    assert lines[-1] == f'start {kill_at}'
    assert [r.status for r in await list_runs(f'sqlite:///{db}') if r.run_id == run_id] != [
        'finished'
    ]  # stored, unfinished

    agent = worker.make_agent(str(db), str(log), kill_at='none')
    result = await agent.resume(run_id)

    assert result.output == whole.output == 'total 30'
    assert result.run_id == run_id
    ran = [line for line in log.read_text().splitlines() if not line.startswith('run ')]
    assert ran.count('end call-1') == 1  # no finished call ran again
    assert ran.count('end call-2') == 1
    assert ran.count(f'start {kill_at}') == 2  # the one killed ran again, once
    strip = [
        (type(m).__name__, [(type(p).__name__, getattr(p, 'content', None)) for p in m.parts])
        for m in whole.all_messages()
    ]
    assert [
        (type(m).__name__, [(type(p).__name__, getattr(p, 'content', None)) for p in m.parts])
        for m in result.all_messages()
    ] == strip
    assert [r.status for r in await list_runs(f'sqlite:///{db}') if r.run_id == run_id] == ['finished']


async def test_each_run_is_stored_under_its_run_id(tmp_path: Path) -> None:
    agent = Agent(TestModel(), capabilities=[EdgewiseDurability(f'sqlite:///{tmp_path / "runs.db"}')])
    first = await agent.run('one')
    second = await agent.run('two')
    stored = {r.run_id: r.status for r in await list_runs(f'sqlite:///{tmp_path / "runs.db"}')}
    assert stored == {first.run_id: 'finished', second.run_id: 'finished'}


async def test_a_persistence_factory_and_a_run_capability(tmp_path: Path) -> None:
    made: list[str] = []

    def persistence(run_id: str) -> SqliteStatePersistence:
        made.append(run_id)
        return SqliteStatePersistence(tmp_path / 'runs.db', run_id)

    agent = Agent(TestModel())
    result = await agent.run('one', capabilities=[EdgewiseDurability(persistence)])
    assert made == [result.run_id]
    assert [r.run_id for r in await list_runs(f'sqlite:///{tmp_path / "runs.db"}')] == [result.run_id]


async def test_a_persistence_without_aclose(tmp_path: Path) -> None:
    stored: list[FullStatePersistence[Any, Any]] = []

    def in_memory(run_id: str) -> FullStatePersistence[Any, Any]:
        stored.append(FullStatePersistence())
        return stored[-1]

    agent = Agent(TestModel(), capabilities=[EdgewiseDurability(in_memory)])
    result = await agent.run('one')
    assert result.output == 'success (no tool calls)'
    assert len(stored) == 1
    assert stored[0].history


async def test_a_run_given_its_own_persistence_keeps_it(tmp_path: Path) -> None:
    agent = Agent(TestModel(), capabilities=[EdgewiseDurability(f'sqlite:///{tmp_path / "cap.db"}')])
    async with SqliteStatePersistence(tmp_path / 'own.db', 'mine') as own:
        await agent.run('one', persistence=own)
    assert [r.run_id for r in await list_runs(f'sqlite:///{tmp_path / "own.db"}')] == ['mine']
    assert not (tmp_path / 'cap.db').exists()


async def test_resuming_by_id_needs_the_capability() -> None:
    with pytest.raises(UserError, match=r"Cannot resume run 'r1' by its id: the agent has no `EdgewiseDurability`"):
        await Agent(TestModel()).resume('r1')


def test_the_repr_hides_the_store_url_and_specs_cannot_name_it() -> None:
    durability = EdgewiseDurability('postgresql://user:secret@db/runs')
    assert repr(durability) == 'EdgewiseDurability(store=postgresql:...)'
    assert EdgewiseDurability.get_serialization_name() is None
    assert ExportedDurability is EdgewiseDurability
