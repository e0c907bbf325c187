"""`edgewise ui`: serve the web inspector of stored runs (`edgewise.graph.web`) with uvicorn."""

from __future__ import annotations as _annotations

import argparse
import ipaddress
import secrets
import socket
from importlib.metadata import entry_points
from typing import Any

from ._common import CommandError, echo
from ._dbos import is_dbos_store
from ._target import load_graph

__all__ = ('serve', 'is_loopback')


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or name to listen on) reaches this machine only."""
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError:
        return False


async def serve(args: argparse.Namespace) -> int:
    """Serve the inspector until interrupted.

    Raises:
        CommandError: the `web` extra is missing, a store is a DBOS store, or an `--app` does not load.
    """
    create_app = _inspector_app()
    import uvicorn

    for url in args.store:
        if is_dbos_store(url):
            raise CommandError(f'edgewise ui shows Edgewise stores; {url.partition(":")[0]} is a DBOS store.')
    apps: list[Any] = [load_graph(target, agent=True) for target in args.app]
    token = args.token
    if token is None and not is_loopback(args.host):
        token = secrets.token_urlsafe(18)
    app = create_app(args.store, apps=apps, read_only=args.read_only, token=token, allowed_hosts=args.allowed_host)
    sock = _listen(args.host, args.port)
    port = sock.getsockname()[1]
    host = f'[{args.host}]' if ':' in args.host else args.host
    echo(f'edgewise ui: http://{host}:{port}/' + (f'?token={token}' if token else ''))
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    # Ctrl-C stops the server, which then raises it again: the command ends as any other on Ctrl-C (status 130).
    await server.serve(sockets=[sock])
    return 0


def _inspector_app() -> Any:
    """The inspector's app factory (`edgewise.graph.web.create_app`), found through the `edgewise.web` entry point:
    the web front builds on this package's operations on stored runs, so the command does not import it.

    Raises:
        CommandError: no inspector is installed, or its extra (`web`) is missing.
    """
    found = [ep for ep in entry_points(group='edgewise.web') if ep.name == 'inspector']
    if not found:
        raise CommandError(
            'edgewise ui: no web inspector is installed (the `edgewise.web` entry point of edgewise-graph): '
            'reinstall edgewise-graph, with its `web` extra: pip install "edgewise-graph[web]"'
        )
    try:
        return found[0].load()
    except ImportError as e:
        raise CommandError(str(e)) from None


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on `host` and `port` (0: any free port), or a one-line error."""
    sock = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip('[]'), port))
        sock.listen(128)  # at once: the printed URL answers (connections wait until the server takes them)
    except OSError as e:
        sock.close()
        raise CommandError(f'Cannot listen on {host} port {port}: {e.strerror or e}.') from None
    return sock
