"""The profile of DeepSeek's models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('deepseek_model_profile',)


def deepseek_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a DeepSeek model.

    R1 (`deepseek-r1*`, `deepseek-reasoner`) always reasons and may open its answer with whitespace; V4 can
    reason on request. DeepSeek's API returns the reasoning in a `reasoning_content` field.
    """
    is_r1 = model_name.startswith('deepseek-r1') or model_name == 'deepseek-reasoner'
    is_v4 = model_name.startswith('deepseek-v4-')
    return ModelProfile(
        ignore_streamed_leading_whitespace=is_r1,
        supports_thinking=is_r1 or is_v4,
        thinking_always_enabled=is_r1,
    )
