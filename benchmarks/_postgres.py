"""Which PostgreSQL server the benchmarks measure: `EDGEWISE_BENCH_POSTGRES_DSN`, `EDGEWISE_TEST_POSTGRES_DSN`, or
the local server the test suite also finds (`postgres@127.0.0.1:5432/test`, trust auth) when it answers."""

from __future__ import annotations

import os

LOCAL = 'postgresql://postgres@127.0.0.1:5432/test'

_found: list[tuple[str | None, str]] = []


def postgres_dsn() -> str | None:
    """The DSN to measure on, or `None` when no server is set or answers locally (said once on stdout)."""
    if not _found:
        _found.append(_look())
        print(f'(PostgreSQL: {_found[0][1]})', flush=True)
    return _found[0][0]


def _look() -> tuple[str | None, str]:
    for variable in ('EDGEWISE_BENCH_POSTGRES_DSN', 'EDGEWISE_TEST_POSTGRES_DSN'):
        if dsn := os.environ.get(variable):
            from edgewise.graph.persistence.postgres import mask_dsn

            return dsn, f'{mask_dsn(dsn)}, from {variable}'
    try:
        import psycopg

        with psycopg.connect(LOCAL, connect_timeout=2):
            pass
    except Exception as e:
        return None, f'none set, and none answers at {LOCAL} ({type(e).__name__}); its cases are skipped'
    return LOCAL, f'{LOCAL}, found answering (EDGEWISE_BENCH_POSTGRES_DSN unset)'
