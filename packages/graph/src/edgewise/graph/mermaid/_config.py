"""The options of diagrams and of their images, shared by `mermaid` and the two renderers beneath it."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from annotated_types import Ge, Le
from typing_extensions import TypedDict

from .._diagram_style import DEFAULT_HIGHLIGHT_CSS
from ..nodes import BaseNode

if TYPE_CHECKING:
    import httpx

    from ..persistence import Snapshot

__all__ = (
    'NodeIdent',
    'DEFAULT_HIGHLIGHT_CSS',
    'DEFAULT_STOPPED_CSS',
    'DEFAULT_FAILED_CSS',
    'DEFAULT_BASE_URL',
    'MermaidConfig',
    'StateDiagramDirection',
    'ImageType',
    'Renderer',
)

DEFAULT_STOPPED_CSS = 'fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px'
"""The CSS of the node where a run stopped: the next to run, or the one running when it was interrupted."""
DEFAULT_FAILED_CSS = 'fill:#ff8a80,stroke:#c62828,stroke-width:3px'
"""The CSS of the node whose run raised, ending the run with an error."""
DEFAULT_BASE_URL = 'https://mermaid.ink'
"""The mermaid rendering service used unless `base_url` names another (e.g. a self-hosted one)."""

StateDiagramDirection = Literal['TB', 'LR', 'RL', 'BT']
"""The direction a state diagram flows in: `'TB'` top to bottom (mermaid's default), `'LR'` left to right,
`'RL'` right to left, `'BT'` bottom to top."""

ImageType = Literal['jpeg', 'png', 'webp', 'svg', 'pdf']
"""The image formats the rendering service produces; the mermaid CLI produces `png`, `svg` and `pdf`."""

Renderer = Literal['service', 'local', 'auto']
"""Where images are rendered: `'service'`, the HTTP service (default); `'local'`, the mermaid CLI `mmdc`;
`'auto'`, the CLI when it is installed and can produce the requested image, else the service."""

NodeIdent: TypeAlias = 'type[BaseNode[Any, Any, Any]] | BaseNode[Any, Any, Any] | str'
"""A node given to a diagram function: its class, an instance of it, or its id."""


class MermaidConfig(TypedDict, total=False):
    """Options of a diagram and of its image, for `request_image`, `save_image`, `Graph.mermaid_image`, ..."""

    start_node: Sequence[NodeIdent] | NodeIdent
    """The node or nodes a run may start from."""
    highlighted_nodes: Sequence[NodeIdent] | NodeIdent
    """Nodes to highlight."""
    highlight_css: str
    """The CSS of highlighted nodes."""
    title: str | None
    """The diagram's title."""
    edge_labels: bool
    """Show edge labels (default `True`)."""
    notes: bool
    """Show node notes (default `True`)."""
    direction: StateDiagramDirection
    """The direction the diagram flows in."""
    history: Sequence[Snapshot[Any, Any]]
    """A run's snapshots, to draw its path (see `generate_code`)."""
    child_histories: Mapping[str, Sequence[Snapshot[Any, Any]]]
    """The histories of the run's child runs by name, to draw its path through subgraphs and fan-outs."""
    stopped_css: str
    """The CSS of the node where a run stopped."""
    failed_css: str
    """The CSS of the node where a run failed."""
    image_type: ImageType
    """The image format; the service's default is `'jpeg'`, the mermaid CLI's `'png'`."""
    pdf_fit: bool
    """PDF only: fit the page to the diagram."""
    pdf_landscape: bool
    """PDF only, service only: landscape orientation (ignored with `pdf_fit`)."""
    pdf_paper: Literal['letter', 'legal', 'tabloid', 'ledger', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']
    """PDF only, service only: the paper size."""
    background_color: str
    """The background colour: a hex code without `#` (`'FF0000'`), or a named colour after `!` (`'!white'`);
    transparent when unset (service)."""
    theme: Literal['default', 'neutral', 'dark', 'forest']
    """The mermaid theme."""
    width: int
    """The image's width, in pixels."""
    height: int
    """The image's height, in pixels."""
    scale: Annotated[float, Ge(1), Le(3)]
    """A scale factor from 1 to 3; the service needs `width` or `height` with it."""
    httpx_client: httpx.Client
    """The HTTP client to send the request with (a new one, closed afterwards, when unset)."""
    base_url: str
    """The root URL of a mermaid.ink-compatible service; `DEFAULT_BASE_URL` when unset."""
    max_url_length: int
    """The longest request URL sent to the service (default 16384 characters); a longer diagram raises
    `DiagramTooLongError` without sending anything."""
    renderer: Renderer
    """Where the image is rendered (default `'service'`)."""
    mmdc: str | Path
    """The mermaid CLI executable, a path or a name looked up on `PATH` (default `'mmdc'`)."""
    puppeteer_config: str | Path
    """A puppeteer configuration file for the mermaid CLI (the Chromium to use, `--no-sandbox`, ...)."""
