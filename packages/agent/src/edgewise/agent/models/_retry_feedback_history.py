"""`RetryFeedbackPart`s as a model is sent them (`Model.prepare_messages`): each becomes the prompt part its cause
calls for, a system prompt for the agent's own `'no_output'` text, else a user prompt holding the fenced feedback."""

from __future__ import annotations as _annotations

from dataclasses import replace

from .._messages.model_messages import ModelMessage, ModelRequest, ModelRequestPart, SystemPromptPart, UserPromptPart
from .._messages.retry_feedback import RetryFeedbackPart

__all__ = ('render_retry_feedback',)


def render_retry_feedback(messages: list[ModelMessage]) -> list[ModelMessage]:
    """`messages` with each `RetryFeedbackPart` made a `SystemPromptPart` or `UserPromptPart` of its text (see
    `RetryFeedbackPart.model_response`); the same list when there is none."""
    if not any(
        isinstance(m, ModelRequest) and any(isinstance(p, RetryFeedbackPart) for p in m.parts) for m in messages
    ):
        return messages
    rendered: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(isinstance(p, RetryFeedbackPart) for p in message.parts):
            parts: list[ModelRequestPart] = [
                _as_prompt(p) if isinstance(p, RetryFeedbackPart) else p for p in message.parts
            ]
            message = replace(message, parts=parts)
        rendered.append(message)
    return rendered


def _as_prompt(part: RetryFeedbackPart) -> SystemPromptPart | UserPromptPart:
    text = part.model_response()
    if part.speaks_for_the_application:
        return SystemPromptPart(text, timestamp=part.timestamp)
    return UserPromptPart(text, timestamp=part.timestamp)
