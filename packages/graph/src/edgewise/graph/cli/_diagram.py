"""`edgewise mermaid`: a graph's diagram as code or as an image, optionally with a stored run's path."""

from __future__ import annotations as _annotations

from pathlib import Path
from typing import Any

from .. import mermaid
from ..builder import Graph as BuilderGraph
from ..exceptions import DiagramRenderError
from ..graph import Graph
from ._common import CommandError, echo
from ._runs import load_history
from ._store import Store

__all__ = ('draw',)

_IMAGE_SUFFIXES = ('.png', '.jpg', '.jpeg', '.webp', '.svg', '.pdf')


async def draw(
    graph: Graph[Any, Any, Any] | BuilderGraph[Any, Any, Any, Any],
    *,
    output: Path | None,
    run: tuple[Store, str] | None,
    config: mermaid.MermaidConfig,
) -> int:
    """Print the diagram's code, or write it to `output`: code for `.mmd`, else an image of the suffix's format.

    `graph` is a classic graph or a builder graph (`edgewise.graph.builder`); the path of a stored builder run is
    drawn as `Graph.mermaid_code(history=...)` of the builder draws it.
    """
    if run is not None:
        store, run_id = run
        config['history'] = await load_history(store, run_id)
        async with store.persistence(run_id) as persistence:
            children = await persistence.load_child_histories()
        if children:
            config['child_histories'] = children
    if output is None or output.suffix.lower() == '.mmd':
        code = _code(graph, config)
        if output is None:
            echo(code)
        else:
            _write(output, lambda: output.write_text(code + '\n', encoding='utf-8'))
        return 0
    if output.suffix.lower() not in _IMAGE_SUFFIXES:
        raise CommandError(
            f'Cannot tell the format of {str(output)!r} from its suffix; use .mmd (mermaid code), '
            f'{", ".join(_IMAGE_SUFFIXES)}.'
        )
    _write(output, lambda: mermaid.save_image(output, graph, **config))
    return 0


def _code(graph: Graph[Any, Any, Any] | BuilderGraph[Any, Any, Any, Any], config: mermaid.MermaidConfig) -> str:
    """The code of the diagram that `save_image` would render for `config` (the options `edgewise mermaid` sets)."""
    if isinstance(graph, BuilderGraph):
        return graph._diagram_code(config)
    return mermaid.generate_code(
        graph,
        start_node=config.get('start_node'),
        highlighted_nodes=config.get('highlighted_nodes'),
        title=config.get('title'),
        edge_labels=config.get('edge_labels', True),
        notes=config.get('notes', True),
        direction=config.get('direction'),
        history=config.get('history'),
        child_histories=config.get('child_histories'),
    )


_OPTIONS = (
    ("`renderer='service'`", '`--renderer service`'),
    ('`renderer="local"`', '`--renderer local`'),
    ('`mmdc=...`', '`--mmdc PATH`'),
    ('`base_url`', '`--service-url`'),
)
"""The keyword arguments that rendering errors advise, and the options of `edgewise mermaid` that set them."""


def _write(output: Path, write: Any) -> None:
    try:
        write()
    except OSError as e:
        raise CommandError(f'Cannot write {str(output)!r}: {e.strerror or e}.') from None
    except DiagramRenderError as e:
        message = str(e)
        for keyword, option in _OPTIONS:
            message = message.replace(keyword, option)
        raise CommandError(message) from None
