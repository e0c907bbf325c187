"""The profile of OpenAI's models used through a ChatGPT plan (Sign in with ChatGPT).

Plan usage serves OpenAI's public Responses API in a narrower dialect: requests stream and set `store=false`, the
system prompt goes out as a `developer` message, sampling, output-limit and service-tier fields are refused, only
`POST /v1/responses` is served (no batch API, no input token counting), explicit prompt caching is not offered, and
web search is the only hosted tool (no `tool_search`, so deferred tools are searched locally).
"""

from __future__ import annotations as _annotations

from ..native_tools import WebSearchTool
from . import ModelProfile, merge_profile
from .openai import OpenAIModelProfile, openai_model_profile

__all__ = ('openai_chatgpt_model_profile',)


def openai_chatgpt_model_profile(model_name: str) -> ModelProfile:
    """OpenAI's profile of the model, narrowed to what ChatGPT plan usage accepts."""
    return merge_profile(
        openai_model_profile(model_name),
        OpenAIModelProfile(
            # Generic settings the route refuses are dropped; explicit `openai_*` ones still go out, so the API
            # reports what it does not take.
            openai_unsupported_model_settings=('max_tokens', 'service_tier', 'temperature', 'top_p'),
            openai_system_prompt_role='developer',
            openai_responses_requires_streaming=True,
            openai_responses_requires_store_false=True,
            openai_supports_batch_api=False,
            openai_supports_prompt_cache_breakpoints=False,
            openai_responses_supports_prompt_cache_diagnostics=False,
            openai_responses_supports_max_reasoning_effort=False,  # not known to be taken on plan usage
            supports_cache=False,
            supported_cache_retentions=(),
            default_cache_retention=None,
            supported_native_tools=frozenset({WebSearchTool}),
            tool_deferral_mode=None,
        ),
    )
