"""The profile of models reached through OpenAI's APIs, and of OpenAI's own models."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from . import ModelProfile

__all__ = ('OpenAIModelProfile', 'OpenAISystemPromptRole', 'openai_model_profile')

OpenAISystemPromptRole: TypeAlias = Literal['system', 'developer', 'user']
"""The role system prompts are sent with."""


@dataclass(kw_only=True)
class OpenAIModelProfile(ModelProfile):
    """A profile for models used through the OpenAI APIs; every field is `openai_`-prefixed so profiles merge."""

    openai_chat_thinking_field: str | None = None
    """The field of a Chat Completions message holding thinking text, when the server uses one of its own
    (`reasoning` and `reasoning_content` are always read)."""
    openai_chat_send_back_thinking_parts: Literal['auto', 'tags', 'field', False] = 'auto'
    """How thinking is sent back: `'auto'` in the field it came in (else in tags), `'tags'` in the text between
    the profile's `thinking_tags`, `'field'` in `openai_chat_thinking_field`, `False` not at all."""
    openai_supports_strict_tool_definition: bool = True
    """Whether tools and response formats may be marked `strict`."""
    openai_unsupported_model_settings: Sequence[str] = ()
    """Settings the server rejects; they are left out of requests."""
    openai_supports_tool_choice_required: bool = True
    """Whether the server accepts `tool_choice='required'`."""
    openai_system_prompt_role: OpenAISystemPromptRole | None = None
    """The role of system prompts; `'system'` when `None`."""
    supports_inline_system_prompts: bool = True
    """OpenAI's APIs take system messages anywhere in a conversation."""
    openai_chat_supports_multiple_system_messages: bool = True
    """Whether several system messages may open a conversation; when not, they are joined into one."""
    openai_supports_reasoning: bool = False
    """Whether the model reasons (o-series, GPT-5): sampling settings are then left out of requests."""
    openai_supports_reasoning_effort_none: bool = False
    """Whether the model takes sampling settings when its reasoning effort is `'none'` (GPT-5.1 and later)."""


def openai_model_profile(model_name: str) -> ModelProfile:
    """The profile of one of OpenAI's models, from its name."""
    gpt_5_1_plus = model_name.startswith(('gpt-5.1', 'gpt-5.2', 'gpt-5.3', 'gpt-5.4', 'gpt-5.5'))
    gpt_5 = model_name.startswith('gpt-5') and not gpt_5_1_plus
    always_thinks = model_name.startswith('o') or (gpt_5 and '-chat' not in model_name)
    reasons = (always_thinks or gpt_5_1_plus) and not model_name.startswith('gpt-5.3-chat')
    return OpenAIModelProfile(
        supports_json_schema_output=True,
        supports_json_object_output=True,
        supports_image_output=gpt_5 or gpt_5_1_plus or 'o3' in model_name or '4.1' in model_name or '4o' in model_name,
        supports_thinking=reasons,
        thinking_always_enabled=always_thinks,
        # o1-mini takes no system messages.
        openai_system_prompt_role='user' if model_name.startswith('o1-mini') else None,
        openai_supports_reasoning=reasons,
        openai_supports_reasoning_effort_none=gpt_5_1_plus and not model_name.startswith('gpt-5.3-chat'),
    )
