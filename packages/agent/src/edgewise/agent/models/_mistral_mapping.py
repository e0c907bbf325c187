"""Mistral's chat completions wire format: messages and settings to a request body, a response (or its streamed
chunks) to a `ModelResponse`, and an error body to the error of its category.

Pure functions of plain dicts (the JSON `POST /v1/chat/completions` takes and gives): no HTTP here, and no
`mistralai` package. The format is close to OpenAI's Chat Completions; what differs: content may be a list of
chunks (`text`, `thinking`, `image_url`, `document_url`), a forced tool call is `tool_choice: 'any'`, the seed is
`random_seed`, reasoning is asked for with `reasoning_effort: 'high'` (or switched off with `'none'`), tool call
ids are nine letters and digits, and a user message may not follow a tool message directly.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pydantic_core

from .._tools.definition import ToolDefinition
from ..exceptions import ModelContextWindowExceededError, ModelHTTPError, UnexpectedModelBehavior
from ..messages import (
    BinaryContent,
    DocumentUrl,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
    generate_tool_call_id,
)
from ..profiles import ModelProfile
from ._error_categories import http_status_category
from ._mapping import EventStreamedResponse, inline_text_file, is_text_like, unsupported_file, user_turn_items
from ._openai_chat import map_usage, timestamp_of
from ._request_parameters import ModelRequestParameters, request_instructions
from ._tool_call_ids import ToolCallIds
from ._tool_choice import resolve_tool_choice

__all__ = (
    'FINISH_REASONS',
    'MistralStreamedResponse',
    'mistral_http_error',
    'mistral_model_response',
    'mistral_request_body',
    'takes_url',
)

FINISH_REASONS: dict[str, FinishReason] = {
    'stop': 'stop',
    'length': 'length',
    'model_length': 'length',
    'error': 'error',
    'tool_calls': 'tool_call',
}
"""Mistral's `finish_reason` values, mapped to `FinishReason`."""

_SETTINGS_TO_BODY = (
    ('max_tokens', 'max_tokens'),
    ('temperature', 'temperature'),
    ('seed', 'random_seed'),
    ('presence_penalty', 'presence_penalty'),
    ('frequency_penalty', 'frequency_penalty'),
    ('stop_sequences', 'stop'),
    ('parallel_tool_calls', 'parallel_tool_calls'),
    ('mistral_prompt_cache_key', 'prompt_cache_key'),
)
"""Settings sent under Mistral's name for them; the others (`logit_bias`, `top_k`, `extra_body`, ...) are not."""

_CONTEXT_WINDOW_CODE = '3051'
"""Mistral's error code for a prompt longer than the model's context window."""


def takes_url(file: Any) -> bool:
    """Whether Mistral takes this file by its URL: images and PDFs (other documents are sent as text)."""
    return isinstance(file, ImageUrl) or (isinstance(file, DocumentUrl) and file.media_type == 'application/pdf')


# Requests.


def _image_chunk(url: str, vendor_metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    image_url: dict[str, Any] = {'url': url}
    if vendor_metadata:
        image_url['detail'] = vendor_metadata.get('detail', 'auto')
    return {'type': 'image_url', 'image_url': image_url}


def _file_chunk(item: Any, model_name: str) -> dict[str, Any]:
    if isinstance(item, ImageUrl):
        return _image_chunk(item.url, item.vendor_metadata)
    if isinstance(item, DocumentUrl) and item.media_type == 'application/pdf':
        return {'type': 'document_url', 'document_url': item.url}
    if isinstance(item, BinaryContent):
        if is_text_like(item.media_type):
            text = item.data.decode('utf-8', errors='replace')
            return {
                'type': 'text',
                'text': inline_text_file(text, media_type=item.media_type, identifier=item.identifier),
            }
        if item.is_image:
            return _image_chunk(item.data_uri, item.vendor_metadata)
        if item.media_type == 'application/pdf':
            return {'type': 'document_url', 'document_url': item.data_uri}
    # Audio, video, uploaded files, and documents other than PDFs and text.
    raise unsupported_file(model_name, item)


def _user_message(part: UserPromptPart, model_name: str) -> dict[str, Any]:
    if isinstance(part.content, str):
        return {'role': 'user', 'content': part.content}
    chunks = user_turn_items(
        part,
        text=lambda text: {'type': 'text', 'text': text},
        file=lambda item: _file_chunk(item, model_name),
        tool_return=_unreachable,
        tool_error=_unreachable,
    )
    return {'role': 'user', 'content': chunks}


def _unreachable(part: Any) -> dict[str, Any]:  # pragma: no cover - user prompts hold no tool parts
    raise AssertionError(part)


def _assistant_message(message: ModelResponse, ids: ToolCallIds) -> dict[str, Any] | None:
    thoughts: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({'type': 'text', 'text': part.content})
        elif isinstance(part, ThinkingPart):
            thoughts.append({'type': 'text', 'text': part.content})
        elif isinstance(part, ToolCallPart):
            function = {'name': part.tool_name, 'arguments': part.args_as_json_str()}
            calls.append({'id': ids(part.tool_call_id), 'type': 'function', 'function': function})
        # Native tool parts, files and compactions are not Mistral's: they are not sent back.
    if not (thoughts or content or calls):
        return None  # Mistral rejects an assistant message with neither content nor tool calls
    if thoughts:
        content.insert(0, {'type': 'thinking', 'thinking': thoughts})
    return {'role': 'assistant', 'content': content, 'tool_calls': calls}


def map_messages(
    messages: Sequence[ModelMessage], params: ModelRequestParameters, *, model_name: str, profile: ModelProfile
) -> list[dict[str, Any]]:
    """The `messages` of a request body: the request's instructions after the leading system messages, tool call
    ids fitted to the profile's `tool_call_id_length`, and an assistant `'OK'` between a tool result and a user
    message that follows it (Mistral takes no user message right after a tool message)."""
    length: int | None = profile.get('tool_call_id_length')
    ids = ToolCallIds(length)
    result: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            if (assistant := _assistant_message(message, ids)) is not None:
                result.append(assistant)
            continue
        tool_files: list[UserContent] = []
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                result.append({'role': 'system', 'content': part.content})
            elif isinstance(part, UserPromptPart):
                result.append(_user_message(part, model_name))
            elif isinstance(part, ToolReturnPart):
                # A tool message holds only text: files a tool returned follow in a user message, framed with the
                # id the call goes out with.
                if (call_id := ids(part.tool_call_id)) != part.tool_call_id:
                    part = dataclasses.replace(part, tool_call_id=call_id)
                text, files = part.model_response_str_and_user_content()
                tool_files += files
                result.append({'role': 'tool', 'tool_call_id': call_id, 'content': text})
            elif isinstance(part, RetryPromptPart):
                if part.tool_name is None:
                    result.append({'role': 'user', 'content': part.model_response()})
                else:
                    call_id = ids(part.tool_call_id)
                    result.append({'role': 'tool', 'tool_call_id': call_id, 'content': part.model_response()})
        if tool_files:
            result.append(_user_message(UserPromptPart(tool_files), model_name))
    if instructions := request_instructions(messages, params):
        leading = next((i for i, m in enumerate(result) if m['role'] != 'system'), len(result))
        result.insert(leading, {'role': 'system', 'content': instructions})
    separated: list[dict[str, Any]] = []
    for i, mapped in enumerate(result):
        separated.append(mapped)
        if mapped['role'] == 'tool' and i + 1 < len(result) and result[i + 1]['role'] == 'user':
            separated.append({'role': 'assistant', 'content': [{'type': 'text', 'text': 'OK'}]})
    return separated


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function = {'name': tool.name, 'description': tool.description or '', 'parameters': tool.parameters_json_schema}
    return {'type': 'function', 'function': function}


def _tools(settings: Mapping[str, Any], params: ModelRequestParameters) -> tuple[list[ToolDefinition], Any]:
    """The tools to send and the `tool_choice` (no tools at all for `'none'`: Mistral garbles its answers when told
    not to use the tools it is given)."""
    tools = params.declared_tool_defs
    resolved = resolve_tool_choice(settings, params)
    choice: Any
    if resolved == 'none':
        return [], None
    if resolved == 'auto':
        choice = 'auto'
    elif resolved == 'required':
        choice = 'any'
    else:
        mode, names = resolved
        if mode == 'required' and len(names) == 1:
            # The one tool is named and every tool is still sent, which keeps the tools prefix cacheable.
            choice = {'type': 'function', 'function': {'name': next(iter(names))}}
        else:
            tools = {name: tool for name, tool in tools.items() if name in names}
            choice = 'auto' if mode == 'auto' else 'any'
    return list(tools.values()), choice


def reasoning_effort(params: ModelRequestParameters, profile: ModelProfile) -> str | None:
    """Mistral's `reasoning_effort` for the unified `thinking` setting: `'none'` for `False`, else `'high'` (Mistral
    has no level between); none when unset, or for a model that always reasons and takes no effort."""
    if params.thinking is None or profile.get('thinking_always_enabled', False):
        return None
    return 'none' if params.thinking is False else 'high'


def mistral_request_body(
    model_name: str,
    messages: Sequence[ModelMessage],
    settings: Mapping[str, Any],
    params: ModelRequestParameters,
    profile: ModelProfile,
    *,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of a chat completions request.

    `top_p` is sent as 1 unless set (for a streamed request only when it has tools), as Mistral's SDK has it.
    """
    tools, choice = _tools(settings, params)
    body: dict[str, Any] = {
        'model': model_name,
        'messages': map_messages(messages, params, model_name=model_name, profile=profile),
        'stream': stream,
    }
    if tools:
        body['n'] = 1
        body['tools'] = [_tool(tool) for tool in tools]
        body['tool_choice'] = choice
    elif not stream:
        body['n'] = 1
    if 'top_p' in settings:
        body['top_p'] = settings['top_p']
    elif not stream or tools or params.output_tools:
        body['top_p'] = 1
    for key, name in _SETTINGS_TO_BODY:
        if settings.get(key) is not None:
            body[name] = settings[key]
    if (effort := reasoning_effort(params, profile)) is not None:
        body['reasoning_effort'] = effort
    return body


# Responses.


def _content(content: object) -> tuple[str | None, list[str]]:
    """The text and the thoughts of a message's (or a delta's) `content`: a string, or a list of chunks (references
    and chunks of other kinds are left out)."""
    if isinstance(content, str):
        return content or None, []
    text: str | None = None
    thoughts: list[str] = []
    for chunk in content if isinstance(content, list) else ():
        if not isinstance(chunk, dict):
            continue
        if chunk.get('type') == 'text' and isinstance(chunk.get('text'), str):
            text = (text or '') + chunk['text']
        elif chunk.get('type') == 'thinking':
            for thought in chunk.get('thinking') or ():
                if isinstance(thought, dict) and thought.get('type') == 'text' and isinstance(thought.get('text'), str):
                    thoughts.append(thought['text'])
    return text or None, thoughts


def _tool_call(call: Mapping[str, Any]) -> ToolCallPart:
    function = call.get('function') or {}
    call_id = call.get('id')
    return ToolCallPart(
        function.get('name') or '',
        function.get('arguments'),
        call_id if call_id and call_id != 'null' else generate_tool_call_id(),
    )


def mistral_model_response(data: Any, *, model_name: str, provider_name: str) -> ModelResponse:
    """The `ModelResponse` of a chat completion.

    Raises:
        UnexpectedModelBehavior: the body is not a chat completion with a choice.
    """
    choices = data.get('choices') if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise UnexpectedModelBehavior(
            'Invalid response from mistral chat completions endpoint: expected a chat completion with choices',
            str(data)[:2000],
        )
    choice = choices[0]
    message = choice.get('message') or {}
    text, thoughts = _content(message.get('content'))
    parts: list[ModelResponsePart] = [ThinkingPart(thought) for thought in thoughts]
    if text:
        parts.append(TextPart(text))
    parts.extend(_tool_call(call) for call in message.get('tool_calls') or () if isinstance(call, dict))
    raw_finish = choice.get('finish_reason')
    details: dict[str, Any] = {'finish_reason': raw_finish}
    if (created := timestamp_of(data.get('created'))) is not None:
        details['timestamp'] = created
    return ModelResponse(
        parts=parts,
        usage=map_usage(data.get('usage')),
        model_name=data.get('model') or model_name,
        provider_name=provider_name,
        provider_response_id=data.get('id'),
        finish_reason=FINISH_REASONS.get(raw_finish) if isinstance(raw_finish, str) else None,
        provider_details=details,
    )


def mistral_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from Mistral, whose error body is `{"message", "type", "code"}` (the code a number in
    a string: `'3051'` for a prompt over the context window)."""
    error = body if isinstance(body, dict) else {}
    code = error.get('code')
    code = str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None
    error_type = error.get('type') if isinstance(error.get('type'), str) else None
    message = error.get('message')
    category = (
        ModelContextWindowExceededError
        if code == _CONTEXT_WINDOW_CODE
        else http_status_category(status_code, message if isinstance(message, str) else None)
    )
    return ModelHTTPError.for_category(
        category,
        status_code=status_code,
        model_name=model_name,
        body=body,
        headers=headers,
        provider_error_code=code,
        provider_error_type=error_type,
        in_stream=in_stream,
    )


# Streams.


def _matches(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether a parsed JSON value (maybe of a partial document) has the required keys and simple types of
    `schema`, nested objects included."""
    kind = schema.get('type')
    if kind == 'object' or 'properties' in schema:
        if not isinstance(value, dict):
            return False
        properties = schema.get('properties') or {}
        return all(
            key in value and _matches(value[key], properties.get(key) or {}) for key in schema.get('required', ())
        )
    if kind == 'array':
        items = schema.get('items')
        return isinstance(value, list) and (not isinstance(items, dict) or all(_matches(v, items) for v in value))
    simple = {'string': str, 'boolean': bool, 'null': type(None)}
    if kind in simple:
        return isinstance(value, simple[kind])
    if kind in ('integer', 'number'):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


class MistralStreamedResponse(EventStreamedResponse):
    """A streamed chat completion: its chunks (`data:` events, `[DONE]` last) turned into part events.

    When the request has output tools, streamed text is read as JSON: once it holds what an output tool's schema
    requires, it becomes that tool's call (its arguments growing with the text), as Mistral's SDK-based model does.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._output_text = ''
        self._output_call_id = generate_tool_call_id()

    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        if usage := data.get('usage'):
            self._usage = map_usage(usage)
        if data.get('id'):
            self.provider_response_id = data['id']
        if isinstance(model := data.get('model'), str) and model:
            self._model_name = model
        if self.provider_details is None and (created := timestamp_of(data.get('created'))) is not None:
            self._set_provider_detail('timestamp', created)
        choices = data.get('choices')
        if not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        if isinstance(raw_finish := choice.get('finish_reason'), str) and raw_finish:
            self._set_provider_detail('finish_reason', raw_finish)
            self.finish_reason = FINISH_REASONS.get(raw_finish)
        delta = choice.get('delta') or {}
        text, thoughts = _content(delta.get('content'))
        manager = self._parts_manager
        for thought in thoughts:
            if (event := manager.thinking_delta('thinking', thought)) is not None:
                yield event
        if text:
            yield from self._text(text)
        for call in delta.get('tool_calls') or ():
            function = call.get('function') or {}
            call_id = call.get('id')
            event = manager.tool_call_delta(
                ('tool', call.get('index', 0)),
                function.get('name') or None,
                function.get('arguments'),
                call_id if call_id != 'null' else None,
            )
            if event is not None:
                yield event

    def _text(self, text: str) -> Iterator[ModelResponseStreamEvent]:
        output_tools = self.model_request_parameters.output_tools
        if not output_tools:
            if (event := self._parts_manager.text_delta('content', text)) is not None:
                yield event
            return
        self._output_text += text
        try:
            parsed = pydantic_core.from_json(self._output_text, allow_partial='trailing-strings')
        except ValueError:
            return
        if not isinstance(parsed, dict) or not parsed:
            return
        for tool in output_tools:
            if _matches(parsed, tool.parameters_json_schema):
                yield self._parts_manager.handle_tool_call_part(
                    vendor_part_id='output', tool_name=tool.name, args=parsed, tool_call_id=self._output_call_id
                )
                return
