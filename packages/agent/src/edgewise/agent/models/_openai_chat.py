"""The Chat Completions wire format: messages and parameters to a request body, a response body to a response.

Pure functions of plain dicts (the JSON the API sends and takes): no HTTP here, and no `openai` package.
"""

from __future__ import annotations as _annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, cast

from .._tools.definition import ToolDefinition
from ..exceptions import UnexpectedModelBehavior
from ..messages import (
    BinaryContent,
    FileUrl,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    generate_tool_call_id,
)
from ..profiles import DEFAULT_THINKING_TAGS, ModelProfile
from ..profiles.openai import OpenAIModelProfile
from ..usage import RequestUsage
from . import _openai_cache as _cache
from ._citations import openai_chat_citations
from ._mapping import (
    StatelessArtifactCheck,
    by_provider_name,
    inline_text_file,
    is_text_like,
    replayed_thinking,
    unsupported_file,
    uploaded_file_id,
    user_turn_items,
)
from ._openai_native_tools import chat_web_search_options
from ._thinking import openai_settings, takes_effort_none
from ._tool_call_ids import ToolCallIds
from ._tool_choice import forcing_supported, request_thinks, resolve_tool_choice

__all__ = (
    'FINISH_REASONS',
    'ReasoningDetail',
    'THINKING_FIELDS',
    'build_body',
    'map_messages',
    'map_usage',
    'parse_response',
    'split_thinking',
    'tool_call_details',
)

FINISH_REASONS: dict[str, FinishReason] = {
    'stop': 'stop',
    'length': 'length',
    'tool_calls': 'tool_call',
    'content_filter': 'content_filter',
    'function_call': 'tool_call',
}
"""Chat Completions' `finish_reason` values, mapped to `FinishReason`."""

THINKING_FIELDS = ('reasoning', 'reasoning_content')
"""Message fields in which OpenAI-compatible servers put thinking (vLLM, Ollama, DeepSeek, OpenRouter)."""

SAMPLING_SETTINGS = ('temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logit_bias',
                     'openai_logprobs', 'openai_top_logprobs')  # fmt: skip
"""Settings reasoning models reject while they reason."""

# Settings copied into the body under another name (or the same); the rest are handled one by one.
_SETTINGS_TO_BODY = {
    'stop_sequences': 'stop',
    'max_tokens': 'max_completion_tokens',
    'seed': 'seed',
    'temperature': 'temperature',
    'top_p': 'top_p',
    'presence_penalty': 'presence_penalty',
    'frequency_penalty': 'frequency_penalty',
    'logit_bias': 'logit_bias',
    'openai_reasoning_effort': 'reasoning_effort',
    'openai_user': 'user',
    'openai_service_tier': 'service_tier',
    'openai_prediction': 'prediction',
    'openai_logprobs': 'logprobs',
    'openai_top_logprobs': 'top_logprobs',
    'openai_store': 'store',
    'openai_prompt_cache_key': 'prompt_cache_key',
    'openai_prompt_cache_retention': 'prompt_cache_retention',
    'openai_prompt_cache_options': 'prompt_cache_options',
}


def _system_message(role: str, content: str) -> dict[str, Any]:
    return {'role': role, 'content': content}


def _tool_call(part: ToolCallPart, ids: ToolCallIds) -> dict[str, Any]:
    return {
        'id': ids(part.tool_call_id),
        'type': 'function',
        'function': {'name': part.tool_name, 'arguments': part.args_as_json_str()},
    }


ReasoningDetail = Callable[[ModelResponse, ThinkingPart], dict[str, Any] | None]
"""A thinking part of a response as an item of the assistant message's `reasoning_details` (OpenRouter), or `None`
to send it back the usual way."""


def tool_call_details(call: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `provider_details` of a tool call of a response (or of a streamed delta): its `extra_content`, where
    Gemini's Chat Completions API puts the call's thought signature, which it wants back unchanged."""
    if extra_content := call.get('extra_content'):
        return {'extra_content': extra_content}
    return None


def _assistant_message(
    message: ModelResponse,
    profile: OpenAIModelProfile,
    system: str,
    reasoning_detail: ReasoningDetail | None,
    ids: ToolCallIds,
    carried: list[str],
    accepts: StatelessArtifactCheck,
) -> dict[str, Any] | None:
    """`message` as an assistant message; reasoning carried into a user message ahead of it goes to `carried`. A
    tool call's `extra_content` goes back where `accepts` says the API verifies it."""
    texts: list[str] = []
    fields: dict[str, list[str]] = {}
    calls: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    start_tag, end_tag = profile.get('thinking_tags', DEFAULT_THINKING_TAGS)
    send_back = profile.get('openai_chat_send_back_thinking_parts', 'auto')
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ToolCallPart):
            call = _tool_call(part, ids)
            if (extra := (part.provider_details or {}).get('extra_content')) and accepts(message, part):
                call['extra_content'] = extra
            calls.append(call)
        elif (
            isinstance(part, ThinkingPart)
            and reasoning_detail
            and (detail := reasoning_detail(message, part)) is not None
        ):
            details.append(detail)
        elif isinstance(part, ThinkingPart):
            custom = profile.get('openai_chat_thinking_field', None)
            if send_back == 'field' and custom:
                fields.setdefault(custom, []).append(part.content)
            elif send_back == 'tags' or (
                send_back == 'auto'
                and not (
                    part.id
                    and part.id != 'content'
                    and part.provider_name == system
                    and (not custom or part.id == custom)
                )
            ):
                if part.content and profile.get('mimics_assistant_message_formatting', False):
                    carried.append(replayed_thinking(part, profile)[0])
                else:
                    texts.append(f'{start_tag}\n{part.content}\n{end_tag}')
            elif send_back == 'auto':
                fields.setdefault(cast(str, part.id), []).append(part.content)
    if not (texts or fields or calls or details):
        return None  # an empty response: the API rejects an assistant message without content or calls
    result: dict[str, Any] = {'role': 'assistant'}
    for name, contents in fields.items():
        result[name] = '\n\n'.join(contents)
    if details:
        result['reasoning_details'] = details
    result['content'] = '\n\n'.join(texts) if texts else None
    if calls:
        result['tool_calls'] = calls
    return result


def _user_content(part: UserPromptPart, model_name: str, breakpoints: bool = False) -> str | list[dict[str, Any]]:
    if isinstance(part.content, str):
        return part.content
    return user_turn_items(
        part,
        text=lambda text: {'type': 'text', 'text': text},
        file=lambda item: _file_item(item, model_name),
        tool_return=_unreachable,
        tool_error=_unreachable,
        cache_point=_cache.cache_point('text') if breakpoints else None,
    )


def _unreachable(part: Any) -> dict[str, Any]:  # pragma: no cover - user prompts hold no tool parts
    raise AssertionError(part)


def _file_item(item: Any, model_name: str) -> dict[str, Any]:
    # Audio and document URLs were downloaded before (Chat Completions takes only image URLs).
    if isinstance(item, ImageUrl):
        return {'type': 'image_url', 'image_url': _image_url(item.url, item.vendor_metadata)}
    if isinstance(item, UploadedFile):
        return {'type': 'file', 'file': {'file_id': uploaded_file_id(item, 'OpenAIChatModel', ('openai',))}}
    if isinstance(item, BinaryContent):
        if is_text_like(item.media_type):
            # Chat Completions takes no text files: their text goes inline, between markers naming the file.
            text = item.data.decode('utf-8', errors='replace')
            return {
                'type': 'text',
                'text': inline_text_file(text, media_type=item.media_type, identifier=item.identifier),
            }
        if item.is_image:
            return {'type': 'image_url', 'image_url': _image_url(item.data_uri, item.vendor_metadata)}
        if item.is_audio and item.format in ('wav', 'mp3'):
            return {'type': 'input_audio', 'input_audio': {'data': item.base64, 'format': item.format}}
        if item.is_document:
            return {'type': 'file', 'file': {'file_data': item.data_uri, 'filename': f'filename.{item.format}'}}
    raise unsupported_file(model_name, item)


def _image_url(url: str, vendor_metadata: dict[str, Any] | None) -> dict[str, Any]:
    image_url: dict[str, Any] = {'url': url}
    if vendor_metadata:
        image_url['detail'] = vendor_metadata.get('detail', 'auto')
    return image_url


def takes_url(file: FileUrl) -> bool:
    """Whether Chat Completions takes this file as a URL (only images; other files are sent as data)."""
    return isinstance(file, ImageUrl)


def map_messages(
    messages: Sequence[ModelMessage],
    profile: OpenAIModelProfile,
    *,
    system: str,
    model_name: str,
    instructions: str | None,
    reasoning_detail: ReasoningDetail | None = None,
    cache_instructions: bool = False,
    accepts: StatelessArtifactCheck | None = None,
) -> list[dict[str, Any]]:
    """The `messages` of a request body; the request's `instructions` go after the leading system messages.

    `reasoning_detail` picks the thinking parts sent back in an assistant message's `reasoning_details`. Tool call
    ids are fitted to the profile's `tool_call_id_length`, if it sets one. Where the profile has
    `openai_supports_prompt_cache_breakpoints`, a `CachePoint` becomes a breakpoint on the content before it, and
    `cache_instructions` puts one after the instructions (see `_openai_cache`). `accepts`
    (`Model.accepts_stateless_artifacts`) says whose signed `extra_content` of tool calls goes back, by default the
    parts of `system`.
    """
    accepts = accepts or by_provider_name(system)
    role = profile.get('openai_system_prompt_role', None) or 'system'
    breakpoints = profile.get('openai_supports_prompt_cache_breakpoints', False)
    length: int | None = profile.get('tool_call_id_length')
    ids = ToolCallIds(length)
    result: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            tool_files: list[UserContent] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    result.append(_system_message(role, part.content))
                elif isinstance(part, UserPromptPart):
                    result.append({'role': 'user', 'content': _user_content(part, model_name, breakpoints)})
                elif isinstance(part, ToolReturnPart):
                    # A tool message holds only text: files a tool returned follow in a user message.
                    if (call_id := ids(part.tool_call_id)) != part.tool_call_id:
                        part = dataclasses.replace(part, tool_call_id=call_id)  # its files' frames name it so
                    text, files = part.model_response_str_and_user_content()
                    tool_files += files
                    result.append({'role': 'tool', 'tool_call_id': call_id, 'content': text})
                elif isinstance(part, RetryPromptPart):
                    if part.tool_name is None:
                        result.append({'role': 'user', 'content': part.model_response()})
                    else:
                        result.append(
                            {'role': 'tool', 'tool_call_id': ids(part.tool_call_id), 'content': part.model_response()}
                        )
            if tool_files:
                result.append({'role': 'user', 'content': _user_content(UserPromptPart(tool_files), model_name)})
        else:
            carried: list[str] = []
            assistant = _assistant_message(message, profile, system, reasoning_detail, ids, carried, accepts)
            if carried:  # `mimics_assistant_message_formatting`: the reasoning goes in a user message before the reply
                result.append({'role': 'user', 'content': '\n\n'.join(carried)})
            if assistant is not None:
                result.append(assistant)
    leading = next((i for i, m in enumerate(result) if m['role'] != role), len(result))
    if instructions:
        result.insert(leading, _system_message(role, instructions))
        leading += 1
    multiple_system = profile.get('openai_chat_supports_multiple_system_messages', True)
    # A `'user'` role cannot be told from a user turn, and merged system messages would lose the boundary.
    if (
        breakpoints
        and cache_instructions
        and role != 'user'
        and multiple_system
        and leading
        and not _cache.has_dynamic_system_prompt(messages)
    ):
        _cache.mark_message(result[leading - 1], 'text')
    if not multiple_system:
        result = _merge_leading_system_messages(result, role)
    if breakpoints:
        _cache.move_leading_breakpoints(result, text_type='text')
    return result


def _merge_leading_system_messages(messages: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    leading = list(itertools.takewhile(lambda m: m['role'] == role, messages))
    if len(leading) < 2:
        return messages
    merged = _system_message(role, '\n\n'.join(str(m['content']) for m in leading))
    return [merged, *messages[len(leading) :]]


def _tool(tool: ToolDefinition, profile: OpenAIModelProfile) -> dict[str, Any]:
    function: dict[str, Any] = {
        'name': tool.name,
        'description': tool.description or '',
        'parameters': tool.parameters_json_schema,
    }
    if tool.strict and profile.get('openai_supports_strict_tool_definition', True):
        function['strict'] = True
    return {'type': 'function', 'function': function}


def _tool_choice(
    settings: Mapping[str, Any], params: Any, profile: OpenAIModelProfile, model_name: str
) -> tuple[dict[str, ToolDefinition], Any]:
    """The tools to send and the `tool_choice`. Chat Completions cannot limit the tools in `tool_choice`, so a
    choice among some tools sends only those."""
    tools: dict[str, ToolDefinition] = params.declared_tool_defs
    resolved = resolve_tool_choice(settings, params)
    if resolved == 'auto' or resolved == 'none':
        return tools, resolved
    supported = forcing_supported(settings, profile, model_name, thinking=request_thinks(settings, profile))
    if resolved == 'required':
        return tools, 'required' if supported else 'auto'
    mode, names = resolved
    kept = {name: tool for name, tool in tools.items() if name in names}
    if mode == 'required' and len(names) == 1 and supported:
        return tools, {'type': 'function', 'function': {'name': next(iter(names))}}
    return kept, 'required' if mode == 'required' and supported else 'auto'


def build_body(
    *,
    model_name: str,
    messages: list[dict[str, Any]],
    settings: Mapping[str, Any],
    params: Any,
    profile: ModelProfile,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of a Chat Completions request.

    Args:
        model_name: The model's name.
        messages: The mapped messages (`map_messages`).
        settings: The merged settings.
        params: The request's `ModelRequestParameters`.
        profile: The model's profile.
        stream: Whether the response is streamed.
    """
    openai_profile = cast(OpenAIModelProfile, profile)
    settings = openai_settings(settings, params, profile, 'chat')
    body: dict[str, Any] = {'model': model_name, 'messages': messages}
    tool_defs, tool_choice = _tool_choice(settings, params, openai_profile, model_name)
    unsupported = set(openai_profile.get('openai_unsupported_model_settings', ()))
    if tool_defs:
        body['tools'] = [_tool(t, openai_profile) for t in tool_defs.values()]
        body['tool_choice'] = tool_choice
        if 'parallel_tool_calls' in settings and 'parallel_tool_calls' not in unsupported:
            body['parallel_tool_calls'] = settings['parallel_tool_calls']
    if (web_search := chat_web_search_options(params)) is not None:
        body['web_search_options'] = web_search
    if stream:
        body['stream'] = True
        options: dict[str, bool] = {'include_usage': True}
        if settings.get('openai_continuous_usage_stats'):
            options['continuous_usage_stats'] = True
        body['stream_options'] = options
    if params.output_mode == 'native' and params.output_object is not None:
        body['response_format'] = _response_format(params.output_object, openai_profile)
    elif params.output_mode == 'prompted' and profile.get('supports_json_object_output', False):
        body['response_format'] = {'type': 'json_object'}
    reasoning = openai_profile.get('openai_supports_reasoning', False) and not (
        takes_effort_none(openai_profile) and settings.get('openai_reasoning_effort', 'none') == 'none'
    )
    for key, name in _SETTINGS_TO_BODY.items():
        if key in settings and key not in unsupported and not (reasoning and key in SAMPLING_SETTINGS):
            body[name] = settings[key]
    if 'max_completion_tokens' in body and not openai_profile.get('openai_chat_supports_max_completion_tokens', True):
        body['max_tokens'] = body.pop('max_completion_tokens')
    extra = settings.get('extra_body')
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def _response_format(output: Any, profile: OpenAIModelProfile) -> dict[str, Any]:
    schema: dict[str, Any] = {'name': output.name or 'final_result', 'schema': output.json_schema}
    if output.description:
        schema['description'] = output.description
    if profile.get('openai_supports_strict_tool_definition', True) and output.strict is not None:
        schema['strict'] = output.strict
    return {'type': 'json_schema', 'json_schema': schema}


def map_usage(usage: Mapping[str, Any] | None) -> RequestUsage:
    """The `usage` object of a response (or of a stream's last chunk) as a `RequestUsage`."""
    if not usage:
        return RequestUsage()
    details: dict[str, int] = {
        key: value
        for key, value in usage.items()
        if key not in ('prompt_tokens', 'completion_tokens', 'total_tokens') and type(value) is int
    }
    prompt_details = usage.get('prompt_tokens_details') or {}
    completion_details = usage.get('completion_tokens_details') or {}
    details.update({k: v for k, v in completion_details.items() if type(v) is int})
    return RequestUsage(
        input_tokens=usage.get('prompt_tokens') or 0,
        output_tokens=usage.get('completion_tokens') or 0,
        cache_read_tokens=prompt_details.get('cached_tokens') or 0,
        input_audio_tokens=prompt_details.get('audio_tokens') or 0,
        output_audio_tokens=completion_details.get('audio_tokens') or 0,
        details=details,
    )


def split_thinking(content: str, tags: tuple[str, str]) -> Iterator[TextPart | ThinkingPart]:
    """Text with `<think>...</think>` sections as text and thinking parts (an unclosed section is thinking)."""
    start, end = tags
    while content:
        before, found, rest = content.partition(start)
        if before:
            yield TextPart(before)
        if not found:
            return
        thought, _, content = rest.partition(end)
        yield ThinkingPart(thought)


def timestamp_of(created: object) -> datetime | None:
    """The `created` field of a response (seconds since the epoch) as a datetime."""
    if isinstance(created, int | float) and created:
        return datetime.fromtimestamp(created, tz=timezone.utc)
    return None


def parse_response(
    data: Any, *, profile: ModelProfile, system: str, model_name: str, provider_name: str
) -> ModelResponse:
    """The `ModelResponse` of a Chat Completions response body.

    Raises:
        UnexpectedModelBehavior: the body is not a chat completion.
    """
    if not isinstance(data, dict) or not isinstance(data.get('choices'), list) or not data['choices']:
        raise UnexpectedModelBehavior(
            f'Invalid response from {system} chat completions endpoint: expected a chat completion with choices',
            str(data)[:2000],
        )
    choice = data['choices'][0]
    message = choice.get('message') or {}
    details: dict[str, Any] = {}
    if choice.get('logprobs') and choice['logprobs'].get('content'):
        details['logprobs'] = choice['logprobs']['content']
    # Local servers (Ollama) sometimes leave the finish reason out; the response is complete all the same.
    raw_finish = choice.get('finish_reason') or 'stop'
    details['finish_reason'] = raw_finish
    finish_reason = FINISH_REASONS.get(raw_finish)
    if (created := timestamp_of(data.get('created'))) is not None:
        details['timestamp'] = created
    parts: list[ModelResponsePart] = []
    if refusal := message.get('refusal'):
        details.pop('finish_reason', None)
        details['refusal'] = refusal
        finish_reason = 'content_filter'
    else:
        openai_profile = cast(OpenAIModelProfile, profile)
        custom = openai_profile.get('openai_chat_thinking_field', None)
        for name in (custom, *THINKING_FIELDS):
            if name and isinstance(reasoning := message.get(name), str) and reasoning:
                parts.append(ThinkingPart(reasoning, id=name, provider_name=system))
                break
        if content := message.get('content'):
            split = list(split_thinking(content, profile.get('thinking_tags', DEFAULT_THINKING_TAGS)))
            for part in split:
                if isinstance(part, ThinkingPart):
                    part.id, part.provider_name = 'content', system
                parts.append(part)
            # Citation offsets count into the content as sent: only a single text part that is all of it is cited.
            if (
                len(split) == 1
                and isinstance(text := split[0], TextPart)
                and (cited := openai_chat_citations(message.get('annotations'), text.content)) is not None
            ):
                text.citations, raw = cited
                text.provider_name, text.provider_details = system, {'citations': raw}
        for call in message.get('tool_calls') or ():
            function = call.get('function') or {}
            call_id = call.get('id') or generate_tool_call_id()
            tool_details = tool_call_details(call)
            tool_call = ToolCallPart(function.get('name', ''), function.get('arguments'), call_id)
            if tool_details is not None:
                tool_call.provider_name, tool_call.provider_details = system, tool_details
            parts.append(tool_call)
    return ModelResponse(
        parts=parts,
        usage=map_usage(data.get('usage')),
        model_name=data.get('model') or model_name,
        provider_name=provider_name,
        provider_details=details or None,
        provider_response_id=data.get('id'),
        finish_reason=finish_reason,
    )
