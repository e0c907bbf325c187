"""Parallel branches with a join: `Fork`, returned by a node to run several nodes at once.

A node declares a fan-out in its return hint, `-> Fork[Work, Collect]` (branches may start at any of the
node classes of the first parameter, a union; the second is the join node), and returns
`Fork([Work(1), Work(2)], join=Collect)`, or `Fork.map(Work, items, join=Collect)` for one branch per item.

Each branch is a run of the same graph from its start node to an `End`, on its own deep copy of the state
as it was at the fork; the data of its `End` is the branch's result. When every branch has ended, the join
node is built with `results=[...]` (in branch order, whatever order they finished in) and runs next. A
branch's changes to its copy of the state reach the run's state only through the graph's `state_reducer`.

The `Fork` is itself the node of a step of the run: it is stored in a snapshot like any node, and
`async for node in run` yields it between the node that returned it and the join node.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Literal

from typing_extensions import TypeVar

from .exceptions import GraphRuntimeError
from .nodes import _LINK_ATTR, BaseNode, GraphRunContext
from .persistence import _NodeSchema

__all__ = ('Fork', 'BranchFailure', 'OnBranchError')

BranchT = TypeVar('BranchT', default=Any)
"""The node class (or union of classes) a branch starts at."""
JoinT = TypeVar('JoinT', default=Any)
"""The join node class."""
_ItemT = TypeVar('_ItemT')

OnBranchError = Literal['cancel', 'collect']
"""What a failing branch does: `'cancel'` its siblings and fail the step with `BranchFailedError`, or let
the others finish and hand the join a `BranchFailure` in its place (`'collect'`)."""


@dataclass(frozen=True, kw_only=True)
class BranchFailure:
    """In the `results` of a join, under `on_error='collect'`: the branch at this place raised."""

    branch: int
    """The branch's position in the fork, from 0."""
    node_id: str
    """The id of the node that raised."""
    error: str
    """The error's type and message (`'ValueError: bad item'`)."""


@dataclass(init=False, kw_only=True)
class Fork(BaseNode[Any, Any, Any], Generic[BranchT, JoinT]):
    """A fan-out: run `branches` concurrently, then the `join` node with their results.

    Declare it in the return hint as `Fork[BranchNode, JoinNode]`; the join node must take the results as
    its `results` argument.
    """

    _edgewise_fork: ClassVar[bool] = True

    branches: list[Annotated[BaseNode[Any, Any, Any], _NodeSchema()]]
    """The node each branch starts at, in branch order."""
    join: str
    """The id of the join node."""
    on_error: OnBranchError = 'cancel'
    """What a failing branch does (see `OnBranchError`)."""
    max_concurrency: int | None = None
    """At most this many branches run at a time; all at once when `None`."""

    def __init__(
        self,
        branches: Iterable[BranchT],
        *,
        join: type[JoinT] | str,
        on_error: OnBranchError = 'cancel',
        max_concurrency: int | None = None,
    ) -> None:
        """A fan-out of `branches`, joined by the node class `join`.

        Args:
            branches: The node each branch starts at (nodes of the graph, named in the hint's `Fork[...]`).
            join: The join node class (or its id).
            on_error: `'cancel'` (default): the first failing branch cancels the others and the step raises
                `BranchFailedError`; `'collect'`: the others finish, the join gets a `BranchFailure` instead.
            max_concurrency: At most this many branches run at a time; all at once when `None`.
        """
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f'max_concurrency must be a positive integer or None, got {max_concurrency!r}')
        self.branches = list(branches)  # type: ignore[arg-type]
        self.join = join if isinstance(join, str) else join.get_node_id()  # type: ignore[attr-defined]
        self.on_error = on_error
        self.max_concurrency = max_concurrency

    @classmethod
    def map(
        cls,
        branch: Callable[[_ItemT], BranchT],
        items: Iterable[_ItemT],
        *,
        join: type[JoinT] | str,
        on_error: OnBranchError = 'cancel',
        max_concurrency: int | None = None,
    ) -> Fork[BranchT, JoinT]:
        """One branch per item: `Fork.map(Work, [1, 2], join=Collect)` is `Fork([Work(1), Work(2)], join=Collect)`."""
        return cls([branch(item) for item in items], join=join, on_error=on_error, max_concurrency=max_concurrency)

    @classmethod
    def get_node_id(cls) -> str:
        return 'Fork'

    async def run(self, ctx: GraphRunContext[Any, Any]) -> BaseNode[Any, Any, Any]:
        """Run the branches (as child runs of this run) and return the join node with their results."""
        link = ctx.__dict__.get(_LINK_ATTR)
        if link is None:
            raise GraphRuntimeError('A `Fork` runs only as a step of a graph run, which gives it its branches.')
        join: BaseNode[Any, Any, Any] = await link.fan_out(self, ctx.state, ctx.deps)
        return join
