"""Builder graphs run: steps, maps and broadcasts joined by reducers, decisions, transforms, `BaseNode` steps."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import anyio
import pytest

from edgewise.graph import nodes as classic_nodes
from edgewise.graph.builder import (
    BaseNode,
    End,
    GraphBuilder,
    GraphRunContext,
    GraphRuntimeError,
    ReduceFirstValue,
    ReducerContext,
    StepContext,
    StepNode,
    TypeExpression,
    reduce_dict_update,
    reduce_list_append,
    reduce_list_extend,
    reduce_null,
    reduce_sum,
)
from edgewise.graph.builder.join import JoinNode

pytestmark = pytest.mark.anyio


@dataclass
class Log:
    entries: list[str] = field(default_factory=list[str])


async def test_a_chain_of_steps_passes_each_output_on() -> None:
    g = GraphBuilder(state_type=Log, input_type=int, output_type=str)

    @g.step
    async def double(ctx: StepContext[Log, None, int]) -> int:
        ctx.state.entries.append('double')
        return ctx.inputs * 2

    @g.step(node_id='show', label='Show it')
    async def render(ctx: StepContext[Log, None, int]) -> str:
        ctx.state.entries.append('show')
        return f'={ctx.inputs}'

    g.add(g.edge_from(g.start_node).to(double), g.edge_from(double).to(render), g.edge_from(render).to(g.end_node))
    state = Log()
    assert await g.build().run(state=state, inputs=21) == '=42'
    assert state.entries == ['double', 'show']


async def test_a_map_runs_the_rest_of_the_path_once_per_item_and_the_join_reduces() -> None:
    g = GraphBuilder(output_type=int)

    @g.step
    async def numbers(ctx: StepContext[None, None, None]) -> list[int]:
        return [1, 2, 3, 4]

    @g.step
    async def square(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * ctx.inputs

    total = g.join(reduce_sum, initial=0)
    g.add(
        g.edge_from(g.start_node).to(numbers),
        g.edge_from(numbers).map().to(square),
        g.edge_from(square).to(total),
        g.edge_from(total).to(g.end_node),
    )
    assert await g.build().run() == 30


@pytest.mark.parametrize(
    ('reducer', 'initial', 'values', 'expected'),
    [
        (reduce_list_append, [], [1, 2], [1, 2]),
        (reduce_list_extend, [], [[1], [2, 3]], [1, 2, 3]),
        (reduce_dict_update, {}, [{'a': 1}, {'b': 2}], {'a': 1, 'b': 2}),
        (reduce_null, None, [1, 2], None),
    ],
)
async def test_each_reducer_folds_the_values_of_a_broadcast(
    reducer: Any, initial: Any, values: list[Any], expected: Any
) -> None:
    g = GraphBuilder(output_type=object)
    steps = []
    for index, value in enumerate(values):

        async def give(ctx: StepContext[None, None, None], value: Any = value) -> Any:
            return value

        steps.append(g.step(give, node_id=f'give_{index}'))
    join = g.join(reducer, initial=initial)
    g.add(
        g.edge_from(g.start_node).to(*steps),
        *(g.edge_from(s).to(join) for s in steps),
        g.edge_from(join).to(g.end_node),
    )
    result = await g.build().run()
    if isinstance(expected, list):
        assert sorted(result) == sorted(expected)  # type: ignore[call-overload]
    else:
        assert result == expected


async def test_the_initial_value_is_copied_for_every_run() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.step
    async def items(ctx: StepContext[None, None, None]) -> list[int]:
        return [1]

    collect = g.join(reduce_list_append, initial=list[int]())
    g.add_mapping_edge(items, collect)
    g.add(g.edge_from(g.start_node).to(items), g.edge_from(collect).to(g.end_node))
    graph = g.build()
    assert await graph.run() == [1]
    assert await graph.run() == [1]


async def test_a_reducer_with_a_context_sees_state_and_deps() -> None:
    g = GraphBuilder(state_type=Log, deps_type=str, output_type=int)

    @g.step
    async def items(ctx: StepContext[Log, str, None]) -> list[int]:
        return [1, 2]

    def count(ctx: ReducerContext[Log, str], current: int, value: int) -> int:
        ctx.state.entries.append(f'{ctx.deps}:{value}')
        return current + 1

    counted = g.join(count, initial_factory=lambda: 0)
    g.add(
        g.edge_from(g.start_node).to(items),
        g.edge_from(items).map().to(counted),
        g.edge_from(counted).to(g.end_node),
    )
    state = Log()
    assert await g.build().run(state=state, deps='d') == 2
    assert sorted(state.entries) == ['d:1', 'd:2']


async def test_reduce_first_value_keeps_the_first_and_cancels_the_siblings_still_running() -> None:
    release_first = anyio.Event()
    g = GraphBuilder(state_type=Log, output_type=str)

    @g.step
    async def names(ctx: StepContext[Log, None, None]) -> list[str]:
        return ['fast', 'slow', 'slower']

    @g.step
    async def work(ctx: StepContext[Log, None, str]) -> str:
        if ctx.inputs == 'fast':
            await release_first.wait()
            return 'fast done'
        ctx.state.entries.append(f'{ctx.inputs} started')
        if ctx.inputs == 'slower':
            release_first.set()
        await anyio.sleep_forever()
        raise AssertionError('cancelled before')  # pragma: no cover

    first = g.join(ReduceFirstValue[str](), initial='')
    g.add(
        g.edge_from(g.start_node).to(names),
        g.edge_from(names).map().to(work),
        g.edge_from(work).to(first),
        g.edge_from(first).to(g.end_node),
    )
    state = Log()
    assert await g.build().run(state=state) == 'fast done'
    assert sorted(state.entries) == ['slow started', 'slower started']


async def test_an_end_reached_by_one_branch_cancels_the_others() -> None:
    g = GraphBuilder(output_type=int)

    @g.step
    async def items(ctx: StepContext[None, None, None]) -> list[int]:
        return [1, 2]

    @g.step
    async def maybe_wait(ctx: StepContext[None, None, int]) -> int:
        if ctx.inputs == 2:
            await anyio.sleep_forever()
        return ctx.inputs

    g.add(
        g.edge_from(g.start_node).to(items),
        g.edge_from(items).map().to(maybe_wait),
        g.edge_from(maybe_wait).to(g.end_node),
    )
    assert await g.build().run() == 1


async def test_a_map_over_an_async_stream_runs_each_item_as_it_comes() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.stream
    async def count(ctx: StepContext[None, None, None]) -> AsyncIterator[int]:
        for n in range(3):
            yield n

    @g.step
    async def plus_ten(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + 10

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(count),
        g.edge_from(count).map().to(plus_ten),
        g.edge_from(plus_ten).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    assert sorted(await g.build().run()) == [10, 11, 12]


async def test_an_empty_map_still_fires_its_downstream_join() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.step
    async def nothing(ctx: StepContext[None, None, None]) -> list[int]:
        return []

    @g.step
    async def keep(ctx: StepContext[None, None, int]) -> int:  # pragma: no cover - never reached
        return ctx.inputs

    collect = g.join(reduce_list_append, initial_factory=list[int], node_id='collect')
    g.add(
        g.edge_from(g.start_node).to(nothing),
        g.edge_from(nothing).map(downstream_join_id='collect').to(keep),
        g.edge_from(keep).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    assert await g.build().run() == []


async def test_mapping_a_value_that_is_not_iterable_is_refused_naming_the_map() -> None:
    g = GraphBuilder(output_type=int)

    @g.step
    async def one(ctx: StepContext[None, None, None]) -> int:
        return 1

    @g.step
    async def keep(ctx: StepContext[None, None, int]) -> int:  # pragma: no cover - never reached
        return ctx.inputs

    g.add(
        g.edge_from(g.start_node).to(one),
        g.edge_from(one).map(fork_id='spread').to(keep),  # type: ignore[misc]
        g.edge_from(keep).to(g.end_node),
    )
    with pytest.raises(GraphRuntimeError, match=r"Cannot map non-iterable value: 1 \(sent to map 'spread'\)"):
        await g.build().run()


async def test_a_decision_takes_the_first_branch_that_matches() -> None:
    # explicit type parameters: mypy does not infer them through `TypeExpression` (pyright does)
    g = GraphBuilder[None, None, int | str, str](input_type=TypeExpression[int | str], output_type=str)

    @g.step
    async def number(ctx: StepContext[None, None, int]) -> str:
        return f'number {ctx.inputs}'

    @g.step
    async def word(ctx: StepContext[None, None, str]) -> str:
        return f'word {ctx.inputs}'

    @g.step
    async def special(ctx: StepContext[None, None, object]) -> str:
        return f'special {ctx.inputs}'

    route = (
        g.decision(note='by kind')
        .branch(g.match(TypeExpression[Literal['magic']]).to(special))  # type: ignore[arg-type]
        .branch(
            g.match(int, matches=lambda v: isinstance(v, int) and v > 100)
            .transform(lambda ctx: -ctx.inputs)
            .to(special)
        )
        .branch(g.match(int).label('a number').to(number))
        .branch(g.match(str).to(word))
    )
    g.add(g.edge_from(g.start_node).to(route), *(g.edge_from(s).to(g.end_node) for s in (number, word, special)))
    graph = g.build()
    assert [await graph.run(inputs=v) for v in ('magic', 500, 5, 'hi')] == [
        'special magic',
        'special -500',
        'number 5',
        'word hi',
    ]


async def test_a_decision_without_a_matching_branch_says_so() -> None:
    g = GraphBuilder(input_type=object, output_type=object)
    g.add(g.edge_from(g.start_node).to(g.decision(node_id='route').branch(g.match(int).to(g.end_node))))
    with pytest.raises(GraphRuntimeError, match=r"No branch matched inputs 'text' for decision node 'route'"):
        await g.build().run(inputs='text')


async def test_a_decision_branch_on_any_or_object_matches_everything() -> None:
    g = GraphBuilder(input_type=object, output_type=object)
    route = g.decision().branch(g.match(TypeExpression[Any]).to(g.end_node))
    g.add(g.edge_from(g.start_node).to(route))
    assert await g.build().run(inputs=3.5) == 3.5


async def test_a_decision_branch_whose_type_cannot_be_tested_is_refused() -> None:
    g = GraphBuilder(input_type=object, output_type=object)
    route: Any = g.decision().branch(g.match(TypeExpression[list[int]]).to(g.end_node))  # type: ignore[arg-type]
    g.add(g.edge_from(g.start_node).to(route))
    with pytest.raises(GraphRuntimeError, match='give the branch a `matches=` predicate'):
        await g.build().run(inputs=[])


async def test_decision_branches_can_map_and_broadcast() -> None:
    g = GraphBuilder(input_type=list[int], output_type=list[int])

    @g.step
    async def double(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * 2

    @g.step
    async def negate(ctx: StepContext[None, None, int]) -> int:
        return -ctx.inputs

    collect = g.join(reduce_list_append, initial_factory=list[int])
    route = (
        g.decision()
        .branch(g.match(list, matches=lambda v: len(v) > 1).map().to(double))
        .branch(g.match(list).broadcast(lambda b: [b.transform(lambda ctx: ctx.inputs[0]).to(negate)], fork_id='both'))
    )
    g.add(
        g.edge_from(g.start_node).to(route),
        g.edge_from(double, negate).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    graph = g.build()
    assert sorted(await graph.run(inputs=[1, 2])) == [2, 4]
    assert await graph.run(inputs=[5]) == [-5]


async def test_edges_transform_and_broadcast() -> None:
    g = GraphBuilder(input_type=int, output_type=list[int])

    @g.step
    async def add_one(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs + 1

    @g.step
    async def times_ten(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs * 10

    collect = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).broadcast(
            lambda e: [e.transform(lambda ctx: ctx.inputs * 2).to(add_one), e.label('tens').to(times_ten)]
        ),
        g.edge_from(add_one, times_ten).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    assert sorted(await g.build().run(inputs=3)) == [7, 30]


async def test_a_step_with_two_edges_sends_its_output_down_both() -> None:
    g = GraphBuilder(output_type=list[str])

    @g.step
    async def source(ctx: StepContext[None, None, None]) -> str:
        return 'x'

    @g.step
    async def left(ctx: StepContext[None, None, str]) -> str:
        return ctx.inputs + 'L'

    @g.step
    async def right(ctx: StepContext[None, None, str]) -> str:
        return ctx.inputs + 'R'

    collect = g.join(reduce_list_append, initial_factory=list[str])
    g.add_edge(g.start_node, source)
    g.add_edge(source, left)
    g.add_edge(source, right, label='other')
    g.add(g.edge_from(left, right).to(collect), g.edge_from(collect).to(g.end_node))
    graph = g.build()
    assert 'source_broadcast_fork' in graph.nodes
    assert sorted(await graph.run()) == ['xL', 'xR']


async def test_nested_maps_join_inner_before_outer() -> None:
    g = GraphBuilder(output_type=list[int])

    @g.step
    async def rows(ctx: StepContext[None, None, None]) -> list[list[int]]:
        return [[1, 2], [3]]

    @g.step
    async def cell(ctx: StepContext[None, None, int]) -> int:
        return ctx.inputs

    row_sum = g.join(reduce_sum, initial=0, preferred_parent_fork='closest')
    sums = g.join(reduce_list_append, initial_factory=list[int])
    g.add(
        g.edge_from(g.start_node).to(rows),
        g.edge_from(rows).map().map().to(cell),
        g.edge_from(cell).to(row_sum),
        g.edge_from(row_sum).to(sums),
        g.edge_from(sums).to(g.end_node),
    )
    assert sorted(await g.build().run()) == [3, 3]


# -- BaseNode classes in builder graphs


@dataclass
class Count(BaseNode[Log, None, int]):
    n: int

    async def run(self, ctx: GraphRunContext[Log, None]) -> Count | End[int]:
        ctx.state.entries.append(f'count {self.n}')
        if self.n >= 2:
            return End(self.n)
        return Count(self.n + 1)


async def test_a_classic_base_node_runs_in_a_builder_graph() -> None:
    assert BaseNode is classic_nodes.BaseNode
    g = GraphBuilder(state_type=Log, output_type=int)

    @g.step
    async def begin(ctx: StepContext[Log, None, None]) -> Count:
        return Count(0)

    g.add(g.node(Count), g.edge_from(g.start_node).to(begin))
    state = Log()
    assert await g.build().run(state=state) == 2
    assert state.entries == ['count 0', 'count 1', 'count 2']


@dataclass
class HandOver(BaseNode[None, None, Any]):
    value: int

    async def run(
        self, ctx: GraphRunContext[None, None]
    ) -> Annotated[StepNode[None, None], tripled_step] | Annotated[JoinNode[None, None], gather_join]:
        if self.value > 5:
            return gather_join.as_node(self.value)
        return tripled_step.as_node(self.value)


_g = GraphBuilder(input_type=list[int], output_type=list[int])


@_g.step(node_id='tripled')
async def tripled_step(ctx: StepContext[None, None, int]) -> int:
    return ctx.inputs * 3


gather_join = _g.join(reduce_list_append, initial_factory=list[int], node_id='gather')
_g.add(
    _g.edge_from(_g.start_node).map().transform(lambda ctx: HandOver(ctx.inputs)).to(HandOver),
    _g.node(HandOver),
    _g.edge_from(tripled_step).to(gather_join),
    _g.edge_from(gather_join).to(_g.end_node),
)
hand_over_graph = _g.build()


async def test_a_base_node_hands_over_to_a_step_or_a_join() -> None:
    assert sorted(await hand_over_graph.run(inputs=[1, 7])) == [3, 7]


async def test_a_step_node_or_join_node_cannot_be_run_itself() -> None:
    ctx = GraphRunContext(state=None, deps=None)
    with pytest.raises(GraphRuntimeError, match="`StepNode` for step 'tripled' cannot be run itself"):
        await tripled_step.as_node(1).run(ctx)
    with pytest.raises(GraphRuntimeError, match="`JoinNode` for join 'gather' cannot be run itself"):
        await gather_join.as_node(1).run(ctx)


@dataclass
class Stray(BaseNode[None, None, Any]):
    async def run(self, ctx: GraphRunContext[None, None]) -> End[None]:  # pragma: no cover - never run
        return End(None)


@dataclass
class Wanderer(BaseNode[None, None, Any]):
    returns: Any

    async def run(self, ctx: GraphRunContext[None, None]) -> End[Any]:
        return self.returns  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ('returned', 'message'),
    [
        (Stray(), '`Stray`, which is not in this graph'),
        ('text', "returned 'text'; it must return a node or `End`"),
    ],
)
async def test_a_base_node_returning_something_the_graph_cannot_run_is_refused(returned: Any, message: str) -> None:
    g = GraphBuilder(output_type=object)
    g.add(g.edge_from(g.start_node).transform(lambda ctx: Wanderer(returned)).to(Wanderer), g.node(Wanderer))
    with pytest.raises(GraphRuntimeError, match=message):
        await g.build().run()


async def test_a_node_step_sent_something_else_than_its_node_says_what_to_send() -> None:
    g = GraphBuilder(output_type=object)
    g.add(g.edge_from(g.start_node).to(Wanderer), g.node(Wanderer))
    with pytest.raises(GraphRuntimeError, match="Step 'Wanderer' runs `Wanderer` nodes, but was sent None"):
        await g.build().run()
