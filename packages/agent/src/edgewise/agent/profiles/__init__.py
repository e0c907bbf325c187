"""Model profiles: what a model family accepts, independent of the API and provider that reach it.

A profile says whether the model takes tools and native structured output, which JSON-schema dialect its
tool schemas must follow (`json_schema_transformer`), how it shows its reasoning (`thinking_tags`), and so
on. As in pydantic-ai 2.x, a profile is a `TypedDict` (`total=False`): a plain dict whose absent keys take
the values of `DEFAULT_PROFILE`. Per-family profile functions live in the submodules
(`openai_model_profile`, `anthropic_model_profile`, ...); a provider layers its own quirks over the
family's profile with `merge_profile`, and a model layers the user's `profile=` over the provider's.

Profiles were dataclasses in pydantic-ai 1.x (and in Edgewise before it followed 2.x): read them with
`profile['key']` (or `.get`) instead of attributes, and combine them with `merge_profile(base, override)`
instead of `base.update(override)`.
"""

from __future__ import annotations as _annotations

import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Literal, TypeAlias, cast, get_args

from typing_extensions import TypedDict

from .._messages.content import DocumentMediaType
from .._warnings import PydanticAIDeprecationWarning
from ..native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ..output import StructuredOutputMode
from ..settings import CacheRetention, FramingAnnouncement
from ._cache_outlook import PromptCacheOutlook, prompt_cache_outlook
from ._json_schema import InlineDefsJsonSchemaTransformer, JsonSchema, JsonSchemaTransformer

__all__ = (
    'ModelProfile',
    'ModelProfileSpec',
    'DEFAULT_PROFILE',
    'DEFAULT_PROMPTED_OUTPUT_TEMPLATE',
    'DEFAULT_THINKING_TAGS',
    'StructuredOutputMode',
    'ToolAdditionMode',
    'ToolDeferralMode',
    'JsonSchema',
    'JsonSchemaTransformer',
    'InlineDefsJsonSchemaTransformer',
    'merge_profile',
    'PromptCacheOutlook',
    'prompt_cache_outlook',
)


ToolDeferralMode: TypeAlias = Literal['standalone', 'with_tool_search']
"""When a provider takes a tool whose schema is held back from the model (`defer_loading` on the wire):
`'standalone'` on its own (Anthropic), `'with_tool_search'` only next to its tool search tool (OpenAI Responses)."""

ToolAdditionMode: TypeAlias = Literal['by_reference', 'with_definitions']
"""How a provider is told of tools added mid-conversation: `'by_reference'` names a tool the request already
declares (Anthropic's `tool_addition` blocks), `'with_definitions'` carries the new tools' definitions (OpenAI
Responses' `additional_tools` items)."""

DEFAULT_PROMPTED_OUTPUT_TEMPLATE = """
Always respond with a JSON object that's compatible with this schema:

{schema}

Don't include any text or Markdown fencing before or after.
"""
"""The instructions of prompted output when the profile gives none; `{schema}` is replaced by the schema."""

DEFAULT_THINKING_TAGS: tuple[str, str] = ('<think>', '</think>')
"""The `(start, end)` tags that enclose reasoning in a model's text when the profile gives none."""


class ModelProfile(TypedDict, total=False):
    """What a model (family) accepts and how its answers look, whatever API or provider reaches it.

    Every key is optional: an absent key means the value in `DEFAULT_PROFILE` (given below per key). The
    family subclasses (`OpenAIModelProfile`, `AnthropicModelProfile`, ...) add their own keys; profiles of
    different subclasses merge with `merge_profile`.
    """

    supports_tools: bool
    """Whether the model can call tools (default `True`)."""
    supports_text_output: bool
    """Whether the model can answer in text (default `True`)."""
    supports_tool_return_schema: bool
    """Whether the API takes a return schema with each tool definition (default `False`)."""
    supports_json_schema_output: bool
    """Whether the model can be held to a JSON schema for its answer, native structured output (default `False`)."""
    supports_json_object_output: bool
    """Whether the API has a JSON mode (valid JSON, no schema), used for prompted output (default `False`)."""
    supports_image_output: bool
    """Whether the model can return images (default `False`)."""
    supports_audio_input: bool
    """Whether the model takes audio in user prompts: a spoken turn's kept audio is then sent instead of its
    transcript by `Model.prepare_messages` (default `False`)."""
    supports_image_input: bool
    """Whether the model reads images in user prompts and tool results (default `True`; `FileUnderstanding`
    describes them for a model that does not)."""
    supports_audio_file_input: bool
    """Whether the model reads audio files (default `True`; see `supports_image_input`)."""
    supports_video_input: bool
    """Whether the model reads videos (default `True`; see `supports_image_input`)."""
    supports_document_input: bool
    """Whether the model reads documents (default `True`; see `supports_image_input`)."""
    supported_document_media_types: frozenset[str]
    """The document media types the model reads, of those `DocumentMediaType` names (default: all of them)."""
    supports_inline_system_prompts: bool
    """Whether system prompts may appear anywhere in the conversation, not only at its start (default `False`).
    Where not, a system prompt after the run's standing one is sent in its user turn as a `<system>` block (see
    `edgewise.agent.framing`)."""
    needs_sealed_system_blocks: bool
    """Whether the model follows those `<system>` blocks better marked and placed after the user's words (default
    `False`): each then opens with `<system verified>` and goes after the user prompt of its request, and the
    announcement (`default_framing_announcement`) says so. Only meaningful without `supports_inline_system_prompts`."""
    supports_request_scoped_system_prompts: bool
    """Whether the API keeps a request-scoped system prompt (`SystemPromptPart(scope='request')`) in the conversation
    and itself stops showing it to the model once a later user turn exists (default `False`).

    Where `True`, every such part of the history is sent, each time in the same place, so the cached prefix (and
    reasoning bound to it) stays valid: `AnthropicModel` sends it as a `system` entry with
    `clear_at: 'next_user_message'` (a `<system>` block inside it where the profile lacks
    `supports_inline_system_prompts`). Where `False`, `Model.prepare_messages` leaves the part out of every request
    after its own, and it goes at the end of its request like any other system prompt after the standing one. Set it
    only where the adapter renders such an entry (`AnthropicModel`): elsewhere a request-scoped part would be sent
    as a lasting system prompt with every later request. `AnthropicProvider` sets it for the Claude models that take
    the entry."""
    default_framing_announcement: FramingAnnouncement
    """The default of the `framing_announcement` model setting (default `'when_needed'`). Without
    `supports_inline_system_prompts` it chooses when the system prompt opens with the announcement; with it, only
    `'never'` matters (no system message announcing the lookalike notes)."""
    may_tokenize_special_tokens_in_content: bool
    """Whether the route may read chat-template special tokens in message content (a literal `<|im_start|>` in a
    tool result) as real control tokens (default `False`). Where `True`, the copy of the history sent to the
    provider has a zero-width joiner inside each such token in user prompts, tool results and tool calls, and replayed
    model text, so no tokenizer matches it; the joiner is removed again from the text and tool call arguments of
    each non-streamed response. Stored history keeps the text as written."""
    default_structured_output_mode: StructuredOutputMode
    """The output mode used when the output type names none (default `'tool'`)."""
    prompted_output_template: str
    """Instructions for prompted output; `{schema}` is replaced by the output's JSON schema (default
    `DEFAULT_PROMPTED_OUTPUT_TEMPLATE`)."""
    native_output_requires_schema_in_instructions: bool
    """Whether native output also needs the prompted-output instructions (default `False`)."""
    json_schema_transformer: type[JsonSchemaTransformer] | None
    """Rewrites tool and output schemas into the dialect the model's API accepts (default `None`: sent as
    they are)."""
    supports_cache: bool
    """Whether the provider's prompt cache is configured on the request, so the unified `cache` setting (and the
    `Caching` capability) has something to turn on (default `False`: the model caches by itself or not at all, and
    the setting is ignored). A fact of the provider's API, so providers set it, not the family profiles."""
    supports_auto_cache: bool
    """Whether the provider can place and move the conversation's cache breakpoint itself, switched on by one
    request parameter (default `False`: the library marks the conversation's last block instead)."""
    supported_cache_retentions: tuple[CacheRetention, ...]
    """The retention tiers a request can ask the provider's cache for, shortest first (default `()`: none, so a
    requested retention caches at the provider's default). A requested tier the provider lacks is snapped down to
    the nearest it has; a `CachePoint.ttl` in the history counts for `prompt_cache_outlook` only if it is one."""
    default_cache_retention: timedelta | None
    """How long the provider keeps an unused cached prefix when the request asks for no retention (default `None`:
    not documented). Set by providers; read by `prompt_cache_outlook` and `Model.resolve_cache_retention`."""
    supports_thinking: bool
    """Whether the model's reasoning can be switched on and tuned (default `False`)."""
    thinking_always_enabled: bool
    """Whether the model always reasons and cannot be switched off (default `False`); `thinking=False` is then
    ignored."""
    thinking_enabled_by_default: bool
    """Whether the model reasons when the request says nothing of thinking (default `False`). Unlike
    `thinking_always_enabled`, it can be switched off; it decides whether a request without a thinking setting
    thinks, e.g. for `supports_forced_tool_choice_with_thinking`. The older OpenAI key
    `openai_reasoning_enabled_by_default` still works with a deprecation warning."""
    supports_mid_conversation_effort: bool
    """Whether the API can change the thinking effort from a point of the conversation on (default `False`).
    Declared for pydantic-ai 2.68's profiles; Edgewise's adapters render no such change yet, so
    `Model.prepare_messages` drops `ModelSettingsDeltaPart`s whatever this says and the current effort goes out
    as the request's setting."""
    thinking_tags: tuple[str, str]
    """The tags that enclose reasoning inside the model's text (default `DEFAULT_THINKING_TAGS`)."""
    mimics_assistant_message_formatting: bool
    """Whether the model copies markup it sees in earlier assistant turns into its own answers (default `False`).

    Reasoning that cannot go back through the model's own reasoning channel (unsigned, or from another provider)
    is sent as text. Normally it stays in its assistant turn, between `thinking_tags`. When this is `True` it goes
    in a user message just before that assistant turn instead, framed as `<assistant_thinking>`, so a model that
    imitates its earlier turns does not start writing reasoning tags into its visible answers. Read by the
    Anthropic, Bedrock Converse, OpenAI Chat (and the models built on it) and OpenAI Responses adapters; Claude's
    profile sets it."""
    ignore_streamed_leading_whitespace: bool
    """Whether streamed text that is only whitespace so far (e.g. after an empty `<think></think>`) is
    ignored (default `False`)."""
    supported_native_tools: frozenset[type[AbstractNativeTool]]
    """The native tools the model can use, of those its API takes (default: all of them)."""
    supports_forced_tool_choice: bool
    """Whether the model can be made to call a tool (`tool_choice='required'` or one named tool; default `True`).
    Where it cannot, a forced choice the run makes itself (for an output tool) falls back to `'auto'`, and one
    asked for in `model_settings` is a `UserError`. pydantic-ai 2.x's one key for the provider-named keys of
    before (`openai_supports_tool_choice_required`, `grok_supports_tool_choice_required`,
    `anthropic_supports_forced_tool_choice`), which still work with a deprecation warning."""
    supports_forced_tool_choice_with_thinking: bool
    """Whether a tool call can be forced while the model thinks (default `True`); the older spellings
    `openai_supports_forced_tool_choice_with_thinking` and `openrouter_supports_forced_tool_choice_with_thinking`
    still work with a deprecation warning."""
    forced_tool_choice_disables_thinking: bool
    """Whether forcing a tool call keeps the model from thinking in that answer (default `False`): then a forced
    choice the run makes itself is not sent while thinking is on, and one asked for explicitly still is."""
    context_window: int | None
    """The most tokens the model takes in one request, input and output together (default `None`: unknown). When
    no profile layer sets it, `Model.context_window` looks it up in genai-prices' data (with the `prices` extra);
    `RunContext.context_window_used` measures the last response against it."""
    tool_call_id_length: int | None
    """The exact length of the ASCII letters-and-digits tool call ids the model takes (default `None`: any id).
    When set, `Model.prepare_messages` replaces each function tool call id that does not fit with a stable hash
    of it that does, in the calls and their results alike; the stored history keeps the original ids."""
    tool_deferral_mode: ToolDeferralMode | None
    """When the provider takes a tool with its schema held back until a search or a reveal shows it (default
    `None`: never, so a hidden tool is withheld from the request). A model uses the mode only if its class renders
    it (`Model.supported_tool_deferral_modes`); see `Model.tool_deferral_mode`."""
    tool_addition_mode: ToolAdditionMode | None
    """How the provider is told natively of tools revealed mid-run (default `None`: no native way, so
    `Model.prepare_messages` says it in a system prompt). A model uses the mode only if its class renders it
    (`Model.supported_tool_addition_modes`); see `Model.tool_addition_mode`."""
    tool_additions: ToolAdditionMode | None
    """Deprecated spelling of `tool_addition_mode`, translated (with a warning) when profiles are merged."""
    deferred_tools_require_tool_search: bool
    """Deprecated: `True` is `tool_deferral_mode='with_tool_search'`, translated (with a warning) when profiles
    are merged; `False` says nothing and is dropped."""


KNOWN_DOCUMENT_MEDIA_TYPES: frozenset[str] = frozenset(get_args(DocumentMediaType))
"""Every `DocumentMediaType`: what `ModelProfile.supported_document_media_types` is by default."""

DEFAULT_PROFILE: ModelProfile = {
    'supports_tools': True,
    'supports_text_output': True,
    'supports_tool_return_schema': False,
    'supports_json_schema_output': False,
    'supports_json_object_output': False,
    'supports_image_output': False,
    'supports_audio_input': False,
    'supports_image_input': True,
    'supports_audio_file_input': True,
    'supports_video_input': True,
    'supports_document_input': True,
    'supported_document_media_types': KNOWN_DOCUMENT_MEDIA_TYPES,
    'supports_inline_system_prompts': False,
    'supports_request_scoped_system_prompts': False,
    'needs_sealed_system_blocks': False,
    'default_framing_announcement': 'when_needed',
    'may_tokenize_special_tokens_in_content': False,
    'default_structured_output_mode': 'tool',
    'prompted_output_template': DEFAULT_PROMPTED_OUTPUT_TEMPLATE,
    'native_output_requires_schema_in_instructions': False,
    'json_schema_transformer': None,
    'supports_cache': False,
    'supports_auto_cache': False,
    'supported_cache_retentions': (),
    'default_cache_retention': None,
    'supports_thinking': False,
    'thinking_always_enabled': False,
    'thinking_enabled_by_default': False,
    'supports_mid_conversation_effort': False,
    'thinking_tags': DEFAULT_THINKING_TAGS,
    'mimics_assistant_message_formatting': False,
    'ignore_streamed_leading_whitespace': False,
    'supported_native_tools': SUPPORTED_NATIVE_TOOLS,
    'supports_forced_tool_choice': True,
    'supports_forced_tool_choice_with_thinking': True,
    'forced_tool_choice_disables_thinking': False,
    'context_window': None,
    'tool_call_id_length': None,
    'tool_deferral_mode': None,
    'tool_addition_mode': None,
}
"""Every key of `ModelProfile` at its default: the bottom layer of every model's resolved profile."""

ModelProfileSpec: TypeAlias = ModelProfile | Callable[[ModelProfile], ModelProfile]
"""What `profile=` on a model takes: a (partial) profile merged over the provider's profile for the model, or
a function given that resolved profile (`DEFAULT_PROFILE` merged in) and returning the profile to use."""


_RENAMED_KEYS: dict[str, str] = {
    'openai_supports_tool_choice_required': 'supports_forced_tool_choice',
    'grok_supports_tool_choice_required': 'supports_forced_tool_choice',
    'anthropic_supports_forced_tool_choice': 'supports_forced_tool_choice',
    'openai_supports_forced_tool_choice_with_thinking': 'supports_forced_tool_choice_with_thinking',
    'openrouter_supports_forced_tool_choice_with_thinking': 'supports_forced_tool_choice_with_thinking',
    'openai_reasoning_enabled_by_default': 'thinking_enabled_by_default',
}
"""Provider-named keys that pydantic-ai 2.x made keys of every profile, and their new names."""


def _current_spelling(layer: ModelProfile, base: ModelProfile | None = None) -> ModelProfile:
    """`layer` with its renamed keys under their new names (warning once per key).

    Two old spellings of one key in a layer must both allow the feature. A new spelling in the same layer wins,
    unless the layer was derived from `base` (a callable `profile=`'s result) and only carries `base`'s value.
    """
    if _RENAMED_KEYS.keys().isdisjoint(layer):
        return layer
    renamed: dict[str, object] = dict(layer)
    values: dict[str, bool] = {}
    for old, new in _RENAMED_KEYS.items():
        if old in renamed:
            warnings.warn(
                f'`ModelProfile` key `{old}` is deprecated, use `{new}` instead.',
                PydanticAIDeprecationWarning,
                stacklevel=4,
            )
            values[new] = values.get(new, True) and bool(renamed.pop(old))
    for new, value in values.items():
        if new not in renamed or (base is not None and renamed[new] == base.get(new)):
            renamed[new] = value
    return cast(ModelProfile, renamed)


def merge_profile(base: ModelProfile | None, *overrides: ModelProfile | None) -> ModelProfile:
    """One profile from layers: the keys of each later profile replace those of the earlier ones.

    `None` counts as an empty profile. The result is a new dict; the layers are left unchanged. This replaces
    the `base.update(override)` of dataclass profiles (which ignored values equal to a field's default: here
    every key an override holds wins). A key pydantic-ai 2.x renamed (`openai_supports_tool_choice_required`,
    ...) is read under its new name, with a deprecation warning, so an older spelling in a later layer still
    replaces the new one of an earlier layer.
    """
    merged: ModelProfile = {}
    for layer in (base, *overrides):
        if layer:
            merged.update(_current_keys(_current_spelling(layer)))
    return merged


def _current_keys(profile: ModelProfile) -> ModelProfile:
    # pydantic-ai 2.23's key names, renamed since: a key under its new name in the same profile wins.
    if 'tool_additions' not in profile and 'deferred_tools_require_tool_search' not in profile:
        return profile
    current = dict(profile)
    if 'tool_additions' in current:
        warnings.warn(
            '`ModelProfile` key `tool_additions` is deprecated, use `tool_addition_mode` instead.',
            PydanticAIDeprecationWarning,
            stacklevel=3,
        )
        current.setdefault('tool_addition_mode', current.pop('tool_additions'))
    if 'deferred_tools_require_tool_search' in current:
        warnings.warn(
            '`ModelProfile` key `deferred_tools_require_tool_search` is deprecated, use '
            "`tool_deferral_mode='with_tool_search'` instead.",
            PydanticAIDeprecationWarning,
            stacklevel=3,
        )
        if current.pop('deferred_tools_require_tool_search'):
            current.setdefault('tool_deferral_mode', 'with_tool_search')
    return cast(ModelProfile, current)


def resolve_profile(default: ModelProfile | None, spec: ModelProfileSpec | None) -> ModelProfile:
    """A model's profile: `DEFAULT_PROFILE`, then the provider's (or model class's) `default`, then `spec`.

    A dict `spec` is merged over the two; a callable one is given their merge and its result is the profile.

    Raises:
        TypeError: a callable `spec` returned something other than a dict.
    """
    resolved = merge_profile(DEFAULT_PROFILE, default)
    if spec is None:
        return resolved
    if callable(spec):
        given = spec(resolved)
        if not isinstance(given, dict):
            raise TypeError(
                f'A callable `profile=` must return a `ModelProfile` dict, got {type(given).__name__}: it is given '
                'the resolved profile (since pydantic-ai 2.x), not the model name.'
            )
        return _current_keys(_current_spelling(given, resolved))
    return merge_profile(resolved, spec)
