"""The profile of Mistral's models."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('mistral_model_profile',)


def mistral_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Mistral model: tool call ids of exactly nine letters and digits (Mistral's chat template
    uses such ids, and models or deployments that check them refuse any other; ids that fit are sent unchanged, so
    every Mistral model gets it), and Magistral always reasons."""
    profile = ModelProfile(tool_call_id_length=9)
    if model_name.startswith('magistral'):
        profile['supports_thinking'] = profile['thinking_always_enabled'] = True
    return profile
