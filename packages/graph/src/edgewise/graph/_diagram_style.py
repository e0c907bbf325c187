"""The colours of a diagram's highlighted nodes, below `mermaid` so that `Graph` names its default without loading the
diagram code (a program that never draws its graph does not pay for it)."""

from __future__ import annotations as _annotations

__all__ = ('DEFAULT_HIGHLIGHT_CSS',)

DEFAULT_HIGHLIGHT_CSS = 'fill:#fdff32'
"""The CSS of highlighted nodes (and of the nodes a run visited)."""
