"""`GeminiModel`: pydantic-ai 1.x's Gemini model; use `edgewise.agent.models.google.GoogleModel`."""

from __future__ import annotations as _annotations

from typing_extensions import deprecated

from .google import GoogleModel

__all__ = ('GeminiModel',)


@deprecated('`GeminiModel` is deprecated: use `GoogleModel` from `edgewise.agent.models.google` (pydantic-ai 2.x).')
class GeminiModel(GoogleModel):
    """Deprecated: the Gemini API's model under its pydantic-ai 1.x name; it is a `GoogleModel`."""
