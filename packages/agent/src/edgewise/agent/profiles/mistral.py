"""The profile of Mistral's models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('mistral_model_profile',)


def mistral_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Mistral model: Magistral always reasons; `None` (the defaults) otherwise."""
    if model_name.startswith('magistral'):
        return ModelProfile(supports_thinking=True, thinking_always_enabled=True)
    return None
