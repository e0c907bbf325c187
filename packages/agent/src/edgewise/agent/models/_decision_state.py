"""The state a decision model judges, made from an agent's message history, and the tools still on offer this turn.

The latest user text alone is sent as that text. With a conversation before it, the state is
`{'history': [...], 'text': ...}`, each entry one thing said or done (`{'user': ...}`, `{'assistant': ...}`,
`{'system': ...}`, `{'tool_call': {'name', 'args'}}`, `{'tool_return': {'name', 'content'}}`, `{'retry': ...}`,
`{'thinking': ...}`, `{'summary': ...}`). Once a tool has returned or a retry was sent since the latest prompt, what
was done since goes apart under `done`, so the text under judgement stays the user's. A prompt that is a single
`StructuredContent` is judged as the value it holds (under `state` instead of `text`). Files are not sent: this
mapping carries text only.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue
from pydantic_core import to_jsonable_python

from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..messages import (
    CachePoint,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    StructuredContent,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = ('judged_state', 'tools_left')

_NO_FILES = 'Files are not supported by this model: it judges text, so {what} cannot be sent to it.'


def tools_left(messages: Sequence[ModelMessage], tools: list[ToolDefinition]) -> tuple[list[ToolDefinition], bool]:
    """The tools still on offer (one that returned since the latest prompt is not offered again: the same text would
    call for it again), and whether anything was done this turn (a tool returned or a retry was sent)."""
    returned: set[str] = set()
    retried = False
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                returned.clear()
                retried = False
            elif isinstance(part, ToolReturnPart):
                returned.add(part.tool_name)
            elif isinstance(part, (RetryPromptPart, RetryFeedbackPart)):
                retried = True
    return [tool for tool in tools if tool.name not in returned], bool(returned) or retried


def _structured(parts: Sequence[UserPromptPart]) -> StructuredContent | None:
    items = [
        item
        for part in parts
        for item in ([part.content] if isinstance(part.content, str) else part.content)
        if not isinstance(item, CachePoint)
    ]
    return items[0] if len(items) == 1 and isinstance(items[0], StructuredContent) else None


def _prompt_text(part: UserPromptPart) -> str:
    texts: list[str] = []
    for item in [part.content] if isinstance(part.content, str) else part.content:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, TextContent):
            texts.append(item.content)
        elif not isinstance(item, CachePoint):
            raise UserError(_NO_FILES.format(what='images, audio, video and documents'))
    return '\n\n'.join(texts)


def _user_entry(part: UserPromptPart) -> JsonValue:
    structured = _structured([part])
    return {'user': _prompt_text(part) if structured is None else to_jsonable_python(structured.value)}


def _request_entry(part: Any) -> JsonValue | None:
    if isinstance(part, SystemPromptPart):
        return {'system': part.content}
    if isinstance(part, UserPromptPart):
        return _user_entry(part)
    if isinstance(part, ToolReturnPart):
        if part.files:
            raise UserError(_NO_FILES.format(what='a file in a tool result'))
        return {'tool_return': {'name': part.tool_name, 'content': part.model_response_str()}}
    if isinstance(part, (RetryPromptPart, RetryFeedbackPart)):
        return {'retry': part.model_response()}
    return None  # the history records a run keeps for itself (deltas, baselines) are nothing said or done


def _response_entries(message: ModelResponse) -> list[JsonValue]:
    entries: list[JsonValue] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            entries.append({'assistant': part.content})
        elif isinstance(part, ThinkingPart):
            if part.content:
                entries.append({'thinking': part.content})
        elif isinstance(part, (ToolCallPart, NativeToolCallPart)):
            entries.append({'tool_call': {'name': part.tool_name, 'args': part.args_as_dict()}})
        elif isinstance(part, NativeToolReturnPart):
            entries.append({'tool_return': {'name': part.tool_name, 'content': part.model_response_str()}})
        elif isinstance(part, CompactionPart):
            if part.content:
                entries.append({'summary': part.content})
        else:
            raise UserError(_NO_FILES.format(what='a file in the message history'))
    return entries


def _entries(messages: Sequence[ModelMessage]) -> list[JsonValue]:
    entries: list[JsonValue] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            entries.extend(_response_entries(message))
        else:
            entries.extend(e for part in message.parts if (e := _request_entry(part)) is not None)
    return entries


def _judged(prompts: list[UserPromptPart]) -> tuple[str, JsonValue]:
    """The key and value the latest prompt is judged under: `state` for a structured value, else `text`."""
    if (structured := _structured(prompts)) is not None:
        return 'state', to_jsonable_python(structured.value)
    return 'text', '\n\n'.join(_prompt_text(part) for part in prompts)


def _latest_prompt(messages: list[ModelMessage]) -> int | None:
    found = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    ]
    return found[-1] if found else None


def _turn_state(messages: list[ModelMessage], latest: int) -> JsonValue:
    """The state split at the latest prompt: the `history` before it, the prompt, and what was `done` since."""
    request = messages[latest]
    assert isinstance(request, ModelRequest)
    last = max(i for i, part in enumerate(request.parts) if isinstance(part, UserPromptPart))
    history = _entries(messages[:latest])
    history += _request_entries(request.parts[:last])
    done = _request_entries(request.parts[last + 1 :]) + _entries(messages[latest + 1 :])
    key, value = _judged([part for part in request.parts if isinstance(part, UserPromptPart)])
    state: dict[str, JsonValue] = {'history': history} if history else {}
    state[key] = value
    state['done'] = done
    return state


def _request_entries(parts: Sequence[Any]) -> list[JsonValue]:
    """The entries of request parts other than user prompts."""
    return [e for part in parts if not isinstance(part, UserPromptPart) and (e := _request_entry(part)) is not None]


def judged_state(messages: list[ModelMessage], *, turn: bool) -> JsonValue:
    """The state to judge (see the module docstring); `turn`: something was done since the latest prompt.

    Raises:
        UserError: there is no user text to judge, or a file is in the conversation.
    """
    latest = _latest_prompt(messages)
    if turn and latest is not None:
        return _turn_state(messages, latest)
    last = messages[-1] if messages else None
    prompts: list[UserPromptPart] = []
    history: list[JsonValue] = []
    for message in messages:
        if message is last and isinstance(message, ModelRequest):
            prompts = [part for part in message.parts if isinstance(part, UserPromptPart)]
            history += _request_entries(message.parts)
        else:
            history += _entries([message])
    key, value = _judged(prompts)
    if key == 'state':
        return {'history': history, 'state': value} if history else value
    if not (value or history):
        raise UserError('A request without user text is not supported by this model: it needs text to judge.')
    if not history:
        return value
    return {'history': history, 'text': value} if value else {'history': history}
