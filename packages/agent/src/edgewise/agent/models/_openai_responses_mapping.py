"""OpenAI Responses API: messages to a request body, and a response body or its events to a `ModelResponse`.

Pure data mapping, no I/O. Output items keep their ids (`TextPart.id`, `ToolCallPart.id`, `ThinkingPart.id`)
with `provider_name='openai'`, so that later requests can refer to them. Reasoning items become one
`ThinkingPart` per summary, the encrypted reasoning on the first one's `signature`; both go back only to
OpenAI, as a `reasoning` input item.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Literal, cast

from .._messages.history import trim_before_compaction
from ..exceptions import ModelAPIError
from ..messages import (
    AudioUrl,
    BinaryContent,
    CompactionPart,
    DocumentUrl,
    FilePart,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)
from ..native_tools._tool_search import ToolSearchTool
from ..profiles import ModelProfile
from ..profiles.openai import SAMPLING_PARAMS, OpenAIModelProfile
from ..settings import ModelSettings
from ..usage import RequestUsage
from . import _openai_cache as _cache
from ._citations import openai_responses_citations
from ._compaction_mapping import openai_compaction_item, openai_compaction_part
from ._error_categories import openai_stream_error
from ._history_digest import HistoryHasher, continuation_digest
from ._mapping import (
    EventStreamedResponse,
    StatelessArtifactCheck,
    by_provider_name,
    replayed_thinking,
    settings_fields,
    unsupported_file,
    uploaded_file_id,
    user_turn_items,
)
from ._openai_cache import OpenAIPromptCacheOptions
from ._openai_native_tools import (
    NATIVE_ITEM_TYPES,
    TOOL_SEARCH_ITEM_TYPES,
    native_item,
    native_output_parts,
    responses_include,
    responses_native_tools,
    tool_search_item,
    tool_search_parts,
)
from ._openai_responses_tools import function_tools, tool_choice, tool_param
from ._request_parameters import ModelRequestParameters, request_instructions
from ._thinking import openai_settings, takes_effort_none
from ._tool_additions import ToolAdditions, redeclared_for_choice, with_visible
from ._tool_choice import resolve_tool_choice

__all__ = (
    'OpenAIResponsesModelSettings',
    'responses_request_body',
    'responses_model_response',
    'responses_usage',
    'OpenAIResponsesStreamedResponse',
)

_SERVER_STATE_SETTINGS = ('openai_previous_response_id', 'openai_conversation_id')
"""The settings continuing input the API keeps (resolved by the model: `'auto'` left means nothing to continue)."""

_FINISH_REASONS: dict[str, FinishReason] = {
    'max_output_tokens': 'length',
    'content_filter': 'content_filter',
    'completed': 'stop',
    'cancelled': 'error',
    'failed': 'error',
}


class OpenAIResponsesModelSettings(ModelSettings, total=False):
    """Settings of requests to the Responses API: the common ones plus OpenAI's own (prefixed `openai_`)."""

    openai_reasoning_effort: Literal['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']
    """How much the model reasons (`reasoning.effort`)."""
    openai_reasoning_summary: Literal['detailed', 'concise', 'auto']
    """Ask for a summary of the reasoning (`reasoning.summary`)."""
    openai_send_reasoning_ids: bool
    """Whether output item ids are sent back (default: when the model returns encrypted reasoning)."""
    openai_truncation: Literal['disabled', 'auto']
    """What to do when the conversation is longer than the context window."""
    openai_text_verbosity: Literal['low', 'medium', 'high']
    """How long the answer should be (`text.verbosity`)."""
    openai_store: bool
    """Whether OpenAI keeps the response (`store`)."""
    openai_user: str
    """An id of the end user (`user`)."""
    openai_service_tier: Literal['auto', 'default', 'flex', 'priority']
    """The processing tier (`service_tier`)."""
    openai_prompt_cache_key: str
    """A key to improve prompt cache hits (`prompt_cache_key`)."""
    openai_prompt_cache_retention: Literal['in_memory', '24h']
    """How long the prompt cache keeps a prefix (`prompt_cache_retention`); a maximum on GPT-5.6 and later."""
    openai_prompt_cache_options: OpenAIPromptCacheOptions
    """The request-wide prompt cache options of GPT-5.6 and later (`prompt_cache_options`): `mode` and `ttl`."""
    openai_cache_instructions: bool
    """Send the instructions as the first input messages, closed by a prompt cache breakpoint (see
    `OpenAIChatModelSettings.openai_cache_instructions`)."""
    openai_prompt_cache_diagnostics: bool
    """Whether to ask OpenAI why a request did or did not reuse the cached prompt of the previous one (default
    `True`).

    Only where the profile has `openai_responses_supports_prompt_cache_diagnostics` (GPT-5.6 and later on OpenAI's
    own endpoint), and only for a request whose history holds a response of this endpoint: its id goes as
    `prompt_cache_options.comparison_response_id`, and the answer's `prompt_cache_diagnostics` object lands in
    `ModelResponse.provider_details['prompt_cache_diagnostics']` as OpenAI sends it, for streamed responses too: its
    `type` is `'cache_hit'`, `'cache_miss'` (with the `reason` and token counts), `'comparison_response_not_found'`
    or `'unavailable'`. It costs nothing and works with `openai_store=False`. The id is read from the history as
    given, so set `False` when the history comes from a client."""
    openai_previous_response_id: Literal['auto'] | str
    """Continue a conversation OpenAI stored (`previous_response_id`), sending only the messages after it.

    `'auto'` continues from the latest response of this provider in the history; a response id is used while the
    history holds none (later requests of the run then continue from the latest). A response is continued from only
    while it and the messages before it are unchanged since it was made: each response made under this setting
    records a digest of them (`ModelResponse.history_digest`); without one, or when it no longer matches, every
    message is sent and nothing is continued."""
    openai_context_management: list[dict[str, Any]]
    """Server-side context management (`context_management`): `[{'type': 'compaction', 'compact_threshold': N}]`
    compacts the conversation once its input passes N tokens (see `OpenAICompaction`)."""
    openai_conversation_id: Literal['auto'] | str
    """Continue a conversation kept on OpenAI's side (the `conversation` field), sending only what followed the
    latest response made in it (each response names its conversation in `provider_details['conversation_id']`).

    `'auto'` continues the conversation of the latest such response of this endpoint that belongs to the run's own
    conversation (`conversation_id`), and sends no `conversation` while the history holds none; a conversation id
    is continued from its latest response in the history, or given with every message while there is none. Cannot
    be set with `openai_previous_response_id`. The messages before the response continued from are not sent, so a
    change a history processor makes to them does not reach the model."""


def _request_items(
    message: ModelRequest, profile: OpenAIModelProfile, model_name: str, additions: ToolAdditions | None
) -> Iterator[dict[str, Any]]:
    breakpoints = profile.get('openai_supports_prompt_cache_breakpoints', False)
    for part in message.parts:
        yield from _part_items(part, profile, model_name, breakpoints)
        # A reveal's `additional_tools` item goes where it stands (a search's, after the search's output).
        if additions is not None and (added := additions.revealed_by(part)):
            yield {'type': 'additional_tools', 'role': 'developer', 'tools': [tool_param(t, profile) for t in added]}


def _part_items(part: Any, profile: OpenAIModelProfile, model_name: str, breakpoints: bool) -> Iterator[dict[str, Any]]:
    if isinstance(part, SystemPromptPart):
        yield {'role': profile.get('openai_system_prompt_role', None) or 'system', 'content': part.content}
    elif isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            yield {'role': 'user', 'content': part.content}
        else:
            content = user_turn_items(
                part,
                text=lambda text: {'type': 'input_text', 'text': text},
                file=lambda item: _file_item(item, model_name, 'user prompts'),
                tool_return=_unreachable,
                tool_error=_unreachable,
                cache_point=_cache.cache_point('input_text') if breakpoints else None,
            )
            yield {'role': 'user', 'content': content}
    elif isinstance(part, ToolReturnPart):
        output: str | list[dict[str, Any]] = part.model_response_str()
        if files := part.files:
            # A function call's output may hold files next to its text.
            text = [{'type': 'input_text', 'text': output}] if output else []
            output = [*text, *(_file_item(f, model_name, 'tool returns') for f in files)]
        yield {'type': 'function_call_output', 'call_id': part.tool_call_id, 'output': output}
    elif isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            yield {'role': 'user', 'content': [{'type': 'input_text', 'text': part.model_response()}]}
        else:
            yield {'type': 'function_call_output', 'call_id': part.tool_call_id, 'output': part.model_response()}


def _unreachable(part: Any) -> dict[str, Any]:  # pragma: no cover - user prompts hold no tool parts
    raise AssertionError(part)


def _file_item(item: Any, model_name: str, where: str) -> dict[str, Any]:
    # Downloads (`force_download`) happened before: URLs left are sent as URLs.
    if isinstance(item, BinaryContent):
        if item.is_image:
            return {'type': 'input_image', 'image_url': item.data_uri, 'detail': _detail(item)}
        if item.is_document:
            return {'type': 'input_file', 'file_data': item.data_uri, 'filename': f'filename.{item.format}'}
        raise unsupported_file(model_name, item, where)
    if isinstance(item, ImageUrl):
        return {'type': 'input_image', 'image_url': item.url, 'detail': _detail(item)}
    if isinstance(item, UploadedFile):
        file_id = uploaded_file_id(item, 'OpenAIResponsesModel', ('openai',))
        if item.media_type.startswith('image/'):
            return {'type': 'input_image', 'file_id': file_id, 'detail': 'auto'}
        return {'type': 'input_file', 'file_id': file_id}
    if isinstance(item, DocumentUrl | AudioUrl):
        return {'type': 'input_file', 'file_url': item.url}
    raise unsupported_file(model_name, item, where)


def _detail(item: ImageUrl | BinaryContent) -> str:
    return str((item.vendor_metadata or {}).get('detail', 'auto'))


def _response_items(
    message: ModelResponse,
    profile: OpenAIModelProfile,
    send_ids: bool,
    provider_name: str,
    tools: Mapping[str, dict[str, Any]],
    carried: list[str],
    accepts: StatelessArtifactCheck,
    same_endpoint: bool,
) -> Iterator[dict[str, Any]]:
    """The input items of `message`; reasoning carried into a user message ahead of them goes to `carried`.

    Item ids (stored state) go back only to this provider, and only when `message` was made at the endpoint the
    request goes to (`same_endpoint`); encrypted reasoning and compaction items (data the API verifies with its own
    key) go wherever `accepts` says, encrypted reasoning with the id it was issued under.
    """
    text_item: dict[str, Any] | None = None
    reasoning_item: dict[str, Any] | None = None
    native_calls = {p.tool_call_id for p in message.parts if isinstance(p, NativeToolCallPart)}
    native_items: dict[str, dict[str, Any]] = {}
    for part in message.parts:
        named = part.provider_name == provider_name or (
            part.provider_name is None and message.provider_name == provider_name
        )
        ours = named and same_endpoint
        with_id = send_ids and ours
        if isinstance(part, TextPart):
            if part.id and with_id:
                if text_item is None or text_item['id'] != part.id:
                    text_item = {
                        'type': 'message',
                        'role': 'assistant',
                        'id': part.id,
                        'content': [],
                        'status': 'completed',
                    }
                    phase = (part.provider_details or {}).get('phase')
                    if profile.get('openai_supports_phase', False) and phase in ('commentary', 'final_answer'):
                        text_item['phase'] = phase
                    yield text_item
                text_item['content'].append({'type': 'output_text', 'text': part.content, 'annotations': []})
            else:
                yield {'role': 'assistant', 'content': part.content}
        elif isinstance(part, ToolCallPart):
            call: dict[str, Any] = {
                'type': 'function_call',
                'name': part.tool_name,
                'arguments': part.args_as_json_str(),
                'call_id': part.tool_call_id,
            }
            if part.id and with_id:
                call['id'] = part.id
            if profile.get('openai_responses_requires_function_call_status_none', False):
                call['status'] = None
            if named and (namespace := (part.provider_details or {}).get('namespace')):
                call['namespace'] = namespace  # a tool its search loaded: OpenAI wants the namespace back
            yield call
        elif isinstance(part, CompactionPart):
            if accepts(message, part) and (compaction := openai_compaction_item(part)) is not None:
                yield compaction
        elif isinstance(part, FilePart):
            # An image the image generation tool made goes back as a reference to its call (once: the call part,
            # when there is one, refers to it already); others cannot.
            if ours and part.id and part.id not in native_calls:
                yield {'type': 'image_generation_call', 'id': part.id, 'result': None, 'status': 'completed'}
        elif isinstance(part, NativeToolCallPart | NativeToolReturnPart) and part.tool_name == ToolSearchTool.kind:
            # A search's items carry their state inline: they go wherever their data is verified, ids only home.
            if (ours or accepts(message, part)) and (item := tool_search_item(part, with_id, tools)) is not None:
                yield item
        elif isinstance(part, NativeToolCallPart):
            if with_id and (item := native_item(part)) is not None:
                native_items[part.tool_call_id] = item
                yield item
        elif isinstance(part, NativeToolReturnPart):
            # The result stays on OpenAI's side; only a status the call item lacks goes back with it.
            item = native_items.get(part.tool_call_id)
            if item is not None and 'status' in item and isinstance(part.content, dict):
                item['status'] = part.content.get('status') or item['status']
        elif not isinstance(part, ThinkingPart):
            continue  # a spoken turn: `Model.prepare_messages` turns it into text first (the model refuses it)
        elif part.id and (
            with_id or (send_ids and part.signature and _encrypted_reasoning(profile) and accepts(message, part))
        ):
            # One reasoning item per id; each summary of it was kept as its own ThinkingPart.
            signature = part.signature if _encrypted_reasoning(profile) and accepts(message, part) else None
            if reasoning_item is None or reasoning_item['id'] != part.id:
                if not (signature or part.content):
                    continue
                reasoning_item = {'type': 'reasoning', 'id': part.id, 'summary': []}
                if signature:
                    reasoning_item['encrypted_content'] = signature
                yield reasoning_item
            if part.content:
                reasoning_item['summary'].append({'type': 'summary_text', 'text': part.content})
        elif part.content:
            # Reasoning from elsewhere (or without an item id) can only go back as tagged text.
            text, in_user_turn = replayed_thinking(part, profile)
            if in_user_turn:
                carried.append(text)
            else:
                yield {'role': 'assistant', 'content': text}


def _encrypted_reasoning(profile: OpenAIModelProfile) -> bool:
    return profile.get('openai_supports_encrypted_reasoning_content', False)


def map_messages(
    messages: Sequence[ModelMessage],
    profile: OpenAIModelProfile,
    send_ids: bool,
    provider_name: str = 'openai',
    model_name: str = '',
    tools: Mapping[str, dict[str, Any]] | None = None,
    accepts: StatelessArtifactCheck | None = None,
    ours: Callable[[ModelResponse], bool] | None = None,
    additions: ToolAdditions | None = None,
) -> list[dict[str, Any]]:
    """The `input` items of a request (`model_name` is named by the error for a file the API cannot take; `tools`
    holds the request's function tools as sent, by name, for the outputs of tool searches; `accepts` says whose
    encrypted data is sent back, by default a part's of `provider_name`; `ours` says whether a response of
    `provider_name` was made where the request goes, so that its item ids resolve: by default every one;
    `additions`: the tools revealed mid-run that go in `additional_tools` items, see `_tool_additions`)."""
    accepts = accepts or by_provider_name(provider_name)
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            items.extend(_request_items(message, profile, model_name, additions))
        else:
            carried: list[str] = []
            # Parts of this provider in another's response recorded no endpoint of their own: judged by name.
            same_endpoint = ours is None or message.provider_name != provider_name or ours(message)
            response_items = list(
                _response_items(message, profile, send_ids, provider_name, tools or {}, carried, accepts, same_endpoint)
            )
            if carried:  # `mimics_assistant_message_formatting`: the reasoning goes in a user message before the reply
                items.append({'role': 'user', 'content': '\n\n'.join(carried)})
            items.extend(response_items)
    if profile.get('openai_supports_prompt_cache_breakpoints', False):
        _cache.move_leading_breakpoints(items, text_type='input_text')
    return items


def _drop_unsupported(settings: OpenAIResponsesModelSettings, profile: OpenAIModelProfile) -> dict[str, Any]:
    kept: dict[str, Any] = {
        k: v for k, v in settings.items() if k not in profile.get('openai_unsupported_model_settings', ())
    }
    if profile.get('openai_supports_reasoning', False):
        default_effort = 'none' if takes_effort_none(profile) else 'medium'
        if kept.get('openai_reasoning_effort', default_effort) != 'none':
            # Reasoning models reject sampling settings while they reason.
            for key in SAMPLING_PARAMS:
                kept.pop(key, None)
    return kept


def responses_request_body(
    model_name: str,
    messages: Sequence[ModelMessage],
    model_settings: OpenAIResponsesModelSettings | None,
    params: ModelRequestParameters,
    profile: ModelProfile,
    *,
    stream: bool = False,
    provider_name: str = 'openai',
    keeps_system: bool = True,
    accepts: StatelessArtifactCheck | None = None,
    ours: Callable[[ModelResponse], bool] | None = None,
    tool_additions: bool = False,
) -> dict[str, Any]:
    """The JSON body of a `POST /responses` request.

    Args:
        model_name: The model to ask.
        messages: The conversation, ending with the request to answer.
        model_settings: The merged settings of the request.
        params: Tools and output kind, already customized for the profile.
        profile: The model's profile.
        stream: Ask for server-sent events.
        provider_name: The `provider_name` of parts this API made (their ids and reasoning are sent back).
        keeps_system: Whether a compaction item marked as made from a window holding the system prompt carries it
            on (`False` for a compaction request, which is sent the system prompt again).
        accepts: Whose encrypted reasoning and compaction items are sent back (`Model.accepts_stateless_artifacts`);
            by default the parts of `provider_name`.
        ours: Whether a response of the history was made where this request goes (`Model.accepts_server_state`), so
            that its output item ids are sent back and prompt cache diagnostics can compare with it; by default a
            response of `provider_name`.
        tool_additions: Whether the tools revealed mid-run go in `additional_tools` items (the model's
            `tool_addition_mode` is `'with_definitions'`), see `_tool_additions`.
    """
    accepts = accepts or by_provider_name(provider_name)
    openai_profile = cast(OpenAIModelProfile, profile)
    model_settings = cast(OpenAIResponsesModelSettings, _cache.unified_cache_settings(model_settings or {}, profile))
    settings = _drop_unsupported(openai_settings(model_settings, params, profile, 'responses'), openai_profile)
    comparison = _cache.comparison_response_id(
        messages, settings, profile, ours=ours or (lambda response: response.provider_name == provider_name),
        provider_name=provider_name, accepts=accepts,
    )  # fmt: skip
    # OpenAI reads (and bills) what is sent before a compaction item: send from the latest one on. Its item carries
    # the system prompt on when it was made from a window that held it (`compact_messages`).
    messages = trim_before_compaction(
        list(messages), provider_name, needs_encrypted=True, keeps_system=keeps_system, accepts=accepts
    )
    send_ids = settings.get(
        'openai_send_reasoning_ids', openai_profile.get('openai_supports_encrypted_reasoning_content', False)
    )
    server_state = any(settings.get(key) not in (None, 'auto') for key in _SERVER_STATE_SETTINGS)
    additions: ToolAdditions | None = None
    if tool_additions:
        params = with_visible(params, redeclared_for_choice(
            resolve_tool_choice(settings, params), params, server_state=server_state,
            choice_takes_items=openai_profile.get('openai_responses_tool_choice_accepts_additional_tools', False),
        ))  # fmt: skip
        searches = not any(isinstance(t, ToolSearchTool) for t in params.native_tools)
        additions = ToolAdditions.of(params, ('deferred', 'via_history'), searches=searches)
    tools = function_tools(params, openai_profile)
    items = map_messages(messages, openai_profile, send_ids, provider_name, model_name, tools, accepts, ours, additions)
    in_history = {t.name for t in params.function_tools if params.visibility_of(t.name) == 'via_history'}
    if additions is not None and not server_state and (lost := in_history - additions.written):
        # revealed where this input no longer reaches (before a compaction, or announced): declared in full instead
        params = with_visible(params, lost)
        tools, in_history = function_tools(params, openai_profile), in_history - lost
    instructions = _cache.relocate_instructions(
        items, request_instructions(messages, params), messages=messages, settings=settings, profile=profile
    )
    _cache.keep_implicit_cache(settings, items)
    body: dict[str, Any] = {'model': model_name}
    text: dict[str, Any] = {}
    if params.output_mode == 'native' and params.output_object is not None:
        output = params.output_object
        text['format'] = {'type': 'json_schema', 'name': output.name or 'final_result', 'schema': output.json_schema}
        if openai_profile.get('openai_supports_strict_tool_definition', True):
            text['format']['strict'] = bool(output.strict)
        if output.description:
            text['format']['description'] = output.description
    elif params.output_mode == 'prompted' and openai_profile.get('supports_json_object_output', False):
        text['format'] = {'type': 'json_object'}
        if instructions:
            # JSON mode checks the input messages (not the instructions) for the word "JSON".
            role = openai_profile.get('openai_system_prompt_role', None) or 'system'
            position = next((i for i, item in enumerate(items) if item.get('role') != role), len(items))
            items.insert(position, {'role': role, 'content': instructions})
            instructions = None
    if settings.get('openai_previous_response_id') == 'auto':
        # Resolved by the model against the history: `'auto'` left here found nothing to continue from.
        del settings['openai_previous_response_id']
    if settings.get('openai_conversation_id') == 'auto':
        del settings['openai_conversation_id']  # (as `'auto'` above: no conversation of the history to continue)
    if not items and 'openai_previous_response_id' not in settings and 'openai_conversation_id' not in settings:
        items.append({'role': 'user', 'content': ''})  # the API rejects a request without input
    body['input'] = items
    if instructions:
        body['instructions'] = instructions
    sent = [*tools.values(), *function_tools(params, openai_profile, output=True).values()]
    sent += responses_native_tools(params)
    if sent:
        body['tools'] = sent
    if sent or in_history:  # (a tool declared by an item is among those a choice may name)
        body['tool_choice'] = tool_choice(settings, params, openai_profile, model_name)
        if 'parallel_tool_calls' in settings:
            body['parallel_tool_calls'] = settings['parallel_tool_calls']
    if stream:
        body['stream'] = True
    body.update(
        settings_fields(
            settings,
            (
                ('max_tokens', 'max_output_tokens'),
                ('temperature', 'temperature'),
                ('top_p', 'top_p'),
                ('openai_truncation', 'truncation'),
                ('openai_store', 'store'),
                ('openai_user', 'user'),
                ('openai_service_tier', 'service_tier'),
                ('openai_prompt_cache_key', 'prompt_cache_key'),
                ('openai_prompt_cache_retention', 'prompt_cache_retention'),
                ('openai_prompt_cache_options', 'prompt_cache_options'),
                ('openai_previous_response_id', 'previous_response_id'),
                ('openai_conversation_id', 'conversation'),
                ('openai_context_management', 'context_management'),
            ),
        )
    )
    if comparison is not None:
        body['prompt_cache_options'] = {**body.get('prompt_cache_options', {}), 'comparison_response_id': comparison}
    reasoning = settings_fields(
        settings, (('openai_reasoning_effort', 'effort'), ('openai_reasoning_summary', 'summary'))
    )
    if reasoning:
        body['reasoning'] = reasoning
    if 'openai_text_verbosity' in settings:
        text['verbosity'] = settings['openai_text_verbosity']
    if text:
        body['text'] = text
    include = (
        ['reasoning.encrypted_content']
        if openai_profile.get('openai_supports_encrypted_reasoning_content', False)
        else []
    )
    include += responses_include(settings)
    if include:
        body['include'] = include
    if isinstance(extra := settings.get('extra_body'), dict):
        body.update(extra)
    return body


def responses_usage(usage: dict[str, Any] | None) -> RequestUsage:
    """A `RequestUsage` from the API's `usage` object."""
    if not usage:
        return RequestUsage()
    details: dict[str, int] = {}
    if reasoning := (usage.get('output_tokens_details') or {}).get('reasoning_tokens'):
        details['reasoning_tokens'] = reasoning
    return RequestUsage(
        input_tokens=usage.get('input_tokens') or 0,
        cache_read_tokens=(usage.get('input_tokens_details') or {}).get('cached_tokens') or 0,
        output_tokens=usage.get('output_tokens') or 0,
        details=details,
    )


def _finish(response: dict[str, Any]) -> tuple[FinishReason | None, dict[str, Any]]:
    incomplete = response.get('incomplete_details') or {}
    raw = incomplete.get('reason') or response.get('status')
    details: dict[str, Any] = {}
    if isinstance(conversation := response.get('conversation'), dict) and conversation.get('id'):
        details['conversation_id'] = conversation['id']  # the OpenAI conversation the response joined
    if not raw:
        return None, details
    return _FINISH_REASONS.get(raw), {'finish_reason': raw, **details}


def _output_parts(
    item: dict[str, Any], provider_name: str, search_call_id: str | None = None
) -> Iterator[ModelResponsePart]:
    kind = item.get('type')
    if kind == 'message':
        for content in item.get('content') or ():
            if content.get('type') == 'output_text':
                details = {'phase': item['phase']} if item.get('phase') else {}
                text = content.get('text') or ''
                citations = None
                if (cited := openai_responses_citations(content.get('annotations'), text)) is not None:
                    citations, details['citations'] = cited
                yield TextPart(
                    text, id=item.get('id'), provider_name=provider_name, provider_details=details or None,
                    citations=citations,
                )  # fmt: skip
    elif kind == 'function_call':
        yield ToolCallPart(
            item['name'],
            item.get('arguments'),
            item['call_id'],
            id=item.get('id'),
            provider_name=provider_name,
            provider_details={'namespace': item['namespace']} if item.get('namespace') else None,
        )
    elif kind == 'reasoning':
        signature = item.get('encrypted_content')
        summaries = item.get('summary') or []
        for summary in summaries:
            # Every summary has the item's id, so they merge back into one item; the signature goes once.
            yield ThinkingPart(
                summary.get('text', ''), id=item.get('id'), signature=signature, provider_name=provider_name
            )
            signature = None
        if not summaries and signature:
            yield ThinkingPart('', id=item.get('id'), signature=signature, provider_name=provider_name)
    elif kind == 'compaction':
        yield openai_compaction_part(item, provider_name)
    elif kind in NATIVE_ITEM_TYPES:
        yield from native_output_parts(item, provider_name)
    elif kind in TOOL_SEARCH_ITEM_TYPES:
        yield tool_search_parts(item, provider_name, search_call_id)


def _paired_search_call(output: Sequence[dict[str, Any]]) -> str | None:
    # OpenAI may leave `call_id` null on both the search's call and output: with one of each, they pair.
    calls = [i['id'] for i in output if i.get('type') == 'tool_search_call' and not i.get('call_id')]
    outputs = [i for i in output if i.get('type') == 'tool_search_output' and not i.get('call_id')]
    return calls[0] if len(calls) == len(outputs) == 1 else None


def _refusal(response: dict[str, Any]) -> str | None:
    for item in response.get('output') or ():
        for content in item.get('content') or () if item.get('type') == 'message' else ():
            if content.get('type') == 'refusal':
                return str(content.get('refusal', ''))
    return None


def _diagnostics(diagnostics: Any) -> Any:
    """The `prompt_cache_diagnostics` object as kept in `provider_details`: as sent, with a miss's optional
    `comparison_reusable_tokens` filled in as `None` when left out (as pydantic-ai keeps it)."""
    if isinstance(diagnostics, dict) and diagnostics.get('type') == 'cache_miss':
        return {**diagnostics, 'comparison_reusable_tokens': diagnostics.get('comparison_reusable_tokens')}
    return diagnostics


def responses_model_response(body: dict[str, Any], *, provider_name: str = 'openai') -> ModelResponse:
    """The `ModelResponse` of a Responses API response body."""
    output = body.get('output') or []
    paired = _paired_search_call(output)
    parts = [part for item in output for part in _output_parts(item, provider_name, paired)]
    finish_reason, details = _finish(body)
    if (refusal := _refusal(body)) is not None:
        parts, finish_reason = [], 'content_filter'
        details.pop('finish_reason', None)
        details['refusal'] = refusal
    created = body.get('created_at')
    if created:
        details['timestamp'] = datetime.fromtimestamp(created, tz=timezone.utc)
    if (diagnostics := body.get('prompt_cache_diagnostics')) is not None:
        details['prompt_cache_diagnostics'] = _diagnostics(diagnostics)
    return ModelResponse(
        parts=parts,
        usage=responses_usage(body.get('usage')),
        model_name=body.get('model'),
        timestamp=datetime.now(tz=timezone.utc),
        provider_name=provider_name,
        provider_details=details or None,
        provider_response_id=body.get('id'),
        finish_reason=finish_reason,
    )


class OpenAIResponsesStreamedResponse(EventStreamedResponse):
    """A streamed Responses API response, fed its events (`response.created`, `response.output_text.delta`, ...)."""

    _annotations: dict[str, list[Any]] | None = None  # the annotations of each text item so far, by item id
    _history: HistoryHasher | None = None
    """The hash of the history the response is made from, when it records a `history_digest` (set by the model)."""

    def get(self) -> ModelResponse:
        """The response so far, with its `history_digest` when the request recorded one."""
        response = super().get()
        if self._history is not None:
            response.history_digest = continuation_digest(self._history, response.parts)
        return response

    def _stream_error(self, error: dict[str, Any]) -> ModelAPIError:
        # An `error` event, or the error of a failed response: the status its code has outside a stream.
        code, message = error.get('code'), error.get('message') or ''
        body = {key: error[key] for key in ('code', 'message', 'param') if error.get(key) is not None}
        text = f'Model {self._model_name!r} stream failed: {code or "error"}: {message}'
        return openai_stream_error(self._model_name, text, body)

    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        kind = data.get('type', '')
        manager = self._parts_manager
        event: Any = None
        if kind == 'response.created':
            response = data.get('response') or {}
            self.provider_response_id = response.get('id')
            self._model_name = response.get('model') or self._model_name
        elif kind in ('response.completed', 'response.incomplete', 'response.failed'):
            response = data.get('response') or {}
            self._usage = responses_usage(response.get('usage'))
            self.finish_reason, details = _finish(response)
            # Only the response ending the stream has the finished comparison: earlier ones may say `unavailable`.
            if (diagnostics := response.get('prompt_cache_diagnostics')) is not None:
                details['prompt_cache_diagnostics'] = _diagnostics(diagnostics)
            for key, value in details.items():
                self._set_provider_detail(key, value)
            if kind == 'response.failed' and isinstance(error := response.get('error'), dict):
                raise self._stream_error(error)
        elif kind == 'response.output_item.added':
            item = data.get('item') or {}
            if item.get('type') == 'function_call':
                event = manager.tool_call_delta(
                    item['id'], item['name'], item.get('arguments') or None, item['call_id']
                )
                namespace = {'namespace': item['namespace']} if item.get('namespace') else None
                self._set_part_fields(
                    event, id=item['id'], provider_name=self._provider_name, provider_details=namespace
                )
        elif kind == 'response.function_call_arguments.delta':
            event = manager.tool_call_delta(data['item_id'], None, data.get('delta') or None)
        elif kind == 'response.output_text.delta':
            event = manager.text_delta(data['item_id'], data.get('delta', ''))
            self._set_part_fields(event, id=data['item_id'], provider_name=self._provider_name)
        elif kind == 'response.output_text.annotation.added':
            self._annotations = self._annotations or {}
            self._annotations.setdefault(data['item_id'], []).append(data.get('annotation'))
        elif kind == 'response.output_text.done' and self._annotations and data['item_id'] in self._annotations:
            # The citations go on once the text is whole (their offsets count into the final text, which the
            # streamed part must still be).
            item_id, text = data['item_id'], data.get('text') or ''
            annotations = self._annotations.pop(item_id)
            part = manager.get_part_by_vendor_id(item_id)
            cited = openai_responses_citations(annotations, text)
            if isinstance(part, TextPart) and part.content == text and cited is not None:
                citations, raw = cited
                yield from manager.handle_text_delta(
                    vendor_part_id=item_id, content='', provider_name=self._provider_name,
                    provider_details={'citations': raw}, citations=citations,
                )  # fmt: skip
        elif kind == 'response.reasoning_summary_text.delta':
            item_id = data['item_id']
            event = manager.thinking_delta(f'{item_id}-{data.get("summary_index", 0)}', data.get('delta', ''))
            self._set_part_fields(event, id=item_id, provider_name=self._provider_name)
        elif kind == 'response.output_item.done':
            item = data.get('item') or {}
            if item.get('type') == 'reasoning' and (signature := item.get('encrypted_content')):
                event = manager.thinking_delta(f'{item["id"]}-0', None, signature)
                self._set_part_fields(event, id=item['id'], provider_name=self._provider_name)
            elif item.get('type') == 'compaction':
                event = manager.handle_part(
                    vendor_part_id=item.get('id'), part=openai_compaction_part(item, self._provider_name)
                )
            elif item.get('type') in TOOL_SEARCH_ITEM_TYPES:
                yield manager.whole_part((item.get('id'), 0), tool_search_parts(item, self._provider_name))
            elif item.get('type') in NATIVE_ITEM_TYPES:
                # A hosted tool's call, result (and image) arrive whole once its item is done.
                for index, part in enumerate(native_output_parts(item, self._provider_name)):
                    yield manager.whole_part((item.get('id'), index), part)
        elif kind == 'error':
            raise self._stream_error(data)
        if event is not None:
            yield event
