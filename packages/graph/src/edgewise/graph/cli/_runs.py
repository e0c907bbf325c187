"""`edgewise runs list | show | resume | fork | delete | prune`: inspecting, driving and removing stored runs."""

from __future__ import annotations as _annotations

import contextlib
import importlib.util
import inspect
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from time import perf_counter
from types import FrameType
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.lowlevel import EventLoopToken

from ..builder import EndMarker
from ..builder import Graph as BuilderGraph
from ..exceptions import GraphRuntimeError
from ..graph import Graph
from ..nodes import End
from ..persistence import RunInfo
from ..persistence.raw import RawSnapshot
from ..persistence.store import DurableStatePersistence
from ._agent_runs import agent_run_lines, is_agent_run, waiting, waiting_lines
from ._answers import Answers
from ._common import CommandError, duration, echo, progress_output, when
from ._format import summary, table
from ._store import Store
from ._tree import child_kind, count_runs, fork_steps, fork_summary, nest, parent_id

__all__ = (
    'list_runs',
    'show_run',
    'check_resume',
    'advance',
    'resume_run',
    'fork_run',
    'fork_snapshot',
    'delete_runs',
    'prune_runs',
    'load_history',
    'outcome',
)


async def list_runs(store: Store) -> int:
    """Print the store's runs as a table, oldest first."""
    runs = await store.list_runs()
    if not runs:
        echo(f'No runs in {store.display}.')
        return 0
    # What a waiting run waits for is in its last snapshot: read for all of them at once (one connection to a
    # database, rather than one per run).
    last = await store.last_snapshots([run.run_id for run in runs if run.status == 'waiting'])
    # A child run (a subgraph run, a branch of a fan-out) comes right after its parent, indented.
    rows = [
        ('  ' * depth + run.run_id, run.graph_name or '-', _status_of(run, last.get(run.run_id)), when(run.created),
         when(run.updated), str(run.snapshot_count))
        for run, depth in nest(runs)
    ]  # fmt: skip
    echo(table(('RUN ID', 'GRAPH', 'STATUS', 'STARTED (UTC)', 'UPDATED (UTC)', 'STEPS'), rows))
    return 0


async def _status(store: Store, run: RunInfo) -> str:
    """The run's status as `runs list` and `runs show` say it (see `_status_word`)."""
    if run.status != 'waiting':
        return run.status
    async with store.persistence(run.run_id) as persistence:
        history = await persistence.load_raw()
    return _status_word(run, history)


def _status_word(run: RunInfo, history: list[RawSnapshot]) -> str:
    """The run's status; a waiting agent run stopped on tool calls shows what it waits for: `waiting for approval`."""
    return _status_of(run, history[-1] if history else None)


def _status_of(run: RunInfo, last: RawSnapshot | None) -> str:
    """`_status_word` from the run's last snapshot (`None`: not read, or none stored)."""
    waits = waiting(last) if last is not None and run.status == 'waiting' else None
    return f'waiting for {waits.what}' if waits else run.status


async def load_history(store: Store, run_id: str) -> list[RawSnapshot]:
    """The run's snapshots, read without its graph.

    Raises:
        CommandError: the store has no such run.
    """
    return (await _load(store, run_id, with_info=False))[0]


async def _load(store: Store, run_id: str, *, with_info: bool) -> tuple[list[RawSnapshot], RunInfo | None]:
    store.check_exists()
    async with store.persistence(run_id) as persistence:
        history = await persistence.load_raw()
        info = await persistence.info() if history and with_info else None
    if not history:
        raise _no_run(store, run_id)
    return history, info


@dataclass
class _Family:
    """The runs around a run: the one it is a child run of, and its own child runs (any depth)."""

    parent: RunInfo | None
    children: list[RunInfo]


async def _family(store: Store, run_id: str) -> _Family:
    async with store.persistence(run_id) as persistence:
        return _Family(await persistence.parent_run(), await persistence.child_runs())


def _no_run(store: Store, run_id: str) -> CommandError:
    return CommandError(f'No run {run_id!r} in {store.display} (`edgewise runs list --store URL` lists them).')


async def show_run(store: Store, run_id: str) -> int:
    """Print a run's history: one line per step, the state where it changed, and how the run ended."""
    history, info = await _load(store, run_id, with_info=True)
    if info is None:  # pragma: no cover - the run was there a moment ago, when its history was read
        raise _no_run(store, run_id)
    family = await _family(store, run_id)
    of = f'; a child run of {family.parent.run_id}' if family.parent is not None else ''
    echo(f'Run {run_id} in {store.display}: {_status_word(info, history)}, {len(history)} snapshots{of}')
    echo()
    rows: list[tuple[str, ...]] = []
    states: dict[int, str] = {}  # row index -> the state line shown under it, where the state changed
    previous_state: Any = object()
    # A node waiting for people reads `waiting`, whether a resume without answers left it `pending` or not.
    waits = waiting(history[-1], held=info.status == 'running')
    for step, snapshot in enumerate(history, start=1):
        if snapshot.kind == 'node':
            fields = snapshot.node.fields
            if snapshot.node.node_id == 'Fork':
                node = fork_summary(fields)
            else:
                node = f'{snapshot.node.node_id}({summary(fields, 60)})' if fields else snapshot.node.node_id
            start, took = when(snapshot.start_ts), duration(snapshot.duration)
            status = 'waiting' if waits is not None and step == len(history) else snapshot.status
            rows.append((str(step), node, status, start, took, snapshot.id))
        else:
            rows.append(('end', f'End({summary(snapshot.result.data, 60)})', '-', when(snapshot.ts), '-', snapshot.id))
        if snapshot.state != previous_state:
            states[len(rows)] = f'      state: {summary(snapshot.state, 110)}'
            previous_state = snapshot.state
    lines = table(('STEP', 'NODE', 'STATUS', 'STARTED (UTC)', 'DURATION', 'SNAPSHOT ID'), rows).split('\n')
    for index, line in enumerate(lines):
        echo(line)
        if index in states:
            echo(states[index])
    echo()
    if family.children:
        await _show_children(store, run_id, history, family.children)
        echo()
    agent_lines = agent_run_lines(history)
    if agent_lines is not None:
        for line in agent_lines:
            echo(line)
        echo()
    echo(outcome(store, run_id, history, info, agent=agent_lines is not None))
    failed = [child.run_id for child in family.children if child.status == 'failed']
    if failed:
        echo(
            f'Failed child runs: {", ".join(failed)}; `edgewise runs show CHILD_RUN_ID --store {store.display}` '
            'shows where each failed.'
        )
    return 0


async def _show_children(store: Store, run_id: str, history: list[RawSnapshot], children: list[RunInfo]) -> None:
    """The child runs (subgraph runs, branches of fan-outs) as a table, each under the run it belongs to."""
    forks = fork_steps(history)
    known = {run_id, *(child.run_id for child in children)}
    rows = []
    for child, depth in nest(children, order_top=True):
        parent = parent_id(child.run_id, known) or run_id
        kind = child_kind(child.run_id[len(parent) + 1 :], forks if parent == run_id else None)
        rows.append(('  ' * depth + child.run_id, kind, child.graph_name or '-', await _status(store, child),
                     str(child.snapshot_count)))  # fmt: skip
    echo(f'Child runs ({len(children)}; `edgewise runs show CHILD_RUN_ID` shows one):')
    echo(table(('RUN ID', 'KIND', 'GRAPH', 'STATUS', 'STEPS'), rows))


def outcome(store: Store, run_id: str, history: list[RawSnapshot], info: RunInfo, *, agent: bool = False) -> str:
    """How the run ended, or where it stands, as `runs show` says it last (`agent`: it is an agent run)."""
    last = history[-1]
    target = 'MODULE:AGENT' if agent else 'MODULE:GRAPH'
    deps = ' (and `--deps MODULE:FACTORY` when its tools need deps)' if agent else ''
    if last.kind == 'end':
        return f'Result: {summary(last.result.data, 300)}'
    node_id = last.node.node_id
    if last.status == 'error':
        retry = (
            f'To run it again: `edgewise runs fork {run_id} {last.id} --store {store.display}` forks the run at the '
            f'failed snapshot, which runs node {node_id} again (fork at an earlier snapshot to go back further); then '
            'resume the fork.'
        )
        error = last.error
        if error is None:  # stored by an Edgewise that did not keep errors
            return (
                f'Failed: node {node_id} (step {len(history)}) raised; its error is in the logs of the process that '
                f'ran it. {retry}'
            )
        trace = '\n'.join(f'    {line}' for line in error.traceback.rstrip('\n').splitlines())
        return f'Failed: node {node_id} (step {len(history)}) raised {error.type}: {error.message}\n{trace}\n{retry}'

    if (waits := waiting(last, held=info.status == 'running')) is not None:
        pending = '\n'.join(waiting_lines(waits))
        return (
            f'Waiting for {waits.what}: node {node_id} (step {len(history)}) holds the pending tool calls:\n'
            f'{pending}\nThe run resumes with their answers: `edgewise runs resume {run_id} MODULE:AGENT --store '
            f'{store.display} --approve CALL_ID` (or --deny CALL_ID), or in Python `agent.resume(persistence, '
            'deferred_tool_results=...)`.'
        )
    if info.status == 'running':
        return (
            f'Running: node {node_id} (step {len(history)}) is running in a live process; when that process '
            'ends, the run can be resumed from where it stopped.'
        )
    if last.status in ('running', 'pending'):
        return (
            f'Interrupted: node {node_id} (step {len(history)}) was running in a process that has ended; '
            f'`edgewise runs resume {run_id} {target} --store {store.display}`{deps} runs it again.'
        )
    return (
        f'Waiting: node {node_id} (step {len(history)}) runs next; continue with '
        f'`edgewise runs resume {run_id} {target} --store {store.display}`{deps}.'
    )


_WAITING_FOR_EVENTS = ('selectors.py', '_io_epoll.py', '_io_kqueue.py', '_io_windows.py')
"""The files of the functions in which asyncio's and trio's event loops wait for events."""

_EVENT_LOOPS = (os.path.join('', 'asyncio', ''), os.path.join('', 'trio', ''))
"""The folders of the event loops' own code: a Ctrl-C landing there (the loop between two steps of its tasks, on a
busy machine) is not in the node either, and a `KeyboardInterrupt` raised there would leave the loop, not the node."""


_ANYIO = os.path.join(os.path.dirname(anyio.__file__), '')


def _outside_the_node(filename: str) -> bool:
    """Whether code of this file runs between the node's steps, not in the node: Edgewise's own (the graph run, a
    store call, this command), anyio's, or `contextlib`'s. A second Ctrl-C landing there cancels the node through
    the event loop: a `KeyboardInterrupt` raised there would leave a store call or a cancel scope half done."""
    namespace = importlib.util.find_spec('edgewise')  # imported: its folders (the graph's, the agent's) as they are
    locations = [] if namespace is None else namespace.submodule_search_locations or []
    folders = (*(os.path.join(folder, '') for folder in locations), _ANYIO)
    return filename.startswith(folders) or filename == contextlib.__file__


@dataclass
class DepsFactory:
    """`--deps MODULE:FACTORY`: a function of the run id that returns the run's deps."""

    text: str
    """`MODULE:FACTORY` as given."""
    factory: Any
    """The object it names."""


# Deps types that need no deps: an agent without `deps_type` has `object` (pydantic-ai 2.x's default; `None` is one).
_NO_DEPS = (None, type(None), object)


async def _check_target(store: Store, run_id: str, history: list[RawSnapshot], graph: Any, target: str | None) -> None:
    """Refuse an agent run given a graph, and a graph run given an agent.

    Raises:
        CommandError: the run and the target are not of one kind.
    """
    agent_run = is_agent_run(history)
    if agent_run and isinstance(graph, (Graph, BuilderGraph)):
        raise CommandError(
            f'Run {run_id} is an agent run: resume it with the agent that ran it (MODULE:AGENT), not with the graph '
            f'{target}. Nothing was changed.'
        )
    if not agent_run and not isinstance(graph, (Graph, BuilderGraph)):
        async with store.persistence(run_id) as persistence:
            info = await persistence.info()
        name = f'graph {info.graph_name}' if info is not None and info.graph_name else 'a graph'
        raise CommandError(
            f'Run {run_id} is a run of {name}, not an agent run: resume it with its graph (MODULE:GRAPH), not with '
            f'the agent {target}. Nothing was changed.'
        )


async def _build_deps(graph: Any, deps: DepsFactory | None, run_id: str, target: str | None) -> Any:
    """The run's deps, from `--deps`; `None` without it.

    Raises:
        CommandError: an agent that needs deps is given none; the factory is not callable, raises, or returns
            deps of another type than the agent's `deps_type`.
    """
    deps_type = None if isinstance(graph, Graph) else getattr(graph, 'deps_type', None)
    needs = deps_type if isinstance(deps_type, type) and deps_type not in _NO_DEPS else None
    if deps is None:
        if needs is not None:
            raise CommandError(
                f'The agent {target} needs deps (a {needs.__name__}) to resume run {run_id}: give `--deps '
                'MODULE:FACTORY`, a function that takes the run id and returns them. Nothing was changed.'
            )
        return None
    if not callable(deps.factory):
        raise CommandError(
            f'--deps {deps.text} is a {type(deps.factory).__name__}, not a function of the run id. Nothing was changed.'
        )
    try:
        built = deps.factory(run_id)
        if inspect.isawaitable(built):
            built = await built
    except Exception as e:
        raise CommandError(f'--deps {deps.text} raised {type(e).__name__}: {e}. Nothing was changed.') from None
    if needs is not None and not isinstance(built, needs):
        raise CommandError(
            f'--deps {deps.text} returned a {type(built).__name__}, not the {needs.__name__} the agent needs. '
            'Nothing was changed.'
        )
    return built


@dataclass
class _Interrupts:
    """Ctrl-C once: stop after the running node; twice: interrupt it (it runs again on the next resume), whatever it
    does: a node that awaits is cancelled, a node that blocks (`time.sleep`, a blocking HTTP call) gets a
    `KeyboardInterrupt` where it is.

    A Python signal handler does it, not a task: a node that blocks never lets a task run, but the handler runs in
    the main thread as soon as the signal arrives, even inside `time.sleep`.
    """

    run_scope: anyio.CancelScope
    token: EventLoopToken
    stop: bool = False
    cancelled: bool = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if not self.stop:
            self.stop = True
            with contextlib.suppress(RuntimeError):  # stdout was in the middle of the node's own write
                echo(' (stopping after this node; Ctrl-C again to interrupt it)', end='')
            return
        filename = '' if frame is None else frame.f_code.co_filename
        waiting = filename.endswith(_WAITING_FOR_EVENTS) or any(folder in filename for folder in _EVENT_LOOPS)
        if waiting and self.cancelled:
            return  # the cancellation is on its way
        # Between the node's steps (a store call in this thread, the graph run, this handler itself when the second
        # Ctrl-C follows the first at once), the node is cancelled at its next await, so that its snapshot is
        # stored as interrupted. Code still busy there at the next Ctrl-C is interrupted where it is.
        between = waiting or (not self.cancelled and _outside_the_node(filename))
        self.cancelled = True
        if not between:
            raise KeyboardInterrupt  # the node is busy: interrupt it where it is
        # The event loop waits (the node awaits): cancel the node through the loop, from a thread, for a call from
        # another thread is what wakes it.
        cancel = partial(anyio.from_thread.run_sync, self.run_scope.cancel, token=self.token)
        threading.Thread(target=cancel, name='edgewise-interrupt', daemon=True).start()

    @contextmanager
    def handling(self) -> Iterator[None]:
        """Within: Ctrl-C (SIGINT) and SIGTERM go to `handle`."""
        previous = [(signum, signal.signal(signum, self.handle)) for signum in (signal.SIGINT, signal.SIGTERM)]
        try:
            yield
        finally:
            for signum, handler in previous:
                signal.signal(signum, handler)


async def check_resume(
    store: Store, run_id: str, graph: Any, command: str, answers: Answers | None, target: str | None = None
) -> tuple[list[RawSnapshot], dict[str, Any] | None]:
    """Check that the run can be resumed with `graph` and `answers`; return its history and the answers as the
    agent's `deferred_tool_results` (JSON form), if any. `command` is the resume command shown in errors.

    Raises:
        CommandError: no such run; it finished or failed; the answers do not fit what it waits for.
    """
    history = await load_history(store, run_id)
    last = history[-1]
    if last.kind == 'end':
        raise CommandError(f'Run {run_id} already finished, with result {summary(last.result.data, 200)}.')
    if last.status == 'error':
        raise CommandError(
            f'Run {run_id} failed at node {last.node.node_id}; a failed run does not resume. Fork it at the failed '
            f'snapshot, which runs node {last.node.node_id} again in a new run (edgewise runs fork {run_id} {last.id} '
            f'--store {store.display}), or at an earlier one, and resume the fork.'
        )
    await _check_target(store, run_id, history, graph, target)
    answers = answers or Answers()
    held = False
    if last.status in ('pending', 'running'):
        async with store.persistence(run_id) as persistence:
            info = await persistence.info()
        held = info is not None and info.status == 'running'
    deferred = answers.for_run(last, run_id, command, held)
    if deferred is not None and isinstance(graph, Graph):
        raise CommandError(
            f"Run {run_id} waits for approval of an agent's tool calls: resume it with the agent (MODULE:AGENT), "
            'not a graph.'
        )
    return history, deferred


async def advance(
    graph: Any, persistence: DurableStatePersistence[Any, Any], history: list[RawSnapshot], deferred: Any, command: str
) -> str | None:
    """Run a checked run (`check_resume`) on to its end or to what it waits for; return the outcome line."""
    step = sum(1 for snapshot in history if snapshot.kind == 'node' and snapshot.status == 'success')
    # No signals here (the web app's request): interrupts that nothing sets.
    interrupts = _Interrupts(anyio.CancelScope(), anyio.lowlevel.current_token())
    return await _advance(graph, persistence, step, None, interrupts, deferred, command, None)


async def resume_run(
    store: Store,
    run_id: str,
    graph: Any,
    max_steps: int | None,
    target: str | None = None,
    answers: Answers | None = None,
    deps: DepsFactory | None = None,
) -> int:
    """Run a stored run on to its end (or `max_steps` more nodes), printing each node as it runs.

    `graph` is a `Graph`, or an agent (an object with `iter_from_persistence(persistence)`, see `load_graph`);
    `target` is the `MODULE:GRAPH` the user typed, for the command printed to resume again; `answers` the
    approvals and denials of the tool calls an agent run waits for; `deps` builds the run's deps.
    """
    command = f'edgewise runs resume {run_id} {target or "MODULE:AGENT"} --store {store.display}'
    if deps is not None:
        command += f' --deps {deps.text}'
    history, deferred = await check_resume(store, run_id, graph, command, answers, target)
    run_deps = await _build_deps(graph, deps, run_id, target)
    step = sum(1 for snapshot in history if snapshot.kind == 'node' and snapshot.status == 'success')
    with progress_output():
        return await _resume(store, run_id, graph, max_steps, target, command, deferred, step, run_deps)


async def _resume(
    store: Store,
    run_id: str,
    graph: Any,
    max_steps: int | None,
    target: str | None,
    command: str,
    deferred: dict[str, Any] | None,
    step: int,
    run_deps: Any,
) -> int:
    outcome: str | None = None
    async with store.persistence(run_id) as persistence:
        with anyio.CancelScope() as run_scope:
            interrupts = _Interrupts(run_scope, anyio.lowlevel.current_token())
            with interrupts.handling():
                try:
                    outcome = await _advance(
                        graph, persistence, step, max_steps, interrupts, deferred, command, run_deps
                    )
                except KeyboardInterrupt:
                    if not interrupts.cancelled:
                        raise  # pragma: no cover - not the second Ctrl-C: a KeyboardInterrupt of the node's own
    if interrupts.cancelled:
        echo(' interrupted')
        echo(
            f'Interrupted: run {run_id} is resumable; the interrupted node runs again on the next '
            f'`edgewise runs resume {run_id} {target or "MODULE:GRAPH"} --store {store.display}`.'
        )
        return 130
    assert outcome is not None
    echo(outcome)
    return 130 if interrupts.stop else 0


async def _advance(
    graph: Any,
    persistence: DurableStatePersistence[Any, Any],
    step: int,
    max_steps: int | None,
    interrupts: _Interrupts,
    deferred: dict[str, Any] | None,
    command: str,
    deps: Any,
) -> str | None:
    ran = 0
    if isinstance(graph, BuilderGraph):
        return await _advance_builder(graph, persistence, step, max_steps, interrupts, command)
    try:
        if isinstance(graph, Graph):
            opened = graph.iter_from_persistence(persistence, deps=deps, infer_name=False)
        elif deferred is None:
            opened = graph.iter_from_persistence(persistence, deps=deps)
        else:
            opened = graph.iter_from_persistence(persistence, deps=deps, deferred_tool_results=deferred)
        async with opened as run:
            node = run.next_node
            # An agent run stops (stays waiting) on tool calls that wait for approval or results.
            stops_at = getattr(run, 'stops_at', None)
            while not isinstance(node, End):
                if stops_at is not None and stops_at(node):
                    requests: Any = getattr(node, 'requests', None)
                    calls = [c.tool_call_id for c in (*requests.approvals, *requests.calls)]
                    return (
                        f'Waiting: run {persistence.run_id} waits for {getattr(node, "waiting_for", "")} of tool calls '
                        f'{", ".join(calls)}; answer with `{command} --approve CALL_ID` (or --deny CALL_ID).'
                    )
                if interrupts.stop:
                    return f'Stopped: run {persistence.run_id} is resumable; {node.get_node_id()} runs next.'
                if max_steps is not None and ran >= max_steps:
                    steps = 'step' if ran == 1 else 'steps'
                    return (
                        f'Stopped after {ran} {steps} (--max-steps): run {persistence.run_id} is resumable; '
                        f'{node.get_node_id()} runs next.'
                    )
                step += 1
                echo(f'[{step}] {node.get_node_id()} ...', end='')
                start = perf_counter()
                try:
                    node = await run.next(node)
                except Exception as e:
                    echo(' failed')
                    raise CommandError(
                        f'Node {type(node).__name__} raised {type(e).__name__}: {e}; run {persistence.run_id} '
                        'is marked failed.'
                    ) from None
                ran += 1
                after = 'End' if isinstance(node, End) else node.get_node_id()
                echo(f' ok ({duration(perf_counter() - start)}) -> {after}')
    except GraphRuntimeError as e:
        raise CommandError(str(e)) from None
    return f'Finished: result {summary(node.data, 300)}'


async def _advance_builder(
    graph: BuilderGraph[Any, Any, Any, Any],
    persistence: DurableStatePersistence[Any, Any],
    step: int,
    max_steps: int | None,
    interrupts: _Interrupts,
    command: str,
) -> str:
    """Resume a builder run, printing each event: the nodes of the tasks a step led to, then the end.

    A step that raises leaves the builder run waiting, not failed (unlike a classic node): its progress is stored
    as of before the step, so that the code iterating a run can still recover with `override_next`, and the
    next resume runs the step again. The error says so, with the command that resumes.
    """
    ran = 0
    try:
        async with graph.iter_from_persistence(persistence, infer_name=False) as run:
            while True:
                try:
                    event = await run.__anext__()
                except StopAsyncIteration:
                    break
                except GraphRuntimeError:
                    raise  # the run itself cannot go on (e.g. no task left): not a step's error
                except Exception as e:
                    raise CommandError(
                        f'A step raised {type(e).__name__}: {e}; run {persistence.run_id} stays resumable (a builder '
                        'run whose step raised is not marked failed: its progress is stored as of before that step). '
                        f'Fix the cause, then `{command}` runs the step again; or fork the run at an earlier '
                        'snapshot to go back further.'
                    ) from None
                step += 1
                ran += 1
                if isinstance(event, EndMarker):
                    echo(f'[{step}] end: {summary(event.value, 200)}')
                else:
                    echo(f'[{step}] next: {", ".join(task.node_id for task in event) or "(nothing)"}')
                if interrupts.stop or (max_steps is not None and ran >= max_steps):
                    return f'Stopped after {ran} steps: run {persistence.run_id} is resumable.'
    except GraphRuntimeError as e:
        raise CommandError(str(e)) from None
    return f'Finished: result {summary(run.output, 300)}'


async def fork_run(store: Store, run_id: str, snapshot_id: str, new_run_id: str | None) -> int:
    """Start a new run from a snapshot of a stored one and print its id."""
    echo(await fork_snapshot(store, run_id, snapshot_id, new_run_id))
    return 0


async def fork_snapshot(store: Store, run_id: str, snapshot_id: str, new_run_id: str | None) -> str:
    """Start a new run from a snapshot of a stored one; return its id.

    Raises:
        CommandError: no such run, or no such snapshot of it.
    """
    store.check_exists()
    async with store.persistence(run_id) as persistence:
        try:
            forked = await persistence.fork(snapshot_id, new_run_id)
        except LookupError:
            if await persistence.info() is None:
                raise _no_run(store, run_id) from None
            raise CommandError(
                f'Run {run_id} has no snapshot {snapshot_id!r}; `edgewise runs show {run_id} --store {store.display}` '
                'lists its snapshot ids.'
            ) from None
        await forked.aclose()
    return forked.run_id


async def delete_runs(store: Store, run_ids: Sequence[str], say: Callable[[str], None] = echo) -> int:
    """Remove runs from the store; all of them known, or none removed; `say` tells of each."""
    store.check_exists()
    children: dict[str, int] = {}
    for run_id in run_ids:
        async with store.persistence(run_id) as persistence:
            info = await persistence.info()
            family = _Family(await persistence.parent_run(), await persistence.child_runs())
        if info is None and not family.children:
            raise _no_run(store, run_id)
        parent = family.parent
        if parent is not None and parent.status not in ('finished', 'failed') and parent.run_id not in run_ids:
            raise CommandError(
                f'Run {run_id} is a child run of run {parent.run_id}, which is {parent.status} and reads it back when '
                f'resumed; delete {parent.run_id} (its child runs go with it). Nothing was removed.'
            )
        children[run_id] = len(family.children)
    done: set[str] = set()
    for run_id in sorted(dict.fromkeys(run_ids), key=lambda i: i.count('/')):
        if parent_id(run_id, done) is not None:
            continue  # went with the run it belongs to, deleted above
        async with store.persistence(run_id) as persistence:
            await persistence.delete()
        done.add(run_id)
        with_children = f' and its {count_runs(children[run_id], "child run")}' if children[run_id] else ''
        say(f'Deleted run {run_id}{with_children}.')
    return 0


async def prune_runs(store: Store, before: datetime, *, failed: bool, dry_run: bool) -> int:
    """Remove the runs that ended (finished, or also failed) before `before`, listing them first."""
    statuses = ('finished', 'failed') if failed else ('finished',)
    listed = await store.list_runs()
    # A child run goes with the run it belongs to; one whose parent is gone is pruned as a run of its own.
    ids = {run.run_id: run for run in listed}
    below: dict[str, int] = {}
    for run in listed:
        if (parent := parent_id(run.run_id, ids)) is not None:
            top = parent
            while (up := parent_id(top, ids)) is not None:
                top = up
            below[top] = below.get(top, 0) + 1
    runs = [
        run for run in listed if parent_id(run.run_id, ids) is None and run.status in statuses and run.updated < before
    ]
    ended = ' or '.join(statuses)
    if not runs:
        echo(f'No run in {store.display} {ended} before {when(before)} UTC.')
        return 0
    rows = [(run.run_id, run.graph_name or '-', run.status, when(run.updated)) for run in runs]
    echo(table(('RUN ID', 'GRAPH', 'STATUS', 'ENDED (UTC)'), rows))
    child_count = sum(below.get(run.run_id, 0) for run in runs)
    with_children = f' (with {count_runs(child_count, "child run")})' if child_count else ''
    if dry_run:
        echo(f'{_runs(len(runs))}{with_children} {ended} before {when(before)} UTC; --dry-run: none removed.')
        return 0
    for run in runs:
        async with store.persistence(run.run_id) as persistence:
            await persistence.delete()
    echo(f'Deleted {_runs(len(runs))}{with_children} {ended} before {when(before)} UTC.')
    return 0


def _runs(count: int) -> str:
    return f'{count} run' if count == 1 else f'{count} runs'
