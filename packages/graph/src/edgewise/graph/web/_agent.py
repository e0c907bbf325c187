"""What the inspector shows of agent runs and how it answers them: the one place that reads agent runs.

Everything here goes through the code `edgewise runs show` and `runs resume --approve` use (`cli._agent_runs`,
`cli._answers`), so the page and the command line read and answer stored agent runs alike; when the agent
package publishes its contract for stored agent runs, this module is what switches to it.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any

from ..cli._agent_runs import agent_messages, is_agent_run
from ..cli._answers import Answers, pending_calls, waiting_for
from ..persistence.raw import RawNode, RawSnapshot

__all__ = ('AgentView', 'agent_view', 'answers', 'waits_for')


@dataclass
class AgentView:
    """An agent run as the page shows it."""

    messages: list[dict[str, Any]]
    """The conversation as stored: each message a JSON object with its `parts`."""
    usage: dict[str, Any]
    """The run's usage as stored (`requests`, `input_tokens`, `output_tokens`, `tool_calls`)."""
    waiting_for: str | None
    """What the run waits for (`'approval'`, `'tool results'`), if it does."""
    approvals: list[dict[str, Any]] = field(default_factory=list)
    """The tool calls waiting for approval (`tool_name`, `args`, `tool_call_id`)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The tool calls waiting for their results."""


def waits_for(history: list[RawSnapshot]) -> str | None:
    """What a run waits for, from its last snapshot, as `runs list` shows it; else `None`."""
    return waiting_for(history[-1]) if history else None


def agent_view(history: list[RawSnapshot]) -> AgentView | None:
    """The agent run of `history`, or `None` when it is another kind of run."""
    if not is_agent_run(history):
        return None
    last = history[-1]
    fields = last.node.fields if isinstance(last.node, RawNode) else {}
    found = fields.get('requests')
    requests: dict[str, Any] = found if isinstance(found, dict) else {}
    waits = waiting_for(last)

    def held(key: str) -> list[dict[str, Any]]:
        ids = pending_calls(fields, key)
        return [c for c in requests.get(key) or () if isinstance(c, dict) and str(c.get('tool_call_id')) in ids]

    return AgentView(
        messages=[m for m in agent_messages(history) if isinstance(m, dict)],
        usage=dict(last.state.get('usage') or {}),
        waiting_for=waits,
        approvals=held('approvals') if waits else [],
        calls=held('calls') if waits else [],
    )


def answers(approve: list[str], deny: list[str], deny_message: str | None) -> Answers:
    """The approvals and denials given in the page, checked against the run as `runs resume --approve` checks them."""
    return Answers(approve, deny, deny_message)
