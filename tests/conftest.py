"""Shared test configuration: every async test runs on asyncio and on trio."""

from __future__ import annotations

import os

import pytest

# logfire is installed in the dev environment but not configured: without this, every span would warn
# (and warnings are errors here). Tests that look at spans configure logfire through `capfire`.
os.environ.setdefault('LOGFIRE_IGNORE_NO_CONFIG', '1')


@pytest.fixture(params=['asyncio', 'trio'])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
