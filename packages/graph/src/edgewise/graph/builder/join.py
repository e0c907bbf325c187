"""Joins: where the parallel branches of a fork meet, each branch's value folded in by a reducer."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, Self, cast

from typing_extensions import TypeAliasType, TypeVar

from ..exceptions import GraphRuntimeError
from .basenode import BaseNode, End, GraphRunContext
from .id_types import ForkID, ForkStack, JoinID

__all__ = (
    'JoinState',
    'ReducerContext',
    'PlainReducerFunction',
    'ContextReducerFunction',
    'ReducerFunction',
    'reduce_null',
    'reduce_list_append',
    'reduce_list_extend',
    'reduce_dict_update',
    'reduce_sum',
    'SupportsSum',
    'ReduceFirstValue',
    'Join',
    'JoinNode',
)

StateT = TypeVar('StateT')
DepsT = TypeVar('DepsT')
InputT = TypeVar('InputT')
OutputT = TypeVar('OutputT')
T = TypeVar('T')
K = TypeVar('K')
V = TypeVar('V')
StateT_co = TypeVar('StateT_co', covariant=True)
DepsT_co = TypeVar('DepsT_co', covariant=True)


@dataclass
class JoinState:
    """A join's progress for one execution of its parent fork: the value reduced so far (part of a run's data)."""

    current: Any
    """The value reduced so far."""
    downstream_fork_stack: ForkStack
    """The fork stack the join's output continues with."""
    cancelled_sibling_tasks: bool = False
    """Whether the reducer asked to cancel the branches still running."""


class ReducerContext(Generic[StateT_co, DepsT_co]):
    """What a reducer taking three arguments receives first: the run's state and deps, and a way to stop early."""

    __slots__ = ('_deps', '_join_state', '_state')

    def __init__(self, *, state: StateT_co, deps: DepsT_co, join_state: JoinState) -> None:
        self._state = state
        self._deps = deps
        self._join_state = join_state

    @property
    def state(self) -> StateT_co:
        """The run's state."""
        return self._state

    @property
    def deps(self) -> DepsT_co:
        """The run's dependencies."""
        return self._deps

    def cancel_sibling_tasks(self) -> None:
        """Cancel the branches of the same fork execution that are still running: the join has what it needs."""
        self._join_state.cancelled_sibling_tasks = True


PlainReducerFunction = TypeAliasType(
    'PlainReducerFunction', Callable[[OutputT, InputT], OutputT], type_params=(InputT, OutputT)
)
"""A reducer `(current, inputs) -> new current`."""
ContextReducerFunction = TypeAliasType(
    'ContextReducerFunction',
    Callable[[ReducerContext[StateT, DepsT], OutputT, InputT], OutputT],
    type_params=(StateT, DepsT, InputT, OutputT),
)
"""A reducer `(ctx, current, inputs) -> new current`, with the run's state and deps in `ctx`."""
ReducerFunction = TypeAliasType(
    'ReducerFunction',
    ContextReducerFunction[StateT, DepsT, InputT, OutputT] | PlainReducerFunction[InputT, OutputT],
    type_params=(StateT, DepsT, InputT, OutputT),
)
"""A reducer, with or without the context argument."""


def reduce_null(current: None, inputs: Any) -> None:
    """Ignore every value: the join only waits for the branches."""
    return None


def reduce_list_append(current: list[T], inputs: T) -> list[T]:
    """Append each value to the list."""
    current.append(inputs)
    return current


def reduce_list_extend(current: list[T], inputs: Iterable[T]) -> list[T]:
    """Extend the list by each (iterable) value."""
    current.extend(inputs)
    return current


def reduce_dict_update(current: dict[K, V], inputs: Mapping[K, V]) -> dict[K, V]:
    """Update the dict with each (mapping) value; later branches win on equal keys."""
    current.update(inputs)
    return current


class SupportsSum(Protocol):
    """A type whose values can be added to each other."""

    def __add__(self, other: Self, /) -> Self:
        """Add `other`."""
        ...


NumericT = TypeVar('NumericT', bound=SupportsSum)


def reduce_sum(current: NumericT, inputs: NumericT) -> NumericT:
    """Add each value to the total."""
    return current + inputs


@dataclass
class ReduceFirstValue(Generic[T]):
    """Keep the first value that arrives and cancel the branches still running."""

    def __call__(self, ctx: ReducerContext[object, object], current: T, inputs: T) -> T:
        """Take `inputs` and cancel the siblings."""
        ctx.cancel_sibling_tasks()
        return inputs


def _takes_context(reducer: Callable[..., Any]) -> bool:
    return len(inspect.signature(reducer).parameters) != 2


class Join(Generic[StateT, DepsT, InputT, OutputT]):
    """A join node; made with `GraphBuilder.join`."""

    def __init__(
        self,
        *,
        id: JoinID,
        reducer: ReducerFunction[StateT, DepsT, InputT, OutputT],
        initial_factory: Callable[[], OutputT],
        parent_fork_id: ForkID | None = None,
        preferred_parent_fork: Literal['farthest', 'closest'] = 'farthest',
    ) -> None:
        self.id = id
        """The join's node id."""
        self._reducer = reducer
        self._initial_factory = initial_factory
        self._with_context: bool | None = None
        self.parent_fork_id = parent_fork_id
        """The fork whose branches this join waits for, when given rather than found."""
        self.preferred_parent_fork: Literal['farthest', 'closest'] = preferred_parent_fork
        """Which dominating fork to wait for when several qualify."""

    @property
    def reducer(self) -> ReducerFunction[StateT, DepsT, InputT, OutputT]:
        """The reducer folding each branch's value into the current one."""
        return self._reducer

    @property
    def initial_factory(self) -> Callable[[], OutputT]:
        """Makes the value the reduction starts from (called once per execution of the parent fork)."""
        return self._initial_factory

    def reduce(self, ctx: ReducerContext[StateT, DepsT], current: OutputT, inputs: InputT) -> OutputT:
        """Fold `inputs` into `current` with the reducer, passing `ctx` when it takes three arguments."""
        if self._with_context is None:
            self._with_context = _takes_context(self._reducer)
        if self._with_context:
            return cast('ContextReducerFunction[StateT, DepsT, InputT, OutputT]', self._reducer)(ctx, current, inputs)
        return cast('PlainReducerFunction[InputT, OutputT]', self._reducer)(current, inputs)

    def as_node(self, inputs: InputT | None = None) -> JoinNode[StateT, DepsT]:
        """A `BaseNode` that a node's `run` returns to send `inputs` to this join.

        Declare it in the node's return hint as `Annotated[JoinNode[StateT, DepsT], this_join]`.
        """
        return JoinNode(self, inputs)

    def __repr__(self) -> str:
        return f'Join(id={self.id!r})'


class JoinNode(BaseNode[StateT, DepsT, Any]):
    """What `Join.as_node` returns: a hand-over from a `BaseNode` to a builder join; it is never run itself."""

    def __init__(self, join: Join[StateT, DepsT, Any, Any], inputs: Any) -> None:
        self.join = join
        """The join the value goes to."""
        self.inputs = inputs
        """The value."""

    async def run(self, ctx: GraphRunContext[StateT, DepsT]) -> BaseNode[StateT, DepsT, Any] | End[Any]:
        """Raises: a `JoinNode` only tells the graph which join a value goes to."""
        raise GraphRuntimeError(
            f'`JoinNode` for join {self.join.id!r} cannot be run itself: return it from a `BaseNode.run` in a '
            'builder graph to send its value to that join.'
        )

    def __repr__(self) -> str:
        return f'JoinNode(join={self.join!r}, inputs={self.inputs!r})'
