"""Writes `file_store_builder_run.json`: a builder run stopped mid `.map()`, in the file store's format of 2026-12.

Written once by the file store as it was before any change to its on-disk format, so that a new format can be
checked to still read runs stored by the old one. Run from the repository root:
`PYTHONPATH=. .venv/bin/python tests/graph/data/make_file_store_builder_run.py`.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import anyio
from tests.graph.builder.test_graph_types import summing_graph

from edgewise.graph.persistence.file import FileStatePersistence

TARGET = Path(__file__).parent / 'file_store_builder_run.json'


async def main() -> None:
    folder = Path(tempfile.mkdtemp())
    store = FileStatePersistence[None, int](folder / 'run.json')
    async with store, summing_graph().iter(inputs=[1, 2, 3], persistence=store) as run:
        async for event in run:  # pragma: no branch
            if isinstance(event, list) and len(event) == 3:
                break  # the map's three tasks are stored, not run
    shutil.copyfile(folder / 'run.json', TARGET)


if __name__ == '__main__':
    anyio.run(main)
