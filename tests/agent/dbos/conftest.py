"""The DBOS tests' databases (a SQLite file, or a new PostgreSQL database per test), shared with tests/graph/dbos."""

from tests.graph.dbos.conftest import postgres_url, sqlite_url

__all__ = ('postgres_url', 'sqlite_url')
