"""What resuming a stored agent run (`Agent.resume`, `Agent.iter_from_persistence`) reads back: its history, folded
from its snapshots, and the answers to the tool calls it waits on.

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

from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from edgewise.graph import BaseStatePersistence, End, GraphRun, NodeSnapshot

from .._loop.nodes import CallToolsNode, DeferredToolCallsNode, UserPromptNode, agent_graph
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from .._tools.deferred_calls import DeferredToolResults
from ..exceptions import UserError
from ..messages import ModelMessage, UserContent
from ..stored_runs import Waiting, check_answers, waiting_from_requests

__all__ = ('check_claimed_answers', 'check_stored_answers', 'deferred_answers', 'fold_history', 'restore_history')


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


def deferred_answers(value: DeferredToolResults | Mapping[str, Any] | None) -> DeferredToolResults | None:
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


async def restore_history(
    graph_run: GraphRun[GraphAgentState, Any, Any],
    persistence: BaseStatePersistence[Any, Any],
    graph_deps: GraphAgentDeps[Any, Any],
) -> None:
    """Give a stored run, just opened from `persistence` (and held by this process), its whole history back: folded
    from its snapshots up to the one it goes on from, with the user prompt it started with."""
    snapshots = await persistence.load_all()
    start = graph_run.next_node
    until = None if isinstance(start, End) else start.get_snapshot_id()
    history, prompt, new_index = fold_history(snapshots, until)
    graph_run.state.message_history = history
    graph_deps.prompt = prompt
    graph_deps.new_message_index = new_index


def _waits(node: Any) -> Waiting | None:
    return waiting_from_requests(node.requests) if isinstance(node, DeferredToolCallsNode) else None


def check_claimed_answers(
    persistence: BaseStatePersistence[Any, Any], node: Any, answers: DeferredToolResults | None
) -> None:
    """Refuse `answers` that do not fit the calls `node`, the node a claimed stored run goes on from, waits for (the
    run may have moved on since `check_stored_answers` looked)."""
    if answers is not None:
        run_id = getattr(persistence, 'run_id', None)  # durable persistences only
        check_answers(run_id, _waits(node), approvals=answers.approvals.keys(), calls=answers.calls.keys())


async def check_stored_answers(persistence: BaseStatePersistence[Any, Any], answers: DeferredToolResults) -> None:
    """Refuse answers that do not fit the calls the stored run waits for (see `stored_runs.check_answers`), before
    the run is claimed (which writes), so that answers that do not fit change nothing.

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
        check_claimed_answers(persistence, last.node, answers)
