"""The inspector's web app: routes, the guard in front of them (Host, access token, CSRF), and the actions."""

from __future__ import annotations as _annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from html import escape
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..builder import Graph as BuilderGraph
from ..builder._run_path import RunPath, read_run_path
from ..cli._common import CommandError, when
from ..cli._runs import advance, check_resume, delete_runs, fork_snapshot, outcome
from ..cli._store import Store, open_store
from ..cli._tree import nest
from ..exceptions import PersistenceError
from ..graph import Graph
from ..persistence import RunInfo
from ..persistence.raw import RawSnapshot
from ..persistence.store import DurableStatePersistence, RunQuery, list_runs_page
from . import _agent, _diagram, _render

__all__ = ('Inspector', 'build_app', 'LOOPBACK_HOSTS')

LOOPBACK_HOSTS = frozenset({'127.0.0.1', 'localhost', '::1', '[::1]'})
"""Host names a local browser uses; any other `Host` header is refused unless allowed (DNS rebinding)."""

_TOKEN_COOKIE = 'edgewise_ui_token'
"""The access token's cookie name, followed by the port: inspectors on two ports of a host keep their own."""
# No page may be framed by another site (clickjacking of the action buttons), nor run a script not its own.
_PAGE_HEADERS = {
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
}
_STATUSES = ('running', 'waiting', 'finished', 'failed')


@dataclass
class Inspector:
    """What the app serves and how: the stores, the workflows it may resume, and its safety settings."""

    stores: list[Store]
    """The stores shown, numbered in this order in URLs (`store=0`)."""
    apps: dict[str, Any] = field(default_factory=dict)
    """The graphs and agents given with `--app`, by graph name (an agent's is its graph's)."""
    read_only: bool = False
    """Whether every action is refused."""
    token: str | None = None
    """The access token every request must carry (cookie, or `?token=` once), when set."""
    allowed_hosts: frozenset[str] = frozenset()
    """`Host` names served besides the loopback ones."""
    page_size: int = 50
    """Top-level runs per page of each store."""
    poll_ms: int = 1000
    """How often an open page asks whether what it shows changed."""
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    """This server session's token, in each page, that every action must send back."""

    def store(self, index: str | None) -> tuple[int, Store]:
        """The store numbered `index` in a request, or a 404."""
        try:
            number = int(index or '')
            if number < 0:  # not counted from the end
                raise IndexError(number)
            return number, self.stores[number]
        except (ValueError, IndexError):
            raise _HTTPError(404, f'No store {index!r}: the stores are numbered 0 to {len(self.stores) - 1}.') from None


class _HTTPError(Exception):
    """A request's mistake: answered with its status and message (JSON for actions, a page otherwise)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Guard:
    """Refuses foreign `Host` headers and requests without the access token, before any route runs."""

    def __init__(self, app: ASGIApp, inspector: Inspector) -> None:
        self.app = app
        self.inspector = inspector

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return
        headers = {k.decode('latin-1').lower(): v.decode('latin-1') for k, v in scope['headers']}
        host = _hostname(headers.get('host', ''))
        if host not in LOOPBACK_HOSTS and host not in self.inspector.allowed_hosts:
            response: Response = PlainTextResponse(
                f'Host {host!r} is not served: edgewise ui answers to local names only (start it with '
                '--allowed-host NAME to serve another name).',
                status_code=400,
            )
            await response(scope, receive, send)
            return
        token = self.inspector.token
        if token is not None:
            name = _cookie_name(headers.get('host', ''))
            query = dict(parse_qsl(scope.get('query_string', b'').decode('latin-1')))
            cookie = SimpleCookie(headers.get('cookie', ''))
            given = cookie[name].value if name in cookie else headers.get('x-edgewise-token', '')
            if query.get('token') and _same(query['token'], token):
                rest = urlencode([(k, v) for k, v in parse_qsl(scope['query_string'].decode()) if k != 'token'])
                path = '/' + scope['path'].lstrip('/')  # never '//host/...': a redirect to another site
                response = RedirectResponse(path + (f'?{rest}' if rest else ''), status_code=303)
                response.set_cookie(name, token, httponly=True, samesite='strict')
                await response(scope, receive, send)
                return
            if not _same(given, token):
                response = PlainTextResponse(
                    'This edgewise ui needs its access token: open the URL it printed when it started '
                    '(it ends with ?token=...).',
                    status_code=401,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _same(given: str, token: str) -> bool:
    """Whether a token given in a request is `token`, in constant time (as bytes: any character may be sent)."""
    return hmac.compare_digest(given.encode(), token.encode())


def _cookie_name(host: str) -> str:
    """The token cookie's name for a `Host` header: cookies are shared by all ports of a host, names are not."""
    port = host.rpartition(':')[2] if host.startswith('[') or host.count(':') == 1 else ''
    return f'{_TOKEN_COOKIE}_{port}' if port.isdigit() else _TOKEN_COOKIE


def _hostname(host: str) -> str:
    if host.startswith('['):
        return host[: host.find(']') + 1]
    return host.rsplit(':', 1)[0].lower() if host.count(':') == 1 else host.lower()


def build_app(inspector: Inspector) -> Starlette:
    """The ASGI app of an inspector."""

    async def runs_page(request: Request) -> Response:
        return await _guarded(lambda: _runs_page(inspector, request))

    async def run_page(request: Request) -> Response:
        return await _guarded(lambda: _run_page(inspector, request))

    async def step(request: Request) -> Response:
        return await _guarded(lambda: _step(inspector, request))

    async def action(request: Request) -> Response:
        return await _guarded(lambda: _action(inspector, request), json=True)

    app = Starlette(
        routes=[
            Route('/', runs_page),
            Route('/run', run_page),
            Route('/api/step', step),
            Route('/api/action', action, methods=['POST']),
            Mount('/static', StaticFiles(packages=[('edgewise.graph.web', 'static')]), name='static'),
        ]
    )
    app.add_middleware(_Guard, inspector=inspector)
    return app


async def _guarded(handler: Callable[[], Awaitable[Response]], *, json: bool = False) -> Response:
    try:
        try:
            return await handler()
        except PersistenceError as e:  # the store failed (unreachable...): its message has no password
            raise _HTTPError(503, str(e)) from None
    except _HTTPError as e:
        if json:
            return JSONResponse({'ok': False, 'error': e.message}, status_code=e.status)
        return HTMLResponse(
            f'<!doctype html><title>error</title><p class="error">{escape(e.message)}</p>', e.status, _PAGE_HEADERS
        )


def _page(inspector: Inspector, title: str, body: str, live: str | None) -> HTMLResponse:
    html = _render.page(
        title, body, csrf=inspector.csrf, read_only=inspector.read_only, live=live, poll_ms=inspector.poll_ms
    )
    return HTMLResponse(html, headers=_PAGE_HEADERS)


# --- the runs list -------------------------------------------------------------------------------------------


def _query(request: Request, index: int, page_size: int) -> RunQuery:
    params = request.query_params
    status = params.get('status') or None
    if status is not None and status not in _STATUSES:
        raise _HTTPError(400, f'Unknown status {status!r}: use one of {", ".join(_STATUSES)}.')
    after = None
    if cursor := params.get(f'after{index}'):
        created, sep, run_id = cursor.partition('|')
        try:
            after = (datetime.fromisoformat(created), run_id)
        except ValueError:
            raise _HTTPError(400, f'{cursor!r} is not a page cursor of this listing.') from None
        if not sep:
            raise _HTTPError(400, f'{cursor!r} is not a page cursor of this listing.')
        if after[0].tzinfo is None:  # the stores' times are UTC; a time without a zone is read as one
            after = (after[0].replace(tzinfo=timezone.utc), run_id)
    return RunQuery(
        limit=page_size, after=after, status=status, graph_name=params.get('name') or None,  # type: ignore[arg-type]
        search=params.get('q') or None,
    )  # fmt: skip


async def _runs_page(inspector: Inspector, request: Request) -> Response:
    params = request.query_params
    sections = []
    for index, store in enumerate(inspector.stores):
        query = _query(request, index, inspector.page_size)
        try:
            store.check_exists()
            page = await list_runs_page(store.url, query)
        except (CommandError, PersistenceError) as e:  # a PersistenceError names the store without its password
            sections.append(
                f'<section class="store"><h2>{escape(store.display)}</h2>'
                f'<p class="error">{escape(str(e))}</p></section>'
            )
            continue
        rows: list[tuple[RunInfo, int, str]] = []
        for run in page.runs:
            rows.append((run, 0, await _status_text(store, run)))
            for child, depth in nest(page.children.get(run.run_id, []), order_top=True):
                rows.append((child, depth + 1, await _status_text(store, child)))
        more = ''
        if page.next_after is not None:
            cursor = f'{page.next_after[0].isoformat()}|{page.next_after[1]}'
            link = '/?' + urlencode({**dict(params), f'after{index}': cursor})
            more = f'<a class="more" href="{escape(link)}">older runs</a>'
        body = _render.runs_rows(index, rows) or '<tr><td colspan="6" class="empty">no runs</td></tr>'
        sections.append(
            f'<section class="store" data-store="{index}"><h2>{escape(store.display)}</h2>'
            '<table class="runs"><thead><tr><th>run</th><th>graph</th><th>status</th><th>steps</th>'
            f'<th>created (UTC)</th><th>updated (UTC)</th></tr></thead><tbody>{body}</tbody></table>{more}</section>'
        )
    options = ''.join(
        f'<option value="{s}"{" selected" if params.get("status") == s else ""}>{s}</option>' for s in _STATUSES
    )
    form = (
        '<form class="filters" method="get" action="/">'
        f'<input name="q" placeholder="run id starts with" value="{escape(params.get("q", ""))}">'
        f'<input name="name" placeholder="graph name" value="{escape(params.get("name", ""))}">'
        f'<select name="status"><option value="">any status</option>{options}</select>'
        '<button type="submit">filter</button></form>'
    )
    body = f'<h1>Runs</h1>{form}<div id="live">{"".join(sections)}</div>'
    return _page(inspector, 'Runs', body, live=str(request.url.replace(scheme='http').path) + _qs(request))


def _qs(request: Request) -> str:
    return f'?{request.url.query}' if request.url.query else ''


async def _status_text(store: Store, run: RunInfo) -> str:
    if run.status != 'waiting':
        return run.status
    async with store.persistence(run.run_id) as persistence:
        history = await persistence.load_raw()
    waits = _agent.waits_for(history)
    return f'waiting for {waits}' if waits else run.status


# --- a run ---------------------------------------------------------------------------------------------------


async def _run_page(inspector: Inspector, request: Request) -> Response:
    index, store = inspector.store(request.query_params.get('store'))
    run_id = _run_id(request.query_params.get('id'))
    try:
        store.check_exists()
    except CommandError as e:
        raise _HTTPError(404, str(e)) from None
    partial = bool(request.query_params.get('partial'))
    async with _persistence(store, run_id) as persistence:
        # The run's info first, one cheap query: a live page asking whether the run changed gets an empty answer.
        info = await persistence.info()
        version = _version(info) if info is not None else None
        if partial and version is not None and request.query_params.get('v') == version:
            return Response(status_code=204)
        history = await persistence.load_raw() if info is not None else []
    if info is None or not history:
        raise _HTTPError(404, f'No run {run_id!r} in {store.display}.')
    # A live page that has the steps up to `since` gets the steps from `since` on (that one may have changed).
    since = request.query_params.get('since', '')
    first = int(since) if partial and since.isdigit() and 1 <= int(since) <= len(history) else 1
    body = await _run_body(inspector, index, store, run_id, history, info, version or '', first)
    if partial:
        # The version read before the history: a step taken between the two shows on the next refresh.
        return HTMLResponse(body, headers={'x-edgewise-version': version or ''})
    return _page(inspector, f'Run {run_id}', body, live=_render.run_link(index, run_id))


async def _step(inspector: Inspector, request: Request) -> Response:
    """One step of a run as an HTML fragment: its state tree, node fields and diff (opened in the page)."""
    _, store = inspector.store(request.query_params.get('store'))
    run_id = _run_id(request.query_params.get('id'))
    try:
        store.check_exists()
    except CommandError as e:
        raise _HTTPError(404, str(e)) from None
    text = request.query_params.get('step', '')
    async with _persistence(store, run_id) as persistence:
        info = await persistence.info()
        if info is None:
            raise _HTTPError(404, f'No run {run_id!r} in {store.display}.')
        if not text.isdigit() or not 1 <= int(text) <= info.snapshot_count:
            raise _HTTPError(
                404, f'No step {text!r} in run {run_id!r}: its steps are numbered 1 to {info.snapshot_count}.'
            )
        step = int(text)
        # Only the step and the one before it are read: a long run's other states are never decoded.
        found = await persistence.load_raw_steps(max(step - 1, 1), 2 if step > 1 else 1)
    if not found:  # pragma: no cover - removed between the two reads
        raise _HTTPError(404, f'No run {run_id!r} in {store.display}.')
    snapshot, previous = found[-1], found[0] if len(found) > 1 else None
    return HTMLResponse(_render.step_detail(snapshot, previous), headers=_PAGE_HEADERS)


def _run_id(value: object) -> str:
    """A run id from a request; refused when it could name a file outside a directory store."""
    run_id = str(value or '')
    if any(part in ('', '.', '..') for part in run_id.split('/')) or '\\' in run_id or '\x00' in run_id:
        raise _HTTPError(
            400,
            f'{run_id!r} is not a run id (its parts, split at "/", are not empty, "." or "..", and it has no '
            'backslash or NUL). Nothing was changed.',
        )
    return run_id


def _persistence(store: Store, run_id: str) -> DurableStatePersistence[Any, Any]:
    """The persistence of a run of `store`; a 404 when the store cannot hold that run (a one-run file)."""
    try:
        return store.persistence(run_id)
    except PersistenceError:
        raise _HTTPError(404, f'No run {run_id!r} in {store.display}. Nothing was changed.') from None


def _version(info: RunInfo) -> str:
    return f'{info.status}|{info.snapshot_count}|{info.updated.isoformat()}'


async def _run_body(
    inspector: Inspector,
    index: int,
    store: Store,
    run_id: str,
    history: list[RawSnapshot],
    info: RunInfo,
    version: str,
    first: int = 1,
) -> str:
    async with store.persistence(run_id) as persistence:
        parent, children = await persistence.parent_run(), await persistence.child_runs()
    app = inspector.apps.get(info.graph_name or '')
    graph = app if isinstance(app, Graph | BuilderGraph) else getattr(app, 'graph', None)
    builder_path = _builder_path(history, graph)
    if builder_path is not None:
        builder = graph if isinstance(graph, BuilderGraph) else None
        diagram = _diagram.diagram_of_builder(builder, builder_path)
        marks, taken = _diagram.builder_marks(builder_path)
    else:
        diagram = _diagram.diagram_of_graph(graph) if isinstance(graph, Graph) else _diagram.diagram_of_history(history)
        marks, taken = _diagram.path_marks(history, info.status == 'running')
    svg = _diagram.render_svg(diagram, marks, taken)
    status = await _status_text(store, info)
    actions = not inspector.read_only
    head = (
        f'<h1>Run <code>{escape(run_id)}</code> {_render.status_badge(status)}</h1>'
        f'<p class="meta">{escape(store.display)} · graph {escape(info.graph_name or "-")} · '
        f'{info.snapshot_count} steps · created {when(info.created)} · updated {when(info.updated)} UTC'
        + (
            f' · child run of <a href="{escape(_render.run_link(index, parent.run_id))}">{escape(parent.run_id)}</a>'
            if parent is not None
            else ''
        )
        + '</p>'
    )
    last = history[-1]
    error = _render.snapshot_error(last) if last.kind == 'node' and last.status == 'error' else None
    error_html = ''
    if error is not None:
        error_html = (
            f'<div class="failure"><strong>{escape(error["type"])}</strong>: {escape(error["message"])}'
            f'<pre>{escape(error["traceback"])}</pre></div>'
        )
    view = _agent.agent_view(history)
    said = outcome(store, run_id, history, info, agent=view is not None)
    outcome_html = f'<div class="outcome {escape(info.status)}">{escape(said)}</div>'
    controls = []
    if actions and info.status == 'waiting' and _agent.waits_for(history) is None:
        if app is not None:
            controls.append('<button class="resume">resume</button>')
        else:
            controls.append(
                '<span class="hint">start edgewise ui with --app MODULE:GRAPH_OR_AGENT for '
                f'{escape(info.graph_name or "this graph")} to resume it here</span>'
            )
    if actions and info.status in ('finished', 'failed') and parent is None:
        controls.append('<button class="delete danger">delete run</button>')
    controls_html = (
        f'<div class="actions" data-store="{index}" data-run="{escape(run_id)}">{"".join(controls)}</div>'
        if actions
        else ''
    )
    agent = _agent_section(view, actions and app is not None)
    kids = ''
    if children:
        kid_rows = [(child, depth, child.status) for child, depth in nest(children, order_top=True)]
        kids = (
            f'<h2>Child runs ({len(children)})</h2><table class="runs"><thead><tr><th>run</th><th>graph</th>'
            '<th>status</th><th>steps</th><th>created (UTC)</th><th>updated (UTC)</th></tr></thead>'
            f'<tbody>{_render.runs_rows(index, kid_rows)}</tbody></table>'
        )
    return (
        f'<div class="run-page" data-run="{escape(run_id)}" data-status="{escape(info.status)}" '
        f'data-version="{escape(version)}">{head}{outcome_html}'
        f'{error_html}{controls_html}<div class="diagram-box">{svg}</div>{agent}<h2>Steps</h2>'
        f'<div class="actions" data-store="{index}" data-run="{escape(run_id)}">'
        f'{_render.steps_table(history, actions=actions, first=first)}</div>{kids}</div>'
    )


def _builder_path(history: list[RawSnapshot], graph: Any) -> RunPath | None:
    """The path of a builder run (its snapshots hold `BuilderProgress` nodes), else `None`."""
    if not any(s.kind == 'node' and s.node.node_id == 'BuilderProgress' for s in history):
        return None
    try:
        return read_run_path(history, graph if isinstance(graph, BuilderGraph) else None)
    except PersistenceError:  # pragma: no cover - a `BuilderProgress` node that is not a builder's progress
        return None


def _agent_section(view: _agent.AgentView | None, can_answer: bool) -> str:
    if view is None:
        return ''
    items = []
    for part in view.parts:
        kind = part.who.replace(' ', '-')
        if part.who == 'tool call':
            text = f'calls {part.tool_name}({_render.as_json(part.content)}) [{part.tool_call_id}]'
        elif part.who == 'tool return':
            text = f'{part.tool_name} returned {_render.as_json(part.content)} [{part.tool_call_id}]'
        else:
            text = part.content if isinstance(part.content, str) else _render.as_json(part.content)
        items.append(f'<li class="part {escape(kind)}"><span class="who">{escape(part.who)}</span> {escape(text)}</li>')
    usage = view.usage
    waits = ''
    if view.waiting_for:
        calls = []
        for call in view.approvals:
            call_id = escape(call.tool_call_id)
            buttons = (
                f'<input class="reason" placeholder="reason (for a denial)" data-call="{call_id}">'
                f'<button class="approve" data-call="{call_id}">approve</button>'
                f'<button class="deny danger" data-call="{call_id}">deny</button>'
                if can_answer
                else ''
            )
            calls.append(
                f'<li class="pending" data-call="{call_id}">{escape(call.tool_name)}'
                f'({escape(_render.as_json(call.args))}) [{call_id}]: needs approval {buttons}</li>'
            )
        calls += [
            f'<li class="pending">{escape(c.tool_name)} [{escape(c.tool_call_id)}]: needs its result</li>'
            for c in view.calls
        ]
        waits = f'<h3>Waiting for {escape(view.waiting_for)}</h3><ul class="calls">{"".join(calls)}</ul>'
    return (
        f'<h2>Conversation</h2><ol class="conversation">{"".join(items)}</ol>'
        f'<p class="usage">usage: {usage["requests"]} requests, {usage["input_tokens"]} input tokens, '
        f'{usage["output_tokens"]} output tokens, {usage["tool_calls"]} tool calls</p>{waits}'
    )


# --- actions -------------------------------------------------------------------------------------------------


async def _action(inspector: Inspector, request: Request) -> Response:
    if inspector.read_only:
        raise _HTTPError(403, 'This edgewise ui is read-only (--read-only): no action is taken.')
    if request.headers.get('content-type', '').split(';')[0].strip() != 'application/json':
        raise _HTTPError(415, 'An action is a JSON request (Content-Type: application/json).')
    origin = request.headers.get('origin')
    if origin is not None and origin.partition('://')[2] != request.headers.get('host'):
        raise _HTTPError(403, f'An action from another origin ({origin}) is refused.')
    if not _same(request.headers.get('x-edgewise-csrf', ''), inspector.csrf):
        raise _HTTPError(
            403, 'An action needs the token of the page it comes from (reload the page). Nothing was changed.'
        )
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # RecursionError: nested too deep to decode
        raise _HTTPError(400, 'The action is not valid JSON.') from None
    if not isinstance(body, dict):
        raise _HTTPError(400, 'An action is a JSON object.')
    index, store = inspector.store(str(body.get('store')))
    run_id = _run_id(body.get('run_id'))
    kind = body.get('action')
    try:
        store.check_exists()
    except CommandError as e:
        raise _HTTPError(404, str(e)) from None
    async with _persistence(store, run_id) as persistence:
        info = await persistence.info()
    if info is None:
        raise _HTTPError(404, f'No run {run_id!r} in {store.display}. Nothing was changed.')
    try:
        if kind == 'fork':
            new_id = await fork_snapshot(store, run_id, str(body.get('snapshot_id')), None)
            return JSONResponse(
                {'ok': True, 'message': f'Forked as run {new_id}.', 'url': _render.run_link(index, new_id)}
            )
        if kind == 'delete':
            if info.status not in ('finished', 'failed'):
                raise _HTTPError(409, f'Run {run_id} is {info.status}: only a finished or failed run is deleted here.')
            said: list[str] = []
            await delete_runs(store, [run_id], say=said.append)
            return JSONResponse({'ok': True, 'message': ' '.join(said), 'url': '/'})
        if kind in ('resume', 'answer'):
            return JSONResponse(await _resume(inspector, store, run_id, info, body, kind == 'answer'))
    except CommandError as e:
        raise _HTTPError(409 if 'Nothing was changed' in str(e) or 'already' in str(e) else 400, str(e)) from None
    raise _HTTPError(400, f'Unknown action {kind!r}: use fork, delete, resume or answer.')


def _ids(body: Mapping[str, Any], key: str) -> list[str]:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(i, str) for i in value):
        raise _HTTPError(400, f'{key!r} is a list of tool call ids.')
    return value


async def _resume(
    inspector: Inspector, store: Store, run_id: str, info: RunInfo, body: Mapping[str, Any], answer: bool
) -> dict[str, Any]:
    app = inspector.apps.get(info.graph_name or '')
    if app is None:
        raise _HTTPError(
            400,
            f'Run {run_id} is a run of {info.graph_name or "an unnamed graph"}: start edgewise ui with '
            '--app MODULE:GRAPH_OR_AGENT of it to resume it here. Nothing was changed.',
        )
    reason = body.get('reason')
    answers = (
        _agent.answers(_ids(body, 'approve'), _ids(body, 'deny'), str(reason) if reason else None) if answer else None
    )
    command = f'edgewise runs resume {run_id} MODULE:AGENT --store {store.display}'
    history, deferred = await check_resume(store, run_id, app, command, answers)
    async with store.persistence(run_id) as persistence:
        said = await advance(app, persistence, history, deferred, command)
    return {'ok': True, 'message': said}


def make_inspector(
    stores: Sequence[str],
    *,
    apps: Sequence[Any] = (),
    read_only: bool = False,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    poll_ms: int = 1000,
) -> Inspector:
    """An inspector of the stores at `stores` (store URLs), resuming runs of `apps` (graphs or agents)."""
    by_name: dict[str, Any] = {}
    for app in apps:
        graph = app if isinstance(app, Graph | BuilderGraph) else app.graph
        by_name[graph.name or ''] = app
    return Inspector(
        stores=[open_store(url) for url in stores],
        apps=by_name,
        read_only=read_only,
        token=token,
        allowed_hosts=frozenset(h.lower() for h in allowed_hosts),
        poll_ms=poll_ms,
    )
