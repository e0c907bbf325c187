"""Store URLs: `sqlite:///runs.db`, `postgresql://...`, `file:///path/run.json` (or a directory of them)."""

from __future__ import annotations as _annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import anyio
import anyio.to_thread

from ..persistence import RunInfo
from ..persistence._durable import DurableStatePersistence
from ..persistence._sql import run_status
from ..persistence.store import list_runs, persistence_from_url
from ._common import CommandError
from ._raw import raw_history

__all__ = ('Store', 'open_store', 'close')

_SCHEMES = 'sqlite:///PATH, postgresql://..., file:///PATH'


@dataclass(frozen=True)
class Store:
    """Where runs are stored, as a store URL names it."""

    kind: Literal['sqlite', 'postgresql', 'file']
    url: str
    """The store URL, as given."""
    location: str
    """The database file, the DSN, or the JSON file or directory of JSON files."""
    display: str
    """The URL as shown to the user (never with a password)."""

    def persistence(self, run_id: str) -> DurableStatePersistence[Any, Any]:
        """A persistence for the run `run_id` of this store."""
        if self.kind == 'file':
            self._check_run_file(run_id)
        return persistence_from_url(self.url, run_id)

    async def list_runs(self) -> list[RunInfo]:
        """Every run of the store, oldest first."""
        if self.kind == 'file':
            return await self._list_files()
        self.check_exists()
        return await list_runs(self.url)

    def check_exists(self) -> None:
        """Raise unless the store's file or directory exists (reading must not create an empty store)."""
        if self.kind != 'postgresql' and not os.path.exists(self.location):
            raise CommandError(f'No store at {self.display}: {self.location!r} does not exist.')

    def _check_run_file(self, run_id: str) -> None:
        path = Path(self.location)
        if path.suffix == '.json' and path.stem != run_id:
            raise CommandError(
                f'No run {run_id!r} in {self.display}: that file holds run {path.stem!r} only '
                '(a file store holds one run, named after the file).'
            )

    async def _list_files(self) -> list[RunInfo]:
        self.check_exists()
        from ..persistence.file import FileStatePersistence

        path = Path(self.location)
        files = await anyio.to_thread.run_sync(lambda: sorted(path.glob('*.json')) if path.is_dir() else [path])
        runs = []
        for file in files:
            history = await raw_history(FileStatePersistence(file))
            if not history:
                continue
            last = history[-1]
            first = history[0]
            mtime = (await anyio.Path(file).stat()).st_mtime
            updated = datetime.fromtimestamp(mtime, tz=timezone.utc)
            created = (first.start_ts if first.kind == 'node' else first.ts) or updated
            runs.append(
                RunInfo(
                    run_id=file.stem,
                    graph_name=None,
                    status=run_status(last.kind, None if last.kind == 'end' else last.status),
                    created=created,
                    updated=updated,
                    snapshot_count=len(history),
                )
            )
        runs.sort(key=lambda run: (run.created, run.run_id))
        return runs


def open_store(url: str) -> Store:
    """The store a URL names.

    Raises:
        CommandError: the URL is not one of the supported kinds.
    """
    scheme, sep, rest = url.partition('://')
    scheme = scheme.lower()
    if not sep:
        raise CommandError(f'{url!r} is not a store URL; use one of: {_SCHEMES}.')
    if scheme == 'sqlite':
        # As in SQLAlchemy: `sqlite:///runs.db` is relative, `sqlite:////var/runs.db` absolute.
        path = unquote(rest[1:]) if rest.startswith('/') else ''
        if not path:
            raise CommandError(f'{url!r} names no database file; write sqlite:///runs.db or sqlite:////abs/runs.db.')
        return Store(kind='sqlite', url=url, location=path, display=url)
    if scheme in ('postgresql', 'postgres'):
        from ..persistence.postgres import mask_dsn

        return Store(kind='postgresql', url=url, location=url, display=mask_dsn(url))
    if scheme == 'file':
        parts = urlsplit(url)
        if parts.netloc not in ('', 'localhost') or not parts.path:
            raise CommandError(f'{url!r} names no local file; write file:///abs/path/run.json or file:///abs/dir.')
        return Store(kind='file', url=url, location=unquote(parts.path), display=url)
    raise CommandError(f'Unsupported store {scheme}://...; use one of: {_SCHEMES}.')


async def close(persistence: DurableStatePersistence[Any, Any]) -> None:
    """Close the database connection a persistence holds, if it holds one."""
    aclose = getattr(persistence, 'aclose', None)
    if aclose is not None:
        await aclose()
        return
    sync_close = getattr(persistence, 'close', None)
    if sync_close is not None:
        sync_close()
