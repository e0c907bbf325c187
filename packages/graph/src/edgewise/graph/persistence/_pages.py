"""A page of a store's runs: what a listing asks for (`RunQuery`) and what it gets (`RunPage`).

Listed newest first, top-level runs only (a child run, whose id is `'<parent run id>/<name>'`, comes with its
top-level run in `RunPage.children`). Pages follow each other by a keyset: `RunPage.next_after` is the
`(created, run_id)` of the page's last run, given as `RunQuery.after` for the next page.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from datetime import datetime

from ..exceptions import PersistenceError
from . import RunInfo, RunStatus

__all__ = ('RunQuery', 'RunPage', 'page_of')

_STATUSES = ('running', 'waiting', 'finished', 'failed')


@dataclass(frozen=True, kw_only=True)
class RunQuery:
    """Which runs a page lists."""

    limit: int = 50
    """How many top-level runs a page holds at most."""
    after: tuple[datetime, str] | None = None
    """List the runs after this one (`RunPage.next_after` of the page before); `None` for the first page."""
    status: RunStatus | None = None
    """Only the runs with this status."""
    graph_name: str | None = None
    """Only the runs of the graph (or agent) of this name."""
    search: str | None = None
    """Only the runs whose id starts with this text."""

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise PersistenceError(f'A page of runs holds at least one run; limit={self.limit} was given.')
        if self.status is not None and self.status not in _STATUSES:
            raise PersistenceError(f'Unknown run status {self.status!r}: use one of {", ".join(_STATUSES)}.')

    def matches(self, run: RunInfo) -> bool:
        """Whether the top-level run `run` is listed by this query, page bounds aside."""
        return (
            (self.status is None or run.status == self.status)
            and (self.graph_name is None or run.graph_name == self.graph_name)
            and (self.search is None or run.run_id.startswith(self.search))
        )


@dataclass(frozen=True, kw_only=True)
class RunPage:
    """A page of runs, newest first."""

    runs: list[RunInfo]
    """The page's top-level runs, newest first."""
    children: dict[str, list[RunInfo]] = field(default_factory=dict)
    """The child runs (any depth) of each of the page's runs that has some, by its run id, oldest first."""
    next_after: tuple[datetime, str] | None = None
    """The `RunQuery.after` of the next page; `None` on the last page."""


def page_of(runs: list[RunInfo], query: RunQuery) -> RunPage:
    """The page `query` asks for, out of every run of a store (for the stores that are listed whole)."""
    tops = sorted(
        (run for run in runs if '/' not in run.run_id and query.matches(run)),
        key=lambda run: (run.created, run.run_id),
        reverse=True,
    )
    if query.after is not None:
        tops = [run for run in tops if (run.created, run.run_id) < query.after]
    page = tops[: query.limit]
    ids = {run.run_id for run in page}
    children: dict[str, list[RunInfo]] = {}
    for run in sorted(runs, key=lambda run: (run.created, run.run_id)):
        top = run.run_id.partition('/')[0]
        if top != run.run_id and top in ids:
            children.setdefault(top, []).append(run)
    more = len(tops) > query.limit
    return RunPage(runs=page, children=children, next_after=(page[-1].created, page[-1].run_id) if more else None)
