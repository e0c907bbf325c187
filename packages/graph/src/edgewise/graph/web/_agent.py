"""What the inspector shows of agent runs and how it answers them: the one place that reads agent runs.

Everything here goes through the agent package's public stored-runs contract, as `edgewise runs show` and
`runs resume --approve` do (`cli._agent_runs`, `cli._answers`), so the page and the command line read and answer
stored agent runs alike; the graph package never imports the agent package.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any

from ..cli._agent_runs import stored_runs_contract, waiting
from ..cli._answers import Answers
from ..persistence.raw import RawSnapshot

__all__ = ('AgentView', 'ConversationPart', 'PendingCall', 'agent_view', 'answers', 'waits_for')

_WAITS_FOR = {'approval': 'approval', 'result': 'tool results'}


@dataclass
class ConversationPart:
    """One part of the conversation, as the page shows it."""

    who: str
    """`'user'`, `'system'`, `'model'`, `'model thinks'`, `'tool call'`, `'tool return'`, `'retry'`, ..."""
    content: Any
    """The text, or the JSON value (a tool call's arguments, a tool's result)."""
    tool_name: str | None = None
    """The tool of a tool call, return or retry."""
    tool_call_id: str | None = None
    """The id of that tool call."""


@dataclass
class PendingCall:
    """A tool call the run waits for."""

    tool_name: str
    tool_call_id: str
    args: Any


@dataclass
class AgentView:
    """An agent run as the page shows it."""

    parts: list[ConversationPart]
    """The conversation, part by part."""
    usage: dict[str, int]
    """The run's usage (`requests`, `input_tokens`, `output_tokens`, `tool_calls`)."""
    waiting_for: str | None
    """What the run waits for (`'approval'`, `'tool results'`), if it does."""
    approvals: list[PendingCall] = field(default_factory=list)
    """The tool calls waiting for approval."""
    calls: list[PendingCall] = field(default_factory=list)
    """The tool calls waiting for their results."""


def waits_for(history: list[RawSnapshot]) -> str | None:
    """What a run waits for, from its last snapshot, as `runs list` shows it; else `None`."""
    waits = waiting(history[-1]) if history else None
    return None if waits is None else waits.what


def agent_view(history: list[RawSnapshot]) -> AgentView | None:
    """The agent run of `history`, or `None` when it is another kind of run (or no agent package is installed)."""
    contract = stored_runs_contract()
    run = None if contract is None else contract.describe(history)
    if run is None:
        return None
    usage = run.usage
    waits = run.waiting

    def pending(needs: str) -> list[PendingCall]:
        calls = () if waits is None else waits.calls
        return [PendingCall(c.tool_name, c.tool_call_id, c.args) for c in calls if c.needs == needs]

    return AgentView(
        parts=[ConversationPart(p.who, p.content, p.tool_name, p.tool_call_id) for p in run.parts],
        usage={
            'requests': usage.requests,
            'input_tokens': usage.input_tokens,
            'output_tokens': usage.output_tokens,
            'tool_calls': usage.tool_calls,
        },
        waiting_for=None if waits is None else waits.what,
        approvals=pending('approval'),
        calls=pending('result'),
    )


def answers(approve: list[str], deny: list[str], deny_message: str | None) -> Answers:
    """The approvals and denials given in the page, checked against the run as `runs resume --approve` checks them."""
    return Answers(approve, deny, deny_message)
