"""The profile of models served by Groq."""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('GroqModelProfile', 'groq_model_profile')

_REASONING_PREFIXES = ('qwen/qwen3', 'qwen-qwq', 'deepseek-r1', 'llama-4-maverick')


class GroqModelProfile(ModelProfile, total=False):
    """A profile with Groq's own fields (all prefixed `groq_`, so that profiles merge)."""

    groq_always_has_web_search_builtin_tool: bool
    """Whether the model always has Groq's web search tool (the `compound-` models) (default `False`)."""


def groq_model_profile(model_name: str) -> ModelProfile:
    """The profile of a model on Groq: which ones reason, and which of those cannot stop."""
    reasons = model_name.startswith(_REASONING_PREFIXES)
    return GroqModelProfile(
        groq_always_has_web_search_builtin_tool=model_name.startswith('compound-'),
        supports_thinking=reasons,
        # Qwen 3 can switch reasoning off (reasoning_effort='none'); the older reasoning models cannot.
        thinking_always_enabled=reasons and not model_name.startswith('qwen/qwen3'),
    )
