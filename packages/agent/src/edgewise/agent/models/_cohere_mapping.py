"""Cohere's v2 chat wire format: messages and settings to a request body, a response (or its streamed events) to a
`ModelResponse`, and an error body to the error of its category.

Pure functions of plain dicts (the JSON `POST /v2/chat` takes and gives): no HTTP here, and no `cohere` package.
An assistant message holds a list of `thinking` and `text` content items beside its `tool_calls`; `tool_choice` is
`'REQUIRED'` or `'NONE'` (left out to let the model decide) and cannot name a tool; reasoning is `thinking:
{'type': 'enabled' | 'disabled', 'token_budget'}`; usage comes as `tokens` and `billed_units`; a stream is a
sequence of typed events (`message-start`, `content-delta`, `tool-call-start`, ..., `message-end`).
"""

from __future__ import annotations as _annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._tools.definition import ToolDefinition
from ..exceptions import ModelContextWindowExceededError, ModelHTTPError, UnexpectedModelBehavior, UserError
from ..messages import (
    FinishReason,
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
    UserPromptPart,
    generate_tool_call_id,
)
from ..usage import RequestUsage
from ._error_categories import http_status_category
from ._mapping import EventStreamedResponse, unsupported_file, user_turn_items
from ._request_parameters import ModelRequestParameters, request_instructions
from ._tool_choice import resolve_tool_choice

__all__ = (
    'FINISH_REASONS',
    'CohereStreamedResponse',
    'cohere_http_error',
    'cohere_model_response',
    'cohere_request_body',
    'cohere_usage',
)

FINISH_REASONS: dict[str, FinishReason] = {
    'COMPLETE': 'stop',
    'STOP_SEQUENCE': 'stop',
    'MAX_TOKENS': 'length',
    'TOOL_CALL': 'tool_call',
    'ERROR': 'error',
}
"""Cohere's `finish_reason` values, mapped to `FinishReason`."""

THINKING_TOKEN_BUDGETS: dict[str, int] = {
    'minimal': 512,
    'low': 2048,
    'medium': 8192,
    'high': 16384,
    'xhigh': 31000,  # Cohere's suggested budget for the most reasoning, leaving room for the answer
    'max': 31000,
}
"""The `thinking.token_budget` of each thinking effort (pydantic-ai 2.68's)."""

_SETTINGS_TO_BODY = (
    ('max_tokens', 'max_tokens'),
    ('stop_sequences', 'stop_sequences'),
    ('temperature', 'temperature'),
    ('top_p', 'p'),
    ('top_k', 'k'),
    ('seed', 'seed'),
    ('presence_penalty', 'presence_penalty'),
    ('frequency_penalty', 'frequency_penalty'),
)
"""Settings sent under Cohere's name for them; the others (`logit_bias`, `parallel_tool_calls`, ...) are not."""


# Requests.


def _user_message(part: UserPromptPart, model_name: str) -> dict[str, Any]:
    if isinstance(part.content, str):
        return {'role': 'user', 'content': part.content}
    items = user_turn_items(
        part,
        text=lambda text: {'type': 'text', 'text': text},
        file=lambda item: _no_file(item, model_name),
        tool_return=_unreachable,
        tool_error=_unreachable,
    )
    return {'role': 'user', 'content': items}


def _no_file(item: Any, model_name: str) -> dict[str, Any]:
    raise unsupported_file(model_name, item)  # Cohere's chat takes text only


def _unreachable(part: Any) -> dict[str, Any]:  # pragma: no cover - user prompts hold no tool parts
    raise AssertionError(part)


def _assistant_message(message: ModelResponse) -> dict[str, Any] | None:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ThinkingPart):
            thoughts.append(part.content)
        elif isinstance(part, ToolCallPart):
            function = {'name': part.tool_name, 'arguments': part.args_as_json_str()}
            calls.append({'id': part.tool_call_id, 'type': 'function', 'function': function})
        # Native tool parts, files and compactions are not Cohere's: they are not sent back.
    if not (texts or thoughts or calls):
        return None  # Cohere rejects an assistant message with neither content nor tool calls
    result: dict[str, Any] = {'role': 'assistant'}
    content: list[dict[str, Any]] = []
    if thoughts:
        content.append({'type': 'thinking', 'thinking': '\n\n'.join(thoughts)})
    if texts:
        content.append({'type': 'text', 'text': '\n\n'.join(texts)})
    if content:
        result['content'] = content
    if calls:
        result['tool_calls'] = calls
    return result


def map_messages(
    messages: Sequence[ModelMessage], params: ModelRequestParameters, *, model_name: str
) -> list[dict[str, Any]]:
    """The `messages` of a request body, the request's instructions after the leading system messages.

    Raises:
        UserError: a prompt or a tool result holds a file (Cohere's chat takes text only).
    """
    result: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            if (assistant := _assistant_message(message)) is not None:
                result.append(assistant)
            continue
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                result.append({'role': 'system', 'content': part.content})
            elif isinstance(part, UserPromptPart):
                result.append(_user_message(part, model_name))
            elif isinstance(part, ToolReturnPart):
                text, files = part.model_response_str_and_user_content()
                if files:
                    raise UserError(
                        f'Model {model_name!r} cannot take files in tool results (tool {part.tool_name!r}).'
                    )
                result.append({'role': 'tool', 'tool_call_id': part.tool_call_id, 'content': text})
            elif isinstance(part, RetryPromptPart):
                if part.tool_name is None:
                    result.append({'role': 'user', 'content': part.model_response()})
                else:
                    result.append({'role': 'tool', 'tool_call_id': part.tool_call_id, 'content': part.model_response()})
    if instructions := request_instructions(messages, params):
        leading = next((i for i, m in enumerate(result) if m['role'] != 'system'), len(result))
        result.insert(leading, {'role': 'system', 'content': instructions})
    return result


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {'name': tool.name, 'parameters': tool.parameters_json_schema}
    if tool.description is not None:
        function['description'] = tool.description
    return {'type': 'function', 'function': function}


def thinking_of(params: ModelRequestParameters) -> dict[str, Any] | None:
    """Cohere's `thinking` for the unified `thinking` setting: disabled for `False`, enabled for `True`, enabled with a
    token budget for an effort; none when unset (reasoning models then think as they do by default)."""
    thinking = params.thinking
    if thinking is None:
        return None
    if thinking is False:
        return {'type': 'disabled'}
    if thinking is True:
        return {'type': 'enabled'}
    return {'type': 'enabled', 'token_budget': THINKING_TOKEN_BUDGETS[thinking]}


def cohere_request_body(
    model_name: str,
    messages: Sequence[ModelMessage],
    settings: Mapping[str, Any],
    params: ModelRequestParameters,
    *,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of a v2 chat request.

    Cohere cannot name a tool in `tool_choice`: a choice among some tools sends only those.
    """
    body: dict[str, Any] = {
        'model': model_name,
        'messages': map_messages(messages, params, model_name=model_name),
        'stream': stream,
    }
    tools = params.declared_tool_defs
    resolved = resolve_tool_choice(settings, params)
    mode: str = resolved if isinstance(resolved, str) else resolved[0]
    if isinstance(resolved, tuple):
        tools = {name: tool for name, tool in tools.items() if name in resolved[1]}
    if tools:
        body['tools'] = [_tool(tool) for tool in tools.values()]
    if mode == 'none':
        body['tool_choice'] = 'NONE'  # Cohere takes it with the tools still given
    elif mode == 'required':
        body['tool_choice'] = 'REQUIRED'
    if (thinking := thinking_of(params)) is not None:
        body['thinking'] = thinking
    for key, name in _SETTINGS_TO_BODY:
        if settings.get(key) is not None:
            body[name] = settings[key]
    return body


# Responses.


def cohere_usage(usage: object) -> RequestUsage:
    """The `usage` of a response (or of a stream's `message-end`): `tokens` counted, `billed_units` in the details."""
    if not isinstance(usage, dict):
        return RequestUsage()
    details: dict[str, int] = {}
    billed = usage.get('billed_units') or {}
    for key in ('input_tokens', 'output_tokens', 'search_units', 'classifications'):
        if isinstance(value := billed.get(key), int | float) and value:
            details[key] = int(value)
    tokens = usage.get('tokens') or {}
    cached = usage.get('cached_tokens')
    return RequestUsage(
        input_tokens=int(tokens.get('input_tokens') or 0),
        output_tokens=int(tokens.get('output_tokens') or 0),
        cache_read_tokens=int(cached) if isinstance(cached, int | float) else 0,
        details=details,
    )


def _finish(raw: object) -> tuple[FinishReason | None, dict[str, Any] | None]:
    if not isinstance(raw, str) or not raw:
        return None, None
    return FINISH_REASONS.get(raw), {'finish_reason': raw}


def cohere_model_response(data: Any, *, model_name: str, provider_name: str) -> ModelResponse:
    """The `ModelResponse` of a v2 chat response.

    Raises:
        UnexpectedModelBehavior: the body has no message.
    """
    message = data.get('message') if isinstance(data, dict) else None
    if not isinstance(message, dict):
        raise UnexpectedModelBehavior(
            'Invalid response from cohere chat endpoint: expected a chat response with a message', str(data)[:2000]
        )
    parts: list[ModelResponsePart] = []
    for item in message.get('content') or ():
        if item.get('type') == 'text':
            parts.append(TextPart(item.get('text') or ''))
        elif item.get('type') == 'thinking':
            parts.append(ThinkingPart(item.get('thinking') or ''))
    for call in message.get('tool_calls') or ():
        function = call.get('function') or {}
        if function.get('name'):
            call_id = call.get('id') or generate_tool_call_id()
            parts.append(ToolCallPart(function['name'], function.get('arguments'), call_id))
    finish_reason, details = _finish(data.get('finish_reason'))
    return ModelResponse(
        parts=parts,
        usage=cohere_usage(data.get('usage')),
        model_name=model_name,
        provider_name=provider_name,
        provider_response_id=data.get('id'),
        finish_reason=finish_reason,
        provider_details=details,
    )


def cohere_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from Cohere, whose error body is `{"message": ...}`: a 400 whose message starts with
    `too many tokens` is a prompt over the context window."""
    message = body.get('message') if isinstance(body, dict) else None
    category = http_status_category(status_code, message)
    if status_code == 400 and isinstance(message, str) and message.lower().startswith('too many tokens'):
        category = ModelContextWindowExceededError
    return ModelHTTPError.for_category(
        category, status_code=status_code, model_name=model_name, body=body, headers=headers, in_stream=in_stream
    )


# Streams.


class CohereStreamedResponse(EventStreamedResponse):
    """A streamed v2 chat response: its typed events turned into part events."""

    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        kind = data.get('type')
        message = (data.get('delta') or {}).get('message') or {}
        index = data.get('index', 0)
        manager = self._parts_manager
        event: ModelResponseStreamEvent | None = None
        if kind == 'message-start':
            if data.get('id'):
                self.provider_response_id = data['id']
        elif kind == 'content-delta':
            content = message.get('content') or {}
            if thinking := content.get('thinking'):
                event = manager.thinking_delta(('thinking', index), thinking)
            elif text := content.get('text'):
                event = manager.text_delta(('text', index), text)
        elif kind in ('tool-call-start', 'tool-call-delta'):
            call = message.get('tool_calls') or {}
            function = call.get('function') or {}
            if kind == 'tool-call-start':
                event = manager.tool_call_delta(('tool', index), function.get('name'), None, call.get('id'))
            else:
                event = manager.tool_call_delta(('tool', index), None, function.get('arguments'))
        elif kind == 'message-end':
            end = data.get('delta') or {}
            finish_reason, details = _finish(end.get('finish_reason'))
            if details is not None:
                self.finish_reason = finish_reason
                self._set_provider_detail('finish_reason', details['finish_reason'])
            if end.get('usage'):
                self._usage = cohere_usage(end['usage'])
        if event is not None:
            yield event
