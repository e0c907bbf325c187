"""The store a command works on, from its `--store` URL (`sqlite:///runs.db`, `postgresql://...`, `file:///path`)."""

from __future__ import annotations as _annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..persistence import RunInfo
from ..persistence.raw import RawSnapshot
from ..persistence.store import (
    DurableStatePersistence,
    StoreURL,
    last_raw_snapshots,
    list_runs,
    parse_store_url,
    persistence_from_url,
)
from ._common import CommandError

__all__ = ('Store', 'open_store')


@dataclass(frozen=True)
class Store:
    """Where runs are stored, as a store URL names it (parsed by `persistence.store`, as the library does)."""

    parsed: StoreURL

    @property
    def url(self) -> str:
        """The store URL, as given."""
        return self.parsed.url

    @property
    def display(self) -> str:
        """The URL as shown to the user (never with a password)."""
        return self.parsed.display

    def persistence(self, run_id: str) -> DurableStatePersistence[Any, Any]:
        """A persistence for the run `run_id` of this store (an async context manager that closes it)."""
        return persistence_from_url(self.url, run_id)

    async def list_runs(self) -> list[RunInfo]:
        """Every run of the store, oldest first."""
        self.check_exists()
        return await list_runs(self.url)

    async def last_snapshots(self, run_ids: Sequence[str]) -> dict[str, RawSnapshot]:
        """The last snapshot of each run of `run_ids` (those with one), read without the graph, by run id."""
        return await last_raw_snapshots(self.url, run_ids)

    def check_exists(self) -> None:
        """Raise unless the store's file or directory exists (reading must not create an empty store)."""
        location = self.parsed.location
        if self.parsed.kind != 'postgresql' and not os.path.exists(location):
            raise CommandError(f'No store at {self.display}: {location!r} does not exist.')


def open_store(url: str) -> Store:
    """The store a URL names.

    Raises:
        PersistenceError: the URL is not one of the supported kinds.
    """
    return Store(parse_store_url(url))
