"""The message-model words for workspaces: `WorkspaceRef`, the name of an environment a later run can continue in,
and `Authority`, how much weight a text carries by who wrote it."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ('Authority', 'WorkspaceRef')

Authority: TypeAlias = Literal['operator', 'user', 'none']
"""Who wrote a text, and so how much it may steer the model: `'operator'` (the application, files it controls),
`'user'` (the user's own files or uploads) or `'none'` (data: tool output, files nobody on the application's side
wrote)."""


@dataclass(frozen=True, kw_only=True)
class WorkspaceRef:
    """The serializable name of a workspace environment (no credentials in it): pass it to a later run as
    `workspace=` to continue in the same environment."""

    provider: str
    """Who owns the environment (`'local'` for a directory of this machine)."""
    id: str
    """The environment's id for that provider (for `'local'`, the directory's absolute path)."""
