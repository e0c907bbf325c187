"""Mermaid code of graphs: byte-identical to pydantic-graph 1.x for the same graph and options.

Every expected text below was produced once by pydantic-graph 1.107.10 for the same graph definitions
and the same call (with `pydantic_graph` in place of `edgewise.graph`), and pasted here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from inline_snapshot import snapshot

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext, mermaid
from edgewise.graph.exceptions import DiagramNodeError


@dataclass
class CountState:
    number: int = 0


@dataclass
class Increment(BaseNode[CountState]):
    async def run(self, ctx: GraphRunContext[CountState]) -> Check42:
        ctx.state.number += 1
        return Check42()


@dataclass
class Check42(BaseNode[CountState, None, int]):
    async def run(self, ctx: GraphRunContext[CountState]) -> Increment | End[int]:
        if ctx.state.number == 42:
            return Increment()
        return End(ctx.state.number)


never_42 = Graph(nodes=(Increment, Check42))


@dataclass
class Ask(BaseNode[None, None, str]):
    """Ask a question.

    Then wait for the answer."""

    docstring_notes = True

    async def run(self, ctx: GraphRunContext) -> Annotated[Answer, Edge(label='ask it')]:
        return Answer()


@dataclass
class Answer(BaseNode[None, None, str]):
    """Check the answer (no note: docstring_notes is off)."""

    async def run(
        self, ctx: GraphRunContext
    ) -> Annotated[Ask, Edge(label='wrong')] | Reflect | Annotated[End[str], Edge(label='right')]:
        return End('ok')


@dataclass
class Reflect(BaseNode[None, None, str]):
    docstring_notes = True

    async def run(self, ctx: GraphRunContext) -> Annotated[Ask, Edge(label=None)] | Summary:
        return Ask()


class Summary(BaseNode[None, None, str]):
    """Summarise the session.

        An indented detail line.


    Last paragraph, after two blank lines.
    """

    docstring_notes = True

    async def run(self, ctx: GraphRunContext) -> End[str]:
        return End('done')


quiz = Graph(nodes=[Ask, Answer, Reflect, Summary])


@dataclass
class Router(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> BaseNode | End[None]:
        return End(None)


@dataclass
class Left(BaseNode):
    async def run(self, ctx: GraphRunContext) -> Annotated[BaseNode, Edge(label='ignored')] | Right:
        return Right()


@dataclass
class Right(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> Annotated[End[None], Edge(label='finish')] | Router:
        return End(None)


router = Graph(nodes=[Router, Left, Right])


def make_unnamed_graph() -> Graph[CountState, None, int]:
    return Graph(nodes=(Increment, Check42))


def test_named_graph_gets_its_name_as_title() -> None:
    """The inferred variable name becomes the front-matter title."""
    assert never_42.mermaid_code() == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_single_start_node_class() -> None:
    """A start node class gets a `[*] -->` arrow."""
    assert never_42.mermaid_code(start_node=Increment) == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  [*] --> Increment
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_start_node_by_id() -> None:
    """A start node may be given by its id."""
    assert never_42.mermaid_code(start_node='Check42') == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  Increment --> Check42
  [*] --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_start_node_instance() -> None:
    """A start node may be given as a node instance."""
    assert never_42.mermaid_code(start_node=Increment()) == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  [*] --> Increment
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_several_start_nodes_follow_graph_order() -> None:
    """Start arrows appear in node order, whatever the order given."""
    assert never_42.mermaid_code(start_node=['Check42', Increment]) == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  [*] --> Increment
  Increment --> Check42
  [*] --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_empty_start_nodes_draw_no_start_arrow() -> None:
    """An empty sequence of start nodes draws no start arrow."""
    assert never_42.mermaid_code(start_node=()) == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_custom_title() -> None:
    """An explicit title replaces the graph name."""
    assert never_42.mermaid_code(title='Never forty-two') == snapshot(
        """\
---
title: Never forty-two
---
stateDiagram-v2
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_title_false_drops_front_matter() -> None:
    """`title=False` leaves the front matter out."""
    assert never_42.mermaid_code(title=False) == snapshot(
        """\
stateDiagram-v2
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_empty_title_drops_front_matter() -> None:
    """An empty title leaves the front matter out."""
    assert never_42.mermaid_code(title='') == snapshot(
        """\
stateDiagram-v2
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_unnamed_graph_has_no_title() -> None:
    """A graph whose name cannot be inferred has no front matter."""
    # Not inside the `assert`: pytest's rewriting would bind the graph to a local the name is inferred from.
    code = make_unnamed_graph().mermaid_code(start_node=Increment)
    assert code == snapshot(
        """\
stateDiagram-v2
  [*] --> Increment
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_no_name_inference() -> None:
    """`infer_name=False` keeps an unnamed graph untitled."""
    assert make_unnamed_graph().mermaid_code(infer_name=False) == snapshot(
        """\
stateDiagram-v2
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_edge_labels_and_notes() -> None:
    """Edge labels, End labels and docstring notes (blank lines collapsed)."""
    assert quiz.mermaid_code(start_node=Ask) == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  [*] --> Ask
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note\
"""
    )


def test_edge_labels_off() -> None:
    """`edge_labels=False` drops every label, End labels included."""
    assert quiz.mermaid_code(start_node=Ask, edge_labels=False) == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  [*] --> Ask
  Ask --> Answer
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask
  Answer --> Reflect
  Answer --> [*]
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note\
"""
    )


def test_notes_off() -> None:
    """`notes=False` drops the notes."""
    assert quiz.mermaid_code(start_node=Ask, notes=False) == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  [*] --> Ask
  Ask --> Answer: ask it
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]\
"""
    )


def test_labels_and_notes_off() -> None:
    """Both off: only the bare edges."""
    assert quiz.mermaid_code(edge_labels=False, notes=False, title=False) == snapshot(
        """\
stateDiagram-v2
  Ask --> Answer
  Answer --> Ask
  Answer --> Reflect
  Answer --> [*]
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]\
"""
    )


def test_highlight_one_node() -> None:
    """A highlighted node gets the default highlight class."""
    assert quiz.mermaid_code(highlighted_nodes=Answer) == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note

classDef highlighted fill:#fdff32
class Answer highlighted\
"""
    )


def test_highlight_several_nodes_in_given_order() -> None:
    """Highlight lines follow the order given, duplicates kept."""
    assert quiz.mermaid_code(highlighted_nodes=['Summary', Ask(), Answer, 'Summary']) == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note

classDef highlighted fill:#fdff32
class Summary highlighted
class Ask highlighted
class Answer highlighted
class Summary highlighted\
"""
    )


def test_highlight_custom_css() -> None:
    """A custom highlight CSS goes into the classDef."""
    assert quiz.mermaid_code(highlighted_nodes='Reflect', highlight_css='fill:#f96,stroke:#333') == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note

classDef highlighted fill:#f96,stroke:#333
class Reflect highlighted\
"""
    )


def test_empty_highlight_draws_no_class() -> None:
    """No highlighted nodes: no classDef at all, even with custom CSS."""
    assert quiz.mermaid_code(highlighted_nodes=[], highlight_css='fill:red') == snapshot(
        """\
---
title: quiz
---
stateDiagram-v2
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note\
"""
    )


def test_direction_tb() -> None:
    """Direction TB."""
    assert never_42.mermaid_code(direction='TB') == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  direction TB
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_direction_lr() -> None:
    """Direction LR."""
    assert never_42.mermaid_code(direction='LR', start_node=Increment) == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  direction LR
  [*] --> Increment
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_direction_rl() -> None:
    """Direction RL."""
    assert never_42.mermaid_code(direction='RL', title=False) == snapshot(
        """\
stateDiagram-v2
  direction RL
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]\
"""
    )


def test_direction_bt() -> None:
    """Direction BT."""
    assert never_42.mermaid_code(direction='BT', highlighted_nodes=Check42) == snapshot(
        """\
---
title: never_42
---
stateDiagram-v2
  direction BT
  Increment --> Check42
  Check42 --> Increment
  Check42 --> [*]

classDef highlighted fill:#fdff32
class Check42 highlighted\
"""
    )


def test_bare_base_node_edges_to_every_node() -> None:
    """A bare `BaseNode` return draws an unlabelled edge to every node, End kept."""
    assert router.mermaid_code(start_node=Router) == snapshot(
        """\
---
title: router
---
stateDiagram-v2
  [*] --> Router
  Router --> Router
  Router --> Left
  Router --> Right
  Router --> [*]
  Left --> Router
  Left --> Left
  Left --> Right
  Right --> Router
  Right --> [*]: finish\
"""
    )


def test_bare_base_node_without_labels() -> None:
    """Labels off on a graph with bare `BaseNode` returns."""
    assert router.mermaid_code(edge_labels=False) == snapshot(
        """\
---
title: router
---
stateDiagram-v2
  Router --> Router
  Router --> Left
  Router --> Right
  Router --> [*]
  Left --> Router
  Left --> Left
  Left --> Right
  Right --> Router
  Right --> [*]\
"""
    )


def test_every_option_at_once() -> None:
    """All options together."""
    assert quiz.mermaid_code(
        start_node=[Ask, Summary],
        title='Quiz',
        edge_labels=True,
        notes=True,
        highlighted_nodes=[Reflect, 'Ask'],
        highlight_css='fill:#0f0',
        direction='LR',
    ) == snapshot(
        """\
---
title: Quiz
---
stateDiagram-v2
  direction LR
  [*] --> Ask
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  [*] --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note

classDef highlighted fill:#0f0
class Reflect highlighted
class Ask highlighted\
"""
    )


def test_generate_code_module_function() -> None:
    """The module function draws no title unless given one."""
    assert mermaid.generate_code(quiz, start_node=Ask, direction=None) == snapshot(
        """\
stateDiagram-v2
  [*] --> Ask
  Ask --> Answer: ask it
  note right of Ask
    Ask a question.
    Then wait for the answer.
  end note
  Answer --> Ask: wrong
  Answer --> Reflect
  Answer --> [*]: right
  Reflect --> Ask
  Reflect --> Summary
  Summary --> [*]
  note right of Summary
    Summarise the session.
        An indented detail line.
    Last paragraph, after two blank lines.
  end note\
"""
    )


def test_generate_code_with_title() -> None:
    """The module function with every argument."""
    assert mermaid.generate_code(
        router,
        start_node=Left,
        highlighted_nodes=Right,
        highlight_css='fill:blue',
        title='Routes',
        edge_labels=False,
        notes=False,
        direction='RL',
    ) == snapshot(
        """\
---
title: Routes
---
stateDiagram-v2
  direction RL
  Router --> Router
  Router --> Left
  Router --> Right
  Router --> [*]
  [*] --> Left
  Left --> Router
  Left --> Left
  Left --> Right
  Right --> Router
  Right --> [*]

classDef highlighted fill:blue
class Right highlighted\
"""
    )


def test_unknown_start_node_raises_lookup_error_naming_it() -> None:
    with pytest.raises(LookupError) as exc_info:
        never_42.mermaid_code(start_node='Missing')
    assert (type(exc_info.value), str(exc_info.value)) == (
        DiagramNodeError,
        'Start node "Missing" is not in the graph; its nodes are: Increment, Check42.',
    )


def test_unknown_start_nodes_are_all_named() -> None:
    with pytest.raises(DiagramNodeError, match=r'^Start nodes "Ask", "Missing" are not in the graph; its nodes are'):
        never_42.mermaid_code(start_node=['Missing', Increment, Ask, 'Missing'])


def test_unknown_highlighted_nodes_are_named_in_the_order_given() -> None:
    with pytest.raises(LookupError) as exc_info:
        mermaid.generate_code(quiz, highlighted_nodes=['Summary', 'Zeta', Increment(), 'Zeta'])
    assert str(exc_info.value) == (
        'Highlighted nodes "Zeta", "Increment" are not in the graph; its nodes are: Ask, Answer, Reflect, Summary.'
    )


def test_public_names_are_pydantic_graphs_plus_ours() -> None:
    assert sorted(mermaid.__all__) == [
        'DEFAULT_BASE_URL',
        'DEFAULT_FAILED_CSS',
        'DEFAULT_HIGHLIGHT_CSS',
        'DEFAULT_STOPPED_CSS',
        'ImageType',
        'MermaidConfig',
        'NodeIdent',
        'Renderer',
        'StateDiagramDirection',
        'generate_code',
        'request_image',
        'save_image',
    ]


def _params(fn: Callable[..., Any]) -> list[str]:
    marks: dict[inspect._ParameterKind, str] = {
        inspect.Parameter.POSITIONAL_ONLY: '/',
        inspect.Parameter.POSITIONAL_OR_KEYWORD: '',
        inspect.Parameter.KEYWORD_ONLY: '*',
        inspect.Parameter.VAR_KEYWORD: '**',
    }
    return [marks[p.kind] + name for name, p in inspect.signature(fn).parameters.items() if name != 'self']


@pytest.mark.parametrize(
    ('fn', 'params'),
    [
        (
            Graph.mermaid_code,
            [
                '*start_node',
                '*title',
                '*edge_labels',
                '*notes',
                '*highlighted_nodes',
                '*highlight_css',
                '*infer_name',
                '*direction',
                '*history',
                '*child_histories',
            ],
        ),
        (Graph.mermaid_image, ['infer_name', '**kwargs']),
        (Graph.mermaid_save, ['/path', '*infer_name', '**kwargs']),
        (
            mermaid.generate_code,
            [
                '/graph',
                '*start_node',
                '*highlighted_nodes',
                '*highlight_css',
                '*title',
                '*edge_labels',
                '*notes',
                '*direction',
                '*history',
                '*stopped_css',
                '*failed_css',
                '*child_histories',
            ],
        ),
        (mermaid.request_image, ['/graph', '**kwargs']),
        (mermaid.save_image, ['/path', '/graph', '**kwargs']),
    ],
    ids=lambda v: getattr(v, '__qualname__', None),
)
def test_signatures_are_pydantic_graphs_plus_ours(fn: Callable[..., Any], params: list[str]) -> None:
    """pydantic-graph 1.x's parameters, in its order and kinds; Edgewise's additions come last."""
    assert _params(fn) == params


def test_config_keys_are_pydantic_graphs_plus_ours() -> None:
    pydantic_graph_keys = {
        'start_node',
        'highlighted_nodes',
        'highlight_css',
        'title',
        'edge_labels',
        'notes',
        'image_type',
        'pdf_fit',
        'pdf_landscape',
        'pdf_paper',
        'background_color',
        'theme',
        'width',
        'height',
        'scale',
        'httpx_client',
        'direction',
    }
    ours = {
        'history',
        'child_histories',
        'stopped_css',
        'failed_css',
        'base_url',
        'max_url_length',
        'renderer',
        'mmdc',
        'puppeteer_config',
    }
    assert set(mermaid.MermaidConfig.__annotations__) == pydantic_graph_keys | ours
