"""The inspector's HTML, written on the server: the runs list, a run page, a state tree and a state diff."""

from __future__ import annotations as _annotations

import json
from collections.abc import Iterator, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from ..cli._common import duration, when
from ..persistence import RunInfo
from ..persistence.raw import RawSnapshot

__all__ = (
    'as_json',
    'runs_rows',
    'page',
    'state_tree',
    'state_diff',
    'run_link',
    'status_badge',
    'steps_table',
    'step_detail',
    'snapshot_error',
)


def page(title: str, body: str, *, csrf: str, read_only: bool, live: str | None, poll_ms: int) -> str:
    """A whole HTML page around `body`; `live` is the URL its main part is refreshed from, if it follows a run."""
    live_attr = f' data-live="{escape(live)}" data-poll="{poll_ms}"' if live else ''
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<title>{escape(title)} - edgewise ui</title>'
        f'<meta name="edgewise-csrf" content="{escape(csrf)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/app.css"></head>'
        f'<body data-read-only="{str(read_only).lower()}"><header><a href="/" class="brand">edgewise ui</a>'
        f'{"<span class=readonly>read-only</span>" if read_only else ""}</header>'
        f'<main id="main"{live_attr}>{body}</main><div id="toast" role="status"></div>'
        '<script src="/static/app.js"></script></body></html>'
    )


def run_link(store: int, run_id: str) -> str:
    """The URL of a run's page."""
    return '/run?' + urlencode({'store': store, 'id': run_id})


def status_badge(status: str) -> str:
    """A run's status as a coloured badge (`waiting for approval` is a kind of `waiting`)."""
    kind = status.split(' ')[0]
    return f'<span class="status {escape(kind)}">{escape(status)}</span>'


def runs_rows(store: int, runs: Sequence[tuple[RunInfo, int, str]]) -> str:
    """The table rows of runs: `(info, depth, status shown)`, children indented under their run."""
    rows = []
    for run, depth, status in runs:
        indent = f' style="padding-left:{0.6 + 1.4 * depth:.1f}em"' if depth else ''
        rows.append(
            f'<tr class="run" data-run="{escape(run.run_id)}" data-status="{escape(run.status)}">'
            f'<td{indent}><a href="{escape(run_link(store, run.run_id))}">{escape(run.run_id)}</a></td>'
            f'<td>{escape(run.graph_name or "-")}</td><td>{status_badge(status)}</td>'
            f'<td class="num">{run.snapshot_count}</td><td>{when(run.created)}</td><td>{when(run.updated)}</td></tr>'
        )
    return ''.join(rows)


def as_json(value: Any) -> str:
    """A value as compact JSON text."""
    return json.dumps(value, ensure_ascii=False, default=str)


def state_tree(value: Any, name: str = 'state', *, open_depth: int = 1, depth: int = 0) -> str:
    """A JSON value as a collapsible tree (`<details>` for objects and lists)."""
    label = f'<span class="key">{escape(name)}</span>'
    if isinstance(value, dict | list):
        items: Iterator[tuple[str, Any]] = (
            iter(value.items()) if isinstance(value, dict) else ((f'[{i}]', v) for i, v in enumerate(value))
        )
        size = f'{{{len(value)}}}' if isinstance(value, dict) else f'[{len(value)}]'
        inner = ''.join(f'<li>{state_tree(v, str(k), open_depth=open_depth, depth=depth + 1)}</li>' for k, v in items)
        opened = ' open' if depth < open_depth else ''
        summary = f'<summary>{label} <span class="size">{size}</span></summary>'
        return f'<details class="tree"{opened}>{summary}<ul>{inner}</ul></details>'
    return f'{label}: <span class="value">{escape(as_json(value))}</span>'


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f'{path}.{key}' if path else str(key), out)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _flatten(item, f'{path}[{index}]', out)
    else:
        out[path or '(state)'] = value


def state_diff(before: Any, after: Any) -> list[tuple[str, str, str]]:
    """What changed from one state to the next: `(kind, path, text)` with kind `+`, `-` or `~`."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    _flatten(before, '', old)
    _flatten(after, '', new)
    changes = []
    for path, value in new.items():
        if path not in old:
            changes.append(('+', path, as_json(value)))
        elif old[path] != value:
            changes.append(('~', path, f'{as_json(old[path])} → {as_json(value)}'))
    changes += [('-', path, as_json(value)) for path, value in old.items() if path not in new]
    return changes


_ERROR_FIELDS = ('type', 'message', 'traceback')


def snapshot_error(snapshot: RawSnapshot) -> dict[str, str] | None:
    """The error stored with a failed snapshot (`type`, `message`, `traceback`), where the store has one."""
    error = getattr(snapshot, 'error', None)
    if error is None:
        return None
    return {key: str(getattr(error, key, None) or '') for key in _ERROR_FIELDS}


def _node_text(snapshot: RawSnapshot) -> str:
    if snapshot.kind == 'end':
        return 'End'
    return snapshot.node.node_id


def steps_table(history: Sequence[RawSnapshot], *, actions: bool, first: int = 1) -> str:
    """The steps of a run from step `first` on, summaries only: node, status, start, duration, snapshot id.

    A step's state, node fields and diff are fetched when its row is opened (`step_detail`), so the page stays
    small however large the state grows. A live page that has steps 1 to N asks for the steps from N on: the
    table's `data-from` says which step it starts at, and the page keeps the rows it has before it.
    """
    rows = []
    for step, snapshot in enumerate(history[first - 1 :], start=first):
        if snapshot.kind == 'node':
            status: str = snapshot.status
            start, took = when(snapshot.start_ts), duration(snapshot.duration)
        else:
            status, start, took = 'end', when(snapshot.ts), '-'
        fork = (
            f'<button class="fork" data-snapshot="{escape(snapshot.id)}">fork from here</button>'
            if actions and snapshot.kind == 'node'
            else ''
        )
        rows.append(
            f'<tr class="step" data-step="{step}" data-node="{escape(_node_text(snapshot))}" '
            f'data-status="{escape(status)}"><td class="num">{step}</td><td>{escape(_node_text(snapshot))}</td>'
            f'<td>{status_badge(status)}</td><td>{start}</td><td class="num">{took}</td>'
            f'<td><code>{escape(snapshot.id)}</code> {fork}</td></tr>'
            f'<tr class="detail"><td></td><td colspan="5">'
            f'<details id="step-{step}" data-step="{step}"><summary>state, node fields, diff</summary>'
            '<div class="step-body">loading...</div></details></td></tr>'
        )
    return (
        f'<table class="steps" data-from="{first}"><thead><tr><th>#</th><th>node</th><th>status</th>'
        f'<th>started (UTC)</th><th>duration</th><th>snapshot</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def step_detail(snapshot: RawSnapshot, previous: RawSnapshot | None) -> str:
    """A step of a run: its state tree, its node's fields and its diff to `previous` (the step before, if any)."""
    fields = snapshot.node.fields if snapshot.kind == 'node' else {'result': snapshot.result.data}
    changes = state_diff(previous.state, snapshot.state) if previous is not None else []
    diff = ''.join(
        f'<li class="d{"add" if k == "+" else "del" if k == "-" else "chg"}"><code>{k} {escape(p)}</code> '
        f'{escape(t)}</li>'
        for k, p, t in changes
    )
    return (
        f'<div class="cols"><div>{state_tree(snapshot.state)}</div><div>{state_tree(fields, "node")}</div>'
        f'<div><ul class="diff">{diff or "<li>no change</li>"}</ul></div></div>'
    )
