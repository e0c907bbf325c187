"""The profile of Moonshot AI's Kimi models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('moonshotai_model_profile',)


def moonshotai_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Kimi model: its streamed answers may start with whitespace before tool calls."""
    return ModelProfile(ignore_streamed_leading_whitespace=True)
