"""Printing helpers shared by the scenarios; imported under pydantic-ai and under Edgewise alike.

They print the parts of a result that both libraries promise to share (message parts and their fields, usage),
leaving out what is provider-specific or documented as different (see docs/compatibility.md).
"""

from __future__ import annotations

from typing import Any

_PART_FIELDS = ('content', 'tool_name', 'args', 'tool_call_id', 'model_name')
_USAGE_FIELDS = ('requests', 'tool_calls', 'input_tokens', 'output_tokens')


def show_messages(messages: list[Any]) -> None:
    """Print a message list, one line per message and per part."""
    for message in messages:
        if message.kind == 'request':
            print(f'request instructions={message.instructions!r}')
        else:
            print(f'response model_name={message.model_name!r} usage={usage_line(message.usage)}')
        for part in message.parts:
            fields = ' '.join(f'{name}={getattr(part, name)!r}' for name in _PART_FIELDS if hasattr(part, name))
            print(f'  {part.part_kind} {fields}')


def usage_line(usage: Any) -> str:
    """The token and request counts of a usage object."""
    return ' '.join(f'{name}={getattr(usage, name)}' for name in _USAGE_FIELDS if hasattr(usage, name))


def show_error(error: BaseException) -> None:
    """Print an exception's class name and message."""
    print(f'{type(error).__name__}: {error}')
