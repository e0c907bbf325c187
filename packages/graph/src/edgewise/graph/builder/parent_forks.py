"""Which fork a join waits for: its parent fork, found from the graph's dominators.

A fork F is a parent fork of a join J when every path from the start to J passes through F (F dominates J) and
no cycle through J avoids F. While a run has a task between F and J that descends from an execution of F, that
execution's branches are not all in, so J waits; when none is left, J's reduced value goes on.
"""

from __future__ import annotations as _annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic

from typing_extensions import TypeVar

from ..exceptions import GraphBuildingError

__all__ = ('ParentFork', 'ParentForkFinder')

T = TypeVar('T', bound=Hashable, default=str)


@dataclass
class ParentFork(Generic[T]):
    """A join's parent fork, and the nodes between them."""

    fork_id: T
    """The fork."""
    intermediate_nodes: set[T]
    """The nodes upstream of the join that can be reached from the fork without passing through it again: while a
    task of the fork's execution is at one of them (or at the join), the join waits."""


@dataclass
class ParentForkFinder(Generic[T]):
    """Finds parent forks in a directed graph given by its nodes, start nodes, forks and edges."""

    nodes: set[T]
    """Every node."""
    start_ids: set[T]
    """The nodes runs start from."""
    fork_ids: set[T]
    """The fork nodes."""
    edges: dict[T, list[T]]
    """The destinations of each node's edges."""
    _predecessors_cache: dict[T, list[T]] | None = field(default=None, init=False, repr=False)
    _dominators_cache: dict[T, set[T]] | None = field(default=None, init=False, repr=False)

    def find_parent_fork(
        self, join_id: T, *, parent_fork_id: T | None = None, prefer_closest: bool = False
    ) -> ParentFork[T] | None:
        """The parent fork of `join_id`, or `None` when no dominating fork qualifies.

        Args:
            join_id: The join.
            parent_fork_id: A fork chosen by the graph's author: checked, not searched for.
            prefer_closest: Of several qualifying forks, take the nearest to the join rather than the farthest.

        Raises:
            GraphBuildingError: `parent_fork_id` is given and a cycle through the join avoids it.
        """
        if parent_fork_id is not None:
            upstream = self._upstream_avoiding(join_id, parent_fork_id)
            if upstream is None:
                raise GraphBuildingError(
                    f'There is a cycle in the graph passing through {join_id!r} that does not include '
                    f'{parent_fork_id!r}. Parent forks of a join must be a part of any cycles involving that join.'
                )
            return ParentFork(parent_fork_id, upstream)

        found: ParentFork[T] | None = None
        for dominator in self._dominator_chain(join_id):
            if dominator not in self.fork_ids:
                continue
            upstream = self._upstream_avoiding(join_id, dominator)
            if upstream is None:
                if found is not None:
                    # A cycle through the join avoids this fork, so it avoids every fork farther up too.
                    return found
                continue
            found = ParentFork(dominator, upstream)
            if prefer_closest:
                return found
        return found

    @property
    def _predecessors(self) -> dict[T, list[T]]:
        if self._predecessors_cache is None:
            predecessors: dict[T, list[T]] = {node: [] for node in self.nodes}
            for source in self.nodes:
                for destination in self.edges.get(source, []):
                    predecessors[destination].append(source)
            self._predecessors_cache = predecessors
        return self._predecessors_cache

    @property
    def _dominators(self) -> dict[T, set[T]]:
        """Each node's dominators (itself included), by the usual fixed-point iteration."""
        if self._dominators_cache is None:
            dominators: dict[T, set[T]] = {node: set(self.nodes) for node in self.nodes}
            for start in self.start_ids:
                dominators[start] = {start}
            others = [node for node in self.nodes if node not in self.start_ids]
            changed = True
            while changed:
                changed = False
                for node in others:
                    predecessors = self._predecessors[node]
                    if not predecessors:
                        continue
                    new = set.intersection(*(dominators[p] for p in predecessors)) | {node}
                    if new != dominators[node]:
                        dominators[node] = new
                        changed = True
            self._dominators_cache = dominators
        return self._dominators_cache

    def _dominator_chain(self, node: T) -> list[T]:
        """The strict dominators of `node`, nearest first."""
        dominators = self._dominators
        if not self._reachable(node):
            return []
        # Along a dominator chain, a nearer dominator has more dominators of its own.
        strict = [d for d in dominators[node] if d != node]
        return sorted(strict, key=lambda d: len(dominators[d]), reverse=True)

    def _reachable(self, node: T) -> bool:
        seen = set(self.start_ids)
        stack = list(self.start_ids)
        while stack:
            current = stack.pop()
            if current == node:
                return True
            for following in self.edges.get(current, []):
                if following not in seen:
                    seen.add(following)
                    stack.append(following)
        return False

    def _upstream_avoiding(self, join_id: T, fork_id: T) -> set[T] | None:
        """The nodes that reach the join without passing through the fork; `None` if the join is on a cycle
        that avoids the fork."""
        upstream: set[T] = set()
        stack = [join_id]
        while stack:
            node = stack.pop()
            for predecessor in self._predecessors[node]:
                if predecessor == fork_id:
                    continue
                if predecessor == join_id:
                    return None
                if predecessor not in upstream:
                    upstream.add(predecessor)
                    stack.append(predecessor)
        return upstream
