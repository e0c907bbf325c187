"""Graph runs on DBOS (extra `edgewise-graph[dbos]`): durable workflows shared by many worker processes.

A `DBOSGraph` makes a `Graph` a DBOS workflow in which each node is a DBOS step: the node's `run` inside
the step, and the step's recorded output the snapshot of the state and the next node (or the end), as
pydantic JSON. A run that stops (its worker killed) is finished by another worker from its last recorded
step: completed nodes are not run again, and the node that was running when the worker died runs again.

```python
from edgewise.graph.dbos import DBOSGraph, DBOSQueue, DBOSWorker

orders = DBOSGraph(order_graph, name='orders')  # at module level, in every process
queue = DBOSQueue('orders', worker_concurrency=4, global_concurrency=16)

# a worker process: takes runs from the queue until it stops
with DBOSWorker({'name': 'shop', 'system_database_url': url}, queues=[queue]) as worker:
    worker.wait()

# any process with a launched DBOS (a worker too): start a run, and later read its result
run_id = orders.enqueue_sync(queue, Receive(order_id=7), state=Order())
result = orders.result_sync(run_id)
```

DBOS runs the nodes on its own asyncio event loop, in the worker; the entry points here are synchronous
(`*_sync`) or async through a worker thread, so callers may be on asyncio or trio.

What DBOS stores for a run: the workflow's input (the first snapshot) and output (the end snapshot) as
JSON (DBOS's portable serialization), each step's output as a JSON string. A node's exception is stored
by DBOS's configured serializer (pickle unless `DBOSConfig['serializer']` says otherwise).

A builder graph (`edgewise.graph.builder`) runs the same way, `DBOSGraph(builder_graph, name=...)`, started
from its input (`run_sync(inputs=..., state=...)`): each step, `BaseNode` and decision is a DBOS step, run one
at a time in the order their tasks were made (see `edgewise.graph.builder._sequential`).

The package: `_worker` (`DBOSWorker`, `DBOSQueue`), `_runs` (runs and their steps read back from DBOS),
`_liveness` (the executor locks that tell a live worker from a dead one).
"""

from __future__ import annotations as _annotations

import contextlib
import hashlib
import inspect
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, cast

import anyio
import pydantic

try:
    import dbos as _dbos
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by tests/graph/dbos/test_extra.py
    # A ModuleNotFoundError naming `dbos`, so that tools (and the wheel check) see which distribution is missing.
    raise ModuleNotFoundError(
        'edgewise.graph.dbos needs the DBOS library: install the `dbos` extra, `pip install "edgewise-graph[dbos]"`.',
        name='dbos',
    ) from _error

from ..builder import Graph as BuilderGraph
from ..builder._sequential import SequentialRun
from ..builder._stored import BuilderProgress
from ..builder.step import NodeStep, Step
from ..exceptions import GraphRuntimeError, GraphSetupError, StepLimitExceeded
from ..graph import Graph, GraphRunResult
from ..nodes import BaseNode, DepsT, End, RunEndT, StateT
from ..persistence import (
    EndSnapshot,
    NodeSnapshot,
    Snapshot,
    build_snapshot_type_adapter,
    set_nodes_type_context,
)
from ..persistence.in_mem import SimpleStatePersistence
from ._runs import WORKFLOW_PREFIX, builder_run_snapshots, list_runs, load_history, run_snapshots
from ._worker import DBOSQueue, DBOSWorker

if TYPE_CHECKING:
    from dbos import DBOSClient

__all__ = (
    'DBOSGraph',
    'DBOSQueue',
    'DBOSWorker',
    'WORKFLOW_PREFIX',
    'application_version',
    'list_runs',
    'load_history',
)


class DBOSGraph(Generic[StateT, DepsT, RunEndT]):
    """A `Graph` run as a DBOS workflow, each node a DBOS step; or a builder graph, each of its steps a DBOS step.

    A builder graph (`edgewise.graph.builder.Graph`) starts from its input (`run_sync(inputs=..., state=...)`,
    no start node); its steps, `BaseNode`s and decisions are the DBOS steps, run one at a time in a fixed order
    so that DBOS's replay of a run takes the same path (see docs/builder.md, "Builder graphs on DBOS").

    Create it at module level in every process that starts, runs or reads the graph's runs (workers,
    and processes that enqueue), before `DBOS.launch()` (or `DBOSWorker`): DBOS finds the workflow by
    its name, `edgewise.graph/<name>`, when a worker takes a run from a queue or recovers it.
    """

    def __init__(
        self,
        graph: Graph[StateT, DepsT, RunEndT] | BuilderGraph[StateT, DepsT, Any, RunEndT],
        *,
        name: str | None = None,
        deps: DepsT = None,  # type: ignore[assignment]
        step_options: _dbos.StepOptions | None = None,
    ) -> None:
        """Register `graph` as a DBOS workflow.

        Args:
            graph: The graph to run: a classic `Graph`, or a builder graph made by `GraphBuilder.build()`.
            name: The workflow's name after `edgewise.graph/`; the graph's name when not given. It must stay
                the same across deployments for stored runs to be found, and be unique in the application.
            deps: The dependencies the nodes get as `ctx.deps` in this process (never stored: each worker
                supplies its own).
            step_options: DBOS step options for every node (retries, timeouts); the step's name is always
                the node's id (a builder graph's step id).

        Raises:
            GraphSetupError: neither `name` is given nor does the graph have a name.
        """
        name = name or graph.name
        if not name:
            raise GraphSetupError(
                'A DBOSGraph needs a stable name, the workflow name its runs are stored under: '
                "pass `name='...'` or build the graph with `Graph(nodes=..., name='...')`."
            )
        self.graph: Graph[StateT, DepsT, RunEndT] | BuilderGraph[StateT, DepsT, Any, RunEndT] = graph
        """The graph being run."""
        self.name = name
        """The graph's name in DBOS."""
        self.workflow_name = f'{WORKFLOW_PREFIX}{name}'
        """The name of the DBOS workflow that runs the graph."""
        self.deps = deps
        """The dependencies the nodes get in this process."""
        self._step_options: _dbos.StepOptions = dict(step_options or {})  # type: ignore[assignment]
        self._builder: BuilderGraph[StateT, DepsT, Any, RunEndT] | None = None
        if isinstance(graph, BuilderGraph):
            self._builder = graph
            with set_nodes_type_context([BuilderProgress]):  # what a builder run's stored snapshots hold
                self._adapter: pydantic.TypeAdapter[Snapshot[StateT, RunEndT]] = build_snapshot_type_adapter(
                    graph.state_type, graph.output_type
                )
        else:
            with set_nodes_type_context(graph.get_nodes()):
                self._adapter = build_snapshot_type_adapter(*graph.inferred_types)

        def run_graph(start: str, max_steps: int | None = None) -> str:
            return self._workflow(start, max_steps)

        run_graph.__qualname__ = run_graph.__name__ = f'run_graph_{name}'
        self._workflow_function = _dbos.DBOS.workflow(
            name=self.workflow_name, serialization_type=_dbos.WorkflowSerializationFormat.PORTABLE
        )(run_graph)

    # --- the workflow and its steps -------------------------------------------------------------------

    def _workflow(self, start: str, max_steps: int | None) -> str:
        if self._builder is not None:
            return self._builder_workflow(self._builder, start, max_steps)
        snapshot = self._adapter.validate_json(start)
        steps = 0
        while isinstance(snapshot, NodeSnapshot):
            node_id = snapshot.node.get_node_id()
            if max_steps is not None and steps >= max_steps:
                raise StepLimitExceeded(
                    f'Graph `{self.name}` ran {steps} nodes, its `max_steps`, and was about to run `{node_id}` '
                    f'(run {_dbos.DBOS.workflow_id}); it is likely in a runaway cycle.'
                )
            steps += 1
            options: _dbos.StepOptions = {**self._step_options, 'name': node_id}
            start = _dbos.DBOS.run_step(options, self._run_node, start)
            snapshot = self._adapter.validate_json(start)
        return start

    def _builder_workflow(
        self, graph: BuilderGraph[StateT, DepsT, Any, RunEndT], start: str, max_steps: int | None
    ) -> str:
        run = SequentialRun(graph, self.deps, max_steps)

        def run_step(task: Any, state_json: str) -> str:
            options: _dbos.StepOptions = {**self._step_options, 'name': task.node_id}
            return _dbos.DBOS.run_step(options, run.task_step, task, state_json)

        return run.run(start, run_step)

    async def _run_node(self, snapshot_json: str) -> str:
        # Each attempt starts from the stored snapshot: a retried node never sees a state it half changed.
        snapshot = self._adapter.validate_json(snapshot_json)
        assert isinstance(snapshot, NodeSnapshot)
        assert isinstance(self.graph, Graph)
        node = snapshot.node
        node.set_snapshot_id(snapshot.id)
        async with self.graph.iter(
            node, state=snapshot.state, deps=self.deps, infer_name=False, span=contextlib.nullcontext()
        ) as run:
            next_node = await run.next(node)
            state = run.state
        after: Snapshot[StateT, RunEndT]
        if isinstance(next_node, End):
            after = EndSnapshot(state=state, result=next_node)
        else:
            after = NodeSnapshot(state=state, node=next_node)
        return self._adapter.dump_json(after).decode()

    # --- starting runs --------------------------------------------------------------------------------

    def _start_json(self, start_node: BaseNode[StateT, DepsT, RunEndT] | None, state: StateT, inputs: Any) -> str:
        if self._builder is not None:
            if start_node is not None:
                raise GraphRuntimeError(
                    f'`{self.name}` is a builder graph: it starts from its input, `inputs=...`, not from a node.'
                )
            return SequentialRun(self._builder, None).start_json(state, inputs)
        assert isinstance(self.graph, Graph)
        if not isinstance(start_node, BaseNode) or type(start_node) not in self.graph.get_nodes():
            raise GraphRuntimeError(f'Node `{start_node!r}` is not in the graph `{self.name}`.')
        return self._adapter.dump_json(NodeSnapshot(state=state, node=start_node)).decode()

    def start_sync(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None = None,
        *,
        state: StateT = None,  # type: ignore[assignment]
        inputs: Any = None,
        run_id: str | None = None,
        max_steps: int | None = None,
    ) -> str:
        """Start a run in this process (DBOS must be launched here) and return its id at once.

        Args:
            start_node: The first node to run (a classic graph).
            state: The initial state.
            inputs: The run's input (a builder graph).
            run_id: The run's id (the DBOS workflow id); a new one when not given. Starting a run with the id
                of an existing run starts nothing and returns that id (DBOS's idempotency).
            max_steps: Fail the run with `StepLimitExceeded` before it runs more than this many nodes.
        """
        return self._start(start_node, state, inputs, run_id, max_steps).get_workflow_id()

    def _start(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None,
        state: StateT,
        inputs: Any,
        run_id: str | None,
        max_steps: int | None,
    ) -> _dbos.WorkflowHandle[str]:
        start = self._start_json(start_node, state, inputs)
        with workflow_id(run_id):
            return _dbos.DBOS.start_workflow(self._workflow_function, start, max_steps)

    def enqueue_sync(
        self,
        queue: DBOSQueue | str,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None = None,
        *,
        state: StateT = None,  # type: ignore[assignment]
        inputs: Any = None,
        run_id: str | None = None,
        max_steps: int | None = None,
        client: DBOSClient | None = None,
    ) -> str:
        """Put a run on a DBOS queue, for a worker to take, and return its id.

        Args:
            queue: The queue (or its name); a `DBOSWorker` registers it.
            start_node: The first node to run (a classic graph).
            state: The initial state.
            inputs: The run's input (a builder graph).
            run_id: The run's id (the DBOS workflow id); a new one when not given.
            max_steps: Fail the run with `StepLimitExceeded` before it runs more than this many nodes.
            client: Enqueue through this `DBOSClient` (a process that does not launch DBOS); through the
                launched DBOS of this process when `None`.
        """
        start = self._start_json(start_node, state, inputs)
        return enqueue_workflow(queue, self._workflow_function, self.workflow_name, (start, max_steps), run_id, client)

    def result_sync(
        self, run_id: str, *, client: DBOSClient | None = None, polling_interval: float = 0.1
    ) -> GraphRunResult[StateT, RunEndT]:
        """Wait for the run `run_id` to end and return its output and final state.

        Args:
            run_id: The run's id.
            client: Read through this `DBOSClient`; through the launched DBOS of this process when `None`.
            polling_interval: How often, in seconds, to look whether a run of another process has ended.

        Raises:
            GraphRuntimeError: the run failed (a node raised, or it ran `max_steps` nodes); the message names
                the error's type and message, as DBOS stored them.
        """
        handle: Any = (client or _dbos.DBOS).retrieve_workflow(run_id)
        return self._result(run_id, handle, polling_interval)

    def _result(self, run_id: str, handle: Any, polling_interval: float) -> GraphRunResult[StateT, RunEndT]:
        try:
            output = handle.get_result(polling_interval_sec=polling_interval)
        except _dbos.PortableWorkflowError as e:
            # DBOS stores the error of a portable workflow as its type's name and its message.
            raise GraphRuntimeError(f'Run {run_id!r} of graph `{self.name}` failed: {e.name}: {e.message}') from e
        if self._builder is not None:
            data, state = SequentialRun(self._builder, None).end_of(cast(str, output))
            end_snapshot = EndSnapshot[StateT, RunEndT](state=state, result=End(data))
            return GraphRunResult(data, state=state, persistence=SimpleStatePersistence(end_snapshot))
        end = self._adapter.validate_json(cast(str, output))
        assert isinstance(end, EndSnapshot)
        return GraphRunResult(end.result.data, state=end.state, persistence=SimpleStatePersistence(end))

    def run_sync(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None = None,
        *,
        state: StateT = None,  # type: ignore[assignment]
        inputs: Any = None,
        run_id: str | None = None,
        max_steps: int | None = None,
    ) -> GraphRunResult[StateT, RunEndT]:
        """Run the graph as a DBOS workflow in this process and wait for its end (see `start_sync`).

        A node's error is raised as it is, as `Graph.run` raises it.
        """
        handle = self._start(start_node, state, inputs, run_id, max_steps)
        return self._result(handle.get_workflow_id(), handle, 0.1)

    async def start(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None = None,
        *,
        state: StateT = None,  # type: ignore[assignment]
        inputs: Any = None,
        run_id: str | None = None,
        max_steps: int | None = None,
    ) -> str:
        """`start_sync` from async code (in a worker thread, so on asyncio and trio alike)."""
        call = partial(self.start_sync, start_node, state=state, inputs=inputs, run_id=run_id, max_steps=max_steps)
        return await anyio.to_thread.run_sync(call)

    async def enqueue(
        self,
        queue: DBOSQueue | str,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None = None,
        *,
        state: StateT = None,  # type: ignore[assignment]
        inputs: Any = None,
        run_id: str | None = None,
        max_steps: int | None = None,
        client: DBOSClient | None = None,
    ) -> str:
        """`enqueue_sync` from async code (in a worker thread, so on asyncio and trio alike)."""
        call = partial(
            self.enqueue_sync,
            queue,
            start_node,
            state=state,
            inputs=inputs,
            run_id=run_id,
            max_steps=max_steps,
            client=client,
        )
        return await anyio.to_thread.run_sync(call)

    async def result(
        self, run_id: str, *, client: DBOSClient | None = None, polling_interval: float = 0.1
    ) -> GraphRunResult[StateT, RunEndT]:
        """`result_sync` from async code; cancelling the wait leaves the run going."""
        call = partial(self.result_sync, run_id, client=client, polling_interval=polling_interval)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    async def run(
        self,
        start_node: BaseNode[StateT, DepsT, RunEndT] | None = None,
        *,
        state: StateT = None,  # type: ignore[assignment]
        inputs: Any = None,
        run_id: str | None = None,
        max_steps: int | None = None,
    ) -> GraphRunResult[StateT, RunEndT]:
        """`run_sync` from async code (on asyncio and trio alike)."""
        call = partial(self.run_sync, start_node, state=state, inputs=inputs, run_id=run_id, max_steps=max_steps)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    async def history(self, run_id: str, *, client: DBOSClient | None = None) -> list[Snapshot[StateT, RunEndT]]:
        """The run's snapshots, oldest first, read through DBOS: for `graph.mermaid_code(history=...)`.

        A builder graph's run is recorded as DBOS steps, not snapshots: its history is rebuilt from them (the
        routing replayed over the steps' recorded outputs, no step run again), as a store would hold it.

        Raises:
            LookupError: no run `run_id` of this graph is stored.
        """
        source = client or _dbos.DBOS
        if self._builder is not None:
            call = partial(builder_run_snapshots, source, run_id, self._builder, self.workflow_name)
        else:
            call = partial(run_snapshots, source, run_id, self._adapter, self.workflow_name)
        return await anyio.to_thread.run_sync(call)

    def __repr__(self) -> str:
        return f'<DBOSGraph {self.workflow_name!r}>'


def workflow_id(run_id: str | None) -> contextlib.AbstractContextManager[Any]:
    """Start the DBOS workflows of the block under the id `run_id` (a new id when `None`)."""
    return _dbos.SetWorkflowID(run_id) if run_id is not None else contextlib.nullcontext()


def enqueue_workflow(
    queue: DBOSQueue | str,
    function: Any,
    workflow_name: str,
    args: tuple[Any, ...],
    run_id: str | None,
    client: DBOSClient | None,
) -> str:
    """Put a run of a workflow registered with portable serialization on `queue`, through `client` (a process
    without DBOS launched) or this process's DBOS, and return its id (`DBOSGraph` and `DBOSAgent` runs)."""
    queue_name = queue if isinstance(queue, str) else queue.name
    if client is not None:
        options: Any = {
            'workflow_name': workflow_name,
            'queue_name': queue_name,
            'serialization_type': _dbos.WorkflowSerializationFormat.PORTABLE,
        }
        if run_id is not None:
            options['workflow_id'] = run_id
        return client.enqueue(options, *args).get_workflow_id()
    with workflow_id(run_id):
        handle = _dbos.DBOS.enqueue_workflow(queue_name, function, *args)
    return handle.get_workflow_id()


def application_version(
    *graphs: Graph[Any, Any, Any] | BuilderGraph[Any, Any, Any, Any] | DBOSGraph[Any, Any, Any], extra: str = ''
) -> str:
    """A DBOS application version that changes when the code of any node of `graphs` changes.

    DBOS derives its default version from the source of the registered workflow functions; a DBOSGraph's
    workflow function is Edgewise's, the same for every graph, so pass this as
    `DBOSConfig['application_version']` to have a new version whenever a node's code (or the graph's set of
    nodes) changes. DBOS runs and recovers a run only on workers of the version it was started on.

    Args:
        *graphs: The graphs the application runs.
        extra: Anything else the version should depend on (the application's other workflow code, a
            release tag).
    """
    hasher = hashlib.sha256(extra.encode())
    for item in graphs:
        graph = item.graph if isinstance(item, DBOSGraph) else item
        hasher.update(f'\0{graph.name}'.encode())
        if isinstance(graph, BuilderGraph):
            _hash_builder_graph(hasher, graph)
            continue
        for node in graph.get_nodes():
            hasher.update(f'\0{node.get_node_id()}\0'.encode())
            try:
                hasher.update(inspect.getsource(node).encode())
            except (OSError, TypeError):  # pragma: no cover - classes defined without source (exec, REPL)
                hasher.update(node.__qualname__.encode())
    return f'edgewise-{hasher.hexdigest()[:24]}'


def _hash_builder_graph(hasher: Any, graph: BuilderGraph[Any, Any, Any, Any]) -> None:
    """Add a builder graph's node ids, the code of its steps and its edges to `hasher`."""
    for node_id, node in sorted(graph.nodes.items()):
        hasher.update(f'\0{node_id}\0'.encode())
        code: Any = node.node_type if isinstance(node, NodeStep) else node.call if isinstance(node, Step) else None
        if code is not None:
            try:
                hasher.update(inspect.getsource(code).encode())
            except (OSError, TypeError):  # pragma: no cover - steps defined without source (exec, REPL)
                hasher.update(getattr(code, '__qualname__', repr(code)).encode())
    for source, paths in sorted(graph.edges_by_source.items()):
        targets = [getattr(item, 'destination_id', '') for path in paths for item in path.items]
        hasher.update(f'\0{source}->{",".join(targets)}'.encode())
