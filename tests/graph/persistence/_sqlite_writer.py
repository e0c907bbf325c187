"""A process that runs short graphs on one SQLite file without end, to be killed with SIGKILL by the tests.

`python -m tests.graph.persistence._sqlite_writer PATH NAME`: runs `NAME-0`, `NAME-1`, ... one after another,
each to its end in a connection of its own, and prints `wrote` after each one.
"""

from __future__ import annotations

import sys
from itertools import count

import anyio

from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._workflow import Start, Tally, cycle_graph


async def main(path: str, name: str) -> None:
    for index in count():
        async with SqliteStatePersistence(path, f'{name}-{index}') as persistence:
            await cycle_graph.run(Start(), state=Tally(target=2), persistence=persistence)
        print('wrote', flush=True)


if __name__ == '__main__':
    anyio.run(main, sys.argv[1], sys.argv[2])
