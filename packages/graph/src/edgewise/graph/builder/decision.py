"""Decisions: a node that sends its input down the first branch whose type (or predicate) matches it."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Never, Self, overload

from typing_extensions import TypeVar

from ..exceptions import GraphBuildingError
from .id_types import NodeID
from .paths import Path, PathBuilder, TransformFunction, _as_destinations
from .util import TypeOrTypeExpression

__all__ = ('Decision', 'DecisionBranch', 'DecisionBranchBuilder')

StateT = TypeVar('StateT')
DepsT = TypeVar('DepsT')
HandledT = TypeVar('HandledT')
T = TypeVar('T')
SourceT = TypeVar('SourceT')
OutputT = TypeVar('OutputT', covariant=True)  # builders only hand their value type on
NewOutputT = TypeVar('NewOutputT')


@dataclass(kw_only=True)
class Decision(Generic[StateT, DepsT, HandledT]):
    """A decision node; made with `GraphBuilder.decision()` and given branches with `.branch(...)`."""

    id: NodeID
    """The decision's node id."""
    branches: list[DecisionBranch[Any]]
    """The branches, tried in order: the first that matches the input takes it."""
    note: str | None
    """A note shown next to the decision on diagrams."""

    def branch(self, branch: DecisionBranch[T]) -> Decision[StateT, DepsT, HandledT | T]:
        """A copy of this decision with `branch` added last."""
        return Decision(id=self.id, branches=[*self.branches, branch], note=self.note)

    def _handled_variance(self, inputs: HandledT) -> Never:  # pragma: no cover - only read by type checkers
        raise NotImplementedError


@dataclass
class DecisionBranch(Generic[SourceT]):
    """One branch of a decision: which inputs it takes, and the path they follow."""

    source: TypeOrTypeExpression[SourceT]
    """The type of the inputs the branch takes (`Any`/`object`: all; a `Literal`: its values; else `isinstance`)."""
    matches: Callable[[Any], bool] | None
    """A predicate used instead of the type test, when given."""
    path: Path
    """The path the input follows."""
    destinations: list[Any]
    """The nodes the path may reach."""


class DecisionBranchBuilder(Generic[StateT, DepsT, OutputT, SourceT, HandledT]):
    """Builds a decision branch; made by `GraphBuilder.match(...)`. Each method returns a new builder."""

    def __init__(
        self,
        *,
        decision: Decision[StateT, DepsT, HandledT],
        source: TypeOrTypeExpression[SourceT],
        matches: Callable[[Any], bool] | None,
        path_builder: PathBuilder[StateT, DepsT, OutputT],
    ) -> None:
        self._decision = decision
        self._source = source
        self._matches = matches
        self._path_builder = path_builder

    def _with_path(self, path_builder: PathBuilder[StateT, DepsT, Any]) -> Any:
        return DecisionBranchBuilder(
            decision=self._decision, source=self._source, matches=self._matches, path_builder=path_builder
        )

    def to(self, destination: Any, /, *extra_destinations: Any, fork_id: str | None = None) -> DecisionBranch[SourceT]:
        """End the branch at `destination` (a node or a `BaseNode` class), or broadcast to every one given."""
        nodes = _as_destinations((destination, *extra_destinations))
        return DecisionBranch(self._source, self._matches, self._path_builder.to(*nodes, fork_id=fork_id), nodes)

    def broadcast(
        self, get_forks: Callable[[Self], Sequence[DecisionBranch[SourceT]]], /, *, fork_id: str | None = None
    ) -> DecisionBranch[SourceT]:
        """End the branch with a broadcast to the branches `get_forks(self)` returns.

        Raises:
            GraphBuildingError: `get_forks` returned no branch.
        """
        branches = get_forks(self)
        if not branches:
            raise GraphBuildingError(
                f'The call to {get_forks} returned no branches, but must return at least one: return the '
                'branches to broadcast to.'
            )
        path = self._path_builder.broadcast([b.path for b in branches], fork_id=fork_id)
        return DecisionBranch(self._source, self._matches, path, [d for b in branches for d in b.destinations])

    def transform(
        self, func: TransformFunction[StateT, DepsT, OutputT, NewOutputT], /
    ) -> DecisionBranchBuilder[StateT, DepsT, NewOutputT, SourceT, HandledT]:
        """Replace the value by `func(ctx)` before it goes on."""
        result: DecisionBranchBuilder[StateT, DepsT, NewOutputT, SourceT, HandledT] = self._with_path(
            self._path_builder.transform(func)
        )
        return result

    @overload
    def map(
        self: DecisionBranchBuilder[StateT, DepsT, Iterable[T], SourceT, HandledT],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> DecisionBranchBuilder[StateT, DepsT, T, SourceT, HandledT]: ...
    @overload
    def map(
        self: DecisionBranchBuilder[StateT, DepsT, AsyncIterable[T], SourceT, HandledT],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> DecisionBranchBuilder[StateT, DepsT, T, SourceT, HandledT]: ...
    def map(
        self: DecisionBranchBuilder[StateT, DepsT, Any, SourceT, HandledT],
        *,
        fork_id: str | None = None,
        downstream_join_id: str | None = None,
    ) -> DecisionBranchBuilder[StateT, DepsT, Any, SourceT, HandledT]:
        """Split the iterable value: the rest of the branch runs once per item, in parallel."""
        result: DecisionBranchBuilder[StateT, DepsT, Any, SourceT, HandledT] = self._with_path(
            self._path_builder.map(fork_id=fork_id, downstream_join_id=downstream_join_id)
        )
        return result

    def label(self, label: str) -> DecisionBranchBuilder[StateT, DepsT, OutputT, SourceT, HandledT]:
        """Label the branch's edge at this point (diagrams show it)."""
        result: DecisionBranchBuilder[StateT, DepsT, OutputT, SourceT, HandledT] = self._with_path(
            self._path_builder.label(label)
        )
        return result
