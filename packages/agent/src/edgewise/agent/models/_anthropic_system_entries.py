"""Anthropic's self-clearing `system` entries: how `AnthropicModel` sends a request-scoped system prompt
(`SystemPromptPart(scope='request')`) on a profile with `supports_request_scoped_system_prompts`, as pydantic-ai
2.68 does.

The request's request-scoped prompts go, as text blocks, in one `{'role': 'system', 'clear_at':
'next_user_message'}` entry after its user turn. The entry is sent with every later request too, unchanged, and the
API stops showing it to the model once a later user turn exists; so the cached prefix is never rewritten. The API
takes such an entry only after a user turn and only right before an assistant turn or at the end of the messages,
refuses `cache_control` on it, and needs the `mid-conversation-system-clear-at-2026-08-21` beta flag.
"""

from __future__ import annotations as _annotations

from typing import Any

__all__ = (
    'REQUEST_SCOPED_SYSTEM_BETA',
    'has_self_clearing_entry',
    'last_cacheable_message',
    'place_system_entries',
    'self_clearing_entry',
)

REQUEST_SCOPED_SYSTEM_BETA = 'mid-conversation-system-clear-at-2026-08-21'
"""The `anthropic-beta` flag of requests holding a self-clearing `system` entry."""

_ANCHOR_TEXT = '.'
"""The user turn put ahead of a `system` entry that has none to follow (the API refuses it there otherwise): a
single character that says nothing on the user's behalf."""


def self_clearing_entry(texts: list[str]) -> dict[str, Any]:
    """The `system` entry holding a request's request-scoped prompts, cleared by the API at the next user turn."""
    return {
        'role': 'system',
        'content': [{'type': 'text', 'text': text} for text in texts],
        'clear_at': 'next_user_message',
    }


def has_self_clearing_entry(mapped: list[dict[str, Any]]) -> bool:
    """Whether the mapped messages hold a self-clearing `system` entry (then the request needs the beta flag)."""
    return any(message.get('clear_at') == 'next_user_message' for message in mapped)


def place_system_entries(mapped: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`mapped` with each `system` entry where the API takes it: moved past the user turns after it (such as the
    reasoning a model's turn carries in a user turn ahead of it) to just before the assistant turn it precedes, or to
    the end; and given a minimal user turn to follow where nothing but an assistant turn (or nothing) is ahead of it.
    Entries keep their order. `mapped` itself when it holds no `system` entry."""
    if not any(message['role'] == 'system' for message in mapped):
        return mapped
    slid: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # entries passing over user turns, in order
    for message in mapped:
        if message['role'] == 'system':
            waiting.append(message)
        elif message['role'] == 'user':
            slid.append(message)
        else:
            slid.extend(waiting)
            waiting.clear()
            slid.append(message)
    slid.extend(waiting)
    placed: list[dict[str, Any]] = []
    for message in slid:
        if message['role'] == 'system' and (not placed or placed[-1]['role'] == 'assistant'):
            placed.append({'role': 'user', 'content': [{'type': 'text', 'text': _ANCHOR_TEXT}]})
        placed.append(message)
    return placed


def last_cacheable_message(mapped: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last mapped message a `cache_control` breakpoint may go on: a self-clearing entry refuses one (and is not
    part of what later requests read from the cache)."""
    return next((message for message in reversed(mapped) if message.get('clear_at') is None), None)
