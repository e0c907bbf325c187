"""`Graph.iter` and `GraphRun`: stepping through a run node by node."""

# mypy narrows `run.next_node` after one comparison and would call the next one impossible.
# mypy: disable-error-code="comparison-overlap"

from __future__ import annotations

import itertools
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest

import edgewise.graph.nodes
from edgewise.graph import BaseStatePersistence, End, Graph, GraphRuntimeError, NodeSnapshot, _instrument
from edgewise.graph.exceptions import StepLimitExceeded

from ._counting import Check, Counter, Deps, Increment, counting_graph

pytestmark = pytest.mark.anyio


async def test_async_for_yields_start_node_each_next_node_and_end(persistence: BaseStatePersistence[Any, Any]) -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=2), persistence=persistence) as run:
        nodes = [node async for node in run]
    assert nodes == [Increment(), Check(), Increment(), Check(), End(2)]
    assert run.result is not None
    assert (run.result.output, run.result.state.count) == (2, 2)


async def test_the_start_node_is_yielded_before_it_runs() -> None:
    state = Counter()
    async with counting_graph.iter(Increment(), state=state, deps=Deps(target=1)) as run:
        async for node in run:
            assert node == Increment()
            assert state.count == 0
            break


async def test_next_node_follows_the_iteration(persistence: BaseStatePersistence[Any, Any]) -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence) as run:
        seen = [(node, run.next_node) async for node in run]
    assert seen == [(Increment(), Increment()), (Check(), Check()), (End(1), End(1))]


async def test_next_runs_one_node_at_a_time(persistence: BaseStatePersistence[Any, Any]) -> None:
    state = Counter()
    async with counting_graph.iter(Increment(), state=state, deps=Deps(target=1), persistence=persistence) as run:
        assert run.next_node == Increment()
        assert run.result is None
        assert await run.next() == Check()
        assert (run.next_node, state.count, run.result) == (Check(), 1, None)
        assert await run.next() == End(1)
        assert run.next_node == End(1)
        assert run.result is not None
        assert run.result.output == 1
        assert run.persistence is persistence


async def test_next_with_a_node_runs_that_node_instead(persistence: BaseStatePersistence[Any, Any]) -> None:
    state = Counter()
    async with counting_graph.iter(Increment(), state=state, deps=Deps(target=10), persistence=persistence) as run:
        assert await run.next(Increment(by=10)) == Check()
        assert state.count == 10
        assert await run.next() == End(10)


async def test_iteration_stops_after_end() -> None:
    async with counting_graph.iter(Check(), state=Counter(count=5), deps=Deps(target=1)) as run:
        assert [node async for node in run] == [Check(), End(5)]
        assert [node async for node in run] == []


async def test_run_exposes_state_deps_and_steps() -> None:
    state, deps = Counter(), Deps(target=1)
    async with counting_graph.iter(Increment(), state=state, deps=deps) as run:
        async for _ in run:
            pass
    assert (run.state, run.deps, run.steps, run.graph) == (state, deps, 2, counting_graph)
    assert run.state is state


async def test_replacing_the_state_between_steps_is_seen_by_the_next_node(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence) as run:
        await run.next()
        run.state = Counter(count=100)
        assert await run.next() == End(100)


async def test_replacing_the_deps_between_steps_is_seen_by_the_next_node() -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=5)) as run:
        await run.next()
        run.deps = Deps(target=1)
        assert await run.next() == End(1)


async def test_repr_names_the_graph() -> None:
    named = Graph(nodes=(Increment, Check), name='counter')
    async with named.iter(Increment(), state=Counter(), deps=Deps(1)) as run:
        assert repr(run) == '<GraphRun graph=counter>'
    unnamed = Graph(nodes=(Increment, Check))
    async with unnamed.iter(Increment(), state=Counter(), deps=Deps(1), infer_name=False) as run:
        assert repr(run) == '<GraphRun graph=[unnamed]>'


async def test_max_steps_stops_a_run_with_a_clear_error(persistence: BaseStatePersistence[Any, Any]) -> None:
    limited = Graph(nodes=(Increment, Check), name='limited')
    with pytest.raises(StepLimitExceeded) as exc_info:
        await limited.run(Increment(), state=Counter(), deps=Deps(target=100), persistence=persistence, max_steps=3)
    assert exc_info.value.message == (
        'Graph `limited` ran 3 nodes, its `max_steps`, and was about to run `Check`; it is likely in a runaway '
        'cycle. Raise `max_steps` if it needs more steps.'
    )


async def test_max_steps_leaves_the_next_snapshot_unrun(snapshot_ids: None) -> None:
    from edgewise.graph import FullStatePersistence

    persistence = FullStatePersistence[Counter, int]()
    with pytest.raises(StepLimitExceeded):
        await counting_graph.run(
            Increment(), state=Counter(), deps=Deps(target=100), persistence=persistence, max_steps=1
        )
    assert [(s.id, s.status) for s in persistence.history if isinstance(s, NodeSnapshot)] == [
        ('Increment:1', 'success'),
        ('Check:2', 'created'),
    ]


async def test_max_steps_equal_to_the_steps_needed_is_enough() -> None:
    result = await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=2), max_steps=4)
    assert result.output == 2


async def test_max_steps_zero_runs_nothing() -> None:
    with pytest.raises(StepLimitExceeded, match='ran 0 nodes'):
        await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), max_steps=0)


async def test_negative_max_steps_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='max_steps must be a non-negative integer or None, got -1'):
        async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(1), max_steps=-1):
            pass  # pragma: no cover


async def test_next_with_something_that_is_not_a_node_is_a_type_error() -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(1)) as run:
        with pytest.raises(TypeError, match=r'`next` must be called with a `BaseNode` instance, got 42\.'):
            await run.next(42)  # type: ignore[arg-type]


async def test_a_node_with_the_id_of_a_graph_node_runs_as_that_node(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    # A class from elsewhere (a reload, say) with the same node id is accepted by id.
    from dataclasses import dataclass

    from edgewise.graph import BaseNode, GraphRunContext

    @dataclass
    class Check(BaseNode[Counter, Deps, int]):
        async def run(self, ctx: GraphRunContext[Counter, Deps]) -> End[int]:
            return End(-1)

    async with counting_graph.iter(Check(), state=Counter(), deps=Deps(1), persistence=persistence) as run:
        assert await run.next() == End(-1)


async def test_a_node_not_in_the_graph_is_a_runtime_error(persistence: BaseStatePersistence[Any, Any]) -> None:
    only_check = Graph(nodes=(Check, Increment))
    from edgewise.graph import BaseNode, GraphRunContext

    class Stranger(BaseNode[Counter, Deps, int]):
        async def run(self, ctx: GraphRunContext[Counter, Deps]) -> End[int]:
            raise AssertionError

        def __repr__(self) -> str:
            return 'Stranger()'

    with pytest.raises(GraphRuntimeError) as exc_info:
        await only_check.run(Stranger(), state=Counter(), deps=Deps(1), persistence=persistence)
    assert exc_info.value.message == 'Node `Stranger()` is not in the graph.'


async def test_a_returned_node_with_the_id_of_a_declared_node_is_accepted(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    from edgewise.graph import BaseNode, GraphRunContext

    class LookAlike(BaseNode[Counter, Deps, int]):
        @classmethod
        def get_node_id(cls) -> str:
            return 'Check'

        async def run(self, ctx: GraphRunContext[Counter, Deps]) -> End[int]:
            return End(7)

    class Start(BaseNode[Counter, Deps, int]):
        async def run(self, ctx: GraphRunContext[Counter, Deps]) -> Check:
            return LookAlike()  # type: ignore[return-value]

    graph = Graph(nodes=(Start, Check, Increment))
    result = await graph.run(Start(), state=Counter(), deps=Deps(1), persistence=persistence)
    assert result.output == 7


# --- the in-memory opening against the general one ------------------------------------------------------------


def _spy_general_opening(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Count the runs opened through `Graph._iter` (the opening of any persistence and span), untraced."""
    monkeypatch.setattr(_instrument, 'TRACING', False)
    opened: list[object] = []
    general = Graph._iter

    def counted(self: Graph[Any, Any, Any], *args: Any) -> Any:
        opened.append(self)
        return general(self, *args)

    monkeypatch.setattr(Graph, '_iter', counted)
    return opened


async def _observed_run(monkeypatch: pytest.MonkeyPatch, span: AbstractContextManager[Any] | None) -> tuple[Any, ...]:
    """Everything a caller sees of a counting run opened without a persistence (ids from 1 on)."""
    ids = itertools.count(1)
    monkeypatch.setattr(edgewise.graph.nodes, 'generate_snapshot_id', lambda node_id: f'{node_id}:{next(ids)}')
    state, deps = Counter(), Deps(target=2)
    unnamed = Graph(nodes=(Increment, Check))
    seen: list[tuple[Any, ...]] = []
    async with unnamed.iter(Increment(), state=state, deps=deps, span=span, max_steps=10) as run:
        async for node in run:
            last = run.persistence.last_snapshot  # type: ignore[attr-defined]
            seen.append((node, run.steps, last and (last.id, last.kind, getattr(last, 'status', None))))
    assert run.result is not None
    kept = (type(run.persistence), run.state is state, run.deps is deps, run.max_steps, run.result.output)
    return unnamed.name, kept, seen


async def test_a_run_opened_in_memory_is_the_run_the_general_opening_yields(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _spy_general_opening(monkeypatch)
    in_memory = await _observed_run(monkeypatch, None)
    assert opened == []  # opened by `iter`'s context manager itself
    general = await _observed_run(monkeypatch, nullcontext())
    assert len(opened) == 1

    assert in_memory == general
    assert in_memory[0] == 'unnamed'  # the name of the variable, inferred on entry
    assert in_memory[2][-1] == (End(2), 4, ('end:5', 'end', None))


class Stop(Exception):
    pass


async def _failing_block(span: AbstractContextManager[Any] | None, runs: list[Any]) -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(1), span=span) as run:
        runs.append(run)
        await run.next()
        raise Stop


async def test_an_error_leaves_a_run_opened_in_memory_as_it_leaves_the_general_opening(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened = _spy_general_opening(monkeypatch)
    outcomes = []
    for span in (None, nullcontext()):
        runs: list[Any] = []
        with pytest.raises(Stop) as exc_info:
            await _failing_block(span, runs)
        outcomes.append((type(exc_info.value), runs[0].steps, runs[0].next_node))
    assert len(opened) == 1
    assert outcomes == [(Stop, 1, Check())] * 2


@pytest.mark.parametrize('span', [None, nullcontext()], ids=['in-memory', 'general'])
async def test_an_opening_entered_twice_is_refused(monkeypatch: pytest.MonkeyPatch, span: Any) -> None:
    _spy_general_opening(monkeypatch)
    opening = counting_graph.iter(Increment(), state=Counter(), deps=Deps(1), span=span)
    async with opening:
        pass
    with pytest.raises(RuntimeError, match=r'entered already: call `graph.iter\(...\)` again'):
        async with opening:
            pass  # pragma: no cover - refused on entry
