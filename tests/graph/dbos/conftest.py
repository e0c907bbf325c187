"""Databases for the DBOS tests: a new PostgreSQL database per test (DBOS's system database), or a SQLite file.

PostgreSQL comes from `EDGEWISE_TEST_POSTGRES_DSN` (skipped without it, unless `EDGEWISE_REQUIRE_SERVICES=1`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]


def postgres_dsn() -> str:
    """The test server's DSN; skips the test when there is none (fails it under EDGEWISE_REQUIRE_SERVICES=1)."""
    dsn = os.environ.get('EDGEWISE_TEST_POSTGRES_DSN')
    if not dsn:
        if os.environ.get('EDGEWISE_REQUIRE_SERVICES') == '1':
            pytest.fail('EDGEWISE_TEST_POSTGRES_DSN is not set, and EDGEWISE_REQUIRE_SERVICES=1 requires PostgreSQL')
        pytest.skip('EDGEWISE_TEST_POSTGRES_DSN is not set')
    return dsn


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped after the test."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    dsn = postgres_dsn()
    name = f'edgewise_dbos_{os.urandom(6).hex()}'
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE {name}')
    params = conninfo_to_dict(dsn)
    user = params.get('user', 'postgres')
    password = f':{params["password"]}' if params.get('password') else ''
    host = params.get('host', '127.0.0.1')
    port = params.get('port', '5432')
    try:
        yield f'postgresql://{user}{password}@{host}:{port}/{name}'
    finally:
        with psycopg.connect(make_conninfo(dsn), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE {name} WITH (FORCE)')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """The URL of a SQLite system database in the test's directory."""
    return f'sqlite:///{tmp_path / "dbos.sqlite"}'
