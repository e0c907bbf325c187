"""pydantic-graph's resume-with-input pattern: `load_next` hands out the node waiting for input, and a new run
started with `iter(<node carrying the input>, persistence=...)` on the same persistence replaces it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from edgewise.graph import BaseNode, BaseStatePersistence, End, Graph, GraphRunContext

from .conftest import Store

pytestmark = pytest.mark.anyio


@dataclass
class Answers:
    given: list[str] = field(default_factory=list)


@dataclass
class Prompt(BaseNode[Answers]):
    async def run(self, ctx: GraphRunContext[Answers]) -> AwaitInput:
        return AwaitInput(question=f'question {len(ctx.state.given) + 1}')


@dataclass
class AwaitInput(BaseNode[Answers]):
    question: str

    async def run(self, ctx: GraphRunContext[Answers]) -> Record:
        raise AssertionError('replaced by a Record carrying the input, never run')  # pragma: no cover


@dataclass
class Record(BaseNode[Answers, None, list[str]]):
    answer: str

    async def run(self, ctx: GraphRunContext[Answers]) -> Prompt | End[list[str]]:
        ctx.state.given.append(self.answer)
        return Prompt() if len(ctx.state.given) < 2 else End(ctx.state.given)


input_graph = Graph(nodes=(Prompt, AwaitInput, Record), name='input_graph')


async def advance(
    store: Store, previous: BaseStatePersistence[Answers, list[str]] | None, answer: str | None
) -> tuple[BaseStatePersistence[Answers, list[str]], BaseNode[Answers, None, list[str]] | End[list[str]]]:
    """One invocation of a program: resume the run with `answer` (or start it) up to the next question or the end."""
    persistence = store() if previous is None else store.reopen(previous)
    persistence.set_graph_types(input_graph)
    node: BaseNode[Answers, None, list[str]] = Prompt()
    state = Answers()
    if snapshot := await persistence.load_next():
        assert answer is not None
        node, state = Record(answer=answer), snapshot.state
    async with input_graph.iter(node, state=state, persistence=persistence) as run:
        while not isinstance(next_node := await run.next(), AwaitInput | End):
            pass
    return persistence, next_node


async def test_a_node_handed_out_by_load_next_is_replaced_by_the_next_run(store: Store) -> None:
    persistence, first = await advance(store, None, None)
    persistence, second = await advance(store, persistence, 'a')
    persistence, end = await advance(store, persistence, 'b')

    assert (first, second, end) == (AwaitInput('question 1'), AwaitInput('question 2'), End(['a', 'b']))
    history = await persistence.load_all()
    assert [(type(s.node).__name__, getattr(s, 'status', None)) for s in history] == [
        ('Prompt', 'success'),
        ('AwaitInput', 'pending'),
        ('Record', 'success'),
        ('Prompt', 'success'),
        ('AwaitInput', 'pending'),
        ('Record', 'success'),
        ('End', None),
    ]
