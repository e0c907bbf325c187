"""Resuming a stored agent run: `Agent.resume` and `Agent.iter_from_persistence`.

A durable agent run (one given a file, SQLite or PostgreSQL persistence) stores a snapshot after every step, as
any graph run does, with two differences that keep its steps cheap and its resumes exact:

- a snapshot's state holds only the messages added since the previous snapshot (`GraphAgentState.message_offset`
  says where they start), so a step writes the same amount however long the conversation is; resuming folds
  the run's snapshots back into the whole history;
- each tool call's result is checkpointed into the running snapshot as the call finishes
  (`GraphAgentState.step_results`), so a resumed step runs only the calls that had not finished.

A model request whose response was stored is never sent again: its response is in the snapshot of the node after
it. What was running when the process died (a model request, a tool call, an output validator) runs again.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pydantic

from edgewise.graph import BaseStatePersistence, End, NodeSnapshot

from . import _instrument
from ._agent_graph import CallToolsNode, DeferredToolCallsNode, UserPromptNode, agent_graph
from ._agent_run import AgentRun
from ._deferred_tools import DeferredToolResults
from ._node_stream_loop import EventStreamHandler, run_with_event_handler
from ._run_deps import GraphAgentState
from ._run_result import AgentRunResult
from ._wrap_run import RUN_HOOKS, wrapped_run
from .capabilities.thread_executor import run_thread_executor
from .concurrency import concurrency_slot
from .exceptions import UserError
from .messages import ModelMessage, UserContent
from .models import KnownModelName, Model
from .settings import ModelSettings
from .stored_runs import Waiting, check_answers, waiting_from_requests
from .usage import UsageLimits

__all__ = ('iter_from_persistence', 'resume', 'fold_history')


def fold_history(snapshots: Sequence[Any], until: str | None = None) -> tuple[list[ModelMessage], Any, int]:
    """The whole message history of a stored agent run, from its snapshots (each holding the messages after its
    `message_offset`), up to and including the snapshot `until` (default: the last).

    Returns the history, the user prompt the run started with and where the run's own messages start.
    """
    history: list[ModelMessage] = []
    prompt: str | Sequence[UserContent] | None = None
    new_index = 0
    for index, snapshot in enumerate(snapshots):
        state = snapshot.state
        if not isinstance(state, GraphAgentState):  # not an agent run's snapshot
            continue
        if index == 0:
            new_index = state.message_offset + len(state.message_history)
            if isinstance(snapshot.node, UserPromptNode):
                prompt = snapshot.node.user_prompt
        del history[state.message_offset :]
        history.extend(state.message_history)
        if state.response_in_node and isinstance(snapshot.node, CallToolsNode):
            history.append(snapshot.node.model_response)
        if snapshot.id == until:
            break
    return history, prompt, new_index


_ANSWERS: pydantic.TypeAdapter[DeferredToolResults] | None = None


def _answers(value: DeferredToolResults | Mapping[str, Any] | None) -> DeferredToolResults | None:
    """`deferred_tool_results` as a `DeferredToolResults` (given as one, or as a dict of JSON values).

    Raises:
        UserError: the dict is not a `DeferredToolResults`.
    """
    global _ANSWERS
    if value is None or isinstance(value, DeferredToolResults):
        return value
    if _ANSWERS is None:
        _ANSWERS = pydantic.TypeAdapter(DeferredToolResults)
    try:
        return _ANSWERS.validate_python(value)
    except pydantic.ValidationError as e:
        problems = '; '.join(
            f'{".".join(str(x) for x in err["loc"])}: {err["msg"]}' for err in e.errors(include_url=False)[:3]
        )
        raise UserError(
            f'`deferred_tool_results` is not a DeferredToolResults ({problems}): give `approvals` (tool call id -> '
            "true, false or {'kind': 'tool-denied', 'message': ...}), `calls` (tool call id -> result) and "
            '`metadata`.'
        ) from None


@asynccontextmanager
async def iter_from_persistence(
    agent: Any,
    persistence: BaseStatePersistence[Any, Any],
    *,
    deps: Any = None,
    model: Model | KnownModelName | None = None,
    model_settings: ModelSettings | None = None,
    usage_limits: UsageLimits | None = None,
    deferred_tool_results: DeferredToolResults | Mapping[str, Any] | None = None,
) -> AsyncIterator[AgentRun[Any, Any]]:
    """Continue a stored agent run node by node (see `Agent.iter_from_persistence`).

    The run is configured as a new run of `agent` is (its overrides, capabilities, instrumentation, validation
    context and concurrency limit), with the deps, model and settings given now.
    """
    graph_deps = agent._configure_run(
        model=model, deps=deps, model_settings=model_settings, usage_limits=usage_limits, capabilities=None,
        instructions=None, output_type=None, output_retries=None, persistence=persistence,
    )  # fmt: skip
    answers = graph_deps.deferred_tool_results = _answers(deferred_tool_results)
    if answers is not None:
        # Checked before the run is claimed (which writes), so that answers that do not fit change nothing.
        await _check_stored_answers(persistence, answers)
    async with concurrency_slot(agent._limiter, f'agent:{agent.name or "agent"}'):
        with _instrument.span_if(
            graph_deps.tracing, 'agent run', agent_name=agent.name or 'agent', model_name=graph_deps.model.model_name
        ), run_thread_executor(graph_deps.root_capability):  # fmt: skip
            async with agent_graph().iter_from_persistence(persistence, deps=graph_deps, infer_name=False) as run:
                # Held by this process now: the history read here is the one the run goes on from.
                snapshots = await persistence.load_all()
                start = run.next_node
                if answers is not None:  # the run may have moved on since the check above
                    _check(persistence, _waits(start), answers)
                until = None if isinstance(start, End) else start.get_snapshot_id()
                history, prompt, new_index = fold_history(snapshots, until)
                state: GraphAgentState = run.state
                state.message_history = history
                graph_deps.prompt = prompt
                graph_deps.new_message_index = new_index
                async with await agent._run_toolset(graph_deps, state, None):
                    agent_run = AgentRun(run)
                    root = graph_deps.root_capability
                    if graph_deps.hooked & RUN_HOOKS:
                        async with wrapped_run(root, graph_deps.run_context(state), agent_run):
                            yield agent_run
                    else:
                        yield agent_run


def _waits(node: Any) -> Waiting | None:
    return waiting_from_requests(node.requests) if isinstance(node, DeferredToolCallsNode) else None


def _check(persistence: BaseStatePersistence[Any, Any], waits: Waiting | None, answers: DeferredToolResults) -> None:
    run_id = getattr(persistence, 'run_id', None)  # durable persistences only
    check_answers(run_id, waits, approvals=answers.approvals.keys(), calls=answers.calls.keys())


async def _check_stored_answers(persistence: BaseStatePersistence[Any, Any], answers: DeferredToolResults) -> None:
    """Refuse answers that do not fit the calls the stored run waits for (see `stored_runs.check_answers`).

    A run that has ended, failed or stored nothing is left to the resume, which says so; so is a run a live process
    holds (the resume is refused), whose answers are checked once it is claimed.
    """
    info = getattr(persistence, 'info', None)  # durable persistences only
    if info is not None and (run := await info()) is not None and run.status == 'running':
        return
    persistence.set_graph_types(agent_graph())
    snapshots = await persistence.load_all()
    last = snapshots[-1] if snapshots else None
    if isinstance(last, NodeSnapshot) and last.status in ('created', 'pending', 'running'):
        _check(persistence, _waits(last.node), answers)


async def resume(
    agent: Any,
    persistence: BaseStatePersistence[Any, Any],
    *,
    deps: Any = None,
    model: Model | KnownModelName | None = None,
    model_settings: ModelSettings | None = None,
    usage_limits: UsageLimits | None = None,
    event_stream_handler: EventStreamHandler | None = None,
    deferred_tool_results: DeferredToolResults | Mapping[str, Any] | None = None,
) -> AgentRunResult[Any]:
    """Run a stored agent run to its end (see `Agent.resume`)."""
    async with iter_from_persistence(
        agent, persistence, deps=deps, model=model, model_settings=model_settings, usage_limits=usage_limits,
        deferred_tool_results=deferred_tool_results,
    ) as agent_run:  # fmt: skip
        await run_with_event_handler(agent_run, event_stream_handler)
    result = agent_run.result
    assert result is not None
    return result
