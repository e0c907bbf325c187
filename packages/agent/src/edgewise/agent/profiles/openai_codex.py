"""The profile of OpenAI's models on the Codex backend (a ChatGPT subscription, `OpenAICodexProvider`).

The backend speaks the Responses API in a narrower dialect: it only streams and keeps nothing (`store=false`), it
refuses the sampling fields and the explicit prompt cache fields (and caches prompts by itself), and it has no batch
API.
"""

from __future__ import annotations as _annotations

from . import ModelProfile, merge_profile
from .openai import OpenAIModelProfile, openai_model_profile

__all__ = ('openai_codex_model_profile',)


def openai_codex_model_profile(model_name: str) -> ModelProfile:
    """OpenAI's profile of the model, narrowed to what the Codex backend takes."""
    return merge_profile(openai_model_profile(model_name), _CODEX_DIALECT)


_CODEX_DIALECT = OpenAIModelProfile(
    # Generic settings the backend refuses are dropped; explicit `openai_*` ones still go out, so the API reports
    # what it does not take.
    openai_unsupported_model_settings=('max_tokens', 'temperature', 'top_p'),
    openai_responses_requires_streaming=True,
    openai_responses_requires_store_false=True,
    openai_supports_batch_api=False,
    # The backend refuses explicit prompt cache fields and caches on its own: `cache` has nothing to set.
    openai_supports_prompt_cache_breakpoints=False,
    supports_cache=False,
    supported_cache_retentions=(),
    # Not known to take `prompt_cache_options.comparison_response_id` either.
    openai_responses_supports_prompt_cache_diagnostics=False,
    # `reasoning.effort='max'` is not known to be taken here: `thinking='max'` asks for `xhigh`.
    openai_responses_supports_max_reasoning_effort=False,
)
