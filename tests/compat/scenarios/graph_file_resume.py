"""A quiz that stops for an answer and resumes in a new process: `FileStatePersistence`, `iter_from_persistence`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.file import FileStatePersistence


@dataclass
class Quiz:
    asked: list[str] = field(default_factory=list)
    score: int = 0


@dataclass
class Ask(BaseNode[Quiz]):
    async def run(self, ctx: GraphRunContext[Quiz]) -> WaitForAnswer:
        question = f'What is {len(ctx.state.asked) + 2} squared?'
        ctx.state.asked.append(question)
        return WaitForAnswer(question=question)


@dataclass
class WaitForAnswer(BaseNode[Quiz]):
    question: str

    async def run(self, ctx: GraphRunContext[Quiz]) -> Mark:
        raise RuntimeError('the answer comes from outside: this node is replaced, never run')


@dataclass
class Mark(BaseNode[Quiz, None, str]):
    answer: str

    async def run(self, ctx: GraphRunContext[Quiz]) -> Ask | End[str]:
        expected = str((len(ctx.state.asked) + 1) ** 2)
        if self.answer == expected:
            ctx.state.score += 1
        if len(ctx.state.asked) < 2:
            return Ask()
        return End(f'{ctx.state.score}/{len(ctx.state.asked)}')


quiz_graph = Graph(nodes=(Ask, WaitForAnswer, Mark))


async def step(path: Path, answer: str | None) -> None:
    """One invocation of the program: start, or resume with the answer, up to the next question or the end."""
    persistence = FileStatePersistence(path)
    persistence.set_graph_types(quiz_graph)
    node: BaseNode[Quiz, None, str]
    if snapshot := await persistence.load_next():
        state = snapshot.state
        assert answer is not None
        node = Mark(answer=answer)
    else:
        state = Quiz()
        node = Ask()

    async with quiz_graph.iter(node, state=state, persistence=persistence) as run:
        while True:
            next_node = await run.next()
            if isinstance(next_node, WaitForAnswer):
                print('question:', next_node.question)
                return
            if isinstance(next_node, End):
                print('finished:', next_node.data)
                return


async def main() -> None:
    path = Path('quiz.json')
    await step(path, None)
    await step(path, '4')
    await step(path, '10')
    reader = FileStatePersistence(path)
    reader.set_graph_types(quiz_graph)
    for snapshot in await reader.load_all():
        print(snapshot.kind, snapshot.node, getattr(snapshot, 'status', '-'), snapshot.state)
    print(await reader.load_next())


anyio.run(main)
text = Path('quiz.json').read_text()
raw = json.loads(text)
print(len(raw), [item['kind'] for item in raw], [item.get('node', {}).get('node_id') for item in raw])
print(text.startswith('[\n  {\n    "state": {'))
