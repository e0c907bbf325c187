"""The state a decision model judges, made from an agent's message history, and the tools still on offer this turn.

The latest user text alone is sent as that text. With a conversation before it, the state is
`{'history': [...], 'text': ...}`, each entry one thing said or done (`{'user': ...}`, `{'assistant': ...}`,
`{'system': ...}`, `{'tool_call': {'name', 'args'}}`, `{'tool_return': {'name', 'content'}}`, `{'retry': ...}`,
`{'thinking': ...}`, `{'summary': ...}`). Once a tool has returned or a retry was sent since the latest prompt, what
was done since goes apart under `done`, so the text under judgement stays the user's. A prompt that is a single
`StructuredContent` is judged as the value it holds (under `state` instead of `text`).

Files are refused, unless the backend takes images: then each image (`BinaryContent` or `ImageUrl`, in a prompt, a
tool result or a file the model made) stands in the state as `<image N>`, numbered from 1 in the order the images
appear (message by message, part by part), and is collected in that order for the request's `images`. Other files
are still refused.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue
from pydantic_core import to_jsonable_python

from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..messages import (
    BinaryContent,
    CachePoint,
    CompactionPart,
    FilePart,
    ImageUrl,
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

__all__ = ('ImageInput', 'judged_state', 'tools_left')

ImageInput = BinaryContent | ImageUrl
"""An image as the conversation holds it: data, or a URL resolved to data once the request passed its limits."""

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


def _not_an_image(item: object) -> str:
    if isinstance(item, BinaryContent):
        return f'a file of type {item.media_type!r}'
    return f'a file that is not an image ({type(item).__name__})'


class _StateReader:
    """Reads messages into state entries, labelling images as `<image N>` into `images` (`None`: text only)."""

    def __init__(self, images: list[ImageInput] | None) -> None:
        self.images = images

    def _label(self, item: object, where: str, text_only: str) -> str:
        if self.images is None:
            raise UserError(_NO_FILES.format(what=text_only))
        if not (isinstance(item, ImageUrl) or (isinstance(item, BinaryContent) and item.is_image)):
            raise UserError(f'{where} holds {_not_an_image(item)}: this model takes text and images only.')
        self.images.append(item)
        return f'<image {len(self.images)}>'

    def prompt_text(self, part: UserPromptPart) -> str:
        texts: list[str] = []
        for item in [part.content] if isinstance(part.content, str) else part.content:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, TextContent):
                texts.append(item.content)
            elif not isinstance(item, CachePoint):
                texts.append(self._label(item, 'A user prompt', 'images, audio, video and documents'))
        return '\n\n'.join(texts)

    def _user_entry(self, part: UserPromptPart) -> JsonValue:
        structured = _structured([part])
        return {'user': self.prompt_text(part) if structured is None else to_jsonable_python(structured.value)}

    def _tool_return_entry(self, part: ToolReturnPart | NativeToolReturnPart) -> JsonValue:
        if part.files:
            # The files' places in the result are kept, each as its label.
            labelled = [
                item if isinstance(item, str) else self._label(item, 'A tool result', 'a file in a tool result')
                for item in part.content_items(mode='str', wrap_if_error=False)
            ]
            part = dataclasses.replace(part, content=labelled)
        return {'tool_return': {'name': part.tool_name, 'content': part.model_response_str()}}

    def request_entry(self, part: Any) -> JsonValue | None:
        if isinstance(part, SystemPromptPart):
            return {'system': part.content}
        if isinstance(part, UserPromptPart):
            return self._user_entry(part)
        if isinstance(part, ToolReturnPart):
            return self._tool_return_entry(part)
        if isinstance(part, (RetryPromptPart, RetryFeedbackPart)):
            return {'retry': part.model_response()}
        return None  # the history records a run keeps for itself (deltas, baselines) are nothing said or done

    def _response_entries(self, message: ModelResponse) -> list[JsonValue]:
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
                entries.append(self._tool_return_entry(part))
            elif isinstance(part, CompactionPart):
                if part.content:
                    entries.append({'summary': part.content})
            elif isinstance(part, FilePart):
                label = self._label(part.content, 'The message history', 'a file in the message history')
                entries.append({'assistant': label})
            else:
                raise UserError(_NO_FILES.format(what='a file in the message history'))
        return entries

    def entries(self, messages: Sequence[ModelMessage]) -> list[JsonValue]:
        entries: list[JsonValue] = []
        for message in messages:
            if isinstance(message, ModelResponse):
                entries.extend(self._response_entries(message))
            else:
                entries.extend(e for part in message.parts if (e := self.request_entry(part)) is not None)
        return entries

    def split(self, request: ModelRequest) -> tuple[list[JsonValue], str | None, list[JsonValue]]:
        """A request's entries before its last prompt, its prompts' text (`None` for a structured prompt, judged as
        its value) and its entries after the last prompt, read in the order of its parts."""
        prompts = [part for part in request.parts if isinstance(part, UserPromptPart)]
        structured = _structured(prompts) is not None
        last = max((i for i, part in enumerate(request.parts) if isinstance(part, UserPromptPart)), default=-1)
        before: list[JsonValue] = []
        texts: list[str] = []
        after: list[JsonValue] = []
        for i, part in enumerate(request.parts):
            if isinstance(part, UserPromptPart):
                if not structured:
                    texts.append(self.prompt_text(part))
            elif (entry := self.request_entry(part)) is not None:
                (before if i < last else after).append(entry)
        return before, None if structured else '\n\n'.join(texts), after


def _judged(prompts: list[UserPromptPart], text: str | None) -> tuple[str, JsonValue]:
    """The key and value the latest prompt is judged under: `state` for a structured value, else `text`."""
    if text is None and (structured := _structured(prompts)) is not None:
        return 'state', to_jsonable_python(structured.value)
    return 'text', text or ''


def _latest_prompt(messages: list[ModelMessage]) -> int | None:
    found = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    ]
    return found[-1] if found else None


def _prompts(message: ModelMessage) -> list[UserPromptPart]:
    return [part for part in message.parts if isinstance(part, UserPromptPart)]


def _turn_state(reader: _StateReader, messages: list[ModelMessage], latest: int) -> JsonValue:
    """The state split at the latest prompt: the `history` before it, the prompt, and what was `done` since."""
    request = messages[latest]
    assert isinstance(request, ModelRequest)
    history = reader.entries(messages[:latest])
    before, text, after = reader.split(request)
    history += before
    done = after + reader.entries(messages[latest + 1 :])
    key, value = _judged(_prompts(request), text)
    state: dict[str, JsonValue] = {'history': history} if history else {}
    state[key] = value
    state['done'] = done
    return state


def judged_state(messages: list[ModelMessage], *, turn: bool, images: list[ImageInput] | None = None) -> JsonValue:
    """The state to judge (see the module docstring); `turn`: something was done since the latest prompt.

    Args:
        messages: The conversation.
        turn: Whether a tool returned or a retry was sent since the latest prompt.
        images: Where to collect the images, each labelled `<image N>` in the state; `None` (text only) refuses them.

    Raises:
        UserError: there is no user text to judge, or a file the model cannot take is in the conversation.
    """
    reader = _StateReader(images)
    latest = _latest_prompt(messages)
    if turn and latest is not None:
        return _turn_state(reader, messages, latest)
    last = messages[-1] if messages else None
    prompts: list[UserPromptPart] = []
    text: str | None = ''
    history: list[JsonValue] = []
    for message in messages:
        if message is last and isinstance(message, ModelRequest):
            prompts = _prompts(message)
            before, text, after = reader.split(message)
            history += before + after
        else:
            history += reader.entries([message])
    key, value = _judged(prompts, text)
    if key == 'state':
        return {'history': history, 'state': value} if history else value
    if not (value or history):
        raise UserError('A request without user text is not supported by this model: it needs text to judge.')
    if not history:
        return value
    return {'history': history, 'text': value} if value else {'history': history}
