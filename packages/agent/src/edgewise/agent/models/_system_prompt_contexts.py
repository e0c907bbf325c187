"""Appending system prompts (`@agent.system_prompt(on_change='append')`, pydantic-ai 2.68) as a model is sent them (a
step of `Model.prepare_messages`).

The history keeps each statement's text and its `SystemPromptPart.context_id`. The model gets each statement as a
`<pyai:context id=...>` element: the first of an id in the conversation states the prompt, a later one replaces it,
an empty later one withdraws it (an empty first one has nothing to say and is left out). The model is told once that a
later element with the same id replaces an earlier one: after the last element the standing system prompt (the system
prompts the first request opens with) opens, or else after the last one opened by the first later request that opens
one; never when the instruction prefix already says so. The history only grows, so a statement is rendered the same on
every later request (and the provider's prompt cache keeps it).
"""

from __future__ import annotations as _annotations

import dataclasses

from .._messages.instructions import SUPERSESSION_SENTENCE, render_system_prompt_statement
from .._messages.model_messages import ModelMessage, ModelRequest, ModelRequestPart, SystemPromptPart

__all__ = ('render_system_prompt_contexts',)


def _standing_count(request: ModelRequest) -> int:
    """How many parts the standing system prompt is of the first request (the conversation-scoped system prompts it
    opens with)."""
    count = 0
    for part in request.parts:
        if not isinstance(part, SystemPromptPart) or part.scope == 'request':
            break
        count += 1
    return count


def render_system_prompt_contexts(messages: list[ModelMessage], *, inline_system: bool) -> list[ModelMessage]:
    """`messages` with each statement of an appending system prompt in its `<pyai:context>` element; `messages`
    itself when none has a `context_id`.

    Args:
        messages: The history.
        inline_system: The profile's `supports_inline_system_prompts` (the wording of a withdrawal depends on it).
    """
    requests = [message for message in messages if isinstance(message, ModelRequest)]
    if not any(isinstance(p, SystemPromptPart) and p.context_id is not None for m in requests for p in m.parts):
        return messages
    # The instruction prefix of an open window of appending instruction blocks ends with the sentence already.
    stated = SUPERSESSION_SENTENCE in (requests[-1].instructions or '')
    opened: set[str] = set()
    rendered: list[ModelMessage] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            rendered.append(message)
            continue
        parts: list[ModelRequestPart | None] = list(message.parts)
        standing = _standing_count(message) if message is requests[0] else 0
        for group in (range(standing), range(standing, len(parts))):
            statements: list[tuple[int, SystemPromptPart, str]] = []
            last_opening: int | None = None
            for index in group:
                part = message.parts[index]
                if not isinstance(part, SystemPromptPart) or part.context_id is None:
                    continue
                if part.context_id not in opened:
                    if not part.content:
                        parts[index] = None
                        continue
                    opened.add(part.context_id)
                    last_opening = index
                statements.append((index, part, part.context_id))
            rule_at = None if stated else last_opening
            for index, part, context_id in statements:
                text = render_system_prompt_statement(
                    part.content, context_id, inline_system=inline_system, states_rule=index == rule_at
                )
                parts[index] = dataclasses.replace(part, content=text)
            stated = stated or rule_at is not None
        rendered.append(dataclasses.replace(message, parts=[part for part in parts if part is not None]))
    return rendered
