"""The message history as sent to the model: adjacent requests merged as pydantic-ai 1.107 sends them, and where a
run's own messages start in a history that a capability rewrote."""

from __future__ import annotations as _annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

from ._run_deps import GraphAgentDeps, GraphAgentState
from .messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, ToolReturnPart

__all__ = ('first_new_index', 'has_adjacent_same_kind', 'merge_adjacent', 'sent_messages')


def first_new_index(messages: list[ModelMessage], run_id: str, resumed: ModelRequest | None) -> int:
    """Where the run's own messages start in a history a capability rewrote: after the request the run resumed
    (found by identity, else by content), else at the first message of the run."""
    if resumed is not None:
        for index, message in enumerate(messages):
            if message is resumed:
                return index + 1
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, ModelRequest) and (
                message.parts,
                message.timestamp,
                message.instructions,
                message.metadata,
            ) == (resumed.parts, resumed.timestamp, resumed.instructions, resumed.metadata):
                return index + 1
    return next((i for i, m in enumerate(messages) if m.run_id == run_id), len(messages))


def has_adjacent_same_kind(messages: Sequence[ModelMessage]) -> bool:
    """Whether two requests (or two responses) follow each other in `messages`."""
    return any(type(a) is type(b) for a, b in itertools.pairwise(messages))


def sent_messages(state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> list[ModelMessage]:
    """The history as sent to the model: adjacent requests merged (and adjacent responses that did not come from a
    model), as pydantic-ai sends them. Only histories given by the caller or changed by a capability can hold them,
    so runs without those send their history as it is."""
    history = state.message_history
    if not deps.merge_adjacent:
        return history
    return merge_adjacent(history)


def merge_adjacent(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    """`history` with adjacent requests merged, and adjacent responses that did not come from a model."""
    merged: list[ModelMessage] = []
    for message in history:
        last = merged[-1] if merged else None
        if (
            isinstance(message, ModelRequest)
            and isinstance(last, ModelRequest)
            and (not last.instructions or not message.instructions or last.instructions == message.instructions)
        ):
            parts = sorted(
                [*last.parts, *message.parts], key=lambda p: not isinstance(p, ToolReturnPart | RetryPromptPart)
            )
            merged[-1] = ModelRequest(
                parts,
                instructions=last.instructions or message.instructions,
                timestamp=message.timestamp or last.timestamp,
            )
        elif (
            isinstance(message, ModelResponse)
            and isinstance(last, ModelResponse)
            and synthetic_response(last)
            and synthetic_response(message)
        ):
            merged[-1] = dataclasses.replace(last, parts=[*last.parts, *message.parts])
        else:
            merged.append(message)
    return merged


def synthetic_response(response: ModelResponse) -> bool:
    return response.provider_response_id is None and response.provider_name is None and response.model_name is None
