"""Runs and their child runs (subgraph runs, branches of fan-outs) as the `edgewise runs` commands show them.

A child run's id is its parent's id, `/` and its name; a branch's name is `<fork snapshot id>/<branch>`.
"""

from __future__ import annotations as _annotations

import re
from collections.abc import Iterable
from typing import Any

from ..persistence import RunInfo
from ..persistence.raw import RawSnapshot

__all__ = ('nest', 'parent_id', 'child_kind', 'fork_steps', 'fork_summary', 'count_runs')

_BRANCH = re.compile(r'^(?P<fork>[^/]+)/(?P<branch>\d+)$')


def parent_id(run_id: str, known: set[str] | dict[str, Any]) -> str | None:
    """The id of the run in `known` that `run_id` is a child run of (the longest prefix before a `/`), if any."""
    prefix = run_id
    while '/' in prefix:
        prefix = prefix.rsplit('/', 1)[0]
        if prefix in known:
            return prefix
    return None


def _natural(run_id: str) -> list[Any]:
    """Sorts `x/10` after `x/9`: branches in branch order."""
    return [int(part) if part.isdigit() else part for part in re.split(r'(\d+)', run_id)]


def _siblings(runs: list[RunInfo]) -> list[RunInfo]:
    """Child runs of one run in the order they started, the branches of a fan-out together in branch order."""

    def group(run: RunInfo) -> str:
        head, _, tail = run.run_id.rpartition('/')
        return head if tail.isdigit() and '/' in head else run.run_id

    starts: dict[str, Any] = {}
    for run in runs:
        key = group(run)
        starts[key] = min(starts.get(key, run.created), run.created)
    return sorted(runs, key=lambda run: (starts[group(run)], _natural(run.run_id)))


def nest(runs: Iterable[RunInfo], *, order_top: bool = False) -> list[tuple[RunInfo, int]]:
    """The runs with their depth, each followed by its child runs (in the order they started, a fan-out's
    branches in branch order); the runs without a parent in `runs` in the order given, or ordered as child runs
    when `order_top` (they are the child runs of one run)."""
    runs = list(runs)
    ids = {run.run_id: run for run in runs}
    children: dict[str | None, list[RunInfo]] = {}
    for run in runs:
        children.setdefault(parent_id(run.run_id, ids), []).append(run)
    ordered: list[tuple[RunInfo, int]] = []

    def visit(parent: str | None, depth: int) -> None:
        below = children.get(parent, [])
        for run in below if parent is None and not order_top else _siblings(below):
            ordered.append((run, depth))
            visit(run.run_id, depth + 1)

    visit(None, 0)
    return ordered


def fork_steps(history: list[RawSnapshot]) -> dict[str, int]:
    """The fan-outs of a run's history: the `Fork` snapshot's id -> its step number."""
    return {
        snapshot.id: step
        for step, snapshot in enumerate(history, start=1)
        if snapshot.kind == 'node' and snapshot.node.node_id == 'Fork'
    }


def child_kind(name: str, forks: dict[str, int] | None) -> str:
    """What a child run is, from its name below its parent (and the parent's fan-outs, where known)."""
    match = _BRANCH.match(name)
    if match is None:
        return 'subgraph run'
    if forks is None or match['fork'] not in forks:
        return f'branch {match["branch"]}'
    return f'branch {match["branch"]} of step {forks[match["fork"]]}'


def fork_summary(fields: dict[str, Any]) -> str:
    """A `Fork` step as one cell: `Fork(3 branches -> Ship)`."""
    branches = fields.get('branches')
    count = len(branches) if isinstance(branches, list) else '?'
    noun = 'branch' if count == 1 else 'branches'
    return f'Fork({count} {noun} -> {fields.get("join")})'


def count_runs(count: int, what: str = 'run') -> str:
    """`1 run`, `2 runs`, `1 child run`, ..."""
    return f'{count} {what}' if count == 1 else f'{count} {what}s'
