"""The `edgewise` command: draw graphs, and list, inspect, resume, fork and remove stored runs.

```
edgewise mermaid MODULE:GRAPH [--start NODE] [--direction LR] [--highlight NODE ...]
                 [--run RUN_ID --store URL] [-o FILE]
edgewise runs list --store URL           (list and show also on dbos+postgresql://..., dbos+sqlite:///...)
edgewise runs show RUN_ID --store URL
edgewise runs resume RUN_ID MODULE:GRAPH|MODULE:AGENT --store URL [--max-steps N] [--deps MODULE:FACTORY]
                 [--approve CALL_ID ...] [--deny CALL_ID ...] [--deny-message TEXT]
edgewise runs fork RUN_ID SNAPSHOT_ID --store URL
edgewise runs delete RUN_ID ... --store URL
edgewise runs prune --store URL --finished-before WHEN [--failed] [--dry-run]
edgewise ui --store URL [--store URL ...] [--host 127.0.0.1] [--port 8642] [--app MODULE:GRAPH_OR_AGENT ...]
            [--read-only] [--token T] [--allowed-host NAME ...]
```

Every mistake (a bad URL, an unknown run, a MODULE:GRAPH that does not import) is reported in one message
(one line, unless the error it reports has several) with exit status 1 (2 for malformed arguments), never as
a traceback. `edgewise` alone prints the help.
"""

from __future__ import annotations as _annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta, timezone
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn

import anyio

from ..exceptions import GraphError
from ._common import CommandError
from ._dbos import is_dbos_store

__all__ = ('main',)

_EPILOG = (
    'Store URLs: sqlite:///runs.db (relative), sqlite:////abs/runs.db, postgresql://..., file:///abs/run.json; '
    'dbos+postgresql://... or dbos+sqlite:///... (runs list, runs show, mermaid --run)'
)


class _Parser(argparse.ArgumentParser):
    """Reports malformed arguments on one line, with where to find help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f'{self.prog}: error: {message} (see `{self.prog} --help`)\n')


def _parser() -> _Parser:
    parser = _Parser(prog='edgewise', description='Draw edgewise graphs; list, inspect, resume and fork stored runs.')
    parser.add_argument('--version', action='version', version=f'%(prog)s {version("edgewise-graph")}')
    commands = parser.add_subparsers(dest='command', required=True, metavar='COMMAND', parser_class=_Parser)

    diagram = commands.add_parser(
        'mermaid',
        help="print a graph's mermaid diagram, or save it as an image",
        description="Print a graph's mermaid state diagram, or save it: code for .mmd, an image for "
        '.png/.jpg/.webp/.svg/.pdf (rendered by a mermaid.ink-compatible service, or locally by mmdc).',
        epilog=_EPILOG,
    )
    diagram.add_argument('target', metavar='MODULE:GRAPH', help='the graph, e.g. `workflows.orders:order_graph`')
    diagram.add_argument('--start', action='append', metavar='NODE', help='a node runs start from (repeatable)')
    diagram.add_argument('--direction', choices=('TB', 'LR', 'RL', 'BT'), help='the direction the diagram flows in')
    diagram.add_argument('--highlight', nargs='+', action='extend', metavar='NODE', help='nodes to highlight')
    diagram.add_argument('--title', help="the diagram's title (default: the graph's name)")
    diagram.add_argument('--no-title', action='store_true', help='no title')
    diagram.add_argument('--no-edge-labels', action='store_true', help='leave edge labels out')
    diagram.add_argument('--no-notes', action='store_true', help='leave node notes out')
    diagram.add_argument('--run', metavar='RUN_ID', help="draw this stored run's path (needs --store)")
    diagram.add_argument('--store', metavar='URL', help='the store of --run')
    diagram.add_argument('-o', '--output', type=Path, metavar='FILE', help='write to FILE (format from its suffix)')
    diagram.add_argument(
        '--renderer', choices=('service', 'local', 'auto'), default='service', help='where images are rendered'
    )
    diagram.add_argument('--service-url', metavar='URL', help='a mermaid.ink-compatible service (self-hosted)')
    diagram.add_argument('--mmdc', metavar='PATH', help='the mermaid CLI, for --renderer local/auto')
    diagram.add_argument('--puppeteer-config', metavar='FILE', help="a puppeteer config for the mermaid CLI's Chromium")
    diagram.add_argument('--theme', choices=('default', 'neutral', 'dark', 'forest'), help='the mermaid theme')
    diagram.set_defaults(handler=_mermaid)

    runs = commands.add_parser('runs', help='list, show, resume, fork and remove stored runs', epilog=_EPILOG)
    run_commands = runs.add_subparsers(dest='runs_command', required=True, metavar='COMMAND', parser_class=_Parser)

    listing = run_commands.add_parser('list', help='a table of the runs of a store', epilog=_EPILOG)
    listing.add_argument('--store', required=True, metavar='URL', help='where the runs are stored')
    listing.set_defaults(handler=_list)

    show = run_commands.add_parser('show', help="a run's history, and its result or error", epilog=_EPILOG)
    show.add_argument('run_id', metavar='RUN_ID')
    show.add_argument('--store', required=True, metavar='URL', help='where the run is stored')
    show.set_defaults(handler=_show)

    resume = run_commands.add_parser(
        'resume',
        help='run a stored run on to its end',
        description='Run a stored run on to its end (or --max-steps more nodes), printing each node as it runs. '
        'Ctrl-C stops after the running node; a second Ctrl-C interrupts it. Either way the run stays resumable.',
        epilog=_EPILOG,
    )
    resume.add_argument('run_id', metavar='RUN_ID')
    resume.add_argument(
        'target', metavar='MODULE:GRAPH', help='the graph the run belongs to (or MODULE:AGENT, the agent that ran it)'
    )
    resume.add_argument('--store', required=True, metavar='URL', help='where the run is stored')
    resume.add_argument('--max-steps', type=_non_negative, metavar='N', help='run at most N more nodes')
    resume.add_argument(
        '--approve',
        action='append',
        default=[],
        metavar='CALL_ID',
        help='approve a tool call an agent run waits for (repeatable; `runs show` lists them)',
    )
    resume.add_argument(
        '--deny', action='append', default=[], metavar='CALL_ID', help='deny a tool call an agent run waits for'
    )
    resume.add_argument('--deny-message', metavar='TEXT', help='what the model is told of the denied calls')
    resume.add_argument(
        '--deps',
        metavar='MODULE:FACTORY',
        help="a function that takes the run id and returns the run's deps (those of an agent's tools, say)",
    )
    resume.set_defaults(handler=_resume)

    fork = run_commands.add_parser(
        'fork', help='start a new run from a snapshot of a stored run; prints its id', epilog=_EPILOG
    )
    fork.add_argument('run_id', metavar='RUN_ID')
    fork.add_argument('snapshot_id', metavar='SNAPSHOT_ID', help='from `edgewise runs show`')
    fork.add_argument('--store', required=True, metavar='URL', help='where the run is stored')
    fork.add_argument('--new-id', metavar='RUN_ID', help='the id of the new run (generated when not given)')
    fork.set_defaults(handler=_fork)

    delete = run_commands.add_parser(
        'delete',
        help='remove runs from a store',
        description='Remove runs from a store, with every snapshot of them. A run that a live process is '
        'advancing is refused; unknown run ids are an error, and then nothing is removed.',
        epilog=_EPILOG,
    )
    delete.add_argument('run_ids', nargs='+', metavar='RUN_ID')
    delete.add_argument('--store', required=True, metavar='URL', help='where the runs are stored')
    delete.set_defaults(handler=_delete)

    prune = run_commands.add_parser(
        'prune',
        help='remove the runs that finished before a time',
        description='Remove the runs that finished (and, with --failed, those that failed) before a time. '
        'Waiting and running runs are never removed.',
        epilog=_EPILOG,
    )
    prune.add_argument('--store', required=True, metavar='URL', help='where the runs are stored')
    prune.add_argument(
        '--finished-before',
        required=True,
        type=_moment,
        metavar='WHEN',
        help='an ISO date or time (UTC unless it says otherwise), or an age such as 30d, 12h or 45m',
    )
    prune.add_argument('--failed', action='store_true', help='remove failed runs too')
    prune.add_argument('--dry-run', action='store_true', help='list the runs that would go, remove nothing')
    prune.set_defaults(handler=_prune)

    ui = commands.add_parser(
        'ui',
        help='a local web inspector of stored runs (needs edgewise-graph[web])',
        description='Serve a web page listing the runs of the stores, each with its diagram, steps, states and '
        'actions (resume, approve, fork, delete). Local only unless --host says otherwise; then a token is needed.',
        epilog=_EPILOG,
    )
    ui.add_argument('--store', action='append', required=True, metavar='URL', help='a store to show (repeatable)')
    ui.add_argument('--host', default='127.0.0.1', help='the address to listen on (default 127.0.0.1)')
    ui.add_argument('--port', type=_non_negative, default=8642, metavar='N', help='the port (default 8642; 0: any)')
    ui.add_argument(
        '--app', action='append', default=[], metavar='MODULE:GRAPH_OR_AGENT', help='a workflow whose runs it resumes'
    )
    ui.add_argument('--read-only', action='store_true', help='show runs, take no action')
    ui.add_argument('--token', help='the access token (generated and printed when --host is not a loopback address)')
    ui.add_argument(
        '--allowed-host', action='append', default=[], metavar='NAME', help='a Host name to answer besides local ones'
    )
    ui.set_defaults(handler=_ui)
    return parser


_AGE_UNITS = {'d': 86400, 'h': 3600, 'm': 60}


def _moment(text: str) -> datetime:
    """An ISO date or time (UTC when it has no offset), or an age back from now (`30d`, `12h`, `45m`)."""
    unit = _AGE_UNITS.get(text[-1:])
    if unit is not None and text[:-1].isdigit():
        return datetime.now(timezone.utc) - timedelta(seconds=int(text[:-1]) * unit)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'{text!r} is neither an ISO date or time (2026-01-31, 2026-01-31T12:00) nor an age (30d, 12h, 45m)'
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a whole number') from None
    if value < 0:
        raise argparse.ArgumentTypeError(f'{text} is negative')
    return value


async def _mermaid(args: argparse.Namespace) -> int:
    from ..mermaid import MermaidConfig
    from ._diagram import draw
    from ._store import open_store

    if (args.run is None) != (args.store is None):
        raise CommandError('--run and --store go together: --run RUN_ID --store URL.')
    graph = args.graph
    config: MermaidConfig = {'renderer': args.renderer, 'edge_labels': not args.no_edge_labels}
    if args.store is not None and is_dbos_store(args.store):
        from ._dbos import dbos_history

        config['history'] = await dbos_history(args.store, args.run, graph)
        run = None
    else:
        run = (open_store(args.store), args.run) if args.run is not None else None
    config['notes'] = not args.no_notes
    config['title'] = None if args.no_title else (args.title or graph.name)
    if args.start:
        config['start_node'] = args.start
    if args.highlight:
        config['highlighted_nodes'] = args.highlight
    if args.direction:
        config['direction'] = args.direction
    if args.service_url:
        config['base_url'] = args.service_url
    if args.mmdc:
        config['mmdc'] = args.mmdc
    if args.puppeteer_config:
        config['puppeteer_config'] = args.puppeteer_config
    if args.theme:
        config['theme'] = args.theme
    return await draw(graph, output=args.output, run=run, config=config)


async def _list(args: argparse.Namespace) -> int:
    if is_dbos_store(args.store):
        from ._dbos import list_dbos_runs

        return await list_dbos_runs(args.store)
    from ._runs import list_runs
    from ._store import open_store

    return await list_runs(open_store(args.store))


async def _show(args: argparse.Namespace) -> int:
    if is_dbos_store(args.store):
        from ._dbos import show_dbos_run

        return await show_dbos_run(args.store, args.run_id)
    from ._runs import show_run
    from ._store import open_store

    return await show_run(open_store(args.store), args.run_id)


async def _resume(args: argparse.Namespace) -> int:
    if is_dbos_store(args.store):
        from ._dbos import refuse_dbos_store

        raise refuse_dbos_store(args.store, 'resume')
    from ._answers import Answers
    from ._runs import DepsFactory, resume_run
    from ._store import open_store

    answers = Answers(args.approve, args.deny, args.deny_message)
    deps = DepsFactory(args.deps, args.deps_factory) if args.deps is not None else None
    return await resume_run(open_store(args.store), args.run_id, args.graph, args.max_steps, args.target, answers, deps)


async def _fork(args: argparse.Namespace) -> int:
    if is_dbos_store(args.store):
        from ._dbos import refuse_dbos_store

        raise refuse_dbos_store(args.store, 'fork')
    from ._runs import fork_run
    from ._store import open_store

    return await fork_run(open_store(args.store), args.run_id, args.snapshot_id, args.new_id)


async def _delete(args: argparse.Namespace) -> int:
    if is_dbos_store(args.store):
        from ._dbos import refuse_dbos_store

        raise refuse_dbos_store(args.store, 'delete')
    from ._runs import delete_runs
    from ._store import open_store

    return await delete_runs(open_store(args.store), args.run_ids)


async def _prune(args: argparse.Namespace) -> int:
    if is_dbos_store(args.store):
        from ._dbos import refuse_dbos_store

        raise refuse_dbos_store(args.store, 'prune')
    from ._runs import prune_runs
    from ._store import open_store

    return await prune_runs(open_store(args.store), args.finished_before, failed=args.failed, dry_run=args.dry_run)


async def _ui(args: argparse.Namespace) -> int:
    from ._ui import serve

    return await serve(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `edgewise` command with `argv` (default: the process's arguments); return its exit status."""
    parser = _parser()
    if not (sys.argv[1:] if argv is None else argv):
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], Awaitable[int]] = args.handler
    try:
        if getattr(args, 'target', None) is not None:
            from ._target import load_graph

            # Imported before the event loop starts, where a blocking import still stops at the first Ctrl-C.
            args.graph = load_graph(args.target, agent=handler is _resume)
        if getattr(args, 'deps', None) is not None:
            from ._target import load_object

            args.deps_factory = load_object(args.deps, 'MODULE:FACTORY')
        return anyio.run(handler, args)
    except KeyboardInterrupt:
        _error('interrupted')
        return 130
    except Exception as e:
        _error(_message(e))
        return 1


def _message(error: BaseException) -> str:
    """An error's message: a user's mistake as it is, anything else with its type; the spaces of each line
    squeezed, and a message of several lines (psycopg's, say: what failed, then what to check) indented below
    the first."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, GraphError | LookupError | OSError | ImportError):
        text = str(error)
    else:
        text = f'{type(error).__name__}: {error}'
    lines = [' '.join(line.split()) for line in text.splitlines()]
    return '\n  '.join(line for line in lines if line) or type(error).__name__


def _error(message: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(f'edgewise: error: {message}\n')
