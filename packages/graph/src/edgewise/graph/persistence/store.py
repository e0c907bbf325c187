"""Open a persistence, or list the runs of a store, from a store URL (as the `edgewise` command line does).

| URL | Backend |
|---|---|
| `sqlite:///runs.db` (relative), `sqlite:////var/lib/runs.db` (absolute) | `SqliteStatePersistence` |
| `postgresql://user@host/db` (or `postgres://`) | `PostgresStatePersistence` |
| `file:///abs/runs/run.json`, `file:runs/run.json`; `file:///abs/runs` (a directory) | `FileStatePersistence` |

Schemes are case-insensitive, and paths may be percent-encoded. A child run (a subgraph run, a branch of a
fan-out) has the run id `'<parent run id>/<name>'` in every store; in a directory of run files its file is
`<parent run id>/<name>.json`, and listing the directory lists it too. `persistence_from_url` returns a
`DurableStatePersistence`, the base of the three backends, whose API they all share: `run_id`, `load_all()`,
`load_raw()` (the history without the graph, see `edgewise.graph.persistence.raw`), `info()`, `fork(...)`,
`aclose()` and `async with`.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from ..exceptions import PersistenceError
from . import RunInfo
from ._durable import DurableStatePersistence
from ._pages import RunPage, RunQuery
from .raw import RawSnapshot

__all__ = (
    'DurableStatePersistence',
    'StoreURL',
    'parse_store_url',
    'persistence_from_url',
    'list_runs',
    'list_runs_page',
    'last_raw_snapshots',
    'RunQuery',
    'RunPage',
)

_FORMS = 'sqlite:///path.db, postgresql://..., or file:///path (a run.json, or a directory of them)'


@dataclass(frozen=True)
class StoreURL:
    """A store URL, parsed."""

    kind: Literal['sqlite', 'postgresql', 'file']
    location: str
    """The database file, the DSN (the whole URL), or the JSON file or directory of JSON files."""
    url: str
    """The URL as given."""

    def __repr__(self) -> str:
        # `location` and `url` hold a PostgreSQL DSN whole, password included: show the masked URL only.
        return f'{type(self).__name__}(kind={self.kind!r}, url={self.display!r})'

    @property
    def display(self) -> str:
        """The URL as it may be shown: with any password masked."""
        return _masked(self.url)

    @property
    def run_file(self) -> str | None:
        """For a `file:` URL naming one JSON file, the run that file holds; else `None`."""
        path = Path(self.location)
        return path.stem if self.kind == 'file' and path.suffix == '.json' else None


def parse_store_url(url: str) -> StoreURL:
    """Parse a store URL.

    Raises:
        PersistenceError: the URL is not of a supported kind, or names no database or file.
    """
    scheme, sep, rest = url.partition(':')
    scheme = scheme.lower()
    if not sep or scheme not in ('sqlite', 'postgresql', 'postgres', 'file'):
        if url.lower().endswith(('.db', '.sqlite', '.sqlite3')):
            raise PersistenceError(
                f'Unsupported store URL {url!r}: for the SQLite file {url!r}, write sqlite:///{url} '
                '(three slashes, then the path).'
            )
        raise PersistenceError(f'Unsupported store URL {_masked(url)!r}: use {_FORMS}.')
    if scheme == 'sqlite':
        # As in SQLAlchemy: `sqlite:///runs.db` is relative, `sqlite:////var/runs.db` absolute.
        if not rest.startswith('///') or len(rest) == 3:
            raise PersistenceError(
                f'{url!r} names no database file: a SQLite store URL has three slashes before the path, '
                'as in sqlite:///runs.db (relative) or sqlite:////var/lib/runs.db (absolute).'
            )
        return StoreURL('sqlite', unquote(rest[3:]), url)
    if scheme == 'file':
        path = rest
        if rest.startswith('//'):
            host, slash, path = rest[2:].partition('/')
            if host not in ('', 'localhost'):
                raise PersistenceError(f'{url!r} names a file on host {host!r}; only local files can be stores.')
            path = slash + path
        if not path:
            raise PersistenceError(f'{url!r} names no file; write file:///abs/path/run.json or file:runs/run.json.')
        return StoreURL('file', unquote(path), url)
    return StoreURL('postgresql', url, url)


def _masked(url: str) -> str:
    from .postgres import mask_dsn

    return mask_dsn(url)


def persistence_from_url(url: str, run_id: str | None = None) -> DurableStatePersistence[Any, Any]:
    """A persistence for the run `run_id` in the store at `url` (a new run id when not given).

    For `file:` URLs the run is a file: a URL naming a directory holds run `run_id` in `<run_id>.json`
    there; a URL naming a `.json` file holds the run named after the file.

    Raises:
        PersistenceError: the URL is not a store URL, or names a file of another run than `run_id`.
    """
    store = parse_store_url(url)
    if store.kind == 'sqlite':
        from .sqlite import SqliteStatePersistence

        return SqliteStatePersistence(store.location, run_id)
    if store.kind == 'postgresql':
        from .postgres import PostgresStatePersistence

        return PostgresStatePersistence(store.location, run_id)
    from .file import FileStatePersistence

    path = Path(store.location)
    if store.run_file is None:
        if run_id is None:
            raise PersistenceError(
                f'{url!r} is a directory of runs: give the run id (its file is <run_id>.json there), '
                'or a URL naming the run file.'
            )
        return FileStatePersistence._in_folder(path, run_id)
    elif run_id is not None and run_id != store.run_file:
        raise PersistenceError(
            f'No run {run_id!r} in {url!r}: that file holds run {store.run_file!r} only (a file holds one run, '
            'named after the file). Use the directory as the store URL to reach other runs.'
        )
    return FileStatePersistence(path)


async def list_runs(url: str) -> list[RunInfo]:
    """The runs stored at `url`, oldest first; for `file:` URLs, the run files in a directory (or the one file).

    Reading creates nothing: a missing SQLite file or directory holds no runs.

    Raises:
        PersistenceError: the URL is not a store URL, or a JSON file of the directory is not a run.
    """
    store = parse_store_url(url)
    if store.kind == 'sqlite':
        from .sqlite import SqliteStatePersistence

        return await SqliteStatePersistence.list_runs(store.location)
    if store.kind == 'postgresql':
        from .postgres import PostgresStatePersistence

        return await PostgresStatePersistence.list_runs(store.location)
    from .file import FileStatePersistence

    return await FileStatePersistence.list_runs(store.location)


async def list_runs_page(url: str, query: RunQuery | None = None) -> RunPage:
    """A page of the top-level runs stored at `url`, newest first, with their child runs (see `RunQuery`).

    On SQLite and PostgreSQL the filters and the page bounds run in the database, so a page of a store of
    100,000 runs costs little more than one of 100; a directory of run files is read whole.

    Raises:
        PersistenceError: the URL is not a store URL, or a JSON file of the directory is not a run.
    """
    query = query or RunQuery()
    store = parse_store_url(url)
    if store.kind == 'sqlite':
        from .sqlite import SqliteStatePersistence

        return await SqliteStatePersistence.list_runs_page(store.location, query)
    if store.kind == 'postgresql':
        from .postgres import PostgresStatePersistence

        return await PostgresStatePersistence.list_runs_page(store.location, query)
    from .file import FileStatePersistence

    return await FileStatePersistence.list_runs_page(store.location, query)


async def last_raw_snapshots(url: str, run_ids: Sequence[str]) -> dict[str, RawSnapshot]:
    """The last snapshot of each run of `run_ids` stored at `url` that has one, read without the graph (as
    `load_raw` reads it), by run id: what a listing needs of its runs beyond `RunInfo` (what a waiting run waits
    for). SQLite and PostgreSQL read them all over one connection; a directory of run files reads each run's file.

    Raises:
        PersistenceError: the URL is not a store URL, or a stored snapshot is not a snapshot at all.
    """
    store = parse_store_url(url)
    if store.kind == 'sqlite':
        from .sqlite import SqliteStatePersistence

        return await SqliteStatePersistence.last_raw_snapshots(store.location, run_ids)
    if store.kind == 'postgresql':
        from .postgres import PostgresStatePersistence

        return await PostgresStatePersistence.last_raw_snapshots(store.location, run_ids)
    found: dict[str, RawSnapshot] = {}
    for run_id in run_ids:
        async with persistence_from_url(url, run_id) as persistence:
            history = await persistence.load_raw()
        if history:
            found[run_id] = history[-1]
    return found
