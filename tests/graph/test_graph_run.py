"""`Graph.run` and `Graph.run_sync`: results, state, deps, persistence, names and inferred types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Never

import pytest

from edgewise.graph import (
    BaseNode,
    End,
    EndSnapshot,
    FullStatePersistence,
    Graph,
    GraphRunContext,
    NodeSnapshot,
    SimpleStatePersistence,
)

from ._counting import Check, Counter, Deps, Increment, counting_graph

pytestmark = pytest.mark.anyio


class Done(BaseNode[None, None, None]):
    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


module_level_graph = Graph(nodes=(Done,))


async def test_run_returns_output_final_state_and_persistence() -> None:
    state = Counter()
    result = await counting_graph.run(Increment(), state=state, deps=Deps(target=2))
    assert (result.output, result.state) == (2, Counter(count=2, seen=['Increment', 'Check'] * 2))
    assert result.state is state
    assert isinstance(result.persistence, SimpleStatePersistence)


async def test_run_leaves_the_end_snapshot_in_default_persistence(snapshot_ids: None) -> None:
    result = await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1))
    assert isinstance(result.persistence, SimpleStatePersistence)
    snapshot = result.persistence.last_snapshot
    assert isinstance(snapshot, EndSnapshot)
    assert (snapshot.id, snapshot.result, snapshot.state.count) == ('end:3', End(1), 1)


async def test_run_uses_the_given_persistence(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    result = await counting_graph.run(Increment(by=5), state=Counter(), deps=Deps(target=1), persistence=persistence)
    assert result.persistence is persistence
    assert [(type(s).__name__, s.id) for s in persistence.history] == [
        ('NodeSnapshot', 'Increment:1'),
        ('NodeSnapshot', 'Check:2'),
        ('EndSnapshot', 'end:3'),
    ]


async def test_deps_reach_every_node() -> None:
    result = await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=3))
    assert result.output == 3


async def test_state_and_deps_default_to_none() -> None:
    seen: list[tuple[object, object]] = []

    class Look(BaseNode[None, None, str]):
        async def run(self, ctx: GraphRunContext) -> End[str]:
            seen.append((ctx.state, ctx.deps))
            return End('looked')

    result = await Graph(nodes=(Look,)).run(Look())
    assert (result.output, result.state, seen) == ('looked', None, [(None, None)])


async def test_result_repr_leaves_out_persistence() -> None:
    result = await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1))
    assert repr(result) == "GraphRunResult(output=1, state=Counter(count=1, seen=['Increment', 'Check']))"


def test_run_sync_runs_the_graph_to_its_end() -> None:
    result = counting_graph.run_sync(Increment(), state=Counter(), deps=Deps(target=2))
    assert (result.output, result.state.count) == (2, 2)


def test_run_sync_infers_the_name() -> None:
    sync_graph = Graph(nodes=(Done,))
    sync_graph.run_sync(Done())
    assert sync_graph.name == 'sync_graph'


def test_run_sync_without_name_inference() -> None:
    sync_graph = Graph(nodes=(Done,))
    sync_graph.run_sync(Done(), infer_name=False)
    assert sync_graph.name is None


async def test_name_is_inferred_from_a_local_variable_on_run() -> None:
    my_graph = Graph(nodes=(Done,))
    assert my_graph.name is None
    await my_graph.run(Done())
    assert my_graph.name == 'my_graph'


async def test_name_is_inferred_from_a_module_variable() -> None:
    module_level_graph.name = None
    await module_level_graph.run(Done())
    assert module_level_graph.name == 'module_level_graph'


async def test_name_is_inferred_on_iter() -> None:
    iter_graph = Graph(nodes=(Done,))
    async with iter_graph.iter(Done()):
        pass
    assert iter_graph.name == 'iter_graph'


async def test_name_is_inferred_on_initialize_and_iter_from_persistence() -> None:
    init_graph = Graph(nodes=(Done,))
    persistence = FullStatePersistence[None, None]()
    await init_graph.initialize(Done(), persistence)
    assert init_graph.name == 'init_graph'
    resume_graph = Graph(nodes=(Done,))
    async with resume_graph.iter_from_persistence(persistence):
        pass
    assert resume_graph.name == 'resume_graph'


async def test_name_stays_unset_when_not_found() -> None:
    def make() -> Graph[None, None, None]:
        return Graph(nodes=(Done,))

    await make().run(Done())
    unnamed = make()
    assert unnamed.name is None  # assigned only after `make()` returned: nothing to find during it


async def test_name_inference_can_be_turned_off() -> None:
    quiet_graph = Graph(nodes=(Done,))
    await quiet_graph.run(Done(), infer_name=False)
    async with quiet_graph.iter(Done(), infer_name=False):
        pass
    await quiet_graph.initialize(Done(), FullStatePersistence(), infer_name=False)
    assert quiet_graph.name is None


async def test_a_given_name_is_kept() -> None:
    named = Graph(nodes=(Done,), name='explicit')
    await named.run(Done())
    assert named.name == 'explicit'


def test_inferred_types_come_from_the_nodes_generic_parameters() -> None:
    assert counting_graph.inferred_types == (Counter, int)


def test_inferred_types_given_explicitly_win() -> None:
    graph = Graph[Any, Any, Any](nodes=(Increment, Check), state_type=dict, run_end_type=str)
    assert graph.inferred_types == (dict, str)


def test_inferred_types_default_to_none() -> None:
    class Bare(BaseNode):
        async def run(self, ctx: GraphRunContext) -> End[None]:  # type: ignore[override]
            return End(None)

    inferred: tuple[object, object] = Graph(nodes=(Bare,)).inferred_types
    assert inferred == (None, None)


def test_inferred_types_skip_nodes_that_never_end() -> None:
    @dataclass
    class Start(BaseNode[Counter, None, Never]):
        async def run(self, ctx: GraphRunContext[Counter]) -> Finish:
            return Finish()

    @dataclass
    class Finish(BaseNode[Counter, None, str]):
        async def run(self, ctx: GraphRunContext[Counter]) -> End[str]:
            return End('x')

    assert Graph(nodes=(Start, Finish)).inferred_types == (Counter, str)


def test_inferred_types_of_a_node_with_a_non_generic_base() -> None:
    class Mixin:
        pass

    class Mixed(Mixin, BaseNode[Counter, None, int]):
        async def run(self, ctx: GraphRunContext[Counter]) -> End[int]:
            return End(1)

    assert Graph(nodes=(Mixed,)).inferred_types == (Counter, int)


def test_get_nodes_lists_the_node_classes_in_order() -> None:
    assert counting_graph.get_nodes() == [Increment, Check]


def test_graph_repr_names_nodes_and_edges() -> None:
    graph = Graph(nodes=(Done,), name='g')
    assert repr(graph) == (
        "Graph(name='g', node_defs={'Done': NodeDef(node=<class 'tests.graph.test_graph_run.Done'>, node_id='Done', "
        'note=None, next_node_edges={}, end_edge=Edge(label=None), returns_base_node=False)})'
    )


async def test_run_in_a_full_persistence_records_every_step(snapshot_ids: None) -> None:
    persistence = FullStatePersistence[Counter, int]()
    await counting_graph.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    history: list[Any] = persistence.history
    assert [(s.id, s.status if isinstance(s, NodeSnapshot) else 'end', s.state.count) for s in history] == [
        ('Increment:1', 'success', 0),
        ('Check:2', 'success', 1),
        ('end:3', 'end', 1),
    ]


def test_name_is_inferred_at_module_level_and_stays_unset_when_not_found() -> None:
    # Code run at module level: its locals are its globals.
    namespace: dict[str, Any] = {'Graph': Graph, 'Done': Done}
    exec('top_level = Graph(nodes=(Done,))\ntop_level.run_sync(Done())', namespace)
    exec('anonymous = [Graph(nodes=(Done,))]\nanonymous[0].run_sync(Done())', namespace)
    assert (namespace['top_level'].name, namespace['anonymous'][0].name) == ('top_level', None)


def test_unset_arguments_show_as_unset() -> None:
    from edgewise.graph.graph import UNSET

    assert repr(UNSET) == 'UNSET'
