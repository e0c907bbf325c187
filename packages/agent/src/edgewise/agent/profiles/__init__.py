"""Model profiles: what a family of models accepts, whatever the class or the provider used to reach it.

A profile says, for instance, whether a model takes strict tool schemas, which JSON-schema transformer its
API needs, how it asks for structured output by default, and where its thinking appears.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Self, TypeAlias

__all__ = ('ModelProfile', 'ModelProfileSpec', 'DEFAULT_PROFILE', 'StructuredOutputMode')

StructuredOutputMode: TypeAlias = Literal['tool', 'native', 'prompted']
"""The ways of asking a model for structured output."""

_PROMPTED_OUTPUT_TEMPLATE = """
Always respond with a JSON object that's compatible with this schema:

{schema}

Don't include any text or Markdown fencing before or after.
"""


@dataclass(kw_only=True)
class ModelProfile:
    """How requests to and responses from a family of models are built, independent of model and provider."""

    supports_tools: bool = True
    """Whether the model takes tools."""
    supports_json_schema_output: bool = False
    """Whether the model can be held to a JSON schema (native structured output, `NativeOutput`)."""
    supports_json_object_output: bool = False
    """Whether the model has a JSON mode that needs no schema (used with `PromptedOutput`)."""
    supports_image_output: bool = False
    """Whether the model can return images."""
    supports_inline_system_prompts: bool = False
    """Whether system prompts may appear anywhere in a conversation, not only at its start."""
    default_structured_output_mode: StructuredOutputMode = 'tool'
    """The structured output mode used when the output type does not say."""
    prompted_output_template: str = _PROMPTED_OUTPUT_TEMPLATE
    """The instructions for prompted structured output; `{schema}` is replaced by the JSON schema."""
    native_output_requires_schema_in_instructions: bool = False
    """Whether native structured output also needs the schema in the instructions."""
    json_schema_transformer: type[Any] | None = None
    """The transformer class (`transformer(schema, strict=...).walk()`) that adapts schemas to the model's API."""
    supports_thinking: bool = False
    """Whether the model's thinking can be configured."""
    thinking_always_enabled: bool = False
    """Whether the model always thinks (reasoning models)."""
    thinking_tags: tuple[str, str] = ('<think>', '</think>')
    """The tags around thinking in models that write it into their text."""
    ignore_streamed_leading_whitespace: bool = False
    """Whether whitespace at the start of a streamed text is dropped (models that send it before tool calls)."""

    @classmethod
    def from_profile(cls, profile: ModelProfile | None) -> Self:
        """`profile` as an instance of this class: itself if it is one, else this class's defaults updated by it."""
        if isinstance(profile, cls):
            return profile
        return cls().update(profile)

    def update(self, profile: ModelProfile | None) -> Self:
        """A copy of this profile with the fields `profile` sets to a non-default value."""
        if not profile:
            return self
        names = {f.name for f in fields(self)}
        changed: dict[str, Any] = {
            f.name: getattr(profile, f.name)
            for f in fields(profile)
            if f.name in names and getattr(profile, f.name) != f.default
        }
        return replace(self, **changed)


ModelProfileSpec: TypeAlias = ModelProfile | Callable[[str], ModelProfile | None]
"""A profile, or a function of the model name that returns one."""

DEFAULT_PROFILE = ModelProfile()
"""The profile of a model nothing is known about."""
