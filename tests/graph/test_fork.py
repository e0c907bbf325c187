"""Fan-outs: `Fork[...]` in a return hint, branches run concurrently, a join receives their results in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import pytest

from edgewise.graph import BaseNode, Edge, End, FullStatePersistence, Graph, GraphRunContext, GraphSetupError
from edgewise.graph.exceptions import BranchFailedError, GraphRuntimeError
from edgewise.graph.fork import BranchFailure, Fork

pytestmark = pytest.mark.anyio


@dataclass
class Shared:
    words: list[str] = field(default_factory=list)
    running: int = 0
    most_running: int = 0


@dataclass
class Deps:
    """Events by branch: branch `i` waits for branch `i + 1` to finish, so branches finish in reverse order."""

    done: dict[int, anyio.Event] = field(default_factory=dict)
    counter: list[int] = field(default_factory=lambda: [0, 0])


@dataclass
class Word(BaseNode[Shared, Deps, str]):
    index: int
    last: int

    async def run(self, ctx: GraphRunContext[Shared, Deps]) -> Upper:
        if self.index < self.last:
            await ctx.deps.done[self.index + 1].wait()
        ctx.state.words.append(f'w{self.index}')
        return Upper(self.index)


@dataclass
class Upper(BaseNode[Shared, Deps, str]):
    index: int

    async def run(self, ctx: GraphRunContext[Shared, Deps]) -> End[str]:
        ctx.deps.done[self.index].set()
        return End(f'W{self.index}')


@dataclass
class Joined(BaseNode[Shared, Deps, str]):
    results: list[str]

    async def run(self, ctx: GraphRunContext[Shared, Deps]) -> End[str]:
        return End(','.join(self.results))


@dataclass
class Split(BaseNode[Shared, Deps, str]):
    count: int

    async def run(self, ctx: GraphRunContext[Shared, Deps]) -> Annotated[Fork[Word, Joined], Edge('map')]:
        for i in range(self.count):
            ctx.deps.done[i] = anyio.Event()
        return Fork([Word(i, self.count - 1) for i in range(self.count)], join=Joined)


def merge(state: Shared, branch: Shared) -> None:
    state.words.extend(branch.words)


words = Graph(nodes=(Split, Word, Upper, Joined), state_reducer=merge)


async def test_join_gets_results_in_branch_order_and_states_merge_in_branch_order() -> None:
    state = Shared(words=['start'])
    result = await words.run(Split(4), state=state, deps=Deps())
    assert result.output == 'W0,W1,W2,W3'
    assert state.words == ['start', 'start', 'w0', 'start', 'w1', 'start', 'w2', 'start', 'w3']


async def test_iteration_yields_the_fork_between_its_node_and_the_join() -> None:
    async with words.iter(Split(2), state=Shared(), deps=Deps()) as run:
        nodes = [node async for node in run]
    assert [type(n).__name__ for n in nodes] == ['Split', 'Fork', 'Joined', 'End']
    fork = nodes[1]
    assert isinstance(fork, Fork)
    assert fork.branches == [Word(0, 1), Word(1, 1)]
    assert fork.join == 'Joined'


async def test_full_history_holds_the_fork_step() -> None:
    persistence = FullStatePersistence[Shared, str]()
    await words.run(Split(2), state=Shared(), deps=Deps(), persistence=persistence)
    assert [(type(s.node).__name__, getattr(s, 'status', None)) for s in persistence.history] == [
        ('Split', 'success'),
        ('Fork', 'success'),
        ('Joined', 'success'),
        ('End', None),
    ]


async def test_a_branch_change_without_a_reducer_fails_rather_than_being_lost() -> None:
    no_reducer = Graph(nodes=(Split, Word, Upper, Joined))
    with pytest.raises(GraphRuntimeError, match=r'Branch 0 of the fan-out .* changed its copy of the state'):
        await no_reducer.run(Split(1), state=Shared(), deps=Deps())


@dataclass
class Flaky(BaseNode[None, Deps, int]):
    index: int

    async def run(self, ctx: GraphRunContext[None, Deps]) -> End[int]:
        if self.index == 1:
            raise ValueError(f'bad item {self.index}')
        if self.index == 2:
            ctx.deps.counter[0] += 1
            await anyio.sleep_forever()  # cancelled by its sibling's failure
        return End(self.index)


@dataclass
class Sum(BaseNode[None, Deps, int]):
    results: list[int | BranchFailure]

    async def run(self, ctx: GraphRunContext[None, Deps]) -> End[int]:
        return End(sum(r for r in self.results if isinstance(r, int)))


@dataclass
class FlakySplit(BaseNode[None, Deps, int]):
    collect: bool

    async def run(self, ctx: GraphRunContext[None, Deps]) -> Fork[Flaky, Sum]:
        indexes = [0, 1, 3] if self.collect else [0, 1, 2]
        return Fork.map(Flaky, indexes, join=Sum, on_error='collect' if self.collect else 'cancel')


flaky = Graph(nodes=(FlakySplit, Flaky, Sum))


async def test_a_failing_branch_cancels_its_siblings() -> None:
    persistence = FullStatePersistence[None, int]()
    with pytest.raises(BranchFailedError) as raised:
        await flaky.run(FlakySplit(collect=False), deps=Deps(), persistence=persistence)
    error = raised.value
    assert (error.branch, error.node_id, error.run_id) == (1, 'Flaky', None)
    assert isinstance(error.__cause__, ValueError)
    assert 'Branch 1 of the fan-out' in str(error)
    assert "on_error='collect'" in str(error)
    assert [(type(s.node).__name__, getattr(s, 'status', None)) for s in persistence.history] == [
        ('FlakySplit', 'success'),
        ('Fork', 'error'),
    ]


async def test_collect_hands_the_join_the_failures() -> None:
    result = await flaky.run(FlakySplit(collect=True), deps=Deps())
    assert result.output == 3


async def test_collect_failures_in_the_join_results() -> None:
    async with flaky.iter(FlakySplit(collect=True), deps=Deps()) as run:
        nodes = [node async for node in run]
    join = nodes[2]
    assert isinstance(join, Sum)
    assert join.results == [0, BranchFailure(branch=1, node_id='Flaky', error='ValueError: bad item 1'), 3]


@dataclass
class Slot(BaseNode[Shared, None, int]):
    index: int

    async def run(self, ctx: GraphRunContext[Shared]) -> End[int]:
        # Branches share nothing but their deps; the count of running ones lives in a module-level list.
        RUNNING[0] += 1
        RUNNING[1] = max(RUNNING[1], RUNNING[0])
        await anyio.wait_all_tasks_blocked()
        RUNNING[0] -= 1
        return End(self.index)


RUNNING = [0, 0]


@dataclass
class SlotJoin(BaseNode[Shared, None, int]):
    results: list[int]

    async def run(self, ctx: GraphRunContext[Shared]) -> End[int]:
        return End(sum(self.results))


@dataclass
class SlotSplit(BaseNode[Shared, None, int]):
    async def run(self, ctx: GraphRunContext[Shared]) -> Fork[Slot, SlotJoin]:
        return Fork.map(Slot, range(6), join=SlotJoin, max_concurrency=2)


async def test_max_concurrency_bounds_running_branches() -> None:
    RUNNING[:] = [0, 0]
    graph = Graph(nodes=(SlotSplit, Slot, SlotJoin))
    result = await graph.run(SlotSplit(), state=Shared())
    assert result.output == 15
    assert RUNNING == [0, 2]


def test_max_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match='max_concurrency'):
        Fork([], join=SlotJoin, max_concurrency=0)


def test_a_join_no_branch_reaches_is_a_setup_error() -> None:
    @dataclass
    class Loop(BaseNode):
        async def run(self, ctx: GraphRunContext) -> Loop:
            return Loop()

    @dataclass
    class Never(BaseNode[None, None, None]):
        results: list[int]

        async def run(self, ctx: GraphRunContext) -> End[None]:
            return End(None)

    @dataclass
    class Start(BaseNode):
        async def run(self, ctx: GraphRunContext) -> Fork[Loop, Never]:
            return Fork([Loop()], join=Never)

    with pytest.raises(
        GraphSetupError, match='The join `Never` of the fan-out of node `Start` is reached by no branch'
    ):
        Graph(nodes=(Start, Loop, Never))


def test_a_join_without_results_is_a_setup_error() -> None:
    @dataclass
    class Bad(BaseNode[None, None, None]):
        async def run(self, ctx: GraphRunContext) -> End[None]:
            return End(None)

    @dataclass
    class Start(BaseNode):
        async def run(self, ctx: GraphRunContext) -> Fork[Bad, Bad]:
            return Fork([Bad()], join=Bad)

    with pytest.raises(GraphSetupError, match='must take the branch results as a `results` argument'):
        Graph(nodes=(Start, Bad))


def test_fork_members_must_be_nodes() -> None:
    @dataclass
    class Start(BaseNode):
        async def run(self, ctx: GraphRunContext) -> Fork[int, Joined]:
            raise NotImplementedError

    with pytest.raises(GraphSetupError, match='the branches of `Fork'):
        Graph[Any, Any, Any](nodes=(Start, Joined))


def test_fork_join_must_be_a_node() -> None:
    @dataclass
    class Start(BaseNode):
        async def run(self, ctx: GraphRunContext) -> Fork[Joined, int]:
            raise NotImplementedError

    with pytest.raises(GraphSetupError, match='the join of `Fork'):
        Graph[Any, Any, Any](nodes=(Start, Joined))


def test_fork_branch_nodes_must_be_in_the_graph() -> None:
    with pytest.raises(GraphSetupError, match='`Word` is referenced by `Split`'):
        Graph(nodes=(Split, Upper, Joined))


def test_mermaid_draws_fork_and_join_states() -> None:
    assert words.mermaid_code(start_node=Split, title=False) == '\n'.join(
        [
            'stateDiagram-v2',
            '  [*] --> Split',
            '  state Split_fork <<fork>>',
            '  Split --> Split_fork: map',
            '  Split_fork --> Word',
            '  state Split_join <<join>>',
            '  Split_join --> Joined',
            '  Word --> Upper',
            '  Upper --> Split_join',
            '  Joined --> [*]',
        ]
    )


async def test_a_fork_outside_a_run_is_refused() -> None:
    with pytest.raises(GraphRuntimeError, match='runs only as a step of a graph run'):
        await Fork([Word(0, 0)], join=Joined).run(GraphRunContext(state=None, deps=None))


async def test_branches_of_an_untraced_graph_give_the_same_results() -> None:
    untraced = Graph(nodes=(Split, Word, Upper, Joined), state_reducer=merge, auto_instrument=False)
    result = await untraced.run(Split(3), state=Shared(), deps=Deps())
    assert result.output == 'W0,W1,W2'


async def test_the_run_path_of_a_fan_out_skips_the_fork_step() -> None:
    persistence = FullStatePersistence[Shared, str]()
    await words.run(Split(1), state=Shared(), deps=Deps(), persistence=persistence)
    code = words.mermaid_code(start_node=Split, title=False, history=persistence.history)
    assert code.endswith('classDef highlighted fill:#fdff32\nclass Split highlighted\nclass Joined highlighted')


def test_a_bare_fork_hint_is_a_setup_error() -> None:
    @dataclass
    class Start(BaseNode[None, None, None]):
        async def run(self, ctx: GraphRunContext) -> Fork:
            raise NotImplementedError

    with pytest.raises(GraphSetupError, match=r'needs two parameters, `Fork\[BranchNodes, JoinNode\]`'):
        Graph(nodes=(Start,))


async def test_emit_on_a_hand_made_context_does_nothing() -> None:
    await GraphRunContext(state=None, deps=None).emit('nobody listens')
