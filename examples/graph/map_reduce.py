"""Map-reduce with a fan-out: count the words of several documents in parallel branches, then add them up.

`Scatter` returns `Fork.map(CountWords, documents, join=AddUp)`: one branch per document, at most two at a
time. Each branch returns its count as the data of its `End`; `AddUp` receives the counts in document
order. Branches note the longest word they saw in their copy of the state, and the graph's reducer merges
those notes into the run's state. The run is streamed, so progress shows as branches finish.

Run it with `python -m examples.graph.map_reduce`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio

from edgewise.graph import BaseNode, End, Fork, Graph, GraphRunContext
from edgewise.graph.events import CustomEvent, RunEndEvent

DOCUMENTS = [
    'the quick brown fox',
    'jumps over the lazy dog',
    'the dog sleeps',
]


@dataclass
class Stats:
    """The run's state: the longest word of each document, merged from the branches."""

    longest: dict[str, str] = field(default_factory=dict)


@dataclass
class CountWords(BaseNode[Stats, None, Any]):
    """Map: count the words of one document; it ends its branch, not the run (hence `Any`: its `End` is not
    the run's output)."""

    document: str

    async def run(self, ctx: GraphRunContext[Stats]) -> End[dict[str, int]]:
        words = self.document.split()
        ctx.state.longest[self.document] = max(words, key=len)
        await ctx.emit(f'counted {len(words)} words in {self.document!r}')
        return End(dict(Counter(words)))


@dataclass
class AddUp(BaseNode[Stats, None, str]):
    """Reduce: add the counts of every document, received in document order."""

    results: list[dict[str, int]]

    async def run(self, ctx: GraphRunContext[Stats]) -> End[str]:
        total: Counter[str] = Counter()
        for counts in self.results:
            total.update(counts)
        top = ', '.join(f'{word} x{n}' for word, n in total.most_common(2))
        return End(f'{sum(total.values())} words; most common: {top}')


@dataclass
class Scatter(BaseNode[Stats, None, str]):
    """Start one branch per document."""

    documents: list[str]

    async def run(self, ctx: GraphRunContext[Stats]) -> Fork[CountWords, AddUp]:
        return Fork.map(CountWords, self.documents, join=AddUp, max_concurrency=2)


def merge(state: Stats, branch: Stats) -> None:
    """The graph's reducer: a branch's notes join the run's state."""
    state.longest.update(branch.longest)


word_count = Graph(nodes=(Scatter, CountWords, AddUp), state_reducer=merge, name='word_count')


async def count() -> None:
    state = Stats()
    async with word_count.stream(Scatter(DOCUMENTS), state=state) as events:
        async for event in events:
            if isinstance(event, CustomEvent):
                print(f'  branch {event.path[-1]}: {event.data}')
            elif isinstance(event, RunEndEvent):
                print(event.output)
    for document in DOCUMENTS:
        print(f'longest in {document!r}: {state.longest[document]}')


def main() -> None:
    """Print the diagram, then run the map-reduce."""
    print(word_count.mermaid_code(start_node=Scatter))
    anyio.run(count)


if __name__ == '__main__':
    main()
