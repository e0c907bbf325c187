"""File specifics: pydantic-graph's format, atomic writes, bad files, the lock's recorded owner."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from edgewise.graph.exceptions import PersistenceError, RunInProgressError
from edgewise.graph.persistence.file import FileStatePersistence

from ._workflow import Start, Tally, cycle_graph

pytestmark = pytest.mark.anyio


async def test_the_file_is_a_json_list_of_snapshots_as_pydantic_graph_writes_it(tmp_path: Path) -> None:
    run_file = tmp_path / 'run.json'
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=FileStatePersistence(run_file))

    data = json.loads(run_file.read_text())
    assert [(item['kind'], item.get('status'), item['id'].split(':')[0]) for item in data] == [
        ('node', 'success', 'Start'),
        ('node', 'success', 'Middle'),
        ('node', 'success', 'Finish'),
        ('end', None, 'end'),
    ]
    assert data[1]['node'] == {'step': 1, 'node_id': 'Middle'}
    assert set(data[0]) == {'state', 'node', 'start_ts', 'duration', 'status', 'kind', 'id'}
    assert set(data[3]) == {'state', 'result', 'ts', 'kind', 'id'}
    assert sorted(os.listdir(tmp_path)) == ['run.json', 'run.json.edgewise-lock']


async def test_run_id_is_the_file_name(tmp_path: Path) -> None:
    persistence = FileStatePersistence(tmp_path / 'order-42.json')
    assert persistence.run_id == 'order-42'
    assert repr(persistence) == f'FileStatePersistence(json_file={str(tmp_path / "order-42.json")!r})'


@pytest.mark.parametrize(
    ('content', 'reason'),
    [
        ('{not json', 'it is not valid JSON'),
        ('{"a": 1}', 'it holds a JSON dict, not a list of snapshots'),
        ('[{"kind": "node", "id": "a"}, 3]', r'item 1 is not a snapshot \(an object with "kind" and "id"\)'),
    ],
)
async def test_a_file_that_is_not_a_snapshot_list_is_reported_and_untouched(
    tmp_path: Path, content: str, reason: str
) -> None:
    run_file = tmp_path / 'run.json'
    run_file.write_text(content)

    with pytest.raises(PersistenceError, match=rf"file '.*run.json' cannot be used for run 'run': {reason}"):
        await cycle_graph.run(Start(), state=Tally(), persistence=FileStatePersistence(run_file))
    assert run_file.read_text() == content


async def test_a_lock_held_by_a_live_process_names_it(tmp_path: Path) -> None:
    run_file = tmp_path / 'run.json'
    holder = FileStatePersistence(run_file)
    await cycle_graph.initialize(Start(), holder, state=Tally())
    waiter = FileStatePersistence(run_file, lock_timeout=0.02)
    waiter.set_graph_types(cycle_graph)

    async with cycle_graph.iter_from_persistence(holder):
        with pytest.raises(RunInProgressError, match=rf"Run 'run' is in progress elsewhere: process {os.getpid()} on"):
            await waiter.load_next()


async def test_the_private_lock_helper_of_pydantic_graph_times_out_while_the_lock_is_held(tmp_path: Path) -> None:
    persistence = FileStatePersistence(tmp_path / 'run.json')
    async with persistence._lock():
        assert persistence._lock_owner() is not None
        with pytest.raises(TimeoutError, match=r"^Run 'run' is in progress elsewhere"):
            async with persistence._lock(timeout=0.01):
                pass  # pragma: no cover - never entered
    async with persistence._lock(timeout=0.01):  # released on exit: taken again at once
        pass


async def test_a_lock_file_left_by_a_dead_process_does_not_block(tmp_path: Path) -> None:
    run_file = tmp_path / 'run.json'
    persistence = FileStatePersistence(run_file)
    await cycle_graph.initialize(Start(), persistence, state=Tally(target=1))
    code = (
        'import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); '
        'fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b"{}"); os._exit(0)'
    )
    await anyio.run_process([sys.executable, '-c', code, str(persistence.lock_file)])
    assert persistence.lock_file.exists()

    async with cycle_graph.iter_from_persistence(FileStatePersistence(run_file, lock_timeout=0.02)) as run:
        async for _ in run:
            pass
    assert run.result is not None


async def test_a_temporary_file_left_by_a_write_cut_short_is_removed_by_the_next_claim(tmp_path: Path) -> None:
    run_file = tmp_path / 'run.json'
    await cycle_graph.initialize(Start(), FileStatePersistence(run_file), state=Tally(target=1))
    stale = tmp_path / '.run.json.4242.tmp'  # as a process killed between writing it and renaming it leaves it
    stale.write_text('[{"partial": ')
    others = [tmp_path / '.run.json.x.4242.tmp', tmp_path / '.other.json.4242.tmp']  # other files' writes
    for other in others:
        other.write_text('[]')

    async with cycle_graph.iter_from_persistence(FileStatePersistence(run_file)) as run:
        async for _ in run:
            pass

    assert run.result is not None
    assert not stale.exists()
    assert all(other.exists() for other in others)


async def test_a_failed_write_is_a_persistence_error_naming_the_file_and_the_run(tmp_path: Path) -> None:
    path = tmp_path / 'run.json'
    persistence = FileStatePersistence(path)
    persistence.set_graph_types(cycle_graph)
    # A real failed write: a directory where the temporary file goes makes opening it fail.
    (tmp_path / f'.run.json.{os.getpid()}.tmp').mkdir()

    with pytest.raises(PersistenceError, match=r"could not be written for run 'run': .*Is a directory") as info:
        await persistence.snapshot_node(Tally(), Start())

    assert isinstance(info.value.__cause__, OSError)
    assert str(path) in info.value.message
    assert not path.exists()


async def test_a_start_time_that_is_not_a_timestamp_is_a_persistence_error_naming_the_run(tmp_path: Path) -> None:
    path = tmp_path / 'garbled.json'
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=FileStatePersistence(path))
    items = json.loads(path.read_text())
    items[0]['start_ts'] = 'not a time'
    path.write_text(json.dumps(items))

    with pytest.raises(PersistenceError, match=r"run 'garbled'.*start time that is not one: 'not a time'"):
        await FileStatePersistence.list_runs(tmp_path)
    with pytest.raises(PersistenceError, match=r"run 'garbled'.*start time that is not one"):
        await FileStatePersistence(path).info()
