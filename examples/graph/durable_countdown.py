"""A durable countdown: kill it at any moment (Ctrl-C, `kill -9`), start it again, and watch it resume.

    python -m examples.graph.durable_countdown            # counts down from 10, one second per step
    python -m examples.graph.durable_countdown --fresh    # forget the stored run and start over

The run lives in `durable_countdown.db` (SQLite) in the working directory. Every step is committed before
the next one starts, so a restarted process continues with the step that was interrupted: a step that
finished is never run again, and the step that was cut off runs again from its start (at-least-once).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from edgewise.graph import BaseNode, End, EndSnapshot, Graph, GraphRunContext
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

RUN_ID = 'countdown'


@dataclass
class Countdown:
    remaining: int
    delay: float
    launched: list[int] = field(default_factory=list)
    """The number each finished `Tick` counted down from."""


@dataclass
class Tick(BaseNode[Countdown, None, str]):
    """Wait, then count one down."""

    async def run(self, ctx: GraphRunContext[Countdown]) -> Tick | Liftoff:
        state = ctx.state
        print(f'T-{state.remaining} (pid {os.getpid()})', flush=True)
        await anyio.sleep(state.delay)
        state.launched.append(state.remaining)
        state.remaining -= 1
        return Tick() if state.remaining > 0 else Liftoff()


@dataclass
class Liftoff(BaseNode[Countdown, None, str]):
    async def run(self, ctx: GraphRunContext[Countdown]) -> End[str]:
        return End(f'liftoff after {len(ctx.state.launched)} ticks: {ctx.state.launched}')


countdown = Graph(nodes=(Tick, Liftoff), name='countdown')


async def main(db: Path, start: int, delay: float, fresh: bool) -> str:
    if fresh:
        for suffix in ('', '-wal', '-shm'):
            await anyio.Path(f'{db}{suffix}').unlink(missing_ok=True)
    persistence: SqliteStatePersistence[Countdown, str] = SqliteStatePersistence(db, RUN_ID)
    runs = {run.run_id: run for run in await SqliteStatePersistence.list_runs(db)}
    stored = runs.get(RUN_ID)
    if stored is None:
        print(f'starting run {RUN_ID!r} in {db}', flush=True)
        await countdown.initialize(Tick(), persistence, state=Countdown(remaining=start, delay=delay))
    elif stored.status == 'finished':
        print(f'run {RUN_ID!r} has finished already; pass --fresh to start over', flush=True)
        persistence.set_graph_types(countdown)
        last = (await persistence.load_all())[-1]
        assert isinstance(last, EndSnapshot)
        return last.result.data
    else:
        print(f'resuming run {RUN_ID!r} ({stored.snapshot_count} snapshots stored)', flush=True)
    async with countdown.iter_from_persistence(persistence) as run:
        async for _ in run:
            pass
    assert run.result is not None
    return run.result.output


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--db', type=Path, default=Path('durable_countdown.db'), help='the SQLite file')
    parser.add_argument('--start', type=int, default=10, help='the number to count down from')
    parser.add_argument('--delay', type=float, default=1.0, help='seconds per step')
    parser.add_argument('--fresh', action='store_true', help='delete the stored run first')
    args = parser.parse_args()
    try:
        print(anyio.run(main, args.db, args.start, args.delay, args.fresh), flush=True)
    except KeyboardInterrupt:
        print('\ninterrupted: run this again to resume', flush=True)


if __name__ == '__main__':
    cli()
