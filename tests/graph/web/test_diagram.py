"""The server-side SVG diagram: nodes and edges of a graph or of a stored run, and a run's path on them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext
from edgewise.graph.persistence import NodeError
from edgewise.graph.persistence.raw import RawSnapshot
from edgewise.graph.web._diagram import Diagram, diagram_of_graph, diagram_of_history, path_marks, render_svg
from edgewise.graph.web._render import snapshot_error, state_diff

from ._flows import pipeline


@dataclass
class Ask(BaseNode[None, None, str]):
    async def run(
        self, ctx: GraphRunContext
    ) -> Annotated[Answer, Edge(label='ask')] | Annotated[End[str], Edge(label='give up')]:
        return Answer()


@dataclass
class Answer(BaseNode[None, None, str]):
    async def run(self, ctx: GraphRunContext) -> BaseNode[None, None, str]:
        return Ask()


@dataclass
class Orphan(BaseNode[None, None, str]):
    async def run(self, ctx: GraphRunContext) -> End[str]:
        return End('x')


def test_a_graph_with_labels_any_node_edges_and_back_edges() -> None:
    graph = Graph(nodes=[Ask, Answer], name='loop')

    diagram = diagram_of_graph(graph)
    svg = render_svg(diagram, {'Ask': 'done', 'Answer': 'waiting'}, {('[*]', 'Ask'), ('Ask', 'Answer')})

    assert diagram == Diagram(
        nodes=['[*]', 'Ask', 'Answer', 'End'],
        edges=[('[*]', 'Ask', None), ('Ask', 'Answer', 'ask'), ('Ask', 'End', 'give up'), ('Answer', 'Ask', None),
               ('Answer', 'Answer', None)],
    )  # fmt: skip
    assert re.findall(r'data-node="([^"]+)" data-mark="(\w*)"', svg) == [
        ('[*]', ''), ('Ask', 'done'), ('Answer', 'waiting'), ('End', ''),
    ]  # fmt: skip
    assert svg.count('class="edge taken"') == 2
    assert '>give up</text>' in svg
    assert svg.count(' C ') == 2  # the two edges back up are curves


def test_a_node_no_edge_reaches_gets_a_layer_of_its_own() -> None:
    svg = render_svg(Diagram(nodes=['[*]', 'A', 'Lonely'], edges=[('[*]', 'A', None)]))

    tops = dict(re.findall(r'<rect x="[\d.]+" y="([\d.]+)"[^>]*/><text[^>]*>(\w+)<', svg)[::-1])
    assert {name: float(y) for y, name in tops.items()} == {'A': 110.0, 'Lonely': 200.0}


def test_a_start_node_is_the_first_when_every_node_has_an_edge_in() -> None:
    diagram = diagram_of_graph(Graph(nodes=[Answer, Ask, Orphan]))  # `Answer` may go to any node

    assert [edge for edge in diagram.edges if edge[0] == '[*]'] == [('[*]', 'Answer', None)]


def _history() -> list[RawSnapshot]:
    from edgewise.graph.persistence.raw import RAW_SNAPSHOT_ADAPTER

    def node(node_id: str, status: str, state: object) -> RawSnapshot:
        data = {'kind': 'node', 'id': f'{node_id}:1', 'node': {'node_id': node_id}, 'status': status, 'state': state}
        return RAW_SNAPSHOT_ADAPTER.validate_python(data)

    return [
        node('Fetch', 'success', {'n': 1}),
        node('Parse', 'success', {'n': 2}),
        node('Fetch', 'success', {'n': 3}),
        node('Parse', 'success', {'n': 4}),
        node('Fetch', 'running', {'n': 5}),
    ]


def test_a_stored_run_drawn_without_its_graph() -> None:
    history = _history()

    assert diagram_of_history(history) == Diagram(
        nodes=['[*]', 'Fetch', 'Parse'],
        edges=[('[*]', 'Fetch', None), ('Fetch', 'Parse', None), ('Parse', 'Fetch', None)],
    )
    assert path_marks(history, running=True)[0] == {'Fetch': 'running', 'Parse': 'done'}
    assert path_marks(history, running=False)[0] == {'Fetch': 'waiting', 'Parse': 'done'}
    assert len(diagram_of_graph(pipeline).nodes) == 5


def test_the_stored_error_of_a_failed_snapshot() -> None:
    snapshot = _history()[0]
    assert snapshot_error(snapshot) is None

    snapshot.error = NodeError(type='RuntimeError', message='the disk is full', traceback='line 3')  # type: ignore[union-attr]
    assert snapshot_error(snapshot) == {'type': 'RuntimeError', 'message': 'the disk is full', 'traceback': 'line 3'}

    @dataclass
    class Stored:
        type: str
        message: str

    snapshot.error = Stored('KeyError', "'x'")  # type: ignore[union-attr]
    assert snapshot_error(snapshot) == {'type': 'KeyError', 'message': "'x'", 'traceback': ''}


def test_state_diff() -> None:
    assert state_diff({'a': 1, 'b': [1], 'c': {}}, {'a': 2, 'b': [1, 2], 'd': 'x'}) == [
        ('~', 'a', '1 → 2'), ('+', 'b[1]', '2'), ('+', 'd', '"x"'), ('-', 'c', '{}'),
    ]  # fmt: skip
    assert state_diff(None, 3) == [('~', '(state)', 'null → 3')]


def test_edges_across_a_layer_go_side_to_side() -> None:
    diagram = Diagram(
        nodes=['[*]', 'A', 'B'], edges=[('[*]', 'A', None), ('[*]', 'B', None), ('A', 'B', 'on'), ('B', 'A', None)]
    )

    svg = render_svg(diagram)

    across = re.findall(r'd="M ([\d.]+) ([\d.]+) L ([\d.]+) ([\d.]+)"', svg)[2:]
    assert [(float(x1) < float(x2), y1 == y2) for x1, y1, x2, y2 in across] == [(True, True), (False, True)]
    assert '>on</text>' in svg
