"""Steps: the async functions a builder graph runs, the context they receive, and `BaseNode` classes as steps."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any, Generic, Protocol, get_origin

from typing_extensions import TypeVar

from ..exceptions import GraphRuntimeError
from .basenode import BaseNode, End, GraphRunContext
from .id_types import NodeID

__all__ = ('StepContext', 'StepFunction', 'StreamFunction', 'AnyStepFunction', 'Step', 'StepNode', 'NodeStep')

StateT = TypeVar('StateT')
DepsT = TypeVar('DepsT')
InputT = TypeVar('InputT')
OutputT = TypeVar('OutputT')
OutputT_co = TypeVar('OutputT_co', covariant=True)
StateT_co = TypeVar('StateT_co', covariant=True)
DepsT_co = TypeVar('DepsT_co', covariant=True)
InputT_co = TypeVar('InputT_co', covariant=True)
StateT_contra = TypeVar('StateT_contra', contravariant=True)
DepsT_contra = TypeVar('DepsT_contra', contravariant=True)
InputT_contra = TypeVar('InputT_contra', contravariant=True)


class StepContext(Generic[StateT_co, DepsT_co, InputT_co]):
    """What a step (and a `transform`) receives: the run's state and dependencies, and the step's input."""

    __slots__ = ('_deps', '_inputs', '_state')

    def __init__(self, *, state: StateT_co, deps: DepsT_co, inputs: InputT_co) -> None:
        self._state = state
        self._deps = deps
        self._inputs = inputs

    @property
    def state(self) -> StateT_co:
        """The run's state, shared by every step of the run (parallel steps included)."""
        return self._state

    @property
    def deps(self) -> DepsT_co:
        """The run's dependencies."""
        return self._deps

    @property
    def inputs(self) -> InputT_co:
        """The value this step was sent along its incoming edge."""
        return self._inputs

    def __repr__(self) -> str:
        return f'StepContext(state={self._state!r}, deps={self._deps!r}, inputs={self._inputs!r})'


class StepFunction(Protocol[StateT_contra, DepsT_contra, InputT_contra, OutputT_co]):
    """An async function taking a `StepContext` and returning the step's output."""

    def __call__(self, ctx: StepContext[StateT_contra, DepsT_contra, InputT_contra]) -> Awaitable[OutputT_co]:
        """Run the step."""
        ...


class StreamFunction(Protocol[StateT_contra, DepsT_contra, InputT_contra, OutputT_co]):
    """An async generator function taking a `StepContext`; what it yields is the step's (streamed) output."""

    def __call__(self, ctx: StepContext[StateT_contra, DepsT_contra, InputT_contra]) -> AsyncIterator[OutputT_co]:
        """Start the stream."""
        ...


AnyStepFunction = StepFunction[Any, Any, Any, Any]
"""A step function of any types."""


class Step(Generic[StateT, DepsT, InputT, OutputT]):
    """A node of a builder graph that runs an async function; made with `GraphBuilder.step`."""

    def __init__(
        self, *, id: NodeID, call: StepFunction[StateT, DepsT, InputT, OutputT], label: str | None = None
    ) -> None:
        self.id = id
        """The step's node id (the function's name unless given)."""
        self._call = call
        self.label = label
        """The text shown for the step on diagrams, if not its id."""

    @property
    def call(self) -> StepFunction[StateT, DepsT, InputT, OutputT]:
        """The function the step runs."""
        return self._call

    def as_node(self, inputs: InputT | None = None) -> StepNode[StateT, DepsT]:
        """A `BaseNode` that a node's `run` returns to go on to this step with `inputs`.

        Declare it in the node's return hint as `Annotated[StepNode[StateT, DepsT], this_step]`.
        """
        return StepNode(self, inputs)

    def __repr__(self) -> str:
        return f'{type(self).__name__}(id={self.id!r}, label={self.label!r})'


class StepNode(BaseNode[StateT, DepsT, Any]):
    """What `Step.as_node` returns: a hand-over from a `BaseNode` to a builder step; it is never run itself."""

    def __init__(self, step: Step[StateT, DepsT, Any, Any], inputs: Any) -> None:
        self.step = step
        """The step to go on to."""
        self.inputs = inputs
        """The input the step receives."""

    async def run(self, ctx: GraphRunContext[StateT, DepsT]) -> BaseNode[StateT, DepsT, Any] | End[Any]:
        """Raises: a `StepNode` only tells the graph which step comes next."""
        raise GraphRuntimeError(
            f'`StepNode` for step {self.step.id!r} cannot be run itself: return it from a `BaseNode.run` in a '
            'builder graph to go on to that step.'
        )

    def __repr__(self) -> str:
        return f'StepNode(step={self.step!r}, inputs={self.inputs!r})'

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StepNode) and other.step is self.step and other.inputs == self.inputs

    __hash__ = None  # type: ignore[assignment]


class NodeStep(Step[StateT, DepsT, Any, BaseNode[StateT, DepsT, Any] | End[Any]]):
    """A `BaseNode` class as a step of a builder graph: its input is a node instance, which it runs."""

    def __init__(
        self, node_type: type[BaseNode[StateT, DepsT, Any]], *, id: NodeID | None = None, label: str | None = None
    ) -> None:
        # A parametrized alias (`MyNode[int]`) stands for its class.
        self.node_type: type[BaseNode[StateT, DepsT, Any]] = get_origin(node_type) or node_type
        """The node class."""
        super().__init__(id=id or NodeID(self.node_type.get_node_id()), call=self._run_node, label=label)

    async def _run_node(self, ctx: StepContext[StateT, DepsT, Any]) -> BaseNode[StateT, DepsT, Any] | End[Any]:
        node = ctx.inputs
        if not isinstance(node, self.node_type):
            raise GraphRuntimeError(
                f'Step {self.id!r} runs `{self.node_type.__name__}` nodes, but was sent {node!r}; send it an '
                f'instance of `{self.node_type.__name__}`.'
            )
        return await node.run(GraphRunContext(state=ctx.state, deps=ctx.deps))
