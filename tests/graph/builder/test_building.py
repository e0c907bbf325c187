"""Building builder graphs: ids, edges read from return hints, and the errors of `add` and `build`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from edgewise.graph.builder import (
    BaseNode,
    End,
    GraphBuilder,
    GraphBuildingError,
    GraphRunContext,
    GraphSetupError,
    GraphValidationError,
    StepContext,
    StepNode,
    reduce_list_append,
    reduce_sum,
)
from edgewise.graph.builder.id_types import NodeID, generate_placeholder_node_id, replace_placeholder_id
from edgewise.graph.builder.join import JoinNode
from edgewise.graph.builder.node_types import is_destination, is_source
from edgewise.graph.builder.util import Some, TypeExpression, get_callable_name, unpack_type_expression
from edgewise.graph.exceptions import GraphError

pytestmark = pytest.mark.anyio


async def noop(ctx: StepContext[None, None, Any]) -> Any:
    return None


def test_stand_in_ids_become_readable_and_numbered() -> None:
    g = GraphBuilder(output_type=list[int])
    a, b = g.step(noop, node_id='a'), g.step(noop, node_id='b')
    first = g.join(reduce_list_append, initial=list[int]())
    second = g.join(reduce_list_append, initial=list[int]())
    g.add(
        g.edge_from(g.start_node).to(a, b),
        g.edge_from(a).map().to(first),
        g.edge_from(b).map().to(second),
        g.edge_from(first, second).to(g.end_node),
    )
    graph = g.build()
    assert sorted(graph.nodes) == [
        '__end__',
        '__start__',
        'a',
        'b',
        'broadcast',
        'map',
        'map_2',
        'reduce_list_append',
        'reduce_list_append_2',
    ]
    assert (first.id, second.id) == ('reduce_list_append', 'reduce_list_append_2')
    assert replace_placeholder_id(NodeID(generate_placeholder_node_id('x'))) == 'x'
    assert replace_placeholder_id('__placeholder__:nolabel') == '__placeholder__:nolabel'  # type: ignore[arg-type]


def test_the_same_id_for_two_nodes_is_refused() -> None:
    g = GraphBuilder()
    g.add(g.edge_from(g.start_node).to(g.step(noop, node_id='same')))
    with pytest.raises(GraphBuildingError, match=r"All nodes must have unique node IDs\. 'same' was the ID for"):
        g.add(g.edge_from(g.start_node).to(g.step(noop, node_id='same')))


@pytest.mark.parametrize(
    ('make', 'message'),
    [
        (lambda g: None, 'The graph has no edges from the start node.'),
        (lambda g: g.add_edge(g.start_node, g.step(noop)), 'The graph has no edges to the end node.'),
        (
            lambda g: g.add(g.edge_from(g.start_node).to(g.end_node, g.step(noop, node_id='dead'))),
            r"The following nodes have no outgoing edges: \['dead'\].",
        ),
        (
            lambda g: (g.add_edge(g.start_node, g.end_node), g.add_edge(g.step(noop, node_id='alone'), g.end_node)),
            r"The following nodes are not reachable from the start node: \['alone'\].",
        ),
    ],
)
def test_structure_checks_name_what_is_wrong_and_can_be_skipped(make: Any, message: str) -> None:
    g = GraphBuilder()
    make(g)
    with pytest.raises(GraphValidationError, match=message + '.*validate_graph_structure=False'):
        g.build()
    g.build(validate_graph_structure=False)
    assert issubclass(GraphValidationError, GraphError)
    assert issubclass(GraphValidationError, ValueError)


def test_a_join_without_a_dominating_fork_is_refused_with_a_diagram() -> None:
    g = GraphBuilder(output_type=int)
    source = g.step(noop, node_id='source')
    total = g.join(reduce_sum, initial=0, node_id='total')
    g.add(
        g.edge_from(g.start_node).to(source),
        g.edge_from(source).to(total),
        g.edge_from(total).to(source),  # a cycle through the join that no fork is part of
    )
    g.add_edge(total, g.end_node)
    with pytest.raises(GraphBuildingError, match=r"(?s)Join 'total' has no dominating fork.*stateDiagram-v2"):
        g.build()


def test_a_join_may_name_its_parent_fork() -> None:
    g = GraphBuilder(input_type=list[int], output_type=int)
    one = g.step(noop, node_id='one')
    total = g.join(reduce_sum, initial=0, parent_fork_id='spread')
    g.add(
        g.edge_from(g.start_node).map(fork_id='spread').to(one),
        g.edge_from(one).to(total),
        g.edge_from(total).to(g.end_node),
    )
    assert g.build().get_parent_fork(total.id).fork_id == 'spread'


def test_broadcasting_to_no_branch_is_refused() -> None:
    g = GraphBuilder()
    with pytest.raises(GraphBuildingError, match='returned no branches'):
        g.edge_from(g.start_node).broadcast(lambda e: [])
    with pytest.raises(GraphBuildingError, match='returned no branches'):
        g.match(int).broadcast(lambda b: [])


def test_a_map_from_several_sources_is_refused() -> None:
    g = GraphBuilder()
    with pytest.raises(NotImplementedError, match='separate edge'):
        g.edge_from(g.step(noop, node_id='x'), g.step(noop, node_id='y')).map()


def test_a_join_takes_exactly_one_initial_value() -> None:
    g = GraphBuilder()
    with pytest.raises(GraphSetupError, match='exactly one of `initial=` and `initial_factory=`'):
        g.join(reduce_sum)  # type: ignore[call-overload]
    with pytest.raises(GraphSetupError, match='exactly one'):
        g.join(reduce_sum, initial=0, initial_factory=int)  # type: ignore[call-overload]


def test_mapping_edges_take_labels_on_both_sides_of_the_map() -> None:
    g = GraphBuilder(output_type=list[int])
    items, each = g.step(noop, node_id='items'), g.step(noop, node_id='each')
    collect = g.join(reduce_list_append, initial_factory=list[int], node_id='collect')
    g.add_edge(g.start_node, items)
    g.add_mapping_edge(items, each, pre_map_label='before', post_map_label='after', fork_id=NodeID('fan'))
    g.add(g.edge_from(each).to(collect), g.edge_from(collect).to(g.end_node))
    rendered = g.build().render()
    assert '  items --> fan: before\n  fan --> each: after' in rendered


# -- edges read from return hints


@dataclass
class Second(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext[None, None]) -> End[int]:
        return End(2)


@dataclass
class First(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext[None, None]) -> Second | End[int]:
        return Second()


def test_a_base_node_class_brings_its_edges() -> None:
    g = GraphBuilder(output_type=int)
    g.add(g.edge_from(g.start_node).to(First), g.node(First), g.node(Second))
    graph = g.build()
    assert set(graph.nodes) == {'__start__', '__end__', 'First', 'Second', 'decision'}
    assert str(graph) == graph.render()


async def test_a_step_returning_a_node_class_gets_the_edge_to_it() -> None:
    g = GraphBuilder(output_type=int)

    @g.step
    async def begin(ctx: StepContext[None, None, None]) -> Second:
        return Second()

    g.add(g.edge_from(g.start_node).to(begin), g.node(Second))
    assert await g.build().run() == 2


@dataclass
class Vague(BaseNode[None, None, Any]):
    async def run(self, ctx: GraphRunContext[None, None]) -> BaseNode[None, None, Any]:  # pragma: no cover
        raise NotImplementedError


@dataclass
class NoHint(BaseNode[None, None, Any]):
    async def run(self, ctx: GraphRunContext[None, None]):  # pragma: no cover
        raise NotImplementedError


@dataclass
class BareStepNode(BaseNode[None, None, Any]):
    async def run(self, ctx: GraphRunContext[None, None]) -> StepNode[None, None]:  # pragma: no cover
        raise NotImplementedError


@dataclass
class BareJoinNode(BaseNode[None, None, Any]):
    async def run(
        self, ctx: GraphRunContext[None, None]
    ) -> Annotated[JoinNode[None, None], 'no join']:  # pragma: no cover
        raise NotImplementedError


@dataclass
class Unresolvable(BaseNode[None, None, Any]):
    async def run(self, ctx: GraphRunContext[None, None]) -> NotDefinedAnywhere:  # type: ignore[name-defined]  # noqa: F821  # pragma: no cover
        raise NotImplementedError


@pytest.mark.parametrize(
    ('node', 'message'),
    [
        (Vague, 'includes a plain `BaseNode`'),
        (NoHint, 'is missing a return type hint'),
        (BareStepNode, 'a `StepNode` without the `Step` it goes to'),
        (BareJoinNode, 'a `JoinNode` without the `Join` it goes to'),
        (Unresolvable, "Node 'Unresolvable': cannot resolve the type hints"),
    ],
)
def test_a_node_whose_hint_does_not_name_its_edges_is_refused(node: Any, message: str) -> None:
    with pytest.raises(GraphSetupError, match=message):
        GraphBuilder().node(node)


def test_a_step_hint_that_names_other_types_adds_no_edge() -> None:
    g = GraphBuilder(output_type=int)

    @g.step
    async def mixed(ctx: StepContext[None, None, None]) -> Second | int:  # pragma: no cover
        return 1

    g.add_edge(g.start_node, mixed)
    assert set(g.build(validate_graph_structure=False).edges_by_source) == {'__start__'}


# -- small helpers


def test_the_typing_helpers() -> None:
    assert unpack_type_expression(int) is int
    assert unpack_type_expression(TypeExpression[int | str]) == int | str  # type: ignore[arg-type]
    assert Some(None).value is None
    assert get_callable_name(noop) == 'noop'
    assert get_callable_name(3) == '3'


def test_node_kinds() -> None:
    g = GraphBuilder()
    step = g.step(noop)
    assert is_source(step)
    assert is_destination(step)
    assert is_source(g.start_node)
    assert not is_destination(g.start_node)
    assert is_destination(g.end_node)
    assert not is_source(g.end_node)
    assert repr(step) == "Step(id='noop', label=None)"


def test_reprs_and_paths() -> None:
    from edgewise.graph.builder import StepContext as Context
    from edgewise.graph.builder.paths import BroadcastMarker, DestinationMarker, LabelMarker, MapMarker, Path

    g = GraphBuilder()
    step = g.step(noop, node_id='s')
    join = g.join(reduce_sum, initial=0, node_id='j')
    assert repr(Context(state=1, deps=2, inputs=3)) == 'StepContext(state=1, deps=2, inputs=3)'
    assert repr(step.as_node(4)) == "StepNode(step=Step(id='s', label=None), inputs=4)"
    assert step.as_node(4) == step.as_node(4)
    assert step.as_node(4) != step.as_node(5)
    assert repr(join) == "Join(id='j')"
    assert repr(join.as_node(1)) == "JoinNode(join=Join(id='j'), inputs=1)"
    assert repr(g.edge_from(step).to(g.end_node)).startswith('EdgePath(sources=[Step(')
    fork = MapMarker(NodeID('m'), None)
    path = Path([BroadcastMarker([], NodeID('b')), fork, LabelMarker('x'), DestinationMarker(NodeID('s'))])
    assert path.last_fork is fork
    assert path.next_path.items == path.items[1:]
    assert Path([LabelMarker('x')]).last_fork is None


def test_match_node_and_stream_with_arguments() -> None:
    g = GraphBuilder(output_type=int)
    branch = g.match_node(Second)
    assert [d.id for d in branch.destinations] == ['Second']

    @g.stream(node_id='numbers', label='Numbers')
    async def numbers(ctx: StepContext[None, None, None]) -> Any:  # pragma: no cover - never run
        yield 1

    assert (numbers.id, numbers.label) == ('numbers', 'Numbers')
