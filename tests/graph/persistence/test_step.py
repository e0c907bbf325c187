"""`BaseStatePersistence.record_step`, the one step every run goes through.

Its default is built from the classic contract (so a persistence written for pydantic-graph 1.x works as is);
`SimpleStatePersistence` inlines it, and must leave exactly the snapshots the default leaves.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

import edgewise.graph.nodes
from edgewise.graph import (
    BaseNode,
    BaseStatePersistence,
    End,
    EndSnapshot,
    Graph,
    GraphNodeStatusError,
    GraphRunContext,
    NodeSnapshot,
    SimpleStatePersistence,
    Snapshot,
)

from .._counting import Counter, Deps, Increment, counting_graph

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures('snapshot_ids')]


@dataclass
class ClassicPersistence(BaseStatePersistence[Counter, int]):
    """A persistence written only against the classic contract, logging each call the run makes."""

    history: list[Snapshot[Counter, int]] = field(default_factory=list[Snapshot[Counter, int]])
    calls: list[str] = field(default_factory=list[str])

    def _find(self, snapshot_id: str) -> Snapshot[Counter, int] | None:
        return next((s for s in self.history if s.id == snapshot_id), None)

    async def snapshot_node(self, state: Counter, next_node: BaseNode[Counter, Any, int]) -> None:
        self.calls.append(f'snapshot_node {next_node.get_snapshot_id()}')
        self.history.append(NodeSnapshot(state=Counter(state.count), node=next_node))

    async def snapshot_node_if_new(
        self, snapshot_id: str, state: Counter, next_node: BaseNode[Counter, Any, int]
    ) -> None:
        self.calls.append(f'snapshot_node_if_new {snapshot_id}')
        if self._find(snapshot_id) is None:
            self.history.append(NodeSnapshot(state=Counter(state.count), node=next_node, id=snapshot_id))

    async def snapshot_end(self, state: Counter, end: End[int]) -> None:
        self.calls.append(f'snapshot_end {end.get_snapshot_id()}')
        self.history.append(EndSnapshot(state=Counter(state.count), result=end))

    @asynccontextmanager
    async def record_run(self, snapshot_id: str) -> AsyncIterator[None]:
        snapshot = self._find(snapshot_id)
        assert isinstance(snapshot, NodeSnapshot)
        GraphNodeStatusError.check(snapshot.status)
        self.calls.append(f'enter {snapshot_id}')
        snapshot.status = 'running'
        try:
            yield
        except BaseException:
            snapshot.status = 'error'
            self.calls.append(f'error {snapshot_id}')
            raise
        snapshot.status = 'success'
        self.calls.append(f'exit {snapshot_id}')

    async def load_next(self) -> NodeSnapshot[Counter, int] | None:
        raise NotImplementedError

    async def load_all(self) -> list[Snapshot[Counter, int]]:
        return self.history


async def test_a_classic_persistence_runs_a_graph_through_its_own_methods() -> None:
    persistence = ClassicPersistence()
    result = await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=2), persistence=persistence)

    assert result.output == 2
    assert persistence.calls == [
        'snapshot_node_if_new Increment:1',
        'enter Increment:1',
        'snapshot_node Check:2',
        'exit Increment:1',
        'enter Check:2',
        'snapshot_node Increment:3',
        'exit Check:2',
        'enter Increment:3',
        'snapshot_node Check:4',
        'exit Increment:3',
        'enter Check:4',
        'snapshot_end end:5',
        'exit Check:4',
    ]
    assert [(s.id, s.kind, s.state.count) for s in persistence.history] == [
        ('Increment:1', 'node', 0),
        ('Check:2', 'node', 1),
        ('Increment:3', 'node', 1),
        ('Check:4', 'node', 2),
        ('end:5', 'end', 2),
    ]
    assert [s.status for s in persistence.history if isinstance(s, NodeSnapshot)] == ['success'] * 4


async def test_a_classic_persistence_sees_a_failing_node_marked_error_and_nothing_after_it() -> None:
    persistence = ClassicPersistence()
    with pytest.raises(ZeroDivisionError):
        await failing_graph.run(Divide(), state=Counter(), persistence=persistence)

    assert persistence.calls == ['snapshot_node_if_new Divide:1', 'enter Divide:1', 'error Divide:1']
    assert [(s.id, getattr(s, 'status', None)) for s in persistence.history] == [('Divide:1', 'error')]


async def test_an_explicit_node_is_stored_before_it_runs() -> None:
    persistence = ClassicPersistence()
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=5), persistence=persistence) as run:
        await run.next()
        await run.next(Increment(by=3))

    assert persistence.calls == [
        'snapshot_node_if_new Increment:1',
        'enter Increment:1',
        'snapshot_node Check:2',
        'exit Increment:1',
        'snapshot_node_if_new Increment:3',
        'enter Increment:3',
        'snapshot_node Check:4',
        'exit Increment:3',
    ]


# --- the inlined step of SimpleStatePersistence against the default ------------------------------------------


class DefaultStepPersistence(SimpleStatePersistence[Any, Any]):
    """`SimpleStatePersistence` stepping through the contract's default `record_step`."""

    record_step = BaseStatePersistence.record_step


@dataclass
class Divide(BaseNode[Counter, None, int]):
    async def run(self, ctx: GraphRunContext[Counter]) -> End[int]:
        return End(1 // ctx.state.count)


failing_graph = Graph(nodes=(Divide,))


def _fields(snapshot: Snapshot[Any, Any] | None) -> tuple[Any, ...]:
    """What a snapshot holds, timings reduced to whether they are set."""
    if isinstance(snapshot, NodeSnapshot):
        return ('node', snapshot.id, snapshot.node, snapshot.status, snapshot.start_ts is not None, snapshot.duration)
    assert isinstance(snapshot, EndSnapshot)
    # Its fields as its `__init__` sets them (the inlined step builds it without it), the time in UTC.
    return (
        'end',
        snapshot.id,
        snapshot.result,
        snapshot.state,
        snapshot.kind,
        snapshot.ts.tzinfo,
        list(vars(snapshot)),
    )


async def _steps(persistence: SimpleStatePersistence[Any, Any]) -> list[tuple[Any, ...]]:
    """The latest snapshot after each step of a counting run, with an explicit node in the middle."""
    seen: list[tuple[Any, ...]] = []
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=4), persistence=persistence) as run:
        await run.next()
        seen.append(_fields(persistence.last_snapshot))
        await run.next(Increment(by=2))
        seen.append(_fields(persistence.last_snapshot))
        async for _ in run:
            seen.append(_fields(persistence.last_snapshot))
    return seen


def _without_durations(steps: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(*s[:5], s[5] is not None) if s[0] == 'node' else s for s in steps]


async def test_the_inlined_step_leaves_the_same_snapshots_as_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    inlined = await _steps(SimpleStatePersistence())
    counter = itertools.count(1)  # the same ids again for the second run
    monkeypatch.setattr(edgewise.graph.nodes, 'generate_snapshot_id', lambda node_id: f'{node_id}:{next(counter)}')
    default = await _steps(DefaultStepPersistence())

    assert _without_durations(inlined) == _without_durations(default)
    assert [s[1] for s in inlined] == ['Check:2', 'Check:4', 'Check:4', 'Increment:5', 'Check:6', 'end:7']


async def test_the_inlined_step_marks_a_failing_node_as_the_default_does() -> None:
    outcomes = []
    for persistence in (SimpleStatePersistence[Any, Any](), DefaultStepPersistence()):
        with pytest.raises(ZeroDivisionError):
            await failing_graph.run(Divide(), state=Counter(), persistence=persistence)
        snapshot = persistence.last_snapshot
        assert isinstance(snapshot, NodeSnapshot)
        outcomes.append((snapshot.node.get_node_id(), snapshot.status, snapshot.duration is not None))
    assert outcomes == [('Divide', 'error', True)] * 2


async def test_a_node_that_failed_is_refused_by_both_when_run_again() -> None:
    for persistence in (SimpleStatePersistence[Any, Any](), DefaultStepPersistence()):
        node = Divide()
        async with failing_graph.iter(node, state=Counter(), persistence=persistence) as run:
            with pytest.raises(ZeroDivisionError):
                await run.next()
            with pytest.raises(GraphNodeStatusError) as exc_info:
                await run.next(node)
        assert exc_info.value.actual_status == 'error'


class LoggingSimple(SimpleStatePersistence[Any, Any]):
    """A subclass that changes a contract method, and so must not be stepped past it."""

    def __init__(self) -> None:
        super().__init__()
        self.stored: list[str] = []

    async def snapshot_node(self, state: Any, next_node: BaseNode[Any, Any, Any]) -> None:
        self.stored.append(next_node.get_snapshot_id())
        await super().snapshot_node(state, next_node)


async def test_a_subclass_that_changes_a_contract_method_steps_through_it() -> None:
    persistence = LoggingSimple()
    await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)

    assert persistence.stored == ['Check:2']
    assert LoggingSimple.record_step is BaseStatePersistence.record_step
    assert SimpleStatePersistence.record_step is not BaseStatePersistence.record_step
