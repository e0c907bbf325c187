"""Shared test configuration: every async test runs on asyncio and on trio; services the tests can use.

PostgreSQL tests use `EDGEWISE_TEST_POSTGRES_DSN`; when it is unset and a server answers at
`_LOCAL_POSTGRES` (a quick connect, one second at most), that server is used (the variable is set for the
session, so subprocesses see it too). The report header says which services the session uses.
"""

from __future__ import annotations

import os

import pytest

_LOCAL_POSTGRES = 'postgresql://postgres@127.0.0.1:5432/test'
_services: list[str] = []


def _local_postgres_answers() -> bool:
    try:
        import psycopg

        with psycopg.connect(_LOCAL_POSTGRES, connect_timeout=1):
            return True
    except Exception:
        return False


def pytest_configure(config: pytest.Config) -> None:
    dsn = os.environ.get('EDGEWISE_TEST_POSTGRES_DSN')
    if dsn:
        from edgewise.graph.persistence.postgres import mask_dsn

        _services.append(f'PostgreSQL {mask_dsn(dsn)} (EDGEWISE_TEST_POSTGRES_DSN)')
    elif _local_postgres_answers():
        os.environ['EDGEWISE_TEST_POSTGRES_DSN'] = _LOCAL_POSTGRES
        _services.append(f'PostgreSQL {_LOCAL_POSTGRES} (found answering; EDGEWISE_TEST_POSTGRES_DSN was unset)')
    else:
        _services.append('no PostgreSQL (EDGEWISE_TEST_POSTGRES_DSN unset, none at 127.0.0.1:5432): its tests skip')


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f'services: {", ".join(_services)}']


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f'services used: {", ".join(_services)}')


@pytest.fixture(params=['asyncio', 'trio'])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


from ._aimock import aimock as aimock  # noqa: E402  (the simulator fixture, shared by the model and example tests)
