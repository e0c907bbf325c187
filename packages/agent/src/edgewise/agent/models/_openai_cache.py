"""OpenAI's explicit prompt cache breakpoints (GPT-5.6 and later), for both the Chat Completions and the Responses
mapping: the `prompt_cache_breakpoint` marks a `CachePoint` and `openai_cache_instructions` put on content parts,
the request-wide `prompt_cache_options`, and the unified `cache` setting turned into these (as pydantic-ai 2.68's
`models.openai._caching`); and the response a Responses request's prompt cache diagnostics compare it with.

A breakpoint sits on the last content part of what it closes. A `CachePoint` opening a user message leaves its
breakpoint on an empty text part, which `move_leading_breakpoints` then moves onto the closest earlier item that can
carry it, once the whole request is mapped.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal

from typing_extensions import TypedDict

from .._messages.history import compaction_is_boundary_for
from ..exceptions import UserError
from ..messages import CachePoint, CompactionPart, ModelMessage, ModelRequest, ModelResponse, SystemPromptPart
from ._prompt_cache import snap_cache_setting, split_cache_setting

__all__ = (
    'CACHE_SETTINGS',
    'CONTINUED_RESPONSE_KEY',
    'OpenAIPromptCacheOptions',
    'cache_point',
    'cache_retention',
    'comparison_response_id',
    'has_dynamic_system_prompt',
    'keep_implicit_cache',
    'mark_breakpoint',
    'mark_message',
    'move_leading_breakpoints',
    'unified_cache_settings',
)


class OpenAIPromptCacheOptions(TypedDict, total=False):
    """OpenAI's request-wide prompt cache options (`prompt_cache_options`), taken by GPT-5.6 and later models."""

    mode: Literal['implicit', 'explicit']
    """`'implicit'` (the default) lets OpenAI place a breakpoint of its own; `'explicit'` caches only at the
    breakpoints the request marks."""

    ttl: Literal['30m', '12h']
    """The least time every breakpoint of the request stays cached (`'30m'` by default); Chat Completions rejects
    `'12h'`, which only the Responses API takes."""


CACHE_SETTINGS = ('openai_prompt_cache_options', 'openai_cache_instructions')
"""OpenAI's own cache settings: when a request's settings hold any, the unified `cache` setting is not mapped."""

_BREAKPOINT_KEY = 'prompt_cache_breakpoint'

CONTINUED_RESPONSE_KEY = '_openai_continued_response_id'
"""The settings key under which `OpenAIResponsesModel` hands the request body the id of the response it continues
from the history (`openai_previous_response_id`), which is no longer among the messages sent. Set by the model only;
never sent."""
_CHAT_PART_TYPES = frozenset({'text', 'image_url', 'input_audio', 'file'})
_RESPONSES_PART_TYPES = frozenset({'input_text', 'input_image', 'input_file'})
_LEADING_CACHE_POINT = (
    'A `CachePoint` cannot open the first content of a request: put it after the content it should cache, '
    'so the cache breakpoint has something before it to sit on.'
)
_TTLS: dict[str, timedelta] = {'30m': timedelta(minutes=30), '12h': timedelta(hours=12)}


def _breakpoint() -> dict[str, str]:
    return {'mode': 'explicit'}


def mark_breakpoint(parts: list[dict[str, Any]]) -> None:
    """Put a breakpoint on the last of `parts`."""
    parts[-1][_BREAKPOINT_KEY] = _breakpoint()


def cache_point(text_type: Literal['text', 'input_text']) -> Any:
    """The `cache_point` callback of `user_turn_items`: a breakpoint on the last item so far, or on an empty text
    part opening the message (moved later by `move_leading_breakpoints`)."""

    def mark(items: list[dict[str, Any]], point: CachePoint) -> None:
        if not items:
            items.append({'type': text_type, 'text': ''})
        mark_breakpoint(items)

    return mark


def _leading_breakpoint(item: Mapping[str, Any]) -> dict[str, Any] | None:
    content = item.get('content')
    if item.get('role') != 'user' or not isinstance(content, list) or not content:
        return None
    first: dict[str, Any] = content[0]
    if first.get('type') in ('text', 'input_text') and first.get('text') == '' and _BREAKPOINT_KEY in first:
        return first
    return None


def move_leading_breakpoints(items: list[dict[str, Any]], *, text_type: Literal['text', 'input_text']) -> None:
    """Move each breakpoint left on an empty part opening a user message onto the closest earlier item that can
    carry it (its string body becomes one text part); a message left empty is dropped.

    Raises:
        UserError: no earlier item can carry it.
    """
    index = 0
    while index < len(items):
        item = items[index]
        if _leading_breakpoint(item) is not None:
            if not _attach_before(items, index, text_type):
                raise UserError(_LEADING_CACHE_POINT)
            rest = item['content'][1:]
            if not rest:
                del items[index]
                continue
            item['content'] = rest
        index += 1


def _attach_before(items: list[dict[str, Any]], index: int, text_type: Literal['text', 'input_text']) -> bool:
    part_types = _CHAT_PART_TYPES if text_type == 'text' else _RESPONSES_PART_TYPES
    for item in reversed(items[:index]):
        key = 'output' if item.get('type') == 'function_call_output' else 'content'
        body = item.get(key)
        # A Responses assistant message is output text, which takes no breakpoint.
        if isinstance(body, str) and body and not (text_type == 'input_text' and item.get('role') == 'assistant'):
            item[key] = [{'type': text_type, 'text': body, _BREAKPOINT_KEY: _breakpoint()}]
            return True
        if isinstance(body, list) and body and body[-1].get('type') in part_types:
            mark_breakpoint(body)
            return True
    return False


def mark_message(item: dict[str, Any], text_type: Literal['text', 'input_text']) -> None:
    """Put a breakpoint at the end of a message (its string content becomes one text part)."""
    content = item['content']
    parts: list[dict[str, Any]] = [{'type': text_type, 'text': content}] if isinstance(content, str) else content
    mark_breakpoint(parts)
    item['content'] = parts


def has_dynamic_system_prompt(messages: Sequence[ModelMessage]) -> bool:
    """Whether a system prompt may change from request to request (then it cannot sit in a cached prefix)."""
    return any(
        isinstance(part, SystemPromptPart) and part.dynamic_ref is not None
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


def has_breakpoint(items: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any message or tool output of a request carries a breakpoint."""
    for item in items:
        body = item.get('output' if item.get('type') == 'function_call_output' else 'content')
        if isinstance(body, list) and any(isinstance(p, dict) and _BREAKPOINT_KEY in p for p in body):
            return True
    return False


_PREFIX_ONLY: dict[str, OpenAIPromptCacheOptions] = {
    '30m': {'mode': 'explicit', 'ttl': '30m'},
    '12h': {'mode': 'explicit', 'ttl': '12h'},
}
"""The options `cache={'messages': False}` maps to, by TTL: never mutated, as `keep_implicit_cache` tells them
from equal options the caller set by identity."""


def unified_cache_settings(settings: Mapping[str, Any], profile: Mapping[str, Any]) -> dict[str, Any]:
    """The settings with the unified `cache` setting turned into `openai_prompt_cache_options` and
    `openai_cache_instructions=True`, at the retention snapped to the profile's `supported_cache_retentions`
    (`'30m'` unless `'12h'` is asked and supported). `messages=False` gives `mode='explicit'`: only the
    instructions are cached. Left as they are where the profile lacks `openai_supports_prompt_cache_breakpoints`
    or `supports_cache`, and where any of OpenAI's own cache settings is given."""
    cache = settings.get('cache')
    if (
        cache is None
        or cache is False
        or not profile.get('openai_supports_prompt_cache_breakpoints', False)
        or not profile.get('supports_cache', False)
        or any(key in settings for key in CACHE_SETTINGS)
    ):
        return dict(settings)
    retention, messages = split_cache_setting(snap_cache_setting(cache, profile.get('supported_cache_retentions', ())))
    ttl: Literal['30m', '12h'] = '12h' if retention == '12h' else '30m'
    translated = dict(settings)
    translated['openai_prompt_cache_options'] = {'mode': 'implicit', 'ttl': ttl} if messages else _PREFIX_ONLY[ttl]
    translated['openai_cache_instructions'] = True
    return translated


def keep_implicit_cache(settings: dict[str, Any], items: Sequence[Mapping[str, Any]]) -> None:
    """When `cache={'messages': False}` left a request with no breakpoint at all (no instructions could carry one),
    ask for OpenAI's implicit breakpoint after all, so the request still caches; mutates `settings`. Options the
    caller set with `openai_prompt_cache_options` are left alone."""
    options = settings.get('openai_prompt_cache_options')
    if any(options is prefix_only for prefix_only in _PREFIX_ONLY.values()) and not has_breakpoint(items):
        assert options is not None
        settings['openai_prompt_cache_options'] = {'mode': 'implicit', 'ttl': options['ttl']}


def cache_retention(settings: Mapping[str, Any], profile: Mapping[str, Any]) -> tuple[bool, timedelta | None]:
    """Whether OpenAI's own cache settings decide the retention (then the unified `cache` setting does not count),
    and the retention they ask for (`None`: none). On models with breakpoints that have `supports_cache`, any of
    `CACHE_SETTINGS` decides: `openai_prompt_cache_options`' `ttl` (`'30m'` by default) where the implicit
    breakpoint or an instruction breakpoint caches. On earlier models `openai_prompt_cache_retention='24h'` asks
    for 24 hours (on later ones it is a maximum, not a floor)."""
    if not profile.get('openai_supports_prompt_cache_breakpoints', False):
        if settings.get('openai_prompt_cache_retention') == '24h':
            return True, timedelta(hours=24)
        return False, None
    if not any(key in settings for key in CACHE_SETTINGS) or not profile.get('supports_cache', False):
        return False, None
    options = settings.get('openai_prompt_cache_options') or {}
    ttl = _TTLS.get(options.get('ttl', '30m'), timedelta(minutes=30))
    implicit = options.get('mode', 'implicit') == 'implicit'
    return True, (ttl if implicit or settings.get('openai_cache_instructions') else None)


def chat_profile(profile: Mapping[str, Any] | None) -> Any:
    """A provider's profile for Chat Completions: without the `'12h'` cache retention, which that API rejects
    (the Responses API on the same models takes it)."""
    tiers = (profile or {}).get('supported_cache_retentions', ())
    if '12h' not in tiers:
        return profile
    return {**(profile or {}), 'supported_cache_retentions': tuple(tier for tier in tiers if tier != '12h')}


def relocate_instructions(
    items: list[dict[str, Any]],
    instructions: str | None,
    *,
    messages: Sequence[ModelMessage],
    settings: Mapping[str, Any],
    profile: Mapping[str, Any],
) -> str | None:
    """`openai_cache_instructions` on the Responses API, whose `instructions` field takes no breakpoint: the
    instructions move to an input message after the leading system messages, and a breakpoint closes it (without
    instructions, it closes the last leading system message). Returns the instructions left for the field.

    Not done where the profile lacks breakpoints, for a `'user'` system prompt role, when the request continues a
    stored response (`openai_previous_response_id`: its input would be replayed next to this request's), when the
    history holds a compaction item, or with a dynamic system prompt. Mutates `items`.
    """
    role = profile.get('openai_system_prompt_role', None) or 'system'
    if (
        not settings.get('openai_cache_instructions')
        or not profile.get('openai_supports_prompt_cache_breakpoints', False)
        or role == 'user'
        or 'openai_previous_response_id' in settings
        or 'openai_conversation_id' in settings
        or any(item.get('type') == 'compaction' for item in items)
        or has_dynamic_system_prompt(messages)
    ):
        return instructions
    leading = next(
        (i for i, item in enumerate(items) if item.get('role') != role or item.get('type', 'message') != 'message'),
        len(items),
    )
    if instructions:
        items.insert(leading, {'role': role, 'content': instructions})
        leading += 1
        instructions = None
    if leading:
        mark_message(items[leading - 1], 'input_text')
    return instructions


def comparison_response_id(
    messages: Sequence[ModelMessage],
    settings: Mapping[str, Any],
    profile: Mapping[str, Any],
    *,
    ours: Callable[[ModelResponse], bool],
    provider_name: str,
    accepts: Callable[[ModelResponse, CompactionPart], bool],
) -> str | None:
    """The response a Responses request asks OpenAI to compare its prompt with (`prompt_cache_options.
    comparison_response_id`), or `None` for no prompt cache diagnostics.

    Asked for unless the `openai_prompt_cache_diagnostics` setting is `False`, on profiles with
    `openai_responses_supports_prompt_cache_diagnostics`. The response is the latest one in the history that `ours`
    says this endpoint stores (or the one the request continues, under `CONTINUED_RESPONSE_KEY`), when its id is
    one OpenAI issued (`resp_...`) and it was stored where a later request can find it. A compaction after it (a
    `/responses/compact` response of ours, or another's compaction part this API honours) starts a new prefix:
    then nothing is compared.
    """
    if not settings.get('openai_prompt_cache_diagnostics', True):
        return None
    if not profile.get('openai_responses_supports_prompt_cache_diagnostics', False):
        return None
    continued: str | None = settings.get(CONTINUED_RESPONSE_KEY)
    if continued is not None:
        return continued if continued.startswith('resp_') else None
    for message in reversed(messages):
        if not isinstance(message, ModelResponse):
            continue
        if ours(message):
            return _comparable_id(message)
        if any(
            isinstance(part, CompactionPart)
            and compaction_is_boundary_for(part, provider_name, needs_encrypted=True, accepted=accepts(message, part))
            for part in message.parts
        ):
            return None
    return None


def _comparable_id(response: ModelResponse) -> str | None:
    details = response.provider_details or {}
    if details.get('compaction'):
        return None
    # A response pydantic-ai made over a Responses WebSocket without storing it is kept nowhere a request finds.
    if details.get('transport') == 'websocket' and details.get('store') is not True:
        return None
    response_id = response.provider_response_id
    return response_id if response_id is not None and response_id.startswith('resp_') else None
