"""The profile of models speaking OpenAI's Harmony response format (gpt-oss)."""

from __future__ import annotations as _annotations

from . import ModelProfile, merge_profile
from .openai import OpenAIModelProfile, openai_model_profile

__all__ = ('harmony_model_profile',)


def harmony_model_profile(model_name: str) -> ModelProfile | None:
    """OpenAI's profile, without `tool_choice='required'`, ignoring whitespace that opens a streamed answer."""
    return merge_profile(
        openai_model_profile(model_name),
        OpenAIModelProfile(supports_forced_tool_choice=False, ignore_streamed_leading_whitespace=True),
    )
