"""A question/answer loop that stops to wait for an answer and resumes, in a later session, from persistence.

Each "session" is a separate call that loads the run's history from a JSON file, runs until the graph needs
an answer it does not have yet, prints the question and saves the history again: a new process (or a
new machine) could pick it up. `main()` plays a whole quiz, one session per answer.

Run it with `python -m examples.graph.question_answer`.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import anyio

from edgewise.graph import BaseNode, Edge, End, FullStatePersistence, Graph, GraphRunContext

QUESTIONS = [('What is the capital of France?', 'paris'), ('How many legs has a spider?', '8')]


@dataclass
class Quiz:
    """The state of a quiz: where it is and how it went so far."""

    asked: int = 0
    """How many questions were asked."""
    score: int = 0
    """How many answers were right."""
    feedback: list[str] = field(default_factory=list)
    """What was said about each answer."""


@dataclass
class Ask(BaseNode[Quiz, None, str]):
    """Pick the next question, or finish."""

    async def run(self, ctx: GraphRunContext[Quiz]) -> WaitForAnswer | Annotated[End[str], Edge('no questions left')]:
        if ctx.state.asked == len(QUESTIONS):
            return End(f'you scored {ctx.state.score}/{len(QUESTIONS)}')
        question, _ = QUESTIONS[ctx.state.asked]
        ctx.state.asked += 1
        return WaitForAnswer(question=question)


@dataclass
class WaitForAnswer(BaseNode[Quiz, None, str]):
    """Holds the question until a session supplies the answer (the run stops before this node otherwise)."""

    question: str
    answer: str | None = None

    async def run(self, ctx: GraphRunContext[Quiz]) -> Evaluate:
        assert self.answer is not None, 'a session fills in the answer before running this node'
        return Evaluate(answer=self.answer)


@dataclass
class Evaluate(BaseNode[Quiz, None, str]):
    """Mark the answer."""

    answer: str

    async def run(self, ctx: GraphRunContext[Quiz]) -> Annotated[Ask, Edge('next question')]:
        _, expected = QUESTIONS[ctx.state.asked - 1]
        if self.answer.strip().lower() == expected:
            ctx.state.score += 1
            ctx.state.feedback.append(f'{self.answer!r}: right')
        else:
            ctx.state.feedback.append(f'{self.answer!r}: wrong, it is {expected!r}')
        return Ask()


quiz_graph = Graph(nodes=(Ask, WaitForAnswer, Evaluate))


async def load_persistence(path: Path) -> FullStatePersistence[Quiz, str]:
    """The run's history as saved by the last session (empty if there was none)."""
    persistence = FullStatePersistence[Quiz, str]()
    persistence.set_graph_types(quiz_graph)
    if await anyio.Path(path).exists():
        persistence.load_json(await anyio.Path(path).read_bytes())
    return persistence


async def session(path: Path, answer: str | None) -> str | None:
    """Run the quiz stored at `path` as far as it goes with `answer`; return the result once it has ended."""
    persistence = await load_persistence(path)
    if not persistence.history:
        await quiz_graph.initialize(Ask(), persistence, state=Quiz())
    async with quiz_graph.iter_from_persistence(persistence) as run:
        node = run.next_node
        while not isinstance(node, End):
            if isinstance(node, WaitForAnswer) and node.answer is None:
                if answer is None:
                    print(f'Q: {node.question}')
                    break
                print(f'A: {answer}')
                # The node keeps its snapshot id, so running it completes the snapshot that was waiting.
                node.answer, answer = answer, None
            ran = node
            node = await run.next(node)
            if isinstance(ran, Evaluate):
                print(f'   {run.state.feedback[-1]}')
    await anyio.Path(path).write_bytes(persistence.dump_json(indent=2))
    if isinstance(node, End):
        print(node.data)
        return node.data
    return None


async def play(path: Path, answers: list[str]) -> str | None:
    """One session to start, then one session per answer."""
    result = await session(path, None)
    for answer in answers:
        print('-- the run is saved; a later session resumes it --')
        result = await session(path, answer)
    return result


def main() -> None:
    """Play a whole quiz, one session per answer, with the history kept in a temporary JSON file."""
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(play, Path(tmp) / 'quiz.json', ['Paris', '6'])


if __name__ == '__main__':
    main()
