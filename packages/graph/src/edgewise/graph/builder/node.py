"""The structural nodes of a builder graph: its start, its end, and the forks that `map`/broadcast create."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Generic

from typing_extensions import TypeVar

from .id_types import ForkID, JoinID, NodeID

__all__ = ('StartNode', 'EndNode', 'Fork')

InputT = TypeVar('InputT')
OutputT = TypeVar('OutputT')


class StartNode(Generic[OutputT]):
    """Where a run begins: it passes the run's `inputs` on along its edges."""

    id = NodeID('__start__')
    """The start node's id, the same in every graph."""


class EndNode(Generic[InputT]):
    """Where a run ends: the first value that reaches it is the run's output."""

    id = NodeID('__end__')
    """The end node's id, the same in every graph."""

    def _input_variance(self, inputs: InputT) -> None:  # pragma: no cover - only read by type checkers
        raise NotImplementedError


@dataclass
class Fork(Generic[InputT, OutputT]):
    """Splits a run into parallel branches: one per item of its input (a map), or one per path (a broadcast)."""

    id: ForkID
    """The fork's node id."""
    is_map: bool
    """True for a map (each item of the iterable input goes down the one path), False for a broadcast."""
    downstream_join_id: JoinID | None
    """For a map, the join that still fires (with its initial value) when the iterable is empty."""

    def _variance(self, inputs: InputT) -> OutputT:  # pragma: no cover - only read by type checkers
        raise NotImplementedError
