"""The opening of an agent's runs: `open_run`, the one setup every run goes through once `new_run` or `stored_run`
(`_run_setup`) has prepared it, and the `RunCancelled` a cancelled run ends with.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from datetime import datetime, timedelta, timezone
from types import TracebackType
from typing import Any, Protocol, TypeAlias

import anyio

from edgewise.graph import GraphRun

from .. import _instrument
from .._loop.agent_run import AgentRun
from .._loop.run_hooks import RUN_HOOKS, wrapped_run
from .._message_flow.cancellation import CancellationToken, inherited_run_deadline, take_starting_run_token
from .._run.deps import GraphAgentDeps
from .._run.result import FinalResult
from .._run.state import GraphAgentState
from ..capabilities.thread_executor import run_thread_executor
from ..concurrency import concurrency_slot
from ..exceptions import RunCancelled, RunTimedOut
from ..toolsets._default_methods import enters_nothing
from ._run_workspace import refresh_workspace_ref

NO_TOOLSET_YET: AbstractAsyncContextManager[None] = nullcontext()  # a stored run's toolset comes with its graph run
_NO_MODEL_CHOICE: AbstractAsyncContextManager[None] = nullcontext()  # the run's model was not picked by capabilities


class OpenedAgent(Protocol):
    """What the opening of a run reads of an `Agent`."""

    _limiter: Any

    @property
    def name(self) -> str | None: ...


PreparedRun: TypeAlias = tuple[
    GraphAgentDeps[Any, Any],
    AbstractAsyncContextManager[Any],
    AbstractAsyncContextManager[GraphRun[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]],
    Callable[[AgentRun[Any, Any]], None] | None,
]
"""A run ready to start: its deps, the toolset to enter before its graph run opens, the graph run to open, and
what to do at its end (given the run)."""


def open_run(
    agent: OpenedAgent,
    prepare: Callable[[], Awaitable[PreparedRun]],
    cancellation_token: CancellationToken | None = None,
    run_timeout: float | None = None,
) -> AbstractAsyncContextManager[AgentRun[Any, Any]]:
    """The one setup of every run, new (`iter`) or stored (`iter_from_persistence`): `prepare()` configures it;
    then the run's cancel scope (`AgentRun.cancel()`, `RunContext.cancel()`, `cancellation_token`), the agent's
    concurrency slot, the run's span and thread executor, the toolset and the graph run that `prepare` made, the
    `AgentRun`, and the capabilities' run hooks around it.

    Raises:
        RunCancelled: the run was cancelled (by the application; a cancellation from outside goes on as itself,
            carrying the run's state for `RunCancelled.from_cancellation`).
        RunTimedOut: the run did not end within `run_timeout` seconds (counted from here).
    """
    return _RunOpening(agent, prepare, cancellation_token, run_timeout)


class _RunOpening:
    """What `open_run` returns: a class rather than a generator (every run opens one). A run that holds nothing
    around its graph run but its cancel scope (no concurrency limit, span, thread executor, capability, model
    choice, nor a toolset that enters anything) enters only the scope and the graph run, here, as `_open_run` would;
    any other run is opened by `_open_run`."""

    __slots__ = (
        '_agent', '_agent_run', '_deadline', '_deps', '_finish', '_graph_run', '_long', '_opening', '_prepare',
        '_run_scope', '_scope', '_timeout', '_token',
    )  # fmt: skip

    def __init__(
        self,
        agent: OpenedAgent,
        prepare: Callable[[], Awaitable[PreparedRun]],
        cancellation_token: CancellationToken | None,
        run_timeout: float | None,
    ) -> None:
        self._agent = agent
        self._prepare: Callable[[], Awaitable[PreparedRun]] | None = prepare
        self._token = cancellation_token
        self._timeout = run_timeout
        self._long: AbstractAsyncContextManager[AgentRun[Any, Any]] | None = None
        self._agent_run: AgentRun[Any, Any] | None = None

    async def __aenter__(self) -> AgentRun[Any, Any]:
        prepare, self._prepare = self._prepare, None
        if prepare is None:
            raise RuntimeError('This `iter(...)` was entered already: call `agent.iter(...)` again for another run.')
        run_timeout = self._timeout
        deadline = self._deadline = None if run_timeout is None else anyio.current_time() + run_timeout
        handle_token = take_starting_run_token()  # an `AgentRunEvents` starting this run (not one nested in it)
        prepared = await prepare()
        graph_deps, toolset, opening, finish = prepared
        if (
            graph_deps.root_capability is not None  # (its run hooks and thread executor)
            or graph_deps.tracing
            or self._agent._limiter is not None
            or graph_deps.model_choice is not None
            or not _enters_nothing(toolset)
        ):
            self._long = _open_run(self._agent, prepared, self._token, handle_token, deadline, run_timeout)
            return await self._long.__aenter__()
        self._deps, self._opening, self._finish = graph_deps, opening, finish
        cancellation = graph_deps.cancellation
        graph_deps.deadline = _run_deadline(run_timeout)
        scope = self._scope = cancellation.scope(self._token, handle_token, provides=graph_deps.deadline)
        run_scope = self._run_scope = scope.__enter__()
        failed: BaseException | None = None
        try:
            if deadline is not None:
                run_scope.deadline = deadline
            await cancellation.checkpoint()  # cancelled already: the run does not start
            graph_run = self._graph_run = await opening.__aenter__()
        except BaseException as error:
            failed = error  # (left outside the handler: the error `_leave_scope` raises has no context but its own)
        if failed is not None:
            self._leave_scope(failed)
            raise RuntimeError("generator didn't yield")  # pragma: no cover - the scope catches only its own
            # cancellation, which `_leave_scope` turns into `RunCancelled`
        agent_run = self._agent_run = AgentRun(graph_run)
        return agent_run

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        if self._long is not None:
            return await self._long.__aexit__(exc_type, exc, tb)
        try:
            await self._close(exc)
        except BaseException as error:
            # Raised again by `async with`: the block's error itself, or a `StopIteration` that left `_close` (a
            # coroutine) as the `RuntimeError` it became.
            if error is exc or (isinstance(exc, StopIteration) and error.__cause__ is exc):
                return False
            raise
        return exc is not None  # the block's error, if any, ended the run's scope that caught it

    async def _close(self, exc: BaseException | None) -> None:
        """`_open_run` after its `yield`, `exc` raised there (if any), for a run that entered only its scope and
        graph run: the graph run left, the run's cost limit checked, `finish` called, the scope left."""
        graph_deps, graph_run, agent_run = self._deps, self._graph_run, self._agent_run
        assert agent_run is not None
        try:
            try:
                try:
                    if exc is not None:
                        raise exc
                finally:
                    _run_over(graph_deps, graph_run.state)
            except BaseException as error:
                if not await self._opening.__aexit__(type(error), error, error.__traceback__):
                    raise
            else:
                await self._opening.__aexit__(None, None, None)
            limits = graph_deps.usage_limits
            if limits.cost_limit is not None and (ended := agent_run.result) is not None:
                # The run is over: a `cost_limit` that no response could be priced for is reported now, once.
                limits.check_cost(ended.usage, messages=graph_run.state.message_history)
            if self._finish is not None and not graph_deps.cancellation.cancel_requested:
                self._finish(agent_run)
        except BaseException as error:
            self._leave_scope(error)
        else:
            self._leave_scope(None)

    def _leave_scope(self, error: BaseException | None) -> None:
        """Leave the run's cancel scope with `error` (if any) as `_open_run` leaves it: a cancellation turned into
        `RunCancelled` (`RunTimedOut`), or one from outside given the run's state."""
        graph_deps = self._deps
        opened = [] if self._agent_run is None else [self._agent_run]
        try:
            if error is None:
                self._scope.__exit__(None, None, None)
            elif not self._scope.__exit__(type(error), error, error.__traceback__):
                raise error
        except RunCancelled as exc:  # a nested run's (a sub-agent's, in a tool): this run's state is the one to give
            raise run_cancelled(opened, graph_deps, 'The agent run was cancelled by a nested run.') from exc
        except anyio.get_cancelled_exc_class() as exc:  # from outside the run: it goes on, with the run's state
            run_cancelled(opened, graph_deps, 'The agent run was cancelled from outside.').attach_to(exc)
            raise
        if graph_deps.cancellation.cancel_requested:  # (also when the run's block caught the cancellation)
            raise run_cancelled(opened, graph_deps, 'The agent run was cancelled.')
        if self._run_scope.cancelled_caught and self._deadline is not None:  # the run's own scope reached its deadline
            raise run_cancelled(opened, graph_deps, 'The agent run timed out.', timed_out=True)


def _run_over(graph_deps: GraphAgentDeps[Any, Any], state: GraphAgentState) -> None:
    """What a run does once its graph run is over, however it ended: its workspace ref recorded again on its last
    response, and its tool manager's hold on the step's run context (which holds the manager) let go of. That cycle
    would keep the run's history, usage and deps alive until the garbage collector found it; without it they are
    freed as soon as the caller lets go of the result."""
    refresh_workspace_ref(graph_deps, state)
    manager = graph_deps.tool_manager
    if manager is not None:
        manager.ctx = None


def _enters_nothing(toolset: Any) -> bool:
    """Whether entering and leaving `toolset` do nothing (`enters_nothing`), or it is a stored run's toolset, entered
    with its graph run."""
    return toolset is NO_TOOLSET_YET or enters_nothing(toolset)


def _run_deadline(run_timeout: float | None) -> datetime | None:
    """The deadline as `RunContext.deadline` shows it: its own, or the one of the run it was started in if earlier
    (that run's cancel scope, around this one, enforces it)."""
    inherited = inherited_run_deadline()
    if run_timeout is not None:
        own = datetime.now(tz=timezone.utc) + timedelta(seconds=run_timeout)
        inherited = own if inherited is None else min(own, inherited)
    return inherited


@asynccontextmanager
async def _open_run(
    agent: OpenedAgent,
    prepared: PreparedRun,
    cancellation_token: CancellationToken | None,
    handle_token: CancellationToken | None,
    deadline: float | None,
    run_timeout: float | None,
) -> AsyncIterator[AgentRun[Any, Any]]:
    """`open_run` for any run, `prepared` already (`deadline`: the run's on the event loop's clock)."""
    graph_deps, toolset, opening, finish = prepared
    cancellation = graph_deps.cancellation
    graph_deps.deadline = _run_deadline(run_timeout)
    opened: list[AgentRun[Any, Any]] = []
    try:
        with cancellation.scope(cancellation_token, handle_token, provides=graph_deps.deadline) as run_scope:
            if deadline is not None:
                run_scope.deadline = deadline
            await cancellation.checkpoint()  # cancelled already: the run does not start
            limiter = agent._limiter
            async with concurrency_slot(
                limiter, '' if limiter is None else f'agent:{agent.name or "agent"}', held=True
            ):
                with (
                    (
                        _instrument.span(
                            'agent run',
                            agent_name=agent.name or 'agent',
                            model_name=graph_deps.model.model_name,
                            **_description_attribute(agent, graph_deps.user_deps),
                        )
                        if graph_deps.tracing
                        else _instrument.NO_SPAN
                    ) as run_span,
                    run_thread_executor(graph_deps.root_capability),
                ):
                    async with graph_deps.model_choice or _NO_MODEL_CHOICE, toolset, opening as graph_run:
                        agent_run = AgentRun(graph_run)
                        opened.append(agent_run)
                        try:
                            if not graph_deps.hooked.isdisjoint(RUN_HOOKS):
                                context = graph_deps.run_context(graph_run.state)
                                async with wrapped_run(graph_deps.root_capability, context, agent_run):
                                    yield agent_run
                            else:
                                yield agent_run
                        finally:
                            _run_over(graph_deps, graph_run.state)
                            if run_span is not None:
                                # The run's total usage, as pydantic-ai 2.x's format 5 gives it on the run span.
                                settings = graph_deps.instrumentation
                                run_span.set_attributes(settings.aggregated_usage_attributes(graph_run.state.usage))
                    limits = graph_deps.usage_limits
                    if limits.cost_limit is not None and (ended := agent_run.result) is not None:
                        # The run is over: a `cost_limit` that no response could be priced for is reported now, once.
                        limits.check_cost(ended.usage, messages=graph_run.state.message_history)
                    if finish is not None and not cancellation.cancel_requested:
                        finish(agent_run)
    except RunCancelled as exc:  # a nested run's (a sub-agent's, in a tool): this run's state is the one to give
        raise run_cancelled(opened, graph_deps, 'The agent run was cancelled by a nested run.') from exc
    except anyio.get_cancelled_exc_class() as exc:  # from outside the run: it goes on, with the run's state
        run_cancelled(opened, graph_deps, 'The agent run was cancelled from outside.').attach_to(exc)
        raise
    if cancellation.cancel_requested:  # (also when the run's block caught the cancellation, or it came late)
        raise run_cancelled(opened, graph_deps, 'The agent run was cancelled.')
    if run_scope.cancelled_caught and deadline is not None:  # the run's own scope reached its deadline
        raise run_cancelled(opened, graph_deps, 'The agent run timed out.', timed_out=True)


def run_cancelled(
    opened: list[AgentRun[Any, Any]], graph_deps: GraphAgentDeps[Any, Any], message: str, *, timed_out: bool = False
) -> RunCancelled:
    """The `RunCancelled` (`RunTimedOut` when `timed_out`) of a run: a copy of its state, or an empty one when it
    was cancelled before it started."""
    error_class = RunTimedOut if timed_out else RunCancelled
    if not opened:
        return error_class(message)
    opened[0].keep_unsent_results()
    state = opened[0].ctx.state
    return error_class(
        message, messages=list(state.message_history), new_message_index=graph_deps.new_message_index,
        usage=dataclasses.replace(state.usage), metadata=state.metadata, run_id=state.run_id,
        conversation_id=state.conversation_id,
    )  # fmt: skip


def _description_attribute(agent: Any, deps: Any) -> dict[str, str]:
    """The agent's description for its run span (`gen_ai.agent.description`), a template rendered from the deps."""
    render = getattr(agent, 'render_description', None)
    description = None if render is None else render(deps)
    return {} if description is None else {'gen_ai.agent.description': description}
