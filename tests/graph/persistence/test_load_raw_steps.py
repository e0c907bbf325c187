"""`load_raw_steps()`: some snapshots of a run's raw history, as `load_raw()` has them, on every durable store."""

from __future__ import annotations

import pytest

from ._workflow import Start, Tally, cycle_graph
from .conftest import Store

pytestmark = pytest.mark.anyio


async def test_some_steps_are_those_of_the_whole_history(durable: Store) -> None:
    await cycle_graph.run(Start(), state=Tally(target=1), persistence=durable('r'))
    whole = await durable('r').load_raw()

    two = await durable('r').load_raw_steps(2, 2)
    first = await durable('r').load_raw_steps(1, 1)
    tail = await durable('r').load_raw_steps(len(whole), 5)
    beyond = await durable('r').load_raw_steps(len(whole) + 1, 2)
    odd = await durable('r').load_raw_steps(0, -1)  # numbered from 1, at least none

    assert len(whole) == 4
    assert [s.id for s in two] == [s.id for s in whole[1:3]]
    assert [s.state for s in two] == [s.state for s in whole[1:3]]
    assert [s.id for s in first] == [whole[0].id]
    assert [s.id for s in tail] == [whole[-1].id]
    assert (beyond, odd) == ([], [])
    assert await durable('nothing').load_raw_steps(1, 2) == []
