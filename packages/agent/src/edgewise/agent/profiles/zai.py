"""The profile of Z.ai's GLM models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('zai_model_profile',)


def zai_model_profile(model_name: str) -> ModelProfile | None:
    """`None` (the defaults): what sets Z.ai models apart is handled by their provider."""
    return None
