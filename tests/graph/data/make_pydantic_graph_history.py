# mypy: ignore-errors
"""Writes `pydantic_graph_history.json` with pydantic-graph 1.107.10 (not Edgewise): test data for JSON compatibility.

Run once with the reference install: `/tmp/anchor/bin/python tests/graph/data/make_pydantic_graph_history.py`.
The node and state classes mirror those in `tests/graph/persistence/test_compat.py` (same ids, same fields).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import anyio

warnings.simplefilter('ignore')

from pydantic_graph import BaseNode, End, FullStatePersistence, Graph, GraphRunContext  # type: ignore[import-not-found]  # noqa: E402


@dataclass
class Basket:
    items: list[str] = field(default_factory=list)
    total_cents: int = 0


@dataclass
class AddItem(BaseNode[Basket, None, dict[str, int]]):
    name: str
    price_cents: int

    async def run(self, ctx: GraphRunContext[Basket]) -> Checkout:
        ctx.state.items.append(self.name)
        ctx.state.total_cents += self.price_cents
        return Checkout(discount=10)


@dataclass
class Checkout(BaseNode[Basket, None, dict[str, int]]):
    discount: int

    async def run(self, ctx: GraphRunContext[Basket]) -> AddItem | End[dict[str, int]]:
        if len(ctx.state.items) < 2:
            return AddItem(name='tea', price_cents=250)
        return End({'paid': ctx.state.total_cents - self.discount, 'items': len(ctx.state.items)})


basket_graph = Graph(nodes=[AddItem, Checkout])


async def main() -> None:
    persistence = FullStatePersistence()
    await basket_graph.run(AddItem(name='coffee', price_cents=300), state=Basket(), persistence=persistence)
    # Fixed times and durations, so that the file is stable.
    for i, snapshot in enumerate(persistence.history):
        if hasattr(snapshot, 'start_ts'):
            snapshot.start_ts = snapshot.start_ts.replace(2025, 1, 2, 3, 4, 5 + i, 0)
            snapshot.duration = 0.25
        else:
            snapshot.ts = snapshot.ts.replace(2025, 1, 2, 3, 4, 59, 0)
    out = Path(__file__).with_name('pydantic_graph_history.json')
    out.write_bytes(persistence.dump_json(indent=2) + b'\n')


anyio.run(main)
