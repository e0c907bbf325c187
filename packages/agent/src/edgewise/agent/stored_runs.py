"""The public contract through which tools read and answer stored agent runs, without the agent's code.

A durable agent run is a graph run of the agent graph; its snapshots hold the agent's state and nodes as JSON.
Tools that read stored runs (the `edgewise runs` command of `edgewise.graph`, which never imports this package)
read them through this module instead of by the stored field names, which are the agent's own business:

- `waiting(snapshot, held=...)`: what the run whose last snapshot it is waits for (approvals, tool results), with
  the pending calls, or `None`;
- `describe(history)`: an agent run's conversation, usage, pending calls and the calls of its next step;
- `build_answers(...)` and `check_answers(...)`: the answers to a waiting run, checked against the calls it waits
  for. `Agent.resume` and `Agent.iter_from_persistence` run the same check, so every entry point refuses the
  same answers, before anything is written.

The `edgewise` command finds this module through the `edgewise.stored_runs` entry point group (name `agent`,
the module itself) and checks `CONTRACT_VERSION`; a change of any signature or dataclass here that breaks a
reader raises the version.
"""

from __future__ import annotations as _annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, Literal

import pydantic

from edgewise.graph.persistence.raw import RawSnapshot

from ._loop.nodes import CallToolsNode, DeferredToolCallsNode, agent_graph
from ._run.state import GraphAgentState
from ._tools.deferred_calls import DeferredToolRequests
from .exceptions import UserError
from .messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = (
    'CONTRACT_VERSION',
    'AnswersRefused',
    'MessagePart',
    'PendingCall',
    'StepCall',
    'StoredAgentRun',
    'Usage',
    'Waiting',
    'build_answers',
    'check_answers',
    'describe',
    'waiting',
)

CONTRACT_VERSION = 1
"""The version of this contract; readers refuse a version they do not know."""


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    """A tool call a stored run waits for."""

    tool_name: str
    """The tool's name."""
    tool_call_id: str
    """The call's id, which an answer names."""
    args: Any
    """The call's arguments (JSON data, or the model's text when it was not JSON)."""
    needs: Literal['approval', 'result']
    """What the call waits for: someone's approval, or its result from outside."""


@dataclass(frozen=True, kw_only=True)
class Waiting:
    """What a stored run waits for: the answers to its deferred tool calls."""

    what: str
    """`'approval'`, `'tool results'` or `'approval and tool results'`."""
    calls: tuple[PendingCall, ...]
    """The calls waiting, those needing approval first."""

    def ids(self, needs: Literal['approval', 'result']) -> list[str]:
        """The ids of the calls that wait for `needs`."""
        return [call.tool_call_id for call in self.calls if call.needs == needs]


@dataclass(frozen=True, kw_only=True)
class MessagePart:
    """One part of a message of the conversation, as a reader shows it."""

    who: str
    """`'user'`, `'system'`, `'model'`, `'model thinks'`, `'tool call'`, `'tool return'`, `'retry'`, or the part's
    kind for any other part."""
    content: Any
    """The part's content (the arguments of a tool call), as JSON data."""
    tool_name: str | None = None
    """The tool of a tool call, return or retry."""
    tool_call_id: str | None = None
    """The id of the tool call a part belongs to."""


@dataclass(frozen=True, kw_only=True)
class StepCall:
    """A tool call of the step a stored run is in (its last response's calls)."""

    tool_name: str
    """The tool's name."""
    tool_call_id: str
    """The call's id."""
    finished: bool
    """Whether its result is stored (a resumed step does not run it again)."""


@dataclass(frozen=True, kw_only=True)
class Usage:
    """What a stored run has used so far."""

    requests: int
    """Model requests made."""
    input_tokens: int
    """Input tokens."""
    output_tokens: int
    """Output tokens."""
    tool_calls: int
    """Tool calls run."""


@dataclass(frozen=True, kw_only=True)
class StoredAgentRun:
    """A stored agent run as a reader shows it."""

    message_count: int
    """How many messages the conversation has."""
    parts: tuple[MessagePart, ...]
    """The parts of the conversation's messages, in order."""
    usage: Usage
    """What the run has used."""
    step_calls: tuple[StepCall, ...]
    """The tool calls of the step the run stopped in (empty unless it stopped in one)."""
    waiting: Waiting | None
    """What the run waits for, when it waits for answers (see `waiting`)."""


AnswersRefusedReason = Literal['not waiting', 'unknown call', 'wrong kind', 'unanswered call', 'twice']


class AnswersRefused(UserError, ValueError):
    """Answers that do not fit the calls a stored run waits for; nothing was changed.

    `reason` says what is wrong, so that a tool can say it in its own terms.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: AnswersRefusedReason,
        call_id: str | None = None,
        waiting: Waiting | None = None,
    ) -> None:
        super().__init__(message)
        self.reason: AnswersRefusedReason = reason
        """`'not waiting'` (the run waits for no answers), `'unknown call'` (an answer names a call the run does not
        wait for), `'wrong kind'` (a result for a call that waits for approval, or the reverse), `'unanswered
        call'` (a call waiting is left without an answer), `'twice'` (a call answered twice)."""
        self.call_id = call_id
        """The call at fault, if one is."""
        self.waiting = waiting
        """What the run waits for (`None` when it waits for nothing)."""


def _agent_node_ids() -> frozenset[str]:
    return frozenset(agent_graph().node_defs)


@cache
def _requests_adapter() -> pydantic.TypeAdapter[DeferredToolRequests]:
    return pydantic.TypeAdapter(DeferredToolRequests)


@cache
def _state_adapter() -> pydantic.TypeAdapter[GraphAgentState]:
    return pydantic.TypeAdapter(GraphAgentState)


@cache
def _response_adapter() -> pydantic.TypeAdapter[ModelResponse]:
    return pydantic.TypeAdapter(ModelResponse)


# The node fields read here, by the names the node classes give them (a rename there follows here).
_REQUESTS = next(
    f.name for f in fields(DeferredToolCallsNode) if f.type in ('DeferredToolRequests', DeferredToolRequests)
)
_RESPONSE = next(f.name for f in fields(CallToolsNode) if f.type in ('ModelResponse', ModelResponse))


def waiting_from_requests(requests: DeferredToolRequests) -> Waiting:
    """What a run whose next node holds `requests` waits for."""
    calls = [
        *(_pending(call, 'approval') for call in requests.approvals),
        *(_pending(call, 'result') for call in requests.calls),
    ]
    kinds = [what for what, found in (('approval', requests.approvals), ('tool results', requests.calls)) if found]
    return Waiting(what=' and '.join(kinds), calls=tuple(calls))


def _pending(call: ToolCallPart, needs: Literal['approval', 'result']) -> PendingCall:
    return PendingCall(tool_name=call.tool_name, tool_call_id=call.tool_call_id, args=call.args, needs=needs)


def waiting(snapshot: RawSnapshot, *, held: bool = False) -> Waiting | None:
    """What a stored agent run waits for, from its last snapshot; `None` when it waits for no answers (it runs on,
    has ended or failed, or is no agent run).

    Args:
        snapshot: The run's last snapshot (`load_raw()[-1]`).
        held: Whether a live process holds the run: it is answering the calls then, and the run waits no more.
    """
    if snapshot.kind != 'node' or snapshot.node.node_id != DeferredToolCallsNode.get_node_id():
        return None
    # A resume without answers leaves the node as its claim found it (`'pending'`): still waiting.
    if snapshot.status not in ('created', 'pending') or (held and snapshot.status == 'pending'):
        return None
    try:
        requests = _requests_adapter().validate_python(snapshot.node.fields.get(_REQUESTS))
    except pydantic.ValidationError:
        return None
    return waiting_from_requests(requests)


def describe(history: Sequence[RawSnapshot], *, held: bool = False) -> StoredAgentRun | None:
    """A stored agent run's conversation, usage and pending calls; `None` for a run that is no agent run.

    Args:
        history: The run's snapshots, as `load_raw()` returns them.
        held: Whether a live process holds the run (see `waiting`).
    """
    if not history:
        return None
    node_ids = _agent_node_ids()
    states: list[GraphAgentState] = []
    for snapshot in history:
        if snapshot.kind == 'node' and snapshot.node.node_id not in node_ids:
            return None
        try:
            states.append(_state_adapter().validate_python(snapshot.state))
        except pydantic.ValidationError:
            return None
    messages: list[ModelMessage] = []
    for snapshot, state in zip(history, states, strict=True):
        del messages[state.message_offset :]
        messages.extend(state.message_history)
        if state.response_in_node and (response := _node_response(snapshot)) is not None:
            messages.append(response)  # stored there only
    last, state = history[-1], states[-1]
    step_calls: list[StepCall] = []
    if (response := _node_response(last)) is not None:
        done = {p.tool_call_id for p in state.step_results if isinstance(p, ToolReturnPart | RetryPromptPart)}
        step_calls = [
            StepCall(tool_name=p.tool_name, tool_call_id=p.tool_call_id, finished=p.tool_call_id in done)
            for p in response.parts
            if isinstance(p, ToolCallPart)
        ]
    usage = state.usage
    return StoredAgentRun(
        message_count=len(messages),
        parts=tuple(_part(part) for message in messages for part in message.parts),
        usage=Usage(
            requests=usage.requests,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            tool_calls=usage.tool_calls,
        ),
        step_calls=tuple(step_calls),
        waiting=waiting(last, held=held),
    )


def _node_response(snapshot: RawSnapshot) -> ModelResponse | None:
    if snapshot.kind != 'node' or snapshot.node.node_id != CallToolsNode.get_node_id():
        return None
    try:
        return _response_adapter().validate_python(snapshot.node.fields.get(_RESPONSE))
    except pydantic.ValidationError:
        return None


def _part(part: Any) -> MessagePart:
    if isinstance(part, ToolCallPart):
        return MessagePart(who='tool call', content=part.args, tool_name=part.tool_name, tool_call_id=part.tool_call_id)
    if isinstance(part, ToolReturnPart):
        return MessagePart(
            who='tool return', content=part.content, tool_name=part.tool_name, tool_call_id=part.tool_call_id
        )
    if isinstance(part, RetryPromptPart):
        return MessagePart(who='retry', content=part.content, tool_name=part.tool_name, tool_call_id=part.tool_call_id)
    who = {UserPromptPart: 'user', SystemPromptPart: 'system', TextPart: 'model', ThinkingPart: 'model thinks'}.get(
        type(part), getattr(part, 'part_kind', type(part).__name__)
    )
    return MessagePart(who=who, content=getattr(part, 'content', None))


def build_answers(
    *, approve: Iterable[str] = (), deny: Iterable[str] = (), deny_message: str | None = None
) -> dict[str, Any]:
    """The answers approving and denying tool calls, as the JSON form of `DeferredToolResults` that
    `Agent.resume(persistence, deferred_tool_results=...)` takes.

    Args:
        approve: The ids of the calls to approve.
        deny: The ids of the calls to deny.
        deny_message: What the model is told of each denied call (the agent's default message when `None`).
    """
    denial: Any = False if deny_message is None else {'kind': 'tool-denied', 'message': deny_message}
    approvals: dict[str, Any] = dict.fromkeys(approve, True)
    approvals.update((call_id, denial) for call_id in deny)
    return {'approvals': approvals}


def check_answers(
    run_id: str | None, waits: Waiting | None, *, approvals: Collection[str] = (), calls: Collection[str] = ()
) -> None:
    """Check answers against what a stored run waits for: each call it waits for answered once, in its kind.

    Args:
        run_id: The run's id, for the message.
        waits: What the run waits for (`waiting(...)`), `None` when it waits for no answers.
        approvals: The ids of the calls approved or denied.
        calls: The ids of the calls given results.

    Raises:
        AnswersRefused: the answers do not fit; nothing was changed.
    """
    run = f'Run {run_id!r}' if run_id is not None else 'The run'
    if waits is None:
        raise AnswersRefused(
            f'{run} is not waiting for approval or tool results: answers (`deferred_tool_results`) are given only to '
            'a run stored waiting for them, for the calls it waits for. Nothing was changed.',
            reason='not waiting',
        )
    if twice := sorted(set(approvals) & set(calls)):
        raise AnswersRefused(
            f'Tool call {twice[0]!r} is answered twice (an approval and a result): give it once. Nothing was changed.',
            reason='twice',
            call_id=twice[0],
            waiting=waits,
        )
    pending = {'approval': waits.ids('approval'), 'result': waits.ids('result')}
    for given, needs, other in ((approvals, 'approval', 'result'), (calls, 'result', 'approval')):
        for call_id in given:
            if call_id in pending[needs]:
                continue
            if call_id in pending[other]:
                raise AnswersRefused(
                    f'{run}: tool call {call_id!r} waits for {_needs(other)}, not for {_A[needs]}: answer it '
                    f'under `{_key(other)}`. Nothing was changed.',
                    reason='wrong kind',
                    call_id=call_id,
                    waiting=waits,
                )
            raise AnswersRefused(
                f'{run} waits for no {_needs(needs)} of tool call {call_id!r}; the calls waiting for {_needs(needs)} '
                f'are {", ".join(pending[needs]) or "none"}. Nothing was changed.',
                reason='unknown call',
                call_id=call_id,
                waiting=waits,
            )
    answered = {*approvals, *calls}
    if missing := [call.tool_call_id for call in waits.calls if call.tool_call_id not in answered]:
        raise AnswersRefused(
            f'{run} waits for tool calls {", ".join(c.tool_call_id for c in waits.calls)}; answer each of them '
            f'(unanswered: {", ".join(missing)}). Nothing was changed.',
            reason='unanswered call',
            call_id=missing[0],
            waiting=waits,
        )


_A = {'approval': 'an approval', 'result': 'a result'}


def _needs(needs: str) -> str:
    return 'approval' if needs == 'approval' else 'result'


def _key(needs: str) -> str:
    return 'approvals' if needs == 'approval' else 'calls'
