"""The profiles of Meta's models: Llama (served by many providers) and Muse (Meta's own Model API)."""

from __future__ import annotations as _annotations

from ..native_tools import WebSearchTool
from . import InlineDefsJsonSchemaTransformer, ModelProfile
from .openai import OpenAIModelProfile

__all__ = ('meta_model_profile', 'muse_model_profile')

_MUSE_TEXT_MODELS = ('muse-spark-', 'muse-wonder-')


def meta_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Llama model: its tool schemas must not use `$defs`."""
    return ModelProfile(json_schema_transformer=InlineDefsJsonSchemaTransformer)


def muse_model_profile(model_name: str) -> OpenAIModelProfile | None:
    """The profile of a Muse model on Meta's Model API, or `None` for another model.

    Muse always reasons (its effort can be lowered, not turned off), keeps its encrypted reasoning and the phase of
    its messages across turns, writes JSON to a schema, searches the web on the provider's side, and takes a million
    tokens (2**20) of context.
    """
    if not model_name.startswith(_MUSE_TEXT_MODELS):
        return None
    return OpenAIModelProfile(
        supports_thinking=True,
        thinking_always_enabled=True,
        thinking_enabled_by_default=True,
        openai_supports_encrypted_reasoning_content=True,
        openai_supports_phase=True,
        supports_json_schema_output=True,
        supports_json_object_output=True,
        openai_chat_supports_web_search=True,
        supported_native_tools=frozenset({WebSearchTool}),
        context_window=1_048_576,
    )
