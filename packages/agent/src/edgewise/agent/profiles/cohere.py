"""The profile of Cohere's models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('cohere_model_profile',)


def cohere_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Cohere model: the `reasoning` ones always reason; `None` (the defaults) otherwise."""
    if 'reasoning' in model_name:
        return ModelProfile(supports_thinking=True, thinking_always_enabled=True)
    return None
