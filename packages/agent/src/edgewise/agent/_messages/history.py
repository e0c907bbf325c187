"""Functions over a whole history: where its latest compaction leaves it (`post_compaction_window`), which
compaction part a provider honours (`compaction_is_boundary_for`, `trim_before_compaction`), and its tool parts as
their typed subclasses (`narrow_message_parts`). Public through `edgewise.agent.messages`."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from .compaction import STANDING_PROMPT_PLANTED_KEY, CompactionPart
from .model_messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

__all__ = ('post_compaction_window', 'compaction_is_boundary_for', 'trim_before_compaction', 'narrow_message_parts')


def post_compaction_window(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history from its latest `CompactionPart` on: what the model works from after compacting.

    The response holding that part keeps only the part and the parts after it; the messages after it are kept
    whole. Without a compaction part, the whole history (as a new list). Any provider's compaction part counts:
    state derived from what the model has seen (tools it found, capabilities it loaded) must hold whichever model
    answers next. Only integer indexing of `messages` is used (a `Sequence` need not support slices).
    """
    for message_index in range(len(messages) - 1, -1, -1):
        message = messages[message_index]
        if isinstance(message, ModelResponse):
            for part_index in range(len(message.parts) - 1, -1, -1):
                if isinstance(message.parts[part_index], CompactionPart):
                    kept = [message.parts[i] for i in range(part_index, len(message.parts))]
                    tail = [messages[i] for i in range(message_index + 1, len(messages))]
                    return [replace(message, parts=kept), *tail]
    return [messages[i] for i in range(len(messages))]


def compaction_is_boundary_for(
    part: CompactionPart, provider_name: str, *, needs_encrypted: bool = False, accepted: bool | None = None
) -> bool:
    """Whether the provider `provider_name` honours `part` as where the history starts again.

    Only the provider that compacted does (or one whose API verifies the part's data: `accepted`, when the caller
    asked `Model.accepts_stateless_artifacts`), and only while the part carries what that provider reads back: its
    encrypted data, or (unless `needs_encrypted`, as for OpenAI's Responses API) a readable summary. A part with
    neither is a failed compaction and a boundary for no one.
    """
    if not (part.provider_name == provider_name if accepted is None else accepted):
        return False
    if part.provider_details and 'encrypted_content' in part.provider_details:
        return True
    return not needs_encrypted and part.content is not None


def trim_before_compaction(
    messages: list[ModelMessage],
    provider_name: str,
    *,
    needs_encrypted: bool = False,
    keeps_system: bool = False,
    accepts: Callable[[ModelResponse, CompactionPart], bool] | None = None,
) -> list[ModelMessage]:
    """`messages` without what comes before the latest compaction part the provider honours (the summary
    replaces it; OpenAI bills what is sent before its compaction item, Anthropic ignores it).

    The standing prompt is kept: the system prompt parts the first request opens with, and the latest
    instructions before the boundary, as a request of their own ahead of the kept tail. With `keeps_system` (the
    provider's compaction item carries the system prompt on, as OpenAI's does) the system parts are left out for a
    part marked as made from a window that held them (`STANDING_PROMPT_PLANTED_KEY`). The same list when there is
    no such boundary. `accepts` (`Model.accepts_stateless_artifacts`) says whose compaction parts count, in place of
    the part's provider name.
    """
    for message_index in range(len(messages) - 1, -1, -1):
        message = messages[message_index]
        if not isinstance(message, ModelResponse):
            continue
        for part_index in range(len(message.parts) - 1, -1, -1):
            part = message.parts[part_index]
            if isinstance(part, CompactionPart) and compaction_is_boundary_for(
                part,
                provider_name,
                needs_encrypted=needs_encrypted,
                accepted=None if accepts is None else accepts(message, part),
            ):
                details = part.provider_details or {}
                carried = keeps_system and bool(details.get(STANDING_PROMPT_PLANTED_KEY))
                tail = [replace(message, parts=list(message.parts[part_index:])), *messages[message_index + 1 :]]
                return [*_standing_prompt(messages[:message_index], with_system_parts=not carried), *tail]
    return messages


def _standing_prompt(prefix: list[ModelMessage], *, with_system_parts: bool) -> list[ModelMessage]:
    first = next((m for m in prefix if isinstance(m, ModelRequest)), None)
    system: list[ModelRequestPart] = []
    if first is not None and with_system_parts:
        for request_part in first.parts:
            if not isinstance(request_part, SystemPromptPart):
                break
            system.append(request_part)
    instructions = next(
        (m.instructions for m in reversed(prefix) if isinstance(m, ModelRequest) and m.instructions is not None),
        None,
    )
    if not system and instructions is None:
        return []
    return [ModelRequest(parts=system, instructions=instructions)]


def _narrow_response_part(part: ModelResponsePart) -> ModelResponsePart:
    if isinstance(part, ToolCallPart):
        return ToolCallPart.narrow_type(part)
    return part


def _narrow_request_part(part: ModelRequestPart) -> ModelRequestPart:
    if isinstance(part, ToolReturnPart):
        return ToolReturnPart.narrow_type(part)
    return part


def narrow_message_parts(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history with each tool call and return part whose `tool_kind` names a typed part (a `load_capability`
    call, ...) made that typed part, as loading a serialized history does; for histories built by hand (the UI
    adapters rebuild parts from what a browser sends). Other parts, and messages with nothing to change, are the
    same objects."""
    narrowed: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            response_parts = [_narrow_response_part(part) for part in message.parts]
            if any(new is not old for new, old in zip(response_parts, message.parts, strict=True)):
                message = replace(message, parts=response_parts)
        else:
            request_parts = [_narrow_request_part(part) for part in message.parts]
            if any(new is not old for new, old in zip(request_parts, message.parts, strict=True)):
                message = replace(message, parts=request_parts)
        narrowed.append(message)
    return narrowed
