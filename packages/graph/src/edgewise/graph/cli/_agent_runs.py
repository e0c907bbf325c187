"""What `edgewise runs show` adds for an agent run: its conversation, usage and pending tool calls.

Read from the stored JSON alone (the graph package never imports the agent package): an agent run's state is
a JSON object with `message_history`, `message_offset` and `usage`. A durable agent snapshot holds only the
messages after `message_offset` (the earlier ones are in the snapshots before it), so the whole conversation
is put back together from all of them.
"""

from __future__ import annotations as _annotations

from typing import Any

from ..persistence.raw import RawSnapshot
from ._format import summary

__all__ = ('agent_run_lines', 'agent_messages', 'is_agent_run')


def _is_agent_state(state: Any) -> bool:
    return isinstance(state, dict) and {'message_history', 'message_offset', 'usage'} <= state.keys()


def is_agent_run(history: list[RawSnapshot]) -> bool:
    """Whether the history is an agent run's (every state holds a conversation)."""
    return bool(history) and all(_is_agent_state(s.state) for s in history)


def agent_messages(history: list[RawSnapshot]) -> list[Any]:
    """The whole conversation of an agent run's history, as stored (JSON messages with their `parts`)."""
    messages: list[Any] = []
    for snapshot in history:
        state = snapshot.state
        del messages[state['message_offset'] :]
        messages.extend(state['message_history'])
        if state.get('response_in_node') and snapshot.kind == 'node' and snapshot.node.node_id == 'CallToolsNode':
            messages.append(snapshot.node.fields.get('model_response') or {})  # stored there only
    return messages


def agent_run_lines(history: list[RawSnapshot]) -> list[str] | None:
    """The lines describing an agent run (conversation, usage, pending tool calls), or `None` for another run."""
    if not is_agent_run(history):
        return None
    messages = agent_messages(history)
    lines = [f'Messages ({len(messages)}):']
    for message in messages:
        for part in message.get('parts', ()):
            lines.append(f'  {_part(part)}')
    usage = history[-1].state['usage']
    lines.append(
        f'Usage: {usage.get("requests", 0)} requests, {usage.get("input_tokens", 0)} input tokens, '
        f'{usage.get("output_tokens", 0)} output tokens, {usage.get("tool_calls", 0)} tool calls'
    )
    last = history[-1]
    if last.kind == 'node' and last.node.node_id == 'CallToolsNode':
        response = last.node.fields.get('model_response') or {}
        done = {p.get('tool_call_id') for p in last.state.get('step_results', ())}
        calls = [p for p in response.get('parts', ()) if p.get('part_kind') == 'tool-call']
        if calls:
            lines.append('Tool calls of the next step:')
            for call in calls:
                where = 'finished (its result is stored)' if call.get('tool_call_id') in done else 'pending'
                lines.append(f'  {call.get("tool_name")} [{call.get("tool_call_id")}]: {where}')
    return lines


def _part(part: dict[str, Any]) -> str:
    kind = part.get('part_kind')
    if kind == 'tool-call':
        return f'model calls {part.get("tool_name")}({summary(part.get("args"), 60)}) [{part.get("tool_call_id")}]'
    if kind == 'tool-return':
        return f'{part.get("tool_name")} returned {summary(part.get("content"), 60)} [{part.get("tool_call_id")}]'
    if kind == 'retry-prompt':
        return f'retry: {summary(part.get("content"), 80)}'
    who = {'user-prompt': 'user', 'system-prompt': 'system', 'text': 'model', 'thinking': 'model thinks'}.get(
        str(kind), str(kind)
    )
    return f'{who}: {summary(part.get("content"), 90)}'
