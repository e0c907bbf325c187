"""`GraphBuilder`: steps, joins, decisions and edges gathered into a builder graph."""

from __future__ import annotations as _annotations

import copy
import inspect
import types
import typing
from collections.abc import AsyncIterable, Callable, Iterable
from types import FrameType, NoneType
from typing import TYPE_CHECKING, Any, Generic, Literal, Never, cast, get_args, get_origin, overload

import typing_extensions
from typing_extensions import TypeAliasType, TypeVar

from ..exceptions import GraphBuildingError, GraphSetupError
from ._compile import compile_graph
from ._graph import Graph
from .basenode import BaseNode, End
from .decision import Decision, DecisionBranch, DecisionBranchBuilder
from .id_types import ForkID, JoinID, NodeID, generate_placeholder_node_id
from .join import Join, JoinNode, ReducerFunction
from .node import EndNode, Fork, StartNode
from .node_types import AnyDestinationNode, AnyNode, DestinationNode, SourceNode
from .paths import BroadcastMarker, DestinationMarker, EdgePath, EdgePathBuilder, MapMarker, Path, PathBuilder
from .step import NodeStep, Step, StepContext, StepFunction, StepNode, StreamFunction
from .util import TypeOrTypeExpression, get_callable_name, unpack_type_expression

__all__ = ('GraphBuilder',)

StateT = TypeVar('StateT', default=None)
DepsT = TypeVar('DepsT', default=None)
InputT = TypeVar('InputT')
OutputT = TypeVar('OutputT')
SourceT = TypeVar('SourceT')
SourceNodeT = TypeVar('SourceNodeT', bound=BaseNode[Any, Any, Any])
SourceOutputT = TypeVar('SourceOutputT')
GraphInputT = TypeVar('GraphInputT', default=None)
GraphOutputT = TypeVar('GraphOutputT', default=None)
T = TypeVar('T')

_UNSET: Any = object()
_ALIASES: tuple[type, ...] = (typing_extensions.TypeAliasType, getattr(typing, 'TypeAliasType', TypeAliasType))


def _union_members(hint: Any) -> tuple[Any, ...]:
    if isinstance(hint, _ALIASES):
        hint = cast(Any, hint).__value__
    if get_origin(hint) in (typing.Union, types.UnionType):
        return get_args(hint)
    return (hint,)


def _return_hint(function: Any, namespace: dict[str, Any] | None, owner: str) -> Any:
    """The evaluated return annotation of `function` (`_UNSET` when it has none)."""
    try:
        hints = typing_extensions.get_type_hints(function, localns=namespace, include_extras=True)
    except NameError as error:
        raise GraphSetupError(
            f'{owner}: cannot resolve the type hints of {get_callable_name(function)!r} ({error}). Define the '
            'classes they name at module level, or before the graph is built in the same scope.'
        ) from error
    return hints.get('return', _UNSET)


def _caller_namespace(frame: FrameType | None) -> dict[str, Any] | None:
    """The locals of the frame that called the builder method (skipping `typing`'s generic-alias frame)."""
    caller = frame.f_back if frame is not None else None
    while caller is not None and caller.f_globals.get('__name__') == 'typing':  # pragma: no cover
        caller = caller.f_back
    return None if caller is None else dict(caller.f_locals)


class GraphBuilder(Generic[StateT, DepsT, GraphInputT, GraphOutputT]):
    """Gathers the steps, joins, decisions and edges of a builder graph; `build()` makes the `Graph`.

    Type Parameters:
        StateT: The run's state. DepsT: its dependencies. GraphInputT: its input. GraphOutputT: its output.
    """

    if not TYPE_CHECKING:  # pragma: no branch - mypy cannot check an alias bound to the class's own type parameters
        Source = TypeAliasType('Source', SourceNode[StateT, DepsT, OutputT], type_params=(OutputT,))
        Destination = TypeAliasType('Destination', DestinationNode[StateT, DepsT, InputT], type_params=(InputT,))

    def __init__(
        self,
        *,
        name: str | None = None,
        state_type: TypeOrTypeExpression[StateT] = NoneType,  # type: ignore[assignment]
        deps_type: TypeOrTypeExpression[DepsT] = NoneType,  # type: ignore[assignment]
        input_type: TypeOrTypeExpression[GraphInputT] = NoneType,  # type: ignore[assignment]
        output_type: TypeOrTypeExpression[GraphOutputT] = NoneType,  # type: ignore[assignment]
        auto_instrument: bool = True,
    ) -> None:
        """Start an empty graph.

        Args:
            name: The graph's name (found from the variable it is assigned to on first run when not given).
            state_type: The type of the run's state.
            deps_type: The type of its dependencies.
            input_type: The type of its input.
            output_type: The type of its output.
            auto_instrument: Whether runs make logfire spans.
        """
        self.name = name
        """The graph's name."""
        self.state_type = state_type
        """The type of the run's state."""
        self.deps_type = deps_type
        """The type of the run's dependencies."""
        self.input_type = input_type
        """The type of the run's input."""
        self.output_type = output_type
        """The type of the run's output."""
        self.auto_instrument = auto_instrument
        """Whether runs make logfire spans."""
        self._nodes: dict[NodeID, AnyNode] = {}
        self._edges_by_source: dict[NodeID, list[Path]] = {}
        self._start_node = StartNode[GraphInputT]()
        self._end_node = EndNode[GraphOutputT]()

    @property
    def start_node(self) -> StartNode[GraphInputT]:
        """Where runs begin (it sends the run's input on)."""
        return self._start_node

    @property
    def end_node(self) -> EndNode[GraphOutputT]:
        """Where runs end (the first value to reach it is the output)."""
        return self._end_node

    # -- nodes

    @overload
    def step(
        self, *, node_id: str | None = None, label: str | None = None
    ) -> Callable[[StepFunction[StateT, DepsT, InputT, OutputT]], Step[StateT, DepsT, InputT, OutputT]]: ...
    @overload
    def step(
        self,
        call: StepFunction[StateT, DepsT, InputT, OutputT],
        *,
        node_id: str | None = None,
        label: str | None = None,
    ) -> Step[StateT, DepsT, InputT, OutputT]: ...
    def step(
        self,
        call: StepFunction[StateT, DepsT, InputT, OutputT] | None = None,
        *,
        node_id: str | None = None,
        label: str | None = None,
    ) -> Any:
        """Make a step of an async function (`@g.step`, `@g.step(node_id=...)` or `g.step(func)`).

        Args:
            call: The function, taking a `StepContext`.
            node_id: The step's id; the function's name when not given.
            label: The text shown for the step on diagrams.
        """
        if call is None:
            return lambda function: self.step(function, node_id=node_id, label=label)
        return Step[StateT, DepsT, InputT, OutputT](
            id=NodeID(node_id or get_callable_name(call)), call=call, label=label
        )

    @overload
    def stream(
        self, *, node_id: str | None = None, label: str | None = None
    ) -> Callable[
        [StreamFunction[StateT, DepsT, InputT, OutputT]], Step[StateT, DepsT, InputT, AsyncIterable[OutputT]]
    ]: ...
    @overload
    def stream(
        self,
        call: StreamFunction[StateT, DepsT, InputT, OutputT],
        *,
        node_id: str | None = None,
        label: str | None = None,
    ) -> Step[StateT, DepsT, InputT, AsyncIterable[OutputT]]: ...
    def stream(
        self,
        call: StreamFunction[StateT, DepsT, InputT, OutputT] | None = None,
        *,
        node_id: str | None = None,
        label: str | None = None,
    ) -> Any:
        """Make a step of an async generator function: its output is the async iterable (for a `.map()`)."""
        if call is None:
            return lambda function: self.stream(function, node_id=node_id, label=label)
        stream_function = call

        async def start_stream(ctx: StepContext[StateT, DepsT, InputT]) -> AsyncIterable[OutputT]:
            return stream_function(ctx)

        return self.step(start_stream, node_id=node_id or get_callable_name(call), label=label)

    @overload
    def join(
        self,
        reducer: ReducerFunction[StateT, DepsT, InputT, OutputT],
        *,
        initial: OutputT,
        node_id: str | None = None,
        parent_fork_id: str | None = None,
        preferred_parent_fork: Literal['farthest', 'closest'] = 'farthest',
    ) -> Join[StateT, DepsT, InputT, OutputT]: ...
    @overload
    def join(
        self,
        reducer: ReducerFunction[StateT, DepsT, InputT, OutputT],
        *,
        initial_factory: Callable[[], OutputT],
        node_id: str | None = None,
        parent_fork_id: str | None = None,
        preferred_parent_fork: Literal['farthest', 'closest'] = 'farthest',
    ) -> Join[StateT, DepsT, InputT, OutputT]: ...
    def join(
        self,
        reducer: ReducerFunction[StateT, DepsT, InputT, OutputT],
        *,
        initial: Any = _UNSET,
        initial_factory: Any = _UNSET,
        node_id: str | None = None,
        parent_fork_id: str | None = None,
        preferred_parent_fork: Literal['farthest', 'closest'] = 'farthest',
    ) -> Join[StateT, DepsT, InputT, OutputT]:
        """Make a join, folding each branch's value into one with `reducer`.

        Args:
            reducer: `(current, value) -> new current`, or `(ctx, current, value) -> new current`.
            initial: The value to start from (a copy of it for each execution of the parent fork).
            initial_factory: Makes the value to start from, instead of `initial`.
            node_id: The join's id; the reducer's name when not given.
            parent_fork_id: The fork to wait for, instead of the one found from the graph.
            preferred_parent_fork: Of several qualifying forks, wait for the farthest (default) or the closest.

        Raises:
            GraphSetupError: neither or both of `initial` and `initial_factory` are given.
        """
        if (initial is _UNSET) == (initial_factory is _UNSET):
            raise GraphSetupError(
                f'Join of {get_callable_name(reducer)!r}: give exactly one of `initial=` and `initial_factory=`.'
            )
        if initial_factory is _UNSET:
            start_value = initial
            initial_factory = lambda: copy.deepcopy(start_value)  # noqa: E731 - a fresh copy per fork execution
        return Join[StateT, DepsT, InputT, OutputT](
            id=JoinID(NodeID(node_id or generate_placeholder_node_id(get_callable_name(reducer)))),
            reducer=reducer,
            initial_factory=initial_factory,
            parent_fork_id=None if parent_fork_id is None else ForkID(NodeID(parent_fork_id)),
            preferred_parent_fork=preferred_parent_fork,
        )

    def decision(self, *, note: str | None = None, node_id: str | None = None) -> Decision[StateT, DepsT, Never]:
        """Make a decision without branches (add them with `.branch(g.match(...).to(...))`).

        Args:
            note: A note shown next to the decision on diagrams.
            node_id: The decision's id; `decision` (numbered) when not given.
        """
        return Decision(id=NodeID(node_id or generate_placeholder_node_id('decision')), branches=[], note=note)

    def match(
        self, source: TypeOrTypeExpression[SourceT], *, matches: Callable[[Any], bool] | None = None
    ) -> DecisionBranchBuilder[StateT, DepsT, SourceT, SourceT, Never]:
        """Start a decision branch for inputs of type `source` (or those `matches` accepts)."""
        # The decision given here only types the builder; the branch is added to a real one with `.branch`.
        stand_in = Decision[StateT, DepsT, Never](id=NodeID('__match__'), branches=[], note=None)
        return DecisionBranchBuilder(
            decision=stand_in, source=source, matches=matches, path_builder=PathBuilder[StateT, DepsT, SourceT]([])
        )

    def match_node(
        self, source: type[SourceNodeT], *, matches: Callable[[Any], bool] | None = None
    ) -> DecisionBranch[SourceNodeT]:
        """A decision branch that takes instances of the `BaseNode` class `source` and runs them."""
        node = NodeStep(source)
        return DecisionBranch(
            source=source, matches=matches, path=Path([DestinationMarker(node.id)]), destinations=[node]
        )

    def node(self, node_type: type[BaseNode[StateT, DepsT, GraphOutputT]]) -> EdgePath[StateT, DepsT]:
        """The edges of a `BaseNode` class, read from the return hint of its `run` (add them with `add`).

        Raises:
            GraphSetupError: `run` has no return hint, or one that names something other than nodes and `End`.
        """
        hint = _return_hint(node_type.run, _caller_namespace(inspect.currentframe()), f'Node {node_type.__name__!r}')
        edge = None if hint is _UNSET else self._edge_from_return_hint(NodeStep(node_type), hint)
        if edge is None:
            raise GraphSetupError(
                f'Node {node_type} is missing a return type hint on its `run` method that names the nodes it may '
                'return (and `End[...]` if it may end the run).'
            )
        return edge

    # -- edges

    def edge_from(
        self, *sources: SourceNode[StateT, DepsT, SourceOutputT]
    ) -> EdgePathBuilder[StateT, DepsT, SourceOutputT]:
        """Start an edge from `sources` (finish it with `.to(...)` and add it with `add`)."""
        return EdgePathBuilder[StateT, DepsT, SourceOutputT](sources, PathBuilder([]))

    def add_edge(self, source: Any, destination: Any, *, label: str | None = None) -> None:
        """Add an edge from `source` to `destination`, with an optional label."""
        builder = self.edge_from(source)
        if label is not None:
            builder = builder.label(label)
        self.add(builder.to(destination))

    def add_mapping_edge(
        self,
        source: Any,
        map_to: Any,
        *,
        pre_map_label: str | None = None,
        post_map_label: str | None = None,
        fork_id: ForkID | None = None,
        downstream_join_id: JoinID | None = None,
    ) -> None:
        """Add an edge that maps the iterable output of `source` over `map_to`, one parallel task per item."""
        builder: Any = self.edge_from(source)
        if pre_map_label is not None:
            builder = builder.label(pre_map_label)
        builder = builder.map(fork_id=fork_id, downstream_join_id=downstream_join_id)
        if post_map_label is not None:
            builder = builder.label(post_map_label)
        self.add(builder.to(map_to))

    def add(self, *edges: EdgePath[StateT, DepsT]) -> None:
        """Add edges, with the nodes they name and the fork nodes their maps and broadcasts need.

        A step whose return hint names `BaseNode` classes (or `Annotated[StepNode, step]`, `End`, ...) gets
        the edges to them as well.
        """
        self._add(edges, _caller_namespace(inspect.currentframe()))

    def _add(self, edges: Iterable[EdgePath[StateT, DepsT]], namespace: dict[str, Any] | None) -> None:
        added: list[AnyDestinationNode] = []
        seen: set[int] = set()

        def add_destination(node: AnyDestinationNode) -> None:
            if id(node) in seen:
                return  # decisions may lead back to each other
            seen.add(id(node))
            added.append(node)
            self._insert_node(node)
            if isinstance(node, Decision):
                for branch in node.branches:
                    self._insert_forks(branch.path)
                    for destination in branch.destinations:
                        add_destination(destination)

        for edge in edges:
            for source in edge.sources:
                self._insert_node(source)
                self._edges_by_source.setdefault(source.id, []).append(edge.path)
            for destination in edge.destinations:
                add_destination(destination)
            self._insert_forks(edge.path)

        for node in added:
            if isinstance(node, Step) and not isinstance(node, NodeStep):
                hint = _return_hint(node.call, namespace, f'Step {node.id!r}')
                if hint is not _UNSET:
                    implied = self._edge_from_return_hint(node, hint)
                    if implied is not None:
                        self._add([implied], namespace)

    def _insert_forks(self, path: Path) -> None:
        for item in path.items:
            if isinstance(item, BroadcastMarker):
                self._insert_node(Fork[Any, Any](id=item.fork_id, is_map=False, downstream_join_id=None))
                for sub_path in item.paths:
                    self._insert_forks(sub_path)
            elif isinstance(item, MapMarker):
                fork = Fork[Any, Any](id=item.fork_id, is_map=True, downstream_join_id=item.downstream_join_id)
                self._insert_node(fork)

    def _insert_node(self, node: AnyNode) -> None:
        existing = self._nodes.setdefault(node.id, node)
        if existing is node or (
            isinstance(existing, NodeStep) and isinstance(node, NodeStep) and existing.node_type is node.node_type
        ):
            return
        raise GraphBuildingError(
            f'All nodes must have unique node IDs. {node.id!r} was the ID for {existing} and {node}; give one of '
            'them another `node_id`.'
        )

    def _edge_from_return_hint(self, node: Any, hint: Any) -> EdgePath[StateT, DepsT] | None:
        """The edges a return hint declares, when each member of it is a node or `End`; else `None`."""
        members = _union_members(hint)
        destinations: list[Any] = []
        for member in members:
            inner, *metadata = get_args(member) if get_origin(member) is typing_extensions.Annotated else (member,)
            origin = get_origin(inner) or inner
            if origin is End:
                destinations.append(self.end_node)
            elif origin is BaseNode:
                raise GraphSetupError(
                    f'Node {node} return type hint includes a plain `BaseNode`: list each `BaseNode` subclass it '
                    'may return, so that its edges can be read from the hint.'
                )
            elif origin is StepNode or origin is JoinNode:
                wanted = Step if origin is StepNode else Join
                target = next((m for m in metadata if isinstance(m, wanted)), None)
                if target is None:
                    raise GraphSetupError(
                        f'Node {node} return type hint includes a `{origin.__name__}` without the '
                        f'`{wanted.__name__}` it goes to: write `Annotated[{origin.__name__}[StateT, DepsT], '
                        f'my_{wanted.__name__.lower()}]`.'
                    )
                destinations.append(target)
            elif inspect.isclass(origin) and issubclass(origin, BaseNode):
                destinations.append(NodeStep(inner))
        if len(destinations) < len(members):
            return None
        edge = self.edge_from(node)
        if len(destinations) == 1:
            return edge.to(destinations[0])
        # The branches only draw the edges and let parent forks be found: a node's output says where it goes.
        decision: Decision[StateT, DepsT, Any] = self.decision()
        for destination in destinations:
            decision = decision.branch(self.match(NoneType).to(destination))
        return edge.to(decision)

    # -- building

    def build(self, validate_graph_structure: bool = True) -> Graph[StateT, DepsT, GraphInputT, GraphOutputT]:
        """Make the graph: give stand-in ids readable names, flatten paths, check the structure, find parent forks.

        Args:
            validate_graph_structure: Whether to check for edges from the start and to the end, dead ends and
                unreachable nodes.

        Raises:
            GraphValidationError: a structure check failed.
            GraphBuildingError: a join has no fork to wait for.
        """
        compiled = compile_graph(self._nodes, self._edges_by_source, validate=validate_graph_structure)
        return Graph(
            name=self.name,
            state_type=unpack_type_expression(self.state_type),
            deps_type=unpack_type_expression(self.deps_type),
            input_type=unpack_type_expression(self.input_type),
            output_type=unpack_type_expression(self.output_type),
            auto_instrument=self.auto_instrument,
            nodes=compiled.nodes,
            edges_by_source=compiled.edges_by_source,
            parent_forks=compiled.parent_forks,
            intermediate_join_nodes=compiled.intermediate_join_nodes,
        )
