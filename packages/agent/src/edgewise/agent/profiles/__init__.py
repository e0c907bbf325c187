"""Model profiles: what a model family accepts, independent of the API and provider that reach it.

A profile says whether the model takes tools and native structured output, which JSON-schema dialect its
tool schemas must follow (`json_schema_transformer`), how it shows its reasoning (`thinking_tags`), and so
on. Per-family profile functions live in the submodules (`openai_model_profile`, `anthropic_model_profile`,
...); a provider combines the family's profile with its own quirks (`ModelProfile.update`).
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Self, TypeAlias

from ..native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ._json_schema import InlineDefsJsonSchemaTransformer, JsonSchema, JsonSchemaTransformer

__all__ = (
    'ModelProfile',
    'ModelProfileSpec',
    'DEFAULT_PROFILE',
    'StructuredOutputMode',
    'JsonSchema',
    'JsonSchemaTransformer',
    'InlineDefsJsonSchemaTransformer',
)

StructuredOutputMode: TypeAlias = Literal['tool', 'native', 'prompted']
"""How structured output is asked of a model."""

_PROMPTED_OUTPUT_TEMPLATE = """
Always respond with a JSON object that's compatible with this schema:

{schema}

Don't include any text or Markdown fencing before or after.
"""


@dataclass(kw_only=True)
class ModelProfile:
    """What a model (family) accepts and how its answers look, whatever API or provider reaches it."""

    supports_tools: bool = True
    """Whether the model can call tools."""
    supports_tool_return_schema: bool = False
    """Whether the API takes a return schema with each tool definition."""
    supports_json_schema_output: bool = False
    """Whether the model can be held to a JSON schema for its answer (native structured output)."""
    supports_json_object_output: bool = False
    """Whether the API has a JSON mode (valid JSON, no schema), used for prompted output."""
    supports_image_output: bool = False
    """Whether the model can return images."""
    supports_audio_input: bool = False
    """Whether the model takes audio in user prompts: a spoken turn's kept audio is then sent instead of its
    transcript (`Model.prepare_messages`)."""
    supports_inline_system_prompts: bool = False
    """Whether system prompts may appear anywhere in the conversation, not only at its start."""
    default_structured_output_mode: StructuredOutputMode = 'tool'
    """The output mode used when the output type names none."""
    prompted_output_template: str = _PROMPTED_OUTPUT_TEMPLATE
    """Instructions for prompted output; `{schema}` is replaced by the output's JSON schema."""
    native_output_requires_schema_in_instructions: bool = False
    """Whether native output also needs the prompted-output instructions."""
    json_schema_transformer: type[JsonSchemaTransformer] | None = None
    """Rewrites tool and output schemas into the dialect the model's API accepts (`None`: sent as they are)."""
    supports_thinking: bool = False
    """Whether the model's reasoning can be switched on and tuned."""
    thinking_always_enabled: bool = False
    """Whether the model always reasons (it cannot be switched off)."""
    thinking_tags: tuple[str, str] = ('<think>', '</think>')
    """The tags that enclose reasoning inside the model's text."""
    ignore_streamed_leading_whitespace: bool = False
    """Whether streamed text that is only whitespace so far (e.g. after an empty `<think></think>`) is ignored."""
    supported_native_tools: frozenset[type[AbstractNativeTool]] = SUPPORTED_NATIVE_TOOLS
    """The native tools the model can use, of those its API takes (`Model.supported_native_tools()`)."""

    @classmethod
    def from_profile(cls, profile: ModelProfile | None) -> Self:
        """`profile` as an instance of this class: itself if it is one, else this class's defaults updated by it."""
        if isinstance(profile, cls):
            return profile
        return cls().update(profile)

    def update(self, profile: ModelProfile | None) -> Self:
        """A copy of this profile with every field that `profile` sets to a non-default value taken from it.

        Only fields this profile's class has are taken, so a family profile can be merged into a provider's
        profile of another subclass.
        """
        if profile is None:
            return self
        own = {f.name for f in fields(self)}
        changes: dict[str, Any] = {}
        for f in fields(profile):
            value = getattr(profile, f.name)
            if f.name in own and value != f.default:
                changes[f.name] = value
        return replace(self, **changes)


ModelProfileSpec: TypeAlias = ModelProfile | Callable[[str], ModelProfile | None]
"""A profile, or a function from a model name to its profile (`None`: the defaults)."""

DEFAULT_PROFILE = ModelProfile()
"""The profile of a model nothing is known about."""
