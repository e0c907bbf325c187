"""Edges read from the return hints of `run`, and the errors for graphs defined wrongly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Union

import pytest
from typing_extensions import TypeAliasType

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext, GraphSetupError
from edgewise.graph._edges import comma_and
from edgewise.graph.nodes import NodeDef


class Stop(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(1)


class Other(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(2)


class PipeUnion(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Stop | Other | End[int]:
        return End(0)


class TypingUnion(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Union[Stop, Other]:  # noqa: UP007
        return Stop()


NextStep = TypeAliasType('NextStep', Stop | Other)


class Aliased(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> NextStep:
        return Stop()


class Labelled(BaseNode[None, None, int]):
    async def run(
        self, ctx: GraphRunContext
    ) -> Annotated[Stop, Edge(label='stop')] | Other | Annotated[End[int], Edge(label='done')]:
        return End(0)


class LabelledUnion(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Annotated[Stop | Other, Edge(label='either')]:
        return Stop()


class AnnotatedWithoutEdge(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Annotated[Stop, 'not an edge']:
        return Stop()


class Anywhere(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> BaseNode:
        return Stop()  # type: ignore[return-value]  # bare `BaseNode` means `BaseNode[None, None, Never]`


class AnywhereOrEnd(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> BaseNode[None, None, int] | End[int]:
        return End(0)


class ForwardRef(BaseNode[None, None, int]):
    # `from __future__ import annotations`: `DefinedLater` is a string until the graph resolves it.
    async def run(self, ctx: GraphRunContext) -> DefinedLater:
        return DefinedLater()


class DefinedLater(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(3)


def node_def(graph: Graph[Any, Any, Any], node: type[BaseNode[Any, Any, Any]]) -> NodeDef[Any, Any, Any]:
    return graph.node_defs[node.get_node_id()]


def test_edges_from_a_pipe_union_with_end() -> None:
    graph = Graph(nodes=(PipeUnion, Stop, Other))
    assert node_def(graph, PipeUnion) == NodeDef(
        node=PipeUnion,
        node_id='PipeUnion',
        note=None,
        next_node_edges={'Stop': Edge(None), 'Other': Edge(None)},
        end_edge=Edge(None),
        returns_base_node=False,
    )


def test_edges_from_a_typing_union() -> None:
    graph = Graph(nodes=(TypingUnion, Stop, Other))
    assert node_def(graph, TypingUnion).next_node_edges == {'Stop': Edge(None), 'Other': Edge(None)}
    assert node_def(graph, TypingUnion).end_edge is None


def test_edges_from_a_type_alias() -> None:
    graph = Graph(nodes=(Aliased, Stop, Other))
    assert node_def(graph, Aliased).next_node_edges == {'Stop': Edge(None), 'Other': Edge(None)}


def test_edges_from_end_only() -> None:
    graph = Graph(nodes=(Stop,))
    assert node_def(graph, Stop).next_node_edges == {}
    assert node_def(graph, Stop).end_edge == Edge(None)


def test_edge_labels_from_annotated_members() -> None:
    graph = Graph(nodes=(Labelled, Stop, Other))
    assert node_def(graph, Labelled).next_node_edges == {'Stop': Edge('stop'), 'Other': Edge(None)}
    assert node_def(graph, Labelled).end_edge == Edge('done')


def test_a_label_on_an_annotated_union_applies_to_each_member() -> None:
    graph = Graph(nodes=(LabelledUnion, Stop, Other))
    assert node_def(graph, LabelledUnion).next_node_edges == {'Stop': Edge('either'), 'Other': Edge('either')}


def test_annotated_metadata_other_than_edge_is_ignored() -> None:
    graph = Graph(nodes=(AnnotatedWithoutEdge, Stop))
    assert node_def(graph, AnnotatedWithoutEdge).next_node_edges == {'Stop': Edge(None)}


def test_bare_base_node_may_go_to_any_node() -> None:
    graph = Graph(nodes=(Anywhere, Stop))
    assert node_def(graph, Anywhere).returns_base_node is True
    assert node_def(graph, Anywhere).next_node_edges == {}
    assert node_def(graph, Anywhere).end_edge is None


def test_parametrised_base_node_may_go_to_any_node() -> None:
    graph = Graph(nodes=(AnywhereOrEnd,))
    assert node_def(graph, AnywhereOrEnd).returns_base_node is True
    assert node_def(graph, AnywhereOrEnd).end_edge == Edge(None)


def test_forward_references_resolve() -> None:
    graph = Graph(nodes=(ForwardRef, DefinedLater))
    assert node_def(graph, ForwardRef).next_node_edges == {'DefinedLater': Edge(None)}


def test_classes_defined_inside_a_function_resolve() -> None:
    @dataclass
    class First(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> Second:
            return Second()

    @dataclass
    class Second(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> First | End[int]:
            return End(1)

    graph = Graph(nodes=(First, Second))
    assert node_def(graph, First).next_node_edges == {'Second': Edge(None)}
    assert node_def(graph, Second).next_node_edges == {'First': Edge(None)}


def test_classes_defined_inside_a_function_resolve_through_a_parametrised_graph() -> None:
    class Only(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> Only | End[int]:
            return End(1)

    graph = Graph[None, None, int](nodes=(Only,))
    assert node_def(graph, Only).next_node_edges == {'Only': Edge(None)}


def test_an_unresolvable_hint_is_a_setup_error() -> None:
    class Lost(BaseNode):
        async def run(self, ctx: GraphRunContext) -> Nowhere:  # type: ignore[name-defined]  # noqa: F821
            raise AssertionError

    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(Lost,))
    assert exc_info.value.message == (
        "Node `Lost`: cannot resolve the type hints of `run` (name 'Nowhere' is not defined). Define the referenced "
        'class before building the graph, or in the scope where `Graph(...)` is called.'
    )


def test_a_missing_return_hint_is_a_setup_error() -> None:
    class NoHint(BaseNode):
        async def run(self, ctx: GraphRunContext):
            return End(None)

    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(NoHint,))
    assert exc_info.value.message == (
        f'Node {NoHint!r} is missing a return type hint on its `run` method; annotate it with the nodes it may '
        'return next, e.g. `-> NextNode | End[int]`.'
    )


def test_an_invalid_return_type_is_a_setup_error() -> None:
    class ReturnsInt(BaseNode):
        async def run(self, ctx: GraphRunContext) -> int:  # type: ignore[override]
            return 1

    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(ReturnsInt,))
    assert exc_info.value.message == (
        "Invalid return type: <class 'int'> in the hint of `ReturnsInt.run`; each member must be a `BaseNode` subclass "
        'or `End[...]`.'
    )


def test_none_in_the_return_type_is_a_setup_error() -> None:
    class MaybeStop(BaseNode[None, None, int]):
        async def run(self, ctx: GraphRunContext) -> Stop | None:  # type: ignore[override]
            return None

    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(MaybeStop, Stop))
    assert exc_info.value.message == (
        "Invalid return type: <class 'NoneType'> in the hint of `MaybeStop.run`; each member must be a `BaseNode` "
        'subclass or `End[...]`.'
    )


def test_a_generic_non_node_return_type_is_a_setup_error() -> None:
    class ReturnsList(BaseNode):
        async def run(self, ctx: GraphRunContext) -> list[int]:  # type: ignore[override]
            return []

    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(ReturnsList,))
    assert exc_info.value.message == (
        'Invalid return type: list[int] in the hint of `ReturnsList.run`; each member must be a `BaseNode` subclass '
        'or `End[...]`.'
    )


def test_a_duplicate_node_id_is_a_setup_error() -> None:
    def make() -> type[BaseNode[None, None, int]]:
        class Stop(BaseNode[None, None, int]):
            async def run(self, ctx: GraphRunContext) -> End[int]:
                return End(1)

        return Stop

    duplicate = make()
    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(Stop, duplicate))
    assert exc_info.value.message == (
        f'Node ID `Stop` is not unique — found on {Stop} and {duplicate}. '
        'Rename one of the classes or override `get_node_id`.'
    )


def test_a_node_referenced_but_not_included_is_a_setup_error() -> None:
    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(PipeUnion, Stop))
    assert exc_info.value.message == '`Other` is referenced by `PipeUnion` but not included in the graph.'


def test_every_node_referenced_but_not_included_is_named() -> None:
    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(PipeUnion, TypingUnion, Labelled))
    assert exc_info.value.message == (
        'Nodes are referenced in the graph but not included in the graph:\n'
        ' `Stop` is referenced by `PipeUnion`, `TypingUnion`, and `Labelled`\n'
        ' `Other` is referenced by `PipeUnion`, `TypingUnion`, and `Labelled`'
    )


def test_a_node_that_is_not_a_base_node_subclass_is_a_setup_error() -> None:
    with pytest.raises(GraphSetupError) as exc_info:
        Graph(nodes=(int,))  # type: ignore[arg-type]
    assert exc_info.value.message == "Graph nodes must be `BaseNode` subclasses, got <class 'int'>."


def test_setup_errors_are_type_errors() -> None:
    with pytest.raises(TypeError):
        Graph(nodes=(PipeUnion,))


@pytest.mark.parametrize(
    ('items', 'joined'),
    [(['a'], 'a'), (['a', 'b'], 'a, and b'), (['a', 'b', 'c'], 'a, b, and c')],
)
def test_comma_and(items: list[str], joined: str) -> None:
    assert comma_and(items) == joined
