"""Open a persistence, or list the runs of a store, from a store URL (as the `edgewise` command line does).

| URL | Backend |
|---|---|
| `sqlite:///runs.db` (relative), `sqlite:////var/lib/runs.db` (absolute) | `SqliteStatePersistence` |
| `postgresql://user@host/db` (or `postgres://`) | `PostgresStatePersistence` |
| `file:///abs/path/run.json`, `file:runs/run.json` | `FileStatePersistence` (one file per run) |
"""

from __future__ import annotations as _annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..exceptions import PersistenceError
from . import RunInfo
from ._durable import DurableStatePersistence

__all__ = ('persistence_from_url', 'list_runs')


def _split(url: str) -> tuple[str, str]:
    scheme, sep, rest = url.partition(':')
    if not sep or scheme not in ('sqlite', 'postgresql', 'postgres', 'file'):
        raise PersistenceError(
            f'Unsupported store URL {_safe(url)!r}: use sqlite:///path.db, postgresql://..., or file:///path/run.json.'
        )
    if scheme == 'sqlite':
        if not rest.startswith('///'):
            raise PersistenceError(f'A SQLite store URL has three slashes before a relative path: {url!r}.')
        return scheme, unquote(rest[3:])
    if scheme == 'file':
        return scheme, unquote(rest[2:] if rest.startswith('//') else rest)
    return 'postgresql', url


def _safe(url: str) -> str:
    from .postgres import mask_dsn

    return mask_dsn(url)


def persistence_from_url(url: str, run_id: str | None = None) -> DurableStatePersistence[Any, Any]:
    """A persistence for the run `run_id` in the store at `url` (a new run id when not given).

    For `file:` URLs the run is the file; `run_id`, when given, names a file `<run_id>.json` in the
    directory the URL points to.

    Raises:
        PersistenceError: the URL's scheme is not one of `sqlite`, `postgresql`, `file`.
    """
    scheme, location = _split(url)
    if scheme == 'sqlite':
        from .sqlite import SqliteStatePersistence

        return SqliteStatePersistence(location, run_id)
    if scheme == 'postgresql':
        from .postgres import PostgresStatePersistence

        return PostgresStatePersistence(location, run_id)
    from .file import FileStatePersistence

    path = Path(location)
    if run_id is not None and path.suffix != '.json':
        path = path / f'{run_id}.json'
    return FileStatePersistence(path)


async def list_runs(url: str) -> list[RunInfo]:
    """The runs stored at `url` (SQLite or PostgreSQL), oldest first.

    Raises:
        PersistenceError: the URL is not a SQLite or PostgreSQL store.
    """
    scheme, location = _split(url)
    if scheme == 'sqlite':
        from .sqlite import SqliteStatePersistence

        return await SqliteStatePersistence.list_runs(location)
    if scheme == 'postgresql':
        from .postgres import PostgresStatePersistence

        return await PostgresStatePersistence.list_runs(location)
    raise PersistenceError(f'Listing runs needs a SQLite or PostgreSQL store, not {url!r}; a file holds one run.')
