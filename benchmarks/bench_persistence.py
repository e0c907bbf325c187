"""Durable persistence: cost per transition of a 3-node cycle whose every snapshot is committed before the next
node starts.

- Edgewise SQLite vs LangGraph's `SqliteSaver` and pydantic-graph 1.x `FileStatePersistence`, at 500 transitions;
- Edgewise SQLite and PostgreSQL at 500 and 5,000 transitions (flat in history length);
- Edgewise's file persistence beside pydantic-graph's, at 100 transitions (both rewrite the whole file per write).

PostgreSQL is measured when `EDGEWISE_BENCH_POSTGRES_DSN` or `EDGEWISE_TEST_POSTGRES_DSN` is set, or a local
server answers (see `benchmarks/_postgres.py`).
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from benchmarks._harness import Case, Result, measure, report
from benchmarks._postgres import postgres_dsn

SHORT = 500
LONG = 5_000
FILE_TRANSITIONS = 100


def cycles(transitions: int) -> int:
    return -(-transitions // 3)


# --- Edgewise ---------------------------------------------------------------------------------------------

from edgewise.graph import BaseNode as EwNode  # noqa: E402
from edgewise.graph import End as EwEnd  # noqa: E402
from edgewise.graph import Graph as EwGraph  # noqa: E402
from edgewise.graph import GraphRunContext as EwContext  # noqa: E402
from edgewise.graph.persistence.file import FileStatePersistence as EwFile  # noqa: E402
from edgewise.graph.persistence.postgres import PostgresStatePersistence  # noqa: E402
from edgewise.graph.persistence.sqlite import SqliteStatePersistence  # noqa: E402


@dataclass
class Count:
    n: int = 0
    limit: int = 0


@dataclass
class EwA(EwNode[Count, None, int]):
    async def run(self, ctx: EwContext[Count]) -> EwB:
        ctx.state.n += 1
        return EwB()


@dataclass
class EwB(EwNode[Count, None, int]):
    async def run(self, ctx: EwContext[Count]) -> EwC:
        return EwC()


@dataclass
class EwC(EwNode[Count, None, int]):
    async def run(self, ctx: EwContext[Count]) -> EwA | EwEnd[int]:
        if ctx.state.n >= ctx.state.limit:
            return EwEnd(ctx.state.n)
        return EwA()


ew_graph = EwGraph(nodes=(EwA, EwB, EwC), name='cycle')


def edgewise_run(make_persistence: Any, transitions: int) -> Any:
    async def run() -> None:
        persistence = make_persistence()
        try:
            result = await ew_graph.run(EwA(), state=Count(limit=cycles(transitions)), persistence=persistence)
            assert result.output == cycles(transitions)
        finally:
            if isinstance(persistence, PostgresStatePersistence):
                await persistence.aclose()
            elif isinstance(persistence, SqliteStatePersistence):
                persistence.close()

    return run


# --- pydantic-graph 1.x -----------------------------------------------------------------------------------

with warnings.catch_warnings():
    # pydantic-graph 1.107 warns that its classic API is deprecated, on every import of it.
    warnings.simplefilter('ignore')
    _pg: Any = importlib.import_module('pydantic_graph')
    PgNode: Any = _pg.BaseNode
    PgEnd: Any = _pg.End
    PgGraph: Any = _pg.Graph
    PgContext: Any = _pg.GraphRunContext
    PgFile: Any = importlib.import_module('pydantic_graph.persistence.file').FileStatePersistence


@dataclass
class PgA(PgNode[Count, None, int]):  # type: ignore[misc]
    async def run(self, ctx: PgContext[Count]) -> PgB:
        ctx.state.n += 1
        return PgB()


@dataclass
class PgB(PgNode[Count, None, int]):  # type: ignore[misc]
    async def run(self, ctx: PgContext[Count]) -> PgC:
        return PgC()


@dataclass
class PgC(PgNode[Count, None, int]):  # type: ignore[misc]
    async def run(self, ctx: PgContext[Count]) -> PgA | PgEnd[int]:
        if ctx.state.n >= ctx.state.limit:
            return PgEnd(ctx.state.n)
        return PgA()


pg_graph = PgGraph(nodes=(PgA, PgB, PgC), name='cycle')


def pydantic_graph_file_run(directory: Path, transitions: int) -> Any:
    async def run() -> None:
        persistence = PgFile(directory / f'pg-{os.urandom(6).hex()}.json')
        result = await pg_graph.run(PgA(), state=Count(limit=cycles(transitions)), persistence=persistence)
        assert result.output == cycles(transitions)

    return run


# --- LangGraph --------------------------------------------------------------------------------------------

SqliteSaver: Any = importlib.import_module('langgraph.checkpoint.sqlite').SqliteSaver
_lg: Any = importlib.import_module('langgraph.graph')
END: Any = _lg.END
START: Any = _lg.START
StateGraph: Any = _lg.StateGraph


class LgState(TypedDict):
    n: int
    limit: int


def lg_a(state: LgState) -> dict[str, int]:
    return {'n': state['n'] + 1}


def lg_b(state: LgState) -> dict[str, int]:
    return {}


def lg_c(state: LgState) -> dict[str, int]:
    return {}


def lg_route(state: LgState) -> str:
    return END if state['n'] >= state['limit'] else 'a'


def langgraph_run(db: Path, transitions: int) -> Any:
    builder = StateGraph(LgState)
    builder.add_node('a', lg_a)
    builder.add_node('b', lg_b)
    builder.add_node('c', lg_c)
    builder.add_edge(START, 'a')
    builder.add_edge('a', 'b')
    builder.add_edge('b', 'c')
    builder.add_conditional_edges('c', lg_route)

    def run() -> None:
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            graph = builder.compile(checkpointer=SqliteSaver(conn))
            config: Any = {'configurable': {'thread_id': os.urandom(6).hex()}, 'recursion_limit': 100_000}
            out = graph.invoke({'n': 0, 'limit': cycles(transitions)}, config)
            assert out['n'] == cycles(transitions)
        finally:
            conn.close()

    return run


# --- the tables -------------------------------------------------------------------------------------------


def _merge(title: str, unit: str, *results: Result) -> Result:
    merged = Result(title, unit)
    for result in results:
        merged.per_unit.update(result.per_unit)
    return merged


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        db = directory / 'edgewise.db'
        units = cycles(SHORT) * 3
        long_units = cycles(LONG) * 3
        sqlite = 'edgewise SqliteStatePersistence'

        # SQLite and LangGraph interleaved (A B A B ...), so that load on the machine hits both alike;
        # pydantic-graph's file persistence takes seconds per run: one run, measured right after.
        interleaved = measure(
            'x',
            'transition',
            [
                Case(sqlite, edgewise_run(lambda: SqliteStatePersistence(db), SHORT), units, True),
                Case('langgraph SqliteSaver', langgraph_run(directory / 'lg.db', SHORT), units),
            ],
            repeats=5,
        )
        pg_file = measure(
            'x',
            'transition',
            [Case('pydantic-graph FileStatePersistence', pydantic_graph_file_run(directory, SHORT), units, True)],
            repeats=1,
            warmup=0,
        )
        headline = _merge(
            f'3-node cycle, {units} transitions, every snapshot committed before the next node',
            'transition',
            interleaved,
            pg_file,
        )
        print(report(headline, anchor=sqlite), flush=True)
        vs_langgraph = headline.ratio('langgraph SqliteSaver', sqlite)
        vs_files = headline.ratio('pydantic-graph FileStatePersistence', sqlite)
        print(
            f'  => edgewise SQLite is {vs_langgraph:.1f}x faster per transition than LangGraph SqliteSaver '
            f'and {vs_files:.1f}x faster than pydantic-graph FileStatePersistence',
            flush=True,
        )

        flat = measure(
            'SQLite per transition by history length',
            'transition',
            [
                Case('edgewise SQLite @500', edgewise_run(lambda: SqliteStatePersistence(db), SHORT), units, True),
                Case('edgewise SQLite @5000', edgewise_run(lambda: SqliteStatePersistence(db), LONG), long_units, True),
            ],
            repeats=3,
        )
        print(report(flat, anchor='edgewise SQLite @500'), flush=True)

        dsn = postgres_dsn()
        if dsn is None:
            print('## PostgreSQL: skipped (no server: set EDGEWISE_BENCH_POSTGRES_DSN)', flush=True)
        else:
            postgres = measure(
                'PostgreSQL per transition by history length',
                'transition',
                [
                    Case(
                        'edgewise PostgreSQL @500',
                        edgewise_run(lambda: PostgresStatePersistence(dsn), SHORT),
                        units,
                        True,
                    ),
                    Case(
                        'edgewise PostgreSQL @5000',
                        edgewise_run(lambda: PostgresStatePersistence(dsn), LONG),
                        long_units,
                        True,
                    ),
                ],
                repeats=1,
                warmup=0,
            )
            print(report(postgres, anchor='edgewise PostgreSQL @500'), flush=True)

        file_units = cycles(FILE_TRANSITIONS) * 3
        files = measure(
            f'File persistence, {file_units} transitions (atomic + fsync vs in-place rewrite)',
            'transition',
            [
                Case(
                    'edgewise FileStatePersistence',
                    edgewise_run(lambda: EwFile(directory / f'ew-{os.urandom(6).hex()}.json'), FILE_TRANSITIONS),
                    file_units,
                    True,
                ),
                Case(
                    'pydantic-graph FileStatePersistence',
                    pydantic_graph_file_run(directory, FILE_TRANSITIONS),
                    file_units,
                    True,
                ),
            ],
            repeats=3,
        )
        print(report(files, anchor='pydantic-graph FileStatePersistence'), flush=True)
