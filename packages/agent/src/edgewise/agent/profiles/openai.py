"""The profile of OpenAI's models, and the JSON schema dialect of OpenAI's strict mode.

`OpenAIModelProfile` also carries the fields that OpenAI-compatible servers differ in (where thinking
appears, whether `tool_choice='required'` or strict tools are accepted, the system prompt's role, ...).
"""

from __future__ import annotations as _annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias, cast

from ..exceptions import UserError
from ..native_tools import SUPPORTED_NATIVE_TOOLS
from ..native_tools._tool_search import ToolSearchTool
from . import JsonSchema, JsonSchemaTransformer, ModelProfile

__all__ = (
    'OpenAIModelProfile',
    'OpenAISystemPromptRole',
    'OpenAIJsonSchemaTransformer',
    'openai_model_profile',
    'validate_openai_profile',
    'OPENAI_REASONING_EFFORT_MAP',
    'OpenAIReasoningEffort',
    'SAMPLING_PARAMS',
)

OpenAISystemPromptRole: TypeAlias = Literal['system', 'developer', 'user']
"""The role system prompts are sent with."""

OpenAIReasoningEffort: TypeAlias = Literal['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']
"""The values of `reasoning_effort` (Chat Completions) and `reasoning.effort` (Responses), least to most."""

OPENAI_REASONING_EFFORT_MAP: dict[bool | str, OpenAIReasoningEffort] = {
    True: 'medium',
    False: 'none',
    'minimal': 'minimal',
    'low': 'low',
    'medium': 'medium',
    'high': 'high',
    'xhigh': 'xhigh',
    'max': 'xhigh',
}
"""Provider-neutral thinking levels and OpenAI's `reasoning_effort` value for each. `'max'` is `'xhigh'` here: it
is sent as `'max'` only to a model whose profile says the API takes it (`openai_chat_supports_max_reasoning_effort`,
`openai_responses_supports_max_reasoning_effort`)."""

SAMPLING_PARAMS = (
    'temperature',
    'top_p',
    'presence_penalty',
    'frequency_penalty',
    'logit_bias',
    'openai_logprobs',
    'openai_top_logprobs',
)
"""Settings that OpenAI's reasoning models reject while they reason."""


class OpenAIModelProfile(ModelProfile, total=False):
    """A profile with the fields of OpenAI's APIs and compatible servers (all prefixed `openai_`)."""

    openai_chat_thinking_field: str | None
    """The Chat Completions message field holding reasoning text on some servers (`reasoning_content`,
    `reasoning`); `None` to look at those two (default `None`)."""
    openai_chat_send_back_thinking_parts: Literal['auto', 'tags', 'field', False]
    """How earlier reasoning is sent back: in the field it came in (`'auto'`, else in tags), inside the text
    between `thinking_tags` (`'tags'`), in `openai_chat_thinking_field` (`'field'`), or not at all (`False`)
    (default `'auto'`)."""
    openai_supports_strict_tool_definition: bool
    """Whether tool definitions may carry `strict: true` (default `True`)."""
    openai_supports_sampling_settings: bool
    """Deprecated in pydantic-ai 1.x (see `openai_unsupported_model_settings`); kept for compatibility
    (default `True`)."""
    openai_unsupported_model_settings: Sequence[str]
    """Settings the model rejects; they are left out of requests (default `()`)."""
    openai_supports_tool_choice_required: bool
    """Deprecated: use `supports_forced_tool_choice` (read under that name, with a deprecation warning)."""
    openai_reasoning_enabled_by_default: bool
    """Deprecated: use `thinking_enabled_by_default` (read under that name, with a deprecation warning)."""
    openai_system_prompt_role: OpenAISystemPromptRole | None
    """The role system prompts are sent with (`None`: `'system'`) (default `None`)."""
    openai_chat_supports_multiple_system_messages: bool
    """Whether several system messages may open a Chat conversation (else they are joined into one) (default `True`)."""
    openai_chat_supports_web_search: bool
    """Whether the Chat Completions model can search the web (the `-search-preview` models) (default `False`)."""
    openai_chat_audio_input_encoding: Literal['base64', 'uri']
    """How audio input is encoded in Chat requests: plain base64, or a data URI (default `'base64'`)."""
    openai_chat_supports_file_urls: bool
    """Whether Chat requests may give a document by URL instead of inline data (default `False`)."""
    openai_supports_encrypted_reasoning_content: bool
    """Whether the Responses API can return the reasoning encrypted, to be sent back in later requests
    (default `False`)."""
    openai_supports_reasoning: bool
    """Whether the model reasons (o-series, GPT-5 and later) (default `False`)."""
    openai_supports_reasoning_effort_none: bool
    """Whether `reasoning_effort='none'` is accepted (sampling settings are then allowed again) (default `False`).
    Not read when `openai_reasoning_efforts` is set: `'none'` in that set says it."""
    openai_supports_minimal_reasoning_effort: bool
    """Whether `reasoning_effort='minimal'` is accepted (default `True`; not on GPT-5.6 and GPT-6). Where it is not,
    `thinking='minimal'` is sent as `'low'`; an explicit `openai_reasoning_effort='minimal'` is sent as given. Not read
    when `openai_reasoning_efforts` is set."""
    openai_reasoning_efforts: frozenset[OpenAIReasoningEffort]
    """The efforts the model accepts, when known (default: unset). The unified `thinking` level is then sent as the
    lowest accepted effort at or above it (else the highest), and `thinking=False` as `'none'` if accepted, else as
    the lowest effort (so a model that always reasons reasons as little as it can); an empty set sends no effort.
    An explicit `openai_reasoning_effort` is sent as given."""
    openai_chat_supports_max_reasoning_effort: bool
    """Whether Chat Completions takes `reasoning_effort='max'` for the model (default `False`: OpenAI's own API does
    not; DeepSeek V4 and Kimi do). Where it does not, `thinking='max'` is sent as `'xhigh'`."""
    openai_responses_supports_max_reasoning_effort: bool
    """Whether the Responses API takes `reasoning.effort='max'` for the model (default `False`; `OpenAIProvider` sets
    it for GPT-5.6 and GPT-6). Where it does not, `thinking='max'` is sent as `'xhigh'`."""
    openai_chat_thinking_false_body: dict[str, Any]
    """Body fields that `thinking=False` sends on Chat Completions instead of a `reasoning_effort`, for servers that
    turn reasoning off another way (default: unset; e.g. `{'thinking': {'type': 'disabled'}}` for Kimi). They go out
    in `extra_body`, where the caller's own keys win; nothing is added when `openai_reasoning_effort` is set."""
    openai_responses_requires_function_call_status_none: bool
    """Whether function calls sent back to the Responses API must have no `status` (older vLLM) (default `False`)."""
    openai_supports_phase: bool
    """Whether Responses assistant messages carry a `phase` (commentary or final answer) to send back
    (default `False`)."""
    openai_chat_supports_document_input: bool
    """Whether Chat requests may include documents (`file` content parts) (default `True`)."""
    openai_chat_supports_max_completion_tokens: bool
    """Whether Chat requests carry the `max_tokens` setting as `max_completion_tokens` (`True`, the default: OpenAI's
    field) or as the older `max_tokens` (`False`, for servers that take only that one)."""
    openai_supports_batch_api: bool
    """Whether the endpoint serves the OpenAI Batch API for Responses requests (default: only the `openai`
    provider does); `OpenAIResponsesModel` then has a batch API (`BatchModelRequests`)."""
    openai_supports_prompt_cache_breakpoints: bool
    """Whether the model takes explicit prompt cache breakpoints (GPT-5.6 and later), on both APIs: a `CachePoint`
    then becomes a `prompt_cache_breakpoint` on the content before it (else it is dropped), and
    `openai_cache_instructions` and the unified `cache` setting apply. Default: `False`."""
    openai_responses_requires_streaming: bool
    """Whether the Responses endpoint answers streamed requests only: a non-streamed `request` is then sent streamed
    and the whole response returned (default `False`)."""
    openai_responses_requires_store_false: bool
    """Whether the Responses endpoint takes only `store=false`: every request then carries it, whatever
    `openai_store` says (default `False`)."""
    openai_responses_supports_prompt_cache_diagnostics: bool
    """Whether the Responses endpoint reports prompt cache diagnostics for the model. Default: `False`.

    Where it does, a request names the latest response of this endpoint in its history as
    `prompt_cache_options.comparison_response_id`, unless the `openai_prompt_cache_diagnostics` setting is `False`.
    `OpenAIProvider` sets it for GPT-5.6 and later; OpenAI-compatible servers may refuse the field, and the Codex
    and ChatGPT backends are not known to take it, so their profiles leave it off."""
    openai_responses_tool_choice_accepts_additional_tools: bool
    """Whether the Responses API takes a `tool_choice` naming a tool that only an `additional_tools` input item
    declares (a tool revealed mid-run). Default: `False`.

    `OpenAIProvider` sets it for GPT-5.6 and later. Elsewhere a request whose `tool_choice` names such a tool declares
    it in `tools` for that request instead (a change of its cached prefix), except under `openai_previous_response_id`
    or `openai_conversation_id`, where the stored input keeps the item."""


def validate_openai_profile(profile: ModelProfile) -> None:
    """Check that the OpenAI keys of `profile` fit together (a dict cannot check itself when it is built).

    Raises:
        UserError: `openai_chat_send_back_thinking_parts` is `'field'` but no `openai_chat_thinking_field` is given.
    """
    openai_profile = cast(OpenAIModelProfile, profile)
    if openai_profile.get('openai_chat_send_back_thinking_parts') == 'field' and not openai_profile.get(
        'openai_chat_thinking_field'
    ):
        raise UserError(
            'If `openai_chat_send_back_thinking_parts` is "field", '
            '`openai_chat_thinking_field` must be set to a non-None value.'
        )


_GPT_6_MODELS = ('gpt-6-astra', 'gpt-6-sol', 'gpt-6-luna', 'gpt-6.1-sol', 'gpt-6.1-terra')


# Models that reason unless told not to (or always), beyond the o-series and gpt-5 (pydantic-ai 2.68's table).
_REASONS_BY_DEFAULT = (
    'gpt-5.1-codex',
    'gpt-5.1-chat',
    'gpt-5.2-chat',
    'gpt-5.2-pro',
    'gpt-5.3-chat',
    'gpt-5.4-pro',
    'gpt-5.5',
    'gpt-5.6',
    *_GPT_6_MODELS,
)


_PRO_EFFORTS: frozenset[OpenAIReasoningEffort] = frozenset({'medium', 'high', 'xhigh'})
_GPT_6_EFFORTS: frozenset[OpenAIReasoningEffort] = frozenset({'low', 'medium', 'high', 'xhigh', 'max'})
_O_SERIES_EFFORTS: frozenset[OpenAIReasoningEffort] = frozenset({'low', 'medium', 'high'})
_CHAT_EFFORTS: frozenset[OpenAIReasoningEffort] = frozenset({'medium'})

# How OpenAI's reasoning models reason, where the rules below would not say it all (pydantic-ai 2.68's facts), the
# first match wins (a prefix ending in `-` also names the bare model): whether they reason, can be told not to
# (`effort='none'`), and the efforts they take (`None`: not pinned).
_REASONING_BY_PREFIX: tuple[tuple[str, bool, bool, frozenset[OpenAIReasoningEffort] | None], ...] = (
    ('gpt-6-astra', True, False, _GPT_6_EFFORTS),
    ('gpt-6.1-sol', True, False, _GPT_6_EFFORTS),
    ('gpt-6.1-terra', True, True, None),
    ('gpt-6-sol', True, True, None),
    ('gpt-6-luna', True, True, None),
    ('gpt-5.6', True, True, None),
    ('gpt-5.5-pro', True, False, _PRO_EFFORTS),
    ('gpt-5.4-pro', True, False, _PRO_EFFORTS),
    ('gpt-5.3-chat', True, False, _CHAT_EFFORTS),  # the chat variants reason at `medium` only
    ('gpt-5.2-pro', True, False, _PRO_EFFORTS),
    ('gpt-5.2-chat', True, False, _CHAT_EFFORTS),
    ('gpt-5.1-codex', True, False, None),
    ('gpt-5.1-chat', True, False, _CHAT_EFFORTS),
    ('gpt-5-pro', True, False, frozenset({'high'})),
    ('gpt-5-chat', False, False, None),
    ('gpt-5-codex', True, False, None),
    ('gpt-5-', True, False, frozenset({'minimal', 'low', 'medium', 'high'})),  # gpt-5, -mini, -nano
    ('o1', True, False, _O_SERIES_EFFORTS),
    ('o3', True, False, _O_SERIES_EFFORTS),
    ('o4', True, False, _O_SERIES_EFFORTS),
)


def _pinned_reasoning(model_name: str, profile: OpenAIModelProfile) -> None:
    """Lay the facts of `_REASONING_BY_PREFIX` over `profile`, for a model it names."""
    for prefix, reasons, can_stop, efforts in _REASONING_BY_PREFIX:
        if model_name.startswith(prefix) or model_name == prefix.rstrip('-'):
            profile['supports_thinking'] = profile['openai_supports_reasoning'] = reasons
            profile['openai_supports_encrypted_reasoning_content'] = reasons
            profile['thinking_always_enabled'] = reasons and not can_stop
            profile['openai_supports_reasoning_effort_none'] = can_stop
            if efforts is not None:
                profile['openai_reasoning_efforts'] = efforts
            return


def openai_model_profile(model_name: str) -> ModelProfile:
    """The profile of an OpenAI model: strict schemas, native and JSON output, and which models reason."""
    gpt_5_1_plus = model_name.startswith(('gpt-5.1', 'gpt-5.2', 'gpt-5.3', 'gpt-5.4', 'gpt-5.5'))
    gpt_5 = model_name.startswith('gpt-5') and not gpt_5_1_plus
    gpt_5_3_chat = model_name.startswith('gpt-5.3-chat')
    always_reasons = model_name.startswith('o') or (gpt_5 and '-chat' not in model_name)
    reasons = (always_reasons or gpt_5_1_plus) and not gpt_5_3_chat
    # OpenAI's `tool_search` tool: gpt-5.4 and later families, but not gpt-5.4-nano (as pydantic-ai 2.68 has it).
    tool_search = model_name.startswith(('gpt-5.4', 'gpt-5.5', 'gpt-5.6', *_GPT_6_MODELS))
    tool_search = tool_search and not model_name.startswith('gpt-5.4-nano')
    profile = OpenAIModelProfile(
        json_schema_transformer=OpenAIJsonSchemaTransformer,
        # OpenAI's APIs accept system messages anywhere in the conversation.
        supports_inline_system_prompts=True,
        supports_json_schema_output=True,
        supports_json_object_output=True,
        supports_image_output=gpt_5
        or gpt_5_1_plus
        or model_name.startswith(_GPT_6_MODELS)
        or 'o3' in model_name
        or '4.1' in model_name
        or '4o' in model_name,
        supports_thinking=reasons,
        thinking_always_enabled=always_reasons,
        thinking_enabled_by_default=always_reasons or model_name.startswith(_REASONS_BY_DEFAULT),
        # o1-mini rejects the system role.
        openai_system_prompt_role='user' if model_name.startswith('o1-mini') else None,
        openai_chat_supports_web_search='-search-preview' in model_name,
        openai_supports_encrypted_reasoning_content=reasons,
        openai_supports_reasoning=reasons,
        openai_supports_reasoning_effort_none=gpt_5_1_plus and not gpt_5_3_chat,
        openai_supports_phase=model_name.startswith(('gpt-5.3-codex', 'gpt-5.4', 'gpt-5.5')),
        openai_supports_prompt_cache_breakpoints=model_name.startswith(('gpt-5.6', *_GPT_6_MODELS)),
        # GPT-5.6 and GPT-6 document no `minimal` effort: `thinking='minimal'` asks them for `low`.
        openai_supports_minimal_reasoning_effort=not model_name.startswith(('gpt-5.6', *_GPT_6_MODELS)),
    )
    _pinned_reasoning(model_name, profile)
    if not tool_search:
        profile['supported_native_tools'] = SUPPORTED_NATIVE_TOOLS - {ToolSearchTool}
    return profile


# Keywords that strict mode rejects; in strict mode they move into the description, so the model still reads them.
_STRICT_UNSUPPORTED_KEYWORDS = (
    'minLength',
    'maxLength',
    'patternProperties',
    'unevaluatedProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
    'unevaluatedItems',
    'contains',
    'minContains',
    'maxContains',
    'uniqueItems',
)
_STRICT_STRING_FORMATS = frozenset(
    ('date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid')
)
_LOOKAROUND = re.compile(r'(?<!\\)(?:\\\\)*\(\?(?:=|!|<=|<!)')
_MISSING = object()


class OpenAIJsonSchemaTransformer(JsonSchemaTransformer):
    """Rewrites a schema for OpenAI's strict mode (structured outputs and strict function calling).

    With `strict=True` the schema is forced into the dialect: `additionalProperties: false` and every
    property required on each object, `oneOf` as `anyOf`, no `default`, and unsupported keywords and
    formats moved into the description. With `strict=None` the schema keeps its meaning and
    `is_strict_compatible` says whether it already fits the dialect.
    """

    def __init__(self, schema: JsonSchema, *, strict: bool | None = None) -> None:
        """Prepare a walk over `schema`."""
        super().__init__(schema, strict=strict)
        self.root_ref: str | None = schema.get('$ref')
        """The root schema's `$ref` (recursive models), replaced by `#` inside the schema."""

    def walk(self) -> JsonSchema:
        """The transformed schema; a root that is a `$ref` gets its definition's content."""
        walked = super().walk()
        if self.root_ref is not None:
            walked.pop('$ref', None)
            name = self.root_ref.removeprefix('#/$defs/')
            walked.update(self.defs.get(name) or {})
        return walked

    def transform(self, schema: JsonSchema) -> JsonSchema:
        """Make one sub-schema strict (or find out whether it is)."""
        for key in ('title', '$schema', 'discriminator'):
            schema.pop(key, None)
        if 'default' in schema:
            # Strict mode rejects defaults; loose schemas keep them, as some models follow them better.
            if self.strict:
                del schema['default']
            elif self.strict is None:
                self.is_strict_compatible = False
        if (ref := schema.get('$ref')) is not None:
            if ref == self.root_ref:
                schema['$ref'] = '#'
            if len(schema) > 1:
                # Strict mode allows no siblings beside `$ref`, but does beside `anyOf`.
                schema['anyOf'] = [{'$ref': schema.pop('$ref')}]
        self._check_keywords(schema)
        if 'oneOf' in schema:
            if self.strict:
                schema['anyOf'] = schema.pop('oneOf')
            else:
                self.is_strict_compatible = False
        if schema.get('type') == 'object':
            self._check_object(schema)
        return schema

    def _check_keywords(self, schema: JsonSchema) -> None:
        unsupported: dict[str, Any] = {k: schema[k] for k in _STRICT_UNSUPPORTED_KEYWORDS if k in schema}
        fmt = schema.get('format')
        if fmt and fmt not in _STRICT_STRING_FORMATS:
            unsupported['format'] = fmt
        pattern = schema.get('pattern')
        if isinstance(pattern, str) and _LOOKAROUND.search(pattern):
            unsupported['pattern'] = pattern
        if not unsupported:
            return
        if self.strict:
            notes = ', '.join(f'{key}={schema.pop(key)}' for key in unsupported)
            description = schema.get('description')
            schema['description'] = f'{description} ({notes})' if description else notes
        elif self.strict is None:
            self.is_strict_compatible = False

    def _check_object(self, schema: JsonSchema) -> None:
        # Objects without `properties` are dropped by the API, so every object gets the key.
        properties = schema.setdefault('properties', {})
        if self.strict:
            schema['additionalProperties'] = False
            schema['required'] = list(properties)
        elif self.strict is None:
            if schema.get('additionalProperties', _MISSING) not in (_MISSING, None, False):
                self.is_strict_compatible = False
            else:
                schema['additionalProperties'] = False
            required = schema.get('required')
            if required is None or any(name not in required for name in properties):
                self.is_strict_compatible = False
