"""A builder run stored by the file store before it kept a journal still loads and resumes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from edgewise.graph.persistence.file import FileStatePersistence

from .test_graph_types import summing_graph

pytestmark = pytest.mark.anyio

STORED = Path(__file__).parents[1] / 'data' / 'file_store_builder_run.json'
"""A run of `summing_graph` on `[1, 2, 3]` stopped mid `.map()` (see `data/make_file_store_builder_run.py`)."""


async def test_a_builder_run_stored_in_the_earlier_file_format_loads(tmp_path: Path) -> None:
    shutil.copyfile(STORED, tmp_path / 'run.json')
    persistence = FileStatePersistence[None, int](tmp_path / 'run.json')
    persistence.set_graph_types(summing_graph())

    snapshots = await persistence.load_raw()
    info = await persistence.info()

    assert [(snapshot.kind, getattr(snapshot, 'status', None)) for snapshot in snapshots] == [
        ('node', 'success'),
        ('node', 'success'),
        ('node', 'created'),
    ]
    assert info is not None
    assert (info.run_id, info.status, info.snapshot_count) == ('run', 'waiting', 3)


async def test_a_builder_run_stored_in_the_earlier_file_format_resumes_to_its_output(tmp_path: Path) -> None:
    shutil.copyfile(STORED, tmp_path / 'run.json')
    stored = json.loads(STORED.read_text())

    async with summing_graph().iter_from_persistence(FileStatePersistence[None, int](tmp_path / 'run.json')) as run:
        async for _ in run:
            pass

    assert run.output == 1 + 4 + 9
    data = json.loads((tmp_path / 'run.json').read_text())
    assert [item['id'] for item in data[:3]] == [item['id'] for item in stored]
    assert data[:2] == stored[:2]
    assert [(item['kind'], item.get('status')) for item in data[2:]] == [('node', 'success')] * (len(data) - 3) + [
        ('end', None)
    ]
    assert sorted(os.listdir(tmp_path)) == ['run.json', 'run.json.edgewise-lock']
