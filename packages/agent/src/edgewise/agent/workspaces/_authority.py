"""How `Workspace.authority_of` ranks the levels wrappers give paths (the lowest wins, the longest path decides)."""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Mapping
from typing import TypeAlias

from .._messages.workspace_refs import Authority

_RANK: dict[Authority, int] = {'none': 0, 'user': 1, 'operator': 2}

AuthorityLayer: TypeAlias = tuple[Authority, Mapping[str, Authority]]
"""One wrapper's levels: for the whole workspace, and for some absolute paths."""


def lowest(levels: Iterable[Authority]) -> Authority:
    """The lowest of `levels` (`'operator'` when there are none)."""
    return min(levels, key=_RANK.__getitem__, default='operator')


def is_within(path: str, directory: str) -> bool:
    """Whether `path` is `directory` or below it (both absolute and normalized)."""
    return path == directory or path.startswith(directory.rstrip('/') + '/')


def layer_level(location: str, layer: AuthorityLayer) -> Authority:
    """The level one wrapper gives `location`: that of its longest path containing it, else its own.

    Matched case-folded as well (keeping the lower level), so another spelling of a path on a case-insensitive
    filesystem cannot climb above the level its path was given.
    """
    default, paths = layer

    def longest(candidate: str, table: Mapping[str, Authority]) -> Authority:
        matches = [path for path in table if is_within(candidate, path)]
        return table[max(matches, key=len)] if matches else default

    folded: dict[str, Authority] = {}
    for path, level in paths.items():
        folded[path.casefold()] = lowest((level, folded.get(path.casefold(), level)))
    return lowest((longest(location, paths), longest(location.casefold(), folded)))
