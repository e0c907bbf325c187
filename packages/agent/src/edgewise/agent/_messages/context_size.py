"""A model response's context size: the tokens the model was given and wrote, for context-window checks (not cost).

A response's usage can sum several model requests (a long decode continued in further requests, a server-side tool
loop): that is what they cost, but it overstates the context. pydantic-ai 2.68 stamps such a response with the input
tokens that measure its context, under `metadata['__pydantic_ai__']['context_input_tokens']` (2.56 used
`initial_input_tokens`); histories it saved carry the stamp, and it is read here.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence

from .model_messages import ModelMessage, ModelResponse

__all__ = ('context_input_tokens', 'context_tokens', 'context_window_fraction', 'mark_context_input_tokens')

_NAMESPACE = '__pydantic_ai__'
_KEYS = ('context_input_tokens', 'initial_input_tokens')


def mark_context_input_tokens(response: ModelResponse, input_tokens: int) -> None:
    """Record on `response` the input tokens that measure its context, when its usage sums several requests."""
    metadata = response.metadata if response.metadata is not None else {}
    metadata.setdefault(_NAMESPACE, {})[_KEYS[0]] = input_tokens
    response.metadata = metadata


def context_input_tokens(response: ModelResponse) -> int:
    """The input tokens of `response` as a measure of its context: the marked ones, else `usage.input_tokens`."""
    namespace = (response.metadata or {}).get(_NAMESPACE)
    if isinstance(namespace, dict):
        for key in _KEYS:
            value = namespace.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return response.usage.input_tokens


def context_tokens(response: ModelResponse) -> int:
    """The context `response` leaves behind: its context input tokens and its output tokens."""
    return context_input_tokens(response) + response.usage.output_tokens


def context_window_fraction(messages: Sequence[ModelMessage], context_window: int | None) -> float | None:
    """The last response's context size over `context_window`; `None` when the window is unknown (or not positive),
    there is no response yet, or the last one reports no tokens."""
    if context_window is None or context_window <= 0:
        return None
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            tokens = context_tokens(message)
            return tokens / context_window if tokens else None
    return None
