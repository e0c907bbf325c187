"""The profile of Alibaba's Qwen models."""

from __future__ import annotations as _annotations

import re

from . import InlineDefsJsonSchemaTransformer, ModelProfile
from .openai import OpenAIModelProfile

__all__ = ('qwen_model_profile',)

_QWEN_3_5 = re.compile(r'qwen-?3[.\-]5')


def qwen_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Qwen model: no `$defs` in schemas; an answer may open with whitespace (after `<think>`)."""
    if model_name.startswith('qwen-3-coder'):
        return OpenAIModelProfile(
            json_schema_transformer=InlineDefsJsonSchemaTransformer,
            supports_forced_tool_choice=False,
            openai_supports_strict_tool_definition=False,
            ignore_streamed_leading_whitespace=True,
        )
    native = bool(_QWEN_3_5.search(model_name))
    return ModelProfile(
        json_schema_transformer=InlineDefsJsonSchemaTransformer,
        ignore_streamed_leading_whitespace=True,
        supports_json_schema_output=native,
        supports_json_object_output=native,
    )
