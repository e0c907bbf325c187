"""Provider-side compaction on the wire: how a `CompactionPart` is read from, and sent back to, Anthropic's
Messages API (a `compaction` block, readable) and OpenAI's Responses API (a `compaction` item, encrypted).

Each API is sent only the history from the latest compaction part it honours on (`trim_before_compaction`);
the capabilities that turn compaction on are `AnthropicCompaction` and `OpenAICompaction`.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._messages.compaction import STANDING_PROMPT_PLANTED_KEY
from ..messages import CompactionPart, ModelMessage, ModelResponse

__all__ = (
    'ANTHROPIC_COMPACTION_BETA',
    'ANTHROPIC_COMPACT_EDIT_TYPE',
    'anthropic_compaction_block',
    'anthropic_compaction_part',
    'anthropic_context_management',
    'has_compaction',
    'openai_compaction_item',
    'openai_compaction_part',
    'with_beta',
)

ANTHROPIC_COMPACTION_BETA = 'compact-2026-01-12'
"""The `anthropic-beta` flag of requests using compaction."""
ANTHROPIC_COMPACT_EDIT_TYPE = 'compact_20260112'
"""The type of the compaction edit in Anthropic's `context_management.edits`."""


def has_compaction(messages: Sequence[ModelMessage]) -> bool:
    """Whether a response of `messages` holds a `CompactionPart`."""
    return any(
        isinstance(part, CompactionPart)
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
    )


def anthropic_compaction_part(block: Mapping[str, Any], provider_name: str) -> CompactionPart:
    """The part of a `compaction` block (or of a `compaction_delta`, which carries the block's whole content)."""
    encrypted = block.get('encrypted_content')
    details = {'encrypted_content': encrypted} if encrypted is not None else None
    return CompactionPart(block.get('content'), provider_name=provider_name, provider_details=details)


def anthropic_compaction_block(part: CompactionPart) -> dict[str, Any]:
    """The `compaction` block that sends `part` back (to an API that verifies its data: the caller checks)."""
    block: dict[str, Any] = {'type': 'compaction', 'content': part.content}
    if part.provider_details and part.provider_details.get('encrypted_content') is not None:
        block['encrypted_content'] = part.provider_details['encrypted_content']
    return block


def anthropic_context_management(
    messages: Sequence[ModelMessage], settings: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The request's `context_management`: the settings' (`anthropic_context_management`), or, for a history that
    holds compaction parts, a bare compaction edit (the API reads compaction blocks only with one)."""
    given = settings.get('anthropic_context_management')
    if given is None and has_compaction(messages):
        return {'edits': [{'type': ANTHROPIC_COMPACT_EDIT_TYPE}]}
    return given


def with_beta(headers: Mapping[str, str], beta: str) -> dict[str, str]:
    """`headers` with `beta` added to their `anthropic-beta` flags."""
    flags = {flag.strip() for flag in headers.get('anthropic-beta', '').split(',') if flag.strip()}
    flags.add(beta)
    return {**headers, 'anthropic-beta': ','.join(sorted(flags))}


def openai_compaction_part(item: Mapping[str, Any], provider_name: str, *, planted: bool = False) -> CompactionPart:
    """The part of a Responses `compaction` output item: no readable content, the item itself (its
    `encrypted_content`) in `provider_details`. `planted`: the item came from an explicit compaction whose input
    held the run's system prompt (`STANDING_PROMPT_PLANTED_KEY`)."""
    details = dict(item)
    if planted:
        details[STANDING_PROMPT_PLANTED_KEY] = True
    return CompactionPart(None, id=item.get('id'), provider_name=provider_name, provider_details=details)


def openai_compaction_item(part: CompactionPart) -> dict[str, Any] | None:
    """The `compaction` input item that sends `part` back (to an API that verifies its data: the caller checks), or
    `None` when it carries no encrypted content (the API reads nothing else)."""
    details = part.provider_details
    if not details or 'encrypted_content' not in details:
        return None
    item: dict[str, Any] = {'type': 'compaction', 'encrypted_content': details['encrypted_content']}
    if part.id is not None:
        item['id'] = part.id
    return item
