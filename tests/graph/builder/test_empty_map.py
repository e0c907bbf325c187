"""A `.map()` over an empty iterable: its join fires with its initial value only when `.map()` names it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgewise.graph.builder import GraphBuilder, GraphRuntimeError, StepContext, reduce_list_append
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.in_mem import FullStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


def mapped_graph(*, decision: bool, name_the_join: bool) -> Any:
    """Items are doubled when positive and negated otherwise (through a decision), then collected in a list."""
    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def items(ctx: StepContext[None, None, list[int]]) -> list[int]:
        return ctx.inputs

    @g.step
    async def double(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * 2

    @g.step
    async def negate(ctx: StepContext[None, None, int]) -> int:
        return -ctx.inputs

    collect = g.join(reduce_list_append, initial_factory=list[int])
    mapped = g.edge_from(items).map(downstream_join_id=collect.id if name_the_join else None)
    if decision:
        g.add(
            mapped.to(
                g.decision().branch(g.match(int, matches=lambda x: x > 0).to(double)).branch(g.match(int).to(negate))
            ),
            g.edge_from(negate).to(collect),
        )
    else:
        g.add(mapped.to(double))
    g.add(
        g.edge_from(g.start_node).to(items),
        g.edge_from(double).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    return g.build()


@pytest.mark.parametrize('decision', [False, True], ids=['straight', 'through-a-decision'])
async def test_an_empty_map_that_names_its_join_ends_with_the_joins_initial_value(decision: bool) -> None:
    graph = mapped_graph(decision=decision, name_the_join=True)
    assert await graph.run(inputs=[]) == []
    assert sorted(await graph.run(inputs=[3, 1])) == [2, 6]


@pytest.mark.parametrize('decision', [False, True], ids=['straight', 'through-a-decision'])
async def test_an_empty_map_that_does_not_name_its_join_is_an_error_that_says_what_to_do(decision: bool) -> None:
    # pydantic-graph 2.x fails here too ("no result was produced"): the join is only known through `.map()`.
    graph = mapped_graph(decision=decision, name_the_join=False)
    assert sorted(await graph.run(inputs=[-1, 2])) == ([1, 4] if decision else [-2, 4])
    with pytest.raises(GraphRuntimeError, match=r'no task left.*empty iterable.*`downstream_join_id=`'):
        await graph.run(inputs=[])


@pytest.mark.parametrize('kind', ['memory', 'file', 'sqlite'])
async def test_an_empty_map_ends_the_same_when_persisted_and_stored_runs_resume_past_it(
    kind: str, tmp_path: Path
) -> None:
    graph = mapped_graph(decision=True, name_the_join=True)

    def store(run: str) -> Any:
        if kind == 'file':
            return FileStatePersistence[None, list[int]](tmp_path / f'{run}.json')
        if kind == 'sqlite':
            return SqliteStatePersistence[None, list[int]](tmp_path / 'runs.db', run)
        return FullStatePersistence[None, list[int]]()

    assert await graph.run(inputs=[], persistence=store('whole')) == []

    if kind == 'memory':
        return
    # Stopped once the empty map is stored (no item task, its join waiting with its initial value), then resumed.
    first = store('stopped')
    async with graph.iter(inputs=[], persistence=first) as run:
        events = []
        async for event in run:  # pragma: no branch
            events.append(event)
            if event == []:
                break
    assert [[task.node_id for task in tasks] for tasks in events] == [['items'], ['map'], []]
    await first.aclose()
    async with graph.iter_from_persistence(store('stopped')) as resumed:
        async for _ in resumed:
            pass
    assert resumed.output == []
