"""`Graph.render()`: pydantic-graph 2.x's mermaid text, nodes and edges in order of distance from the start."""

from __future__ import annotations

from typing import Any

from edgewise.graph.builder import GraphBuilder, StepContext, reduce_list_append
from edgewise.graph.builder._mermaid import MermaidEdge, MermaidGraph, MermaidNode
from edgewise.graph.builder.graph_builder import build_mermaid_graph


async def pass_on(ctx: StepContext[None, None, Any]) -> Any:  # pragma: no cover - never run
    return ctx.inputs


def test_a_graph_with_a_map_a_join_a_decision_and_labels_renders_in_order() -> None:
    g = GraphBuilder(input_type=list[int], output_type=object)
    square = g.step(pass_on, node_id='square', label='Square it')
    small = g.step(pass_on, node_id='small')
    collect = g.join(reduce_list_append, initial_factory=list[int], node_id='collect')
    route = (
        g.decision(note='Big or small?', node_id='route')
        .branch(g.match(int, matches=lambda v: v < 10).label('small').to(small))
        .branch(g.match(int).to(collect))
    )
    g.add(
        g.edge_from(g.start_node).label('items').map(fork_id='each').to(square),
        g.edge_from(square).transform(lambda ctx: ctx.inputs).to(route),
        g.edge_from(small).to(collect),
        g.edge_from(collect).to(g.end_node),
    )
    graph = g.build()
    assert graph.render(title='Sizes', direction='LR') == (
        '---\n'
        'title: Sizes\n'
        '---\n'
        'stateDiagram-v2\n'
        '  direction LR\n'
        '  state each <<fork>>\n'
        '  square: Square it\n'
        '  state route <<choice>>\n'
        '  note right of route\n'
        '    Big or small?\n'
        '  end note\n'
        '  state collect <<join>>\n'
        '  small\n'
        '\n'
        '  [*] --> each: items\n'
        '  each --> square\n'
        '  square --> route\n'
        '  route --> collect\n'
        '  route --> small: small\n'
        '  small --> collect\n'
        '  collect --> [*]'
    )
    assert str(graph) == graph.render()
    assert repr(graph).startswith('<edgewise.graph.builder.graph_builder.Graph object at 0x')
    assert repr(graph).endswith(f'\n{graph.render()}\n>')


def test_edge_labels_can_be_left_out_and_broadcasts_are_forks() -> None:
    g = GraphBuilder()
    a, b = g.step(pass_on, node_id='a'), g.step(pass_on, node_id='b')
    g.add(
        g.edge_from(g.start_node).label('go').to(a, b, fork_id='both'),
        g.edge_from(a, b).label('done').to(g.end_node),
    )
    diagram = build_mermaid_graph(g.build().nodes, g.build().edges_by_source)
    assert diagram.render(edge_labels=False) == (
        'stateDiagram-v2\n'
        '  state both <<fork>>\n'
        '  a\n'
        '  b\n'
        '\n'
        '  [*] --> both\n'
        '  both --> a\n'
        '  both --> b\n'
        '  a --> [*]\n'
        '  b --> [*]'
    )


def test_a_diagram_keeps_its_own_title_and_direction_and_puts_unreachable_nodes_last() -> None:
    diagram = MermaidGraph(
        nodes=[MermaidNode('lonely', 'step', None, None), MermaidNode('__start__', 'start', None, None)],
        edges=[MermaidEdge('__start__', '__end__', None), MermaidEdge('lonely', '__end__', 'late')],
        title='T',
        direction='BT',
    )
    assert diagram.render() == (
        '---\ntitle: T\n---\nstateDiagram-v2\n  direction BT\n  lonely\n\n  [*] --> [*]\n  lonely --> [*]: late'
    )
