"""The profile of Moonshot AI's Kimi models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('moonshotai_model_profile',)


_REASONING_MODELS = ('kimi-k2.5', 'kimi-k2.6', 'kimi-k2.7', 'kimi-k2-thinking', 'kimi-k3', 'kimi-thinking')
"""The Kimi models that reason (they take `reasoning_effort` and answer with `reasoning_content`)."""


def moonshotai_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Kimi model: its streamed answers may start with whitespace before tool calls, and the
    thinking models reason (how they are told not to depends on the endpoint: `MoonshotAIProvider` says it for
    Moonshot's own)."""
    return ModelProfile(
        ignore_streamed_leading_whitespace=True, supports_thinking=model_name.lower().startswith(_REASONING_MODELS)
    )
