"""The error tree, and every error a run can end with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from edgewise.graph import (
    BaseNode,
    BaseStatePersistence,
    End,
    FullStatePersistence,
    Graph,
    GraphNodeStatusError,
    GraphRunContext,
    GraphRuntimeError,
    GraphSetupError,
    NodeSnapshot,
    SimpleStatePersistence,
)
from edgewise.graph.exceptions import (
    GraphError,
    PersistenceError,
    RunInProgressError,
    StepLimitExceeded,
    UndeclaredEdgeError,
)

from ._counting import Check, Counter, Deps, Increment, counting_graph

pytestmark = pytest.mark.anyio


class Boom(Exception):
    pass


@dataclass
class Explode(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        raise Boom('exploded')


@dataclass
class ReturnsJunk(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return 42  # type: ignore[return-value]


@dataclass
class Sneaky(BaseNode[None, None, int]):
    """Declares `Target` but returns `Elsewhere` or `End`, depending on `go_to`."""

    go_to: str = 'elsewhere'

    async def run(self, ctx: GraphRunContext) -> Target:
        if self.go_to == 'end':
            return End(0)  # type: ignore[return-value]
        return Elsewhere()  # type: ignore[return-value]


@dataclass
class Target(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(1)


@dataclass
class Elsewhere(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(2)


@dataclass
class Hinted(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Elsewhere:
        return End(0)  # type: ignore[return-value]


@dataclass
class Free(BaseNode[None, None, int]):
    go_to: str = 'node'

    async def run(self, ctx: GraphRunContext) -> BaseNode:
        if self.go_to == 'end':
            return End(5)  # type: ignore[return-value]
        return Elsewhere()  # type: ignore[return-value]  # bare `BaseNode` means `BaseNode[None, None, Never]`


error_graph = Graph(nodes=(Explode, ReturnsJunk, Sneaky, Target, Elsewhere, Hinted, Free), name='errors')


@pytest.mark.parametrize(
    ('error', 'bases'),
    [
        (GraphSetupError, (GraphError, TypeError)),
        (GraphRuntimeError, (GraphError, RuntimeError)),
        (GraphNodeStatusError, (GraphRuntimeError,)),
        (UndeclaredEdgeError, (GraphRuntimeError,)),
        (StepLimitExceeded, (GraphRuntimeError,)),
        (RunInProgressError, (GraphRuntimeError,)),
        (PersistenceError, (GraphRuntimeError,)),
    ],
)
def test_error_tree(error: type[Exception], bases: tuple[type[Exception], ...]) -> None:
    assert error.__bases__ == bases
    assert issubclass(error, GraphError)


def test_errors_carry_their_message() -> None:
    error = GraphRuntimeError('what went wrong')
    assert (error.message, str(error), error.args) == ('what went wrong', 'what went wrong', ('what went wrong',))


@pytest.mark.parametrize('status', ['running', 'success', 'error'])
def test_status_check_rejects_snapshots_that_cannot_run(status: Any) -> None:
    with pytest.raises(GraphNodeStatusError) as exc_info:
        GraphNodeStatusError.check(status)
    assert exc_info.value.actual_status == status
    assert exc_info.value.message == f"Incorrect snapshot status '{status}', must be 'created' or 'pending'."


@pytest.mark.parametrize('status', ['created', 'pending'])
def test_status_check_accepts_runnable_snapshots(status: Any) -> None:
    GraphNodeStatusError.check(status)


async def test_an_exception_inside_a_node_propagates_unchanged_and_marks_the_snapshot_error(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    with pytest.raises(Boom) as exc_info:
        await error_graph.run(Explode(), persistence=persistence)
    assert exc_info.value.args == ('exploded',)
    assert type(exc_info.value) is Boom
    last = persistence.last_snapshot if isinstance(persistence, SimpleStatePersistence) else persistence.history[-1]  # type: ignore[attr-defined]
    assert isinstance(last, NodeSnapshot)
    assert (last.node, last.status) == (Explode(), 'error')
    assert last.duration is not None
    assert last.start_ts is not None


async def test_a_node_returning_a_non_node_is_a_runtime_error(persistence: BaseStatePersistence[Any, Any]) -> None:
    with pytest.raises(GraphRuntimeError) as exc_info:
        await error_graph.run(ReturnsJunk(), persistence=persistence)
    assert type(exc_info.value) is GraphRuntimeError
    assert exc_info.value.message == (
        'Invalid node return type: `int`. Expected `BaseNode` or `End`. It was returned by node `ReturnsJunk`.'
    )


async def test_a_node_returning_an_undeclared_node_is_an_undeclared_edge_error(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    with pytest.raises(UndeclaredEdgeError) as exc_info:
        await error_graph.run(Sneaky(), persistence=persistence)
    assert exc_info.value.message == (
        'Node `Sneaky` returned `Elsewhere`, which the return hint of its `run` method does not declare; '
        'declared: `Target`. Add `Elsewhere` to the hint.'
    )


async def test_an_undeclared_edge_marks_the_snapshot_error(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[None, int]()
    with pytest.raises(UndeclaredEdgeError):
        await error_graph.run(Sneaky(), persistence=persistence)
    assert [(s.id, s.status) for s in persistence.history if isinstance(s, NodeSnapshot)] == [('Sneaky:1', 'error')]


async def test_a_node_returning_undeclared_end_is_an_undeclared_edge_error(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    with pytest.raises(UndeclaredEdgeError) as exc_info:
        await error_graph.run(Sneaky(go_to='end'), persistence=persistence)
    assert exc_info.value.message == (
        'Node `Sneaky` returned `End`, but the return hint of its `run` method does not declare `End`; '
        'declared next nodes: `Target`. Add `End[...]` to the hint.'
    )


async def test_undeclared_end_from_a_node_with_no_declared_next_nodes_says_none() -> None:
    only_hinted = Graph(nodes=(Hinted, Elsewhere))
    with pytest.raises(UndeclaredEdgeError, match='declared next nodes: `Elsewhere`'):
        await only_hinted.run(Hinted())


def test_declared_edges_are_listed_sorted_with_end_last() -> None:
    from edgewise.graph._step_runner import _declared, _Edges

    assert _declared(_Edges('X', frozenset(), False, False)) == 'none'
    assert _declared(_Edges('X', frozenset({'B', 'A'}), True, False)) == '`A`, `B`, `End`'


async def test_a_node_returning_bare_base_node_may_go_anywhere(persistence: BaseStatePersistence[Any, Any]) -> None:
    result = await error_graph.run(Free(), persistence=persistence)
    assert result.output == 2


async def test_a_node_returning_bare_base_node_may_end(persistence: BaseStatePersistence[Any, Any]) -> None:
    result = await error_graph.run(Free(go_to='end'), persistence=persistence)
    assert result.output == 5


async def test_rerunning_a_node_that_already_ran_is_a_status_error() -> None:
    persistence = FullStatePersistence[Counter, int]()
    node = Increment()
    async with counting_graph.iter(node, state=Counter(), deps=Deps(5), persistence=persistence) as run:
        await run.next()
        with pytest.raises(GraphNodeStatusError) as exc_info:
            await run.next(node)
    assert exc_info.value.message == "Incorrect snapshot status 'success', must be 'created' or 'pending'."


async def test_rerunning_the_same_node_instance_with_default_persistence_is_a_new_step() -> None:
    # As in pydantic-graph: the default persistence only knows the latest snapshot.
    node = Increment()
    state = Counter()
    async with counting_graph.iter(node, state=state, deps=Deps(5)) as run:
        await run.next()
        await run.next(node)
    assert state.count == 2


async def test_running_a_running_snapshot_is_a_status_error_with_default_persistence() -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    node = Check()
    await persistence.snapshot_node(Counter(), node)
    assert isinstance(persistence.last_snapshot, NodeSnapshot)
    persistence.last_snapshot.status = 'running'
    async with counting_graph.iter(node, state=Counter(), deps=Deps(5), persistence=persistence) as run:
        with pytest.raises(GraphNodeStatusError, match="Incorrect snapshot status 'running'"):
            await run.next()
