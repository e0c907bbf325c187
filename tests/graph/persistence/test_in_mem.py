"""In-memory persistence: snapshot statuses, lookups, history, JSON, and resuming a run."""

# dirty-equals placeholders compare equal to values mypy considers of another type.
# mypy: disable-error-code="comparison-overlap"

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pydantic
import pytest
from dirty_equals import IsDatetime, IsFloat

from edgewise.graph import (
    BaseNode,
    BaseStatePersistence,
    End,
    EndSnapshot,
    FullStatePersistence,
    Graph,
    GraphNodeStatusError,
    GraphRunContext,
    GraphRuntimeError,
    NodeSnapshot,
    SimpleStatePersistence,
)
from edgewise.graph.persistence import build_snapshot_type_adapter, set_nodes_type_context

from .._counting import Check, Counter, Deps, Increment, counting_graph

pytestmark = pytest.mark.anyio

ANY_TS: Any = IsDatetime()
ANY_DURATION: Any = IsFloat(ge=0)


# --- statuses --------------------------------------------------------------------------------------------------


async def test_a_stored_snapshot_is_created(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await persistence.snapshot_node(Counter(), Increment())
    assert persistence.history == [
        NodeSnapshot(
            state=Counter(), node=Increment(), start_ts=None, duration=None, status='created', id='Increment:1'
        )
    ]


async def test_load_next_marks_the_snapshot_pending_and_returns_a_copy(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    state = Counter()
    await persistence.snapshot_node(state, Increment())
    loaded = await persistence.load_next()
    assert loaded is not None
    assert (loaded.status, loaded.node, loaded.state) == ('pending', Increment(), Counter())
    assert loaded.state is not state
    assert await persistence.load_next() is None


async def test_record_run_marks_running_then_success(persistence: BaseStatePersistence[Any, Any]) -> None:
    node = Increment()
    await persistence.snapshot_node(Counter(), node)
    snapshot_id = node.get_snapshot_id()
    stored = await _stored(persistence, snapshot_id)
    async with persistence.record_run(snapshot_id):
        assert (stored.status, stored.start_ts, stored.duration) == ('running', IsDatetime(), None)
    assert (stored.status, stored.duration) == ('success', IsFloat(ge=0))


async def test_record_run_marks_error_when_the_block_raises(persistence: BaseStatePersistence[Any, Any]) -> None:
    node = Increment()
    await persistence.snapshot_node(Counter(), node)
    with pytest.raises(KeyError):
        async with persistence.record_run(node.get_snapshot_id()):
            raise KeyError('x')
    stored = await _stored(persistence, node.get_snapshot_id())
    assert (stored.status, stored.duration) == ('error', IsFloat(ge=0))


async def test_record_run_of_a_pending_snapshot_runs(persistence: BaseStatePersistence[Any, Any]) -> None:
    node = Increment()
    await persistence.snapshot_node(Counter(), node)
    await persistence.load_next()
    async with persistence.record_run(node.get_snapshot_id()):
        pass
    assert (await _stored(persistence, node.get_snapshot_id())).status == 'success'


@pytest.mark.parametrize('status', ['running', 'success', 'error'])
async def test_record_run_of_a_snapshot_that_cannot_run_is_a_status_error(
    persistence: BaseStatePersistence[Any, Any], status: Any
) -> None:
    node = Increment()
    await persistence.snapshot_node(Counter(), node)
    (await _stored(persistence, node.get_snapshot_id())).status = status
    with pytest.raises(GraphNodeStatusError) as exc_info:
        persistence.record_run(node.get_snapshot_id())
    assert exc_info.value.actual_status == status


async def test_record_run_of_an_unknown_id_is_a_lookup_error(persistence: BaseStatePersistence[Any, Any]) -> None:
    await persistence.snapshot_node(Counter(), Increment())
    with pytest.raises(LookupError) as exc_info:
        persistence.record_run('Increment:unknown')
    assert str(exc_info.value) == "No snapshot found with id='Increment:unknown'"


async def test_record_run_in_an_empty_persistence_is_a_lookup_error(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    with pytest.raises(LookupError, match="No snapshot found with id='x'"):
        persistence.record_run('x')


async def test_record_run_of_an_end_snapshot_is_a_runtime_error(persistence: BaseStatePersistence[Any, Any]) -> None:
    end = End(3)
    await persistence.snapshot_end(Counter(), end)
    with pytest.raises(GraphRuntimeError) as exc_info:
        persistence.record_run(end.get_snapshot_id())
    assert exc_info.value.message == (
        f'Snapshot {end.get_snapshot_id()!r} is the end of the run; only node snapshots can be run.'
    )


async def _stored(persistence: BaseStatePersistence[Any, Any], snapshot_id: str) -> NodeSnapshot[Any, Any]:
    if isinstance(persistence, SimpleStatePersistence):
        snapshot = persistence.last_snapshot
    else:
        snapshot = next(s for s in await persistence.load_all() if s.id == snapshot_id)
    assert isinstance(snapshot, NodeSnapshot)
    return snapshot


# --- SimpleStatePersistence ------------------------------------------------------------------------------------


async def test_simple_keeps_only_the_latest_snapshot(snapshot_ids: None) -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    await persistence.snapshot_node(Counter(), Increment())
    await persistence.snapshot_end(Counter(count=1), End(1))
    assert persistence.last_snapshot == EndSnapshot(state=Counter(count=1), result=End(1), ts=ANY_TS, id='end:2')


async def test_simple_snapshot_node_if_new_skips_the_latest_id(snapshot_ids: None) -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    node = Increment()
    await persistence.snapshot_node(Counter(count=1), node)
    first = persistence.last_snapshot
    await persistence.snapshot_node_if_new(node.get_snapshot_id(), Counter(count=2), node)
    assert persistence.last_snapshot is first
    other = Check()
    await persistence.snapshot_node_if_new(other.get_snapshot_id(), Counter(count=3), other)
    assert persistence.last_snapshot == NodeSnapshot(state=Counter(count=3), node=Check(), id='Check:2')


async def test_simple_snapshot_node_if_new_in_an_empty_persistence_stores(snapshot_ids: None) -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    node = Increment()
    await persistence.snapshot_node_if_new(node.get_snapshot_id(), Counter(), node)
    assert persistence.last_snapshot == NodeSnapshot(state=Counter(), node=Increment(), id='Increment:1')


async def test_simple_load_next_after_the_end_is_none() -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    assert await persistence.load_next() is None
    await persistence.snapshot_end(Counter(), End(1))
    assert await persistence.load_next() is None


async def test_simple_has_no_history() -> None:
    with pytest.raises(NotImplementedError) as exc_info:
        await SimpleStatePersistence().load_all()
    assert str(exc_info.value) == (
        'SimpleStatePersistence keeps only the latest snapshot; use FullStatePersistence for the history'
    )


async def test_simple_stores_state_and_nodes_without_copying() -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    state, node = Counter(), Increment()
    await persistence.snapshot_node(state, node)
    assert isinstance(persistence.last_snapshot, NodeSnapshot)
    assert persistence.last_snapshot.state is state
    assert persistence.last_snapshot.node is node


# --- FullStatePersistence --------------------------------------------------------------------------------------


async def test_full_history_of_a_run(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    assert await persistence.load_all() == [
        NodeSnapshot(
            state=Counter(),
            node=Increment(),
            start_ts=ANY_TS,
            duration=ANY_DURATION,
            status='success',
            id='Increment:1',
        ),
        NodeSnapshot(
            state=Counter(count=1, seen=['Increment']),
            node=Check(),
            start_ts=ANY_TS,
            duration=ANY_DURATION,
            status='success',
            id='Check:2',
        ),
        EndSnapshot(state=Counter(count=1, seen=['Increment', 'Check']), result=End(1), ts=ANY_TS, id='end:3'),
    ]


async def test_full_deep_copy_keeps_history_apart_from_later_mutation() -> None:
    persistence = FullStatePersistence[Counter, int]()
    state = Counter()
    node = Increment()
    await persistence.snapshot_node(state, node)
    state.count = 9
    node.by = 9
    end_data = {'total': 1}
    await persistence.snapshot_end(state, End(end_data))  # type: ignore[arg-type]
    end_data['total'] = 2
    first, last = persistence.history
    assert isinstance(first, NodeSnapshot)
    assert isinstance(last, EndSnapshot)
    assert (first.state.count, first.node, last.result.data) == (0, Increment(by=1), {'total': 1})
    assert first.id == node.get_snapshot_id()


async def test_full_without_deep_copy_stores_the_objects_themselves() -> None:
    persistence = FullStatePersistence[Counter, int](deep_copy=False)
    state, node, end = Counter(), Increment(), End(1)
    await persistence.snapshot_node(state, node)
    await persistence.snapshot_end(state, end)
    first, last = persistence.history
    assert isinstance(first, NodeSnapshot)
    assert isinstance(last, EndSnapshot)
    assert (first.state, first.node, last.state, last.result) == (state, node, state, end)
    assert first.state is state
    assert first.node is node
    assert last.result is end


async def test_full_deep_copy_stores_a_none_state_as_none() -> None:
    persistence = FullStatePersistence[None, int]()
    await persistence.snapshot_node(None, Increment())  # type: ignore[arg-type]
    assert persistence.history[0].state is None


async def test_full_snapshot_node_if_new_skips_any_known_id(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    first, second = Increment(), Check()
    await persistence.snapshot_node(Counter(), first)
    await persistence.snapshot_node(Counter(), second)
    await persistence.snapshot_node_if_new(first.get_snapshot_id(), Counter(count=5), first)
    await persistence.snapshot_node_if_new('Check:new', Counter(count=6), Check())
    assert [(s.id, s.state.count) for s in persistence.history] == [('Increment:1', 0), ('Check:2', 0), ('Check:3', 6)]


async def test_full_load_next_hands_out_created_snapshots_in_order(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    for _ in range(3):
        await persistence.snapshot_node(Counter(), Increment())
    ids = [(await persistence.load_next()) for _ in range(4)]
    assert [s.id if s else None for s in ids] == ['Increment:1', 'Increment:2', 'Increment:3', None]
    assert [s.status for s in persistence.history if isinstance(s, NodeSnapshot)] == ['pending'] * 3


async def test_full_load_next_finds_snapshots_added_after_it_ran_out(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    assert await persistence.load_next() is None
    await persistence.snapshot_node(Counter(), Increment())
    loaded = await persistence.load_next()
    assert loaded is not None
    assert loaded.id == 'Increment:1'


async def test_full_finds_snapshots_after_the_history_is_replaced(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await persistence.snapshot_node(Counter(), Increment())
    persistence.record_run('Increment:1')  # the index now knows the first history
    replacement = NodeSnapshot(state=Counter(count=4), node=Check(), id='Check:other')
    persistence.history = [replacement]
    with pytest.raises(LookupError):
        persistence.record_run('Increment:1')
    async with persistence.record_run('Check:other'):
        pass
    assert replacement.status == 'success'


async def test_full_finds_snapshots_appended_to_the_history_from_outside() -> None:
    persistence = FullStatePersistence[Counter, int]()
    await persistence.snapshot_node(Counter(), Increment())
    persistence.history.append(NodeSnapshot(state=Counter(), node=Check(), id='Check:appended'))
    loaded = [await persistence.load_next(), await persistence.load_next()]
    assert [s.node if s else None for s in loaded] == [Increment(), Check()]
    async with persistence.record_run('Check:appended'):
        pass


# --- JSON ------------------------------------------------------------------------------------------------------


async def test_dump_json_of_a_run(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    assert json.loads(persistence.dump_json()) == [
        {
            'state': {'count': 0, 'seen': []},
            'node': {'by': 1, 'node_id': 'Increment'},
            'start_ts': IsDatetime(iso_string=True),
            'duration': IsFloat(ge=0),
            'status': 'success',
            'kind': 'node',
            'id': 'Increment:1',
        },
        {
            'state': {'count': 1, 'seen': ['Increment']},
            'node': {'node_id': 'Check'},
            'start_ts': IsDatetime(iso_string=True),
            'duration': IsFloat(ge=0),
            'status': 'success',
            'kind': 'node',
            'id': 'Check:2',
        },
        {
            'state': {'count': 1, 'seen': ['Increment', 'Check']},
            'result': {'data': 1},
            'ts': IsDatetime(iso_string=True),
            'kind': 'end',
            'id': 'end:3',
        },
    ]


async def test_deps_are_never_persisted(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    dumped = persistence.dump_json().decode()
    assert 'target' not in dumped
    assert 'deps' not in dumped


async def test_dump_json_indents_on_request() -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.run(Check(), state=Counter(count=1), deps=Deps(target=1), persistence=persistence)
    assert persistence.dump_json(indent=2).startswith(b'[\n  {\n    "state": {')


async def test_load_json_restores_the_history(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    restored = FullStatePersistence[Counter, int]()
    restored.set_graph_types(counting_graph)
    restored.load_json(persistence.dump_json())
    assert restored.history == persistence.history
    assert isinstance(restored.history[0].state, Counter)


async def test_load_json_then_resume_with_iter_from_persistence(snapshot_ids: None) -> None:
    first = FullStatePersistence[Counter, int]()
    await counting_graph.initialize(Increment(by=2), first, state=Counter())
    saved = first.dump_json()

    second = FullStatePersistence[Counter, int]()
    second.set_graph_types(counting_graph)
    second.load_json(saved)
    async with counting_graph.iter_from_persistence(second, deps=Deps(target=2)) as run:
        nodes = [node async for node in run]
    assert nodes == [Increment(by=2), Check(), End(2)]
    assert [(s.id, s.status if isinstance(s, NodeSnapshot) else 'end') for s in second.history] == [
        ('Increment:1', 'success'),
        ('Check:2', 'success'),
        ('end:3', 'end'),
    ]


async def test_load_json_of_an_unknown_node_id_is_a_validation_error() -> None:
    persistence = FullStatePersistence[Counter, int]()
    persistence.set_graph_types(counting_graph)
    data = [{'state': {'count': 0}, 'node': {'node_id': 'Nope'}, 'kind': 'node', 'id': 'Nope:1', 'status': 'created'}]
    with pytest.raises(pydantic.ValidationError, match="Input tag 'Nope' found using _node_id_of"):
        persistence.load_json(json.dumps(data))


async def test_load_json_of_a_node_without_node_id_is_a_validation_error() -> None:
    persistence = FullStatePersistence[Counter, int]()
    persistence.set_graph_types(counting_graph)
    data = [{'state': {'count': 0}, 'node': ['not', 'a', 'dict'], 'kind': 'node', 'id': 'X:1', 'status': 'created'}]
    with pytest.raises(pydantic.ValidationError, match='Unable to extract tag using discriminator _node_id_of'):
        persistence.load_json(json.dumps(data))


@dataclass
class Lonely(BaseNode[int, None, int]):
    step: int = 0

    async def run(self, ctx: GraphRunContext[int]) -> Lonely | End[int]:
        return End(ctx.state)


async def test_json_round_trip_of_a_single_node_graph(snapshot_ids: None) -> None:
    graph = Graph(nodes=(Lonely,))
    persistence = FullStatePersistence[int, int]()
    await graph.run(Lonely(step=1), state=7, persistence=persistence)
    restored = FullStatePersistence[int, int]()
    restored.set_graph_types(graph)
    restored.load_json(persistence.dump_json())
    assert restored.history == persistence.history
    assert json.loads(persistence.dump_json())[0]['node'] == {'step': 1, 'node_id': 'Lonely'}


async def test_dump_json_before_the_graph_types_are_known_is_an_error() -> None:
    with pytest.raises(RuntimeError) as exc_info:
        FullStatePersistence().dump_json()
    assert str(exc_info.value) == (
        "FullStatePersistence.dump_json needs the graph's types: pass the persistence to a graph run first, "
        'or call `persistence.set_graph_types(graph)`.'
    )


async def test_load_json_before_the_graph_types_are_known_is_an_error() -> None:
    with pytest.raises(RuntimeError, match=r'FullStatePersistence\.load_json needs the graph'):
        FullStatePersistence().load_json(b'[]')


async def test_set_graph_types_builds_the_type_adapter_only_when_json_is_needed() -> None:
    persistence = FullStatePersistence[Counter, int]()
    persistence.set_graph_types(counting_graph)
    assert persistence._snapshots_type_adapter is None
    assert persistence.should_set_types() is False
    persistence.dump_json()
    assert persistence._snapshots_type_adapter is not None


async def test_set_types_inside_a_node_context_builds_the_adapter_at_once() -> None:
    persistence = FullStatePersistence[Counter, int]()
    with set_nodes_type_context(counting_graph.get_nodes()):
        persistence.set_types(Counter, int)
    assert persistence.should_set_types() is False
    persistence.history.append(NodeSnapshot(state=Counter(), node=Check(), id='Check:1'))
    assert json.loads(persistence.dump_json())[0]['node'] == {'node_id': 'Check'}


def test_snapshot_schemas_outside_a_node_context_are_an_error() -> None:
    with pytest.raises(
        RuntimeError, match=r'^Unable to build a Pydantic schema for `BaseNode` without setting `nodes_type_context`: '
    ):
        FullStatePersistence().set_types(Counter, int)


def test_one_snapshot_type_adapter_validates_node_and_end_snapshots() -> None:
    with set_nodes_type_context(counting_graph.get_nodes()):
        adapter = build_snapshot_type_adapter(Counter, int)
    end = adapter.validate_python({'state': {'count': 1}, 'result': {'data': 1}, 'kind': 'end', 'id': 'end:1'})
    node = adapter.validate_python({'state': {'count': 1}, 'node': {'node_id': 'Check'}, 'kind': 'node', 'id': 'C:1'})
    assert end == EndSnapshot(state=Counter(count=1), result=End(1), ts=ANY_TS, id='end:1')
    assert node == NodeSnapshot(state=Counter(count=1), node=Check(), id='C:1')
    assert isinstance(end.ts, datetime)


def test_an_end_snapshot_exposes_its_result_as_node() -> None:
    snapshot = EndSnapshot(state=None, result=End(4))
    assert snapshot.node is snapshot.result


def test_snapshot_ids_come_from_the_node_or_the_end(snapshot_ids: None) -> None:
    assert NodeSnapshot(state=Counter(), node=Check()).id == 'Check:1'
    assert EndSnapshot(state=None, result=End(1)).id == 'end:2'


# --- the persistence contract ----------------------------------------------------------------------------------


class Recording(SimpleStatePersistence[Counter, int]):
    """Says it needs types, and records what `set_types` is given."""

    def __init__(self) -> None:
        super().__init__()
        self.types: list[tuple[Any, Any]] = []

    def should_set_types(self) -> bool:
        return not self.types

    def set_types(self, state_type: type[Counter], run_end_type: type[int]) -> None:
        self.types.append((state_type, run_end_type))


async def test_set_graph_types_calls_set_types_while_it_is_needed() -> None:
    persistence = Recording()
    await counting_graph.run(Check(), state=Counter(count=1), deps=Deps(target=1), persistence=persistence)
    await counting_graph.run(Check(), state=Counter(count=1), deps=Deps(target=1), persistence=persistence)
    assert persistence.types == [(Counter, int)]


def test_default_persistence_needs_no_types() -> None:
    persistence = SimpleStatePersistence[Counter, int]()
    assert persistence.should_set_types() is False
    persistence.set_graph_types(counting_graph)
    persistence.set_types(Counter, int)


# --- initialize and resume -------------------------------------------------------------------------------------


async def test_initialize_stores_the_first_snapshot_without_running_it(
    persistence: BaseStatePersistence[Any, Any], snapshot_ids: None
) -> None:
    state = Counter()
    await counting_graph.initialize(Increment(), persistence, state=state)
    assert state.count == 0
    loaded = await persistence.load_next()
    assert loaded == NodeSnapshot(state=Counter(), node=Increment(), status='pending', id='Increment:1')


async def test_iter_from_persistence_resumes_where_the_run_stopped(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    async with counting_graph.iter(Increment(), state=Counter(), deps=Deps(target=2), persistence=persistence) as run:
        await run.next()
    async with counting_graph.iter_from_persistence(persistence, deps=Deps(target=2)) as resumed:
        nodes = [node async for node in resumed]
    assert nodes == [Check(), Increment(), Check(), End(2)]
    assert resumed.result is not None
    assert resumed.result.state.count == 2


async def test_iter_from_persistence_keeps_the_stored_snapshot_id(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.initialize(Check(), persistence, state=Counter(count=3))
    async with counting_graph.iter_from_persistence(persistence, deps=Deps(target=1)) as run:
        await run.next()
    assert [s.id for s in persistence.history] == ['Check:1', 'end:2']


async def test_iter_from_persistence_without_a_waiting_snapshot_is_a_runtime_error(
    persistence: BaseStatePersistence[Any, Any],
) -> None:
    await counting_graph.run(Check(), state=Counter(count=1), deps=Deps(target=1), persistence=persistence)
    with pytest.raises(GraphRuntimeError) as exc_info:
        async with counting_graph.iter_from_persistence(persistence):
            pass  # pragma: no cover
    assert exc_info.value.message == (
        f'Unable to restore snapshot from state persistence: {type(persistence).__name__} holds no node snapshot '
        "with status 'created' (the run has ended, or was never initialized)."
    )


async def test_iter_from_persistence_with_max_steps() -> None:
    from edgewise.graph.exceptions import StepLimitExceeded

    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.initialize(Increment(), persistence, state=Counter())
    async with counting_graph.iter_from_persistence(persistence, deps=Deps(target=5), max_steps=2) as run:
        await run.next()
        await run.next()
        with pytest.raises(StepLimitExceeded):
            await run.next()


async def test_a_node_stored_by_initialize_runs_as_that_snapshot_when_given_to_iter(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    node = Increment()
    await counting_graph.initialize(node, persistence, state=Counter())
    async with counting_graph.iter(node, state=Counter(), deps=Deps(target=1), persistence=persistence) as run:
        async for _ in run:
            pass
    assert [(s.id, getattr(s, 'status', 'end')) for s in persistence.history] == [
        ('Increment:1', 'success'),
        ('Check:2', 'success'),
        ('end:3', 'end'),
    ]


@dataclass
class _Raises(BaseNode[None, None, int]):
    error: str = 'value'

    async def run(self, ctx: GraphRunContext[None]) -> End[int]:
        if self.error == 'value':
            raise ValueError('no good')
        raise KeyboardInterrupt


_raising_graph = Graph(nodes=(_Raises,), name='raising_graph')


@pytest.mark.parametrize('persistence_type', [SimpleStatePersistence, FullStatePersistence])
async def test_a_node_that_raises_keeps_its_error_and_an_interrupted_one_none(persistence_type: type[Any]) -> None:
    failed, interrupted = persistence_type(), persistence_type()
    with pytest.raises(ValueError, match='no good'):
        await _raising_graph.run(_Raises(), persistence=failed)
    with pytest.raises(KeyboardInterrupt):
        await _raising_graph.run(_Raises(error='interrupt'), persistence=interrupted)

    error, none = _last_error(failed), _last_error(interrupted)
    assert error is not None
    assert (error.type, error.message, none) == ('ValueError', 'no good', None)


def _last_error(persistence: Any) -> Any:
    last = persistence.last_snapshot if isinstance(persistence, SimpleStatePersistence) else persistence.history[-1]
    assert isinstance(last, NodeSnapshot)
    return last.error
