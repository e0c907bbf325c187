"""The file store's journal: one appended record per write while a run is held, folded into the file when it is
let go; a record cut short by a crash is ignored, a damaged journal is reported."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import zlib
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph.exceptions import PersistenceError
from edgewise.graph.persistence import NodeSnapshot, Snapshot
from edgewise.graph.persistence.file import FileStatePersistence

from ._workflow import Start, Tally, cycle_graph

pytestmark = pytest.mark.anyio

JOURNAL = 'run.json.edgewise-journal'


def opened(path: Path) -> FileStatePersistence[Tally, int]:
    persistence = FileStatePersistence[Tally, int](path)
    persistence.set_graph_types(cycle_graph)
    return persistence


def statuses(snapshots: Sequence[Snapshot[Tally, int]]) -> list[tuple[str, str | None]]:
    return [(snapshot.id, snapshot.status if isinstance(snapshot, NodeSnapshot) else None) for snapshot in snapshots]


def append(path: Path, data: bytes) -> None:
    with open(path, 'ab') as file:
        file.write(data)


def journal_lines(folder: Path) -> list[bytes]:
    return (folder / JOURNAL).read_bytes().splitlines(keepends=True)


async def stop_held_run(folder: Path, copy_to: Path, steps: int, target: int = 3) -> None:
    """Run `steps` nodes of a run held by this process, and copy its files to `copy_to` as a SIGKILL leaves them."""
    os.mkdir(folder)
    async with cycle_graph.iter(
        Start(), state=Tally(target=target), persistence=FileStatePersistence(folder / 'run.json')
    ) as run:
        for _ in range(steps):
            await run.next()
        os.mkdir(copy_to)
        for name in ('run.json', JOURNAL):
            shutil.copyfile(folder / name, copy_to / name)


async def resume(folder: Path) -> list[str]:
    async with cycle_graph.iter_from_persistence(FileStatePersistence(folder / 'run.json')) as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert run.result.output == run.state.count
    return run.state.trail


async def test_each_write_of_a_held_run_appends_one_record_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    store = FileStatePersistence(tmp_path / 'run.json')
    async with cycle_graph.iter(Start(), state=Tally(target=3), persistence=store) as run:
        await run.next()  # the first snapshot written whole, then its start and its successor in the journal
        first = (tmp_path / 'run.json').read_bytes()
        sizes = [len(journal_lines(tmp_path))]
        for _ in range(5):
            await run.next()
            sizes.append(len(journal_lines(tmp_path)))
            assert (tmp_path / 'run.json').read_bytes() == first

    # One record for each step: the next snapshot, and the end of the one before.
    assert sizes == [2, 3, 4, 5, 6, 7]
    assert sorted(os.listdir(tmp_path)) == ['run.json', 'run.json.edgewise-lock']
    assert [item['status'] for item in json.loads((tmp_path / 'run.json').read_text())[:6]] == ['success'] * 6


async def test_a_record_written_is_a_checksum_and_the_changes_as_json(tmp_path: Path) -> None:
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=1)

    checksum, _, payload = journal_lines(tmp_path / 'copy')[-1].rstrip(b'\n').partition(b' ')
    changes = json.loads(payload)
    assert int(checksum, 16) == zlib.crc32(payload)
    assert [change[0] for change in changes] == ['put', 'set']
    assert changes[0][1]['node'] == {'step': 1, 'node_id': 'Middle'}
    assert changes[0][1]['status'] == 'running'
    assert changes[1][2]['status'] == 'success'


async def test_a_run_killed_while_held_resumes_from_the_file_and_its_journal(tmp_path: Path) -> None:
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=4)

    trail = await resume(tmp_path / 'copy')

    assert trail == ['Start', 'Middle', 'Finish', 'Start', 'Middle', 'Finish', 'Start', 'Middle', 'Finish']
    assert sorted(os.listdir(tmp_path / 'copy')) == ['run.json', 'run.json.edgewise-lock']


@pytest.mark.parametrize(
    'torn',
    [
        b'1234abcd [["set","x"',
        b'00000000 [["put",{}]]\n',
        b'\x00' * 40,
        b'garbage\n',
        b'%08x {"a":1}\n' % zlib.crc32(b'{"a":1}'),
        b'%08x [["put"\n' % zlib.crc32(b'[["put"'),
    ],
    ids=['no-newline', 'bad-checksum', 'zeros', 'no-checksum', 'not-a-list', 'not-json'],
)
async def test_a_last_record_cut_short_is_ignored_and_truncated_by_the_next_write(tmp_path: Path, torn: bytes) -> None:
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=4)
    copy = tmp_path / 'copy'
    whole = (copy / JOURNAL).read_bytes()
    stored = await opened(copy / 'run.json').load_all()
    append(copy / JOURNAL, torn)

    assert await opened(copy / 'run.json').load_all() == stored
    info = await opened(copy / 'run.json').info()
    assert info is not None
    assert info.snapshot_count == len(stored)

    async with cycle_graph.iter_from_persistence(FileStatePersistence(copy / 'run.json')) as run:
        await run.next()
        assert (copy / JOURNAL).read_bytes().startswith(whole)
        assert torn not in (copy / JOURNAL).read_bytes()
        async for _ in run:
            pass
    assert run.state.trail == ['Start', 'Middle', 'Finish'] * 3


async def test_a_damaged_record_with_records_after_it_is_reported_and_nothing_is_changed(tmp_path: Path) -> None:
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=4)
    copy = tmp_path / 'copy'
    lines = journal_lines(copy)
    lines[1] = (b'1' if lines[1].startswith(b'0') else b'0') + lines[1][1:]  # another first digit of its checksum
    (copy / JOURNAL).write_bytes(b''.join(lines))
    before = {name: (copy / name).read_bytes() for name in ('run.json', JOURNAL)}

    with pytest.raises(PersistenceError, match=r"run 'run'.*journal .*edgewise-journal.*damaged") as info:
        async with cycle_graph.iter_from_persistence(FileStatePersistence(copy / 'run.json')):
            pass  # pragma: no cover

    assert 'left untouched' in info.value.message
    assert {name: (copy / name).read_bytes() for name in before} == before


async def test_a_journal_changing_a_snapshot_that_is_not_stored_is_reported(tmp_path: Path) -> None:
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=1)
    copy = tmp_path / 'copy'
    payload = b'[["set","Nowhere:1",{"status":"success"}]]'
    append(copy / JOURNAL, b'%08x %s\n' % (zlib.crc32(payload), payload))

    with pytest.raises(PersistenceError, match=r"a change to snapshot 'Nowhere:1', which is not stored"):
        await opened(copy / 'run.json').load_all()


async def test_a_journal_left_beside_a_file_that_holds_it_already_changes_nothing(tmp_path: Path) -> None:
    """As a crash between renaming the folded file into place and removing the journal leaves them."""
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=4)
    copy = tmp_path / 'copy'
    stored = await opened(copy / 'run.json').load_all()
    persistence = FileStatePersistence[Tally, int](copy / 'run.json')
    journals: list[bytes] = []
    fold = persistence._fold_journal

    def keep_and_fold() -> None:  # the journal as it is folded: with the claim's and the release's resets
        journals.append((copy / JOURNAL).read_bytes())
        fold()

    persistence._fold_journal = keep_and_fold  # type: ignore[method-assign]
    async with cycle_graph.iter_from_persistence(persistence):
        pass
    # Letting go folded the journal into the file.
    [journal] = journals
    folded = await opened(copy / 'run.json').load_all()
    assert not (copy / JOURNAL).exists()
    (copy / JOURNAL).write_bytes(journal)

    assert await opened(copy / 'run.json').load_all() == folded
    assert len(folded) == len(stored)
    assert await resume(copy) == ['Start', 'Middle', 'Finish'] * 3


async def test_a_journal_without_its_file_is_ignored_and_removed_by_the_next_write(tmp_path: Path) -> None:
    """As a crash between removing a run's file and its journal leaves them."""
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=4)
    copy = tmp_path / 'copy'
    (copy / 'run.json').unlink()

    assert await opened(copy / 'run.json').load_all() == []
    assert await FileStatePersistence.list_runs(copy) == []
    result = await cycle_graph.run(Start(), state=Tally(target=1), persistence=FileStatePersistence(copy / 'run.json'))

    assert result.output == 1
    assert len(await opened(copy / 'run.json').load_all()) == 4
    assert not (copy / JOURNAL).exists()


async def test_deleting_a_run_removes_its_journal(tmp_path: Path) -> None:
    await stop_held_run(tmp_path / 'live', tmp_path / 'copy', steps=2)
    copy = tmp_path / 'copy'

    assert await opened(copy / 'run.json').delete() is True
    assert not (copy / 'run.json').exists()
    assert not (copy / JOURNAL).exists()
    assert await opened(copy / 'run.json').delete() is False


async def test_a_run_read_while_held_elsewhere_shows_its_journal(tmp_path: Path) -> None:
    store = FileStatePersistence(tmp_path / 'run.json')
    async with cycle_graph.iter(Start(), state=Tally(target=3), persistence=store) as run:
        for _ in range(3):
            await run.next()
        reader = opened(tmp_path / 'run.json')
        info = await reader.info()
        snapshots = await reader.load_all()
        journal_written = datetime.fromtimestamp(os.stat(tmp_path / JOURNAL).st_mtime, tz=timezone.utc)

    assert info is not None
    assert info.snapshot_count == 4
    assert info.updated == journal_written
    assert [status for _, status in statuses(snapshots)] == ['success', 'success', 'success', 'running']


async def test_a_fork_of_a_held_run_is_a_whole_file(tmp_path: Path) -> None:
    store = FileStatePersistence(tmp_path / 'run.json')
    async with cycle_graph.iter(Start(), state=Tally(target=3), persistence=store) as run:
        for _ in range(3):
            await run.next()
        snapshots = await store.load_all()
        forked = await store.fork(snapshots[1].id, 'forked')

    assert sorted(os.listdir(tmp_path)) == [
        'forked.json',
        'forked.json.edgewise-lock',
        'run.json',
        'run.json.edgewise-lock',
    ]
    data = json.loads(forked.json_file.read_text())
    assert [item['id'] for item in data] == [snapshot.id for snapshot in snapshots[:2]]
    assert data[-1]['status'] == 'created'


async def test_a_fold_that_fails_as_the_run_is_let_go_keeps_the_journal(tmp_path: Path) -> None:
    store = FileStatePersistence(tmp_path / 'run.json')
    async with cycle_graph.iter(Start(), state=Tally(target=3), persistence=store) as run:
        for _ in range(3):
            await run.next()
        stored = await store.load_all()
        # A real failed write: a directory where the temporary file of the fold goes makes opening it fail.
        os.mkdir(tmp_path / f'.run.json.{os.getpid()}.tmp')

    assert (tmp_path / JOURNAL).exists()
    after = await opened(tmp_path / 'run.json').load_all()
    assert statuses(after) == [*statuses(stored[:3]), (stored[3].id, 'created')]


async def test_a_journal_write_that_fails_is_a_persistence_error_and_the_run_resumes_as_stored(tmp_path: Path) -> None:
    store = FileStatePersistence(tmp_path / 'run.json')
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead
    stored: list[Any] = []

    async def three_steps_then_a_full_disk() -> None:
        async with cycle_graph.iter(Start(), state=Tally(target=3), persistence=store) as run:
            for _ in range(3):
                await run.next()
            stored.extend(await store.load_all())
            # No file may grow any more, as on a full disk: the next append fails, and so does the fold.
            resource.setrlimit(resource.RLIMIT_FSIZE, (os.stat(tmp_path / 'run.json').st_size, limits[1]))
            await run.next()

    try:
        with pytest.raises(PersistenceError, match=r"could not be written for run 'run': .*File too large") as info:
            await three_steps_then_a_full_disk()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, previous)

    assert isinstance(info.value.__cause__, OSError)
    assert sorted(os.listdir(tmp_path)) == ['run.json', JOURNAL, 'run.json.edgewise-lock']
    assert statuses(await opened(tmp_path / 'run.json').load_all()) == statuses(stored)
    assert await resume(tmp_path) == ['Start', 'Middle', 'Finish'] * 3
