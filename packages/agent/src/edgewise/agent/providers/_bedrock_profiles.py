"""What the Converse API takes from each model family on Bedrock: `BedrockModelProfile` and a function per family.

A Bedrock model id is `[geo.]<family>.<name>[-v<n>[:<m>]]` (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`), or
an inference-profile / foundation-model ARN ending in one. The family picks the profile: the family's own (from
`edgewise.agent.profiles`) with what Converse changes on top (no native tools, which files a tool result takes,
whether tool choice and prompt caching work, how thinking is asked for).
"""

from __future__ import annotations as _annotations

import re
from collections.abc import Callable
from typing import Literal, cast

from ..profiles import ModelProfile, merge_profile
from ..profiles._json_schema import JsonSchema, JsonSchemaTransformer
from ..profiles.amazon import amazon_model_profile
from ..profiles.anthropic import AnthropicModelProfile, anthropic_model_profile
from ..profiles.cohere import cohere_model_profile
from ..profiles.deepseek import deepseek_model_profile
from ..profiles.google import google_model_profile
from ..profiles.meta import meta_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.moonshotai import moonshotai_model_profile
from ..profiles.qwen import qwen_model_profile
from ..profiles.zai import zai_model_profile

__all__ = (
    'BEDROCK_GEO_PREFIXES',
    'BedrockJsonSchemaTransformer',
    'BedrockModelProfile',
    'bedrock_model_profile',
    'remove_bedrock_geo_prefix',
    'split_bedrock_model_id',
)

BEDROCK_GEO_PREFIXES: tuple[str, ...] = ('us', 'eu', 'apac', 'jp', 'au', 'ca', 'in', 'global', 'us-gov')
"""The prefixes of cross-region inference profile ids (`us.anthropic.claude-...`)."""

_VERSION = re.compile(r'(.+)-v\d+(?::\d+)?$')
_ARN = re.compile(r'^arn:[^:]+:bedrock:[^:]*:[^:]*:(?:inference-profile|foundation-model)/(.+)$')


def remove_bedrock_geo_prefix(model_name: str) -> str:
    """The model id without its cross-region prefix (`us.amazon.nova-pro-v1:0` -> `amazon.nova-pro-v1:0`)."""
    for prefix in BEDROCK_GEO_PREFIXES:
        if model_name.startswith(f'{prefix}.'):
            return model_name[len(prefix) + 1 :]
    return model_name


def split_bedrock_model_id(model_id: str) -> tuple[str | None, str]:
    """The family and the bare name of a Bedrock model id or ARN (`None` for an id without a family)."""
    if found := _ARN.match(model_id):
        model_id = found.group(1)
    family, _, name = remove_bedrock_geo_prefix(model_id).partition('.')
    if not name:
        return None, model_id
    if found := _VERSION.match(name):
        name = found.group(1)
    return family, name


class BedrockModelProfile(ModelProfile, total=False):
    """A profile with what the Converse API takes from a model (keys prefixed `bedrock_`, so that profiles merge)."""

    bedrock_supports_tool_choice: bool
    """Whether `toolConfig.toolChoice` is sent (default `False`)."""
    bedrock_tool_result_format: Literal['text', 'json']
    """Whether a tool's result goes back as a `text` or a `json` block (default `'text'`)."""
    bedrock_send_back_thinking_parts: bool
    """Whether the model's own reasoning goes back to it as `reasoningContent` (default `False`)."""
    bedrock_supports_prompt_caching: bool
    """Whether `cachePoint` blocks are sent in messages and the system prompt (default `False`)."""
    bedrock_supports_tool_caching: bool
    """Whether a `cachePoint` may follow the tool definitions (default `False`)."""
    bedrock_supported_media_kinds_in_tool_returns: frozenset[Literal['image', 'document', 'video']]
    """The kinds of file a `toolResult` may hold (default images only); others follow in the user turn."""
    bedrock_tool_result_colocatable_content: frozenset[Literal['text', 'image', 'document', 'video']]
    """Block kinds the model takes in the same user message as a `toolResult` (default all)."""
    bedrock_supports_leading_assistant_message: bool
    """Whether a conversation may start with an assistant turn (default `False`: a user turn is put first)."""
    bedrock_supports_citations: bool
    """Whether documents may ask for citations (default `False`)."""
    bedrock_supports_tool_result_status: bool
    """Whether a `toolResult` may carry `status` (default `True`)."""
    bedrock_supports_strict_tool_definition: bool
    """Whether `toolSpec.strict` is sent (default `False`)."""
    bedrock_thinking_variant: (
        Literal['anthropic', 'deepseek', 'openai', 'openai_responses', 'qwen', 'xai', 'zai', 'zai_effort'] | None
    )
    """How the unified `thinking` setting is written in `additionalModelRequestFields` (default `None`: it is not)."""
    bedrock_supports_adaptive_thinking: bool
    """Whether a Claude model takes `thinking: {type: adaptive}` (default `False`)."""
    bedrock_supports_effort: bool
    """Whether a Claude model takes `output_config.effort` beside adaptive thinking (default `False`)."""
    bedrock_top_k_variant: Literal['anthropic', 'nova'] | None
    """Where `top_k` goes in `additionalModelRequestFields` (default `None`: it is dropped)."""
    bedrock_tool_choice_none_variant: Literal['anthropic'] | None
    """How `tool_choice='none'` is said once the history has tool calls (default `None`)."""
    bedrock_document_cache_point_variant: Literal['anthropic'] | None
    """Where a cache point goes when a message ends with documents (default `None`)."""
    bedrock_disallows_sampling_settings: bool
    """Whether `temperature`, `top_p` and `top_k` are refused (and so dropped) (default `False`)."""
    bedrock_supported_on_converse: bool
    """Whether the Converse API serves the model at all (default `True`)."""


_STRICT_UNSUPPORTED: dict[str, tuple[str, ...]] = {
    'number': ('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'),
    'integer': ('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'),
    'array': ('maxItems',),
}


class BedrockJsonSchemaTransformer(JsonSchemaTransformer):
    """Bedrock's schema dialect: no `title` or `$schema`; in strict mode (only when asked for: `strict=True`) closed
    objects, and the numeric and array limits Bedrock refuses moved into the description as a hint."""

    def walk(self) -> JsonSchema:
        """The transformed schema; strict only when `strict=True` was asked for."""
        schema = super().walk()
        self.is_strict_compatible = self.strict is True
        return schema

    def transform(self, schema: JsonSchema) -> JsonSchema:
        """Rewrite one sub-schema."""
        schema.pop('title', None)
        schema.pop('$schema', None)
        if not self.strict:
            return schema
        kind = schema.get('type')
        if kind == 'object':
            schema['additionalProperties'] = False
        notes: list[str] = []
        if isinstance(kind, str):
            for key in _STRICT_UNSUPPORTED.get(kind, ()):
                if key in schema:
                    notes.append(f'{key}={schema.pop(key)}')
            if kind == 'array' and schema.get('minItems', 0) > 1:
                notes.append(f'minItems={schema.pop("minItems")}')
        if notes:
            joined = ', '.join(notes)
            description = schema.get('description')
            schema['description'] = f'{description} ({joined})' if description else joined
        return schema


_NO_NATIVE_TOOLS = ModelProfile(supported_native_tools=frozenset(), supports_video_input=False)


def _anthropic(name: str) -> ModelProfile:
    family = cast(AnthropicModelProfile, anthropic_model_profile(name) or AnthropicModelProfile())
    adaptive = family.get('anthropic_supports_adaptive_thinking', False)
    return merge_profile(
        family,
        _NO_NATIVE_TOOLS,
        BedrockModelProfile(
            json_schema_transformer=BedrockJsonSchemaTransformer,
            bedrock_supports_tool_choice=True,
            bedrock_send_back_thinking_parts=True,
            bedrock_supports_prompt_caching=True,
            bedrock_supports_tool_caching=True,
            bedrock_supported_media_kinds_in_tool_returns=frozenset({'image', 'document'}),
            bedrock_tool_result_colocatable_content=frozenset({'text', 'image'}),
            bedrock_supports_leading_assistant_message=True,
            bedrock_supports_citations=True,
            bedrock_thinking_variant='anthropic',
            bedrock_supports_adaptive_thinking=adaptive,
            bedrock_supports_effort=adaptive and family.get('anthropic_supports_effort', False),
            bedrock_top_k_variant='anthropic',
            bedrock_tool_choice_none_variant='anthropic',
            bedrock_document_cache_point_variant='anthropic',
        ),
    )


def _amazon(name: str) -> ModelProfile:
    profile = merge_profile(amazon_model_profile(name), ModelProfile(supported_native_tools=frozenset()))
    if 'nova' in name:
        profile = merge_profile(
            profile,
            BedrockModelProfile(
                bedrock_supports_tool_choice=True, bedrock_supports_prompt_caching=True, bedrock_top_k_variant='nova'
            ),
        )
    return profile


def _meta(name: str) -> ModelProfile:
    return merge_profile(
        meta_model_profile(name),
        _NO_NATIVE_TOOLS,
        BedrockModelProfile(
            bedrock_tool_result_colocatable_content=frozenset(),
            bedrock_supported_media_kinds_in_tool_returns=frozenset({'image', 'document'}),
        ),
    )


def _mistral(name: str) -> ModelProfile:
    structured = name.startswith(('magistral-small', 'ministral-3', 'mistral-large-3', 'voxtral'))
    return merge_profile(
        mistral_model_profile(name),
        _NO_NATIVE_TOOLS,
        BedrockModelProfile(
            bedrock_tool_result_format='json',
            json_schema_transformer=BedrockJsonSchemaTransformer,
            supports_json_schema_output=structured,
            bedrock_supports_strict_tool_definition=structured,
            bedrock_tool_result_colocatable_content=frozenset(),
            bedrock_supported_media_kinds_in_tool_returns=frozenset({'document'}),
        ),
    )


def _deepseek(name: str) -> ModelProfile:
    profile = merge_profile(deepseek_model_profile(name), _NO_NATIVE_TOOLS)
    if 'r1' in name:
        return merge_profile(profile, BedrockModelProfile(bedrock_send_back_thinking_parts=True))
    if name == 'v3.2':
        return merge_profile(profile, BedrockModelProfile(supports_thinking=True, bedrock_thinking_variant='deepseek'))
    return profile


def _qwen(name: str) -> ModelProfile:
    structured = name.startswith('qwen3')
    return merge_profile(
        qwen_model_profile(name),
        _NO_NATIVE_TOOLS,
        BedrockModelProfile(
            bedrock_supports_leading_assistant_message=True,
            bedrock_thinking_variant='qwen',
            supports_thinking=('qwq' in name or 'qwen3' in name) and 'qwen3-coder' not in name,
            json_schema_transformer=BedrockJsonSchemaTransformer,
            supports_json_schema_output=structured,
            bedrock_supports_strict_tool_definition=structured,
            supports_json_object_output=False,
            bedrock_supported_media_kinds_in_tool_returns=frozenset(),
        ),
    )


def _google(name: str) -> ModelProfile:
    structured = name.startswith(('gemma-3-12b-it', 'gemma-3-27b-it'))
    return merge_profile(
        google_model_profile(name),
        _NO_NATIVE_TOOLS,
        BedrockModelProfile(
            json_schema_transformer=BedrockJsonSchemaTransformer,
            supports_json_schema_output=structured,
            bedrock_supports_strict_tool_definition=structured,
            supports_json_object_output=False,
            supports_tool_return_schema=False,
        ),
    )


def _zai(name: str) -> ModelProfile:
    return merge_profile(
        zai_model_profile(name),
        _NO_NATIVE_TOOLS,
        BedrockModelProfile(
            bedrock_supports_tool_choice=True,
            bedrock_supports_leading_assistant_message=True,
            json_schema_transformer=BedrockJsonSchemaTransformer,
            supports_json_schema_output=True,
            bedrock_supports_strict_tool_definition=True,
            bedrock_thinking_variant='zai_effort' if name.startswith('glm-5.3') else 'zai',
        ),
    )


def _openai(name: str) -> ModelProfile:
    if name.startswith('gpt-oss'):
        return BedrockModelProfile(
            bedrock_thinking_variant='openai', supports_thinking=True, thinking_always_enabled=True,
            supported_native_tools=frozenset(), supports_video_input=False,
        )  # fmt: skip
    if name in {'gpt-5.6-sol', 'gpt-5.6-luna', 'gpt-5.6-terra', 'gpt-6-sol', 'gpt-6-luna', 'gpt-6-astra'}:
        return BedrockModelProfile(
            bedrock_disallows_sampling_settings=True, bedrock_thinking_variant='openai_responses',
            supports_thinking=True, supported_native_tools=frozenset(), supports_video_input=False,
        )  # fmt: skip
    return BedrockModelProfile(bedrock_supported_on_converse=False)


def _plain(family_profile: Callable[[str], ModelProfile | None]) -> Callable[[str], ModelProfile]:
    return lambda name: merge_profile(family_profile(name), _NO_NATIVE_TOOLS)


def _writer(name: str) -> ModelProfile:
    return BedrockModelProfile(
        supported_native_tools=frozenset(), supports_video_input=False,
        json_schema_transformer=BedrockJsonSchemaTransformer,
        bedrock_tool_result_colocatable_content=frozenset(), bedrock_supports_tool_result_status=False,
    )  # fmt: skip


_FAMILIES: dict[str, Callable[[str], ModelProfile]] = {
    'anthropic': _anthropic,
    'amazon': _amazon,
    'meta': _meta,
    'mistral': _mistral,
    'cohere': _plain(cohere_model_profile),
    'deepseek': _deepseek,
    'qwen': _qwen,
    'google': _google,
    'zai': _zai,
    'moonshot': _plain(moonshotai_model_profile),
    'moonshotai': _plain(moonshotai_model_profile),
    'openai': _openai,
    'writer': _writer,
}


def bedrock_model_profile(model_id: str) -> ModelProfile | None:
    """The profile of a Bedrock model id (or ARN), by its family; `None` for a family not known here."""
    family, name = split_bedrock_model_id(model_id)
    found = _FAMILIES.get(family or '')
    return found(name) if found is not None else None
