"""The provider-neutral message model: what an agent sends to a model and what it gets back.

A conversation is a list of `ModelMessage`: `ModelRequest`s (prompts, tool returns, retry prompts) and
`ModelResponse`s (text, thinking, tool calls). Field names and the `kind` / `part_kind` tags match
pydantic-ai 1.x, so histories serialized by one load in the other (`ModelMessagesTypeAdapter`).

The public home of these classes is `edgewise.agent.messages`, which re-exports them with the streaming events
(defined above this module, in `_message_flow.events`, since events carry parts).
"""

from __future__ import annotations as _annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, NotRequired, TypeAlias, cast

import pydantic
import pydantic_core
from typing_extensions import TypedDict

from .._warnings import PydanticAIDeprecationWarning
from .compaction import CompactionPart
from .content import (
    BinaryContent,
    BinaryImage,
    MultiModalContent,
    ToolReturnContent,
    UserContent,
    is_multi_modal_content,
)
from .speech import SpeechPart
from .usage_counts import RequestUsage

__all__ = (
    'ModelRequestState',
    'messages_type_adapter',
    'RETURN_VALUE_KEY',
    'INVALID_JSON_KEY',
    'SystemPromptPart',
    'UserPromptPart',
    'UserContent',
    'BaseToolReturnPart',
    'ToolReturnPart',
    'LoadCapabilityArgs',
    'LoadCapabilityReturn',
    'LoadCapabilityReturnPart',
    'NativeToolReturnPart',
    'InstructionPart',
    'RetryPromptPart',
    'ModelRequestPart',
    'ModelRequest',
    'TextPart',
    'ThinkingPart',
    'FilePart',
    'BaseToolCallPart',
    'ToolCallPart',
    'LoadCapabilityCallPart',
    'NativeToolCallPart',
    'ModelResponsePart',
    'ModelResponse',
    'ModelMessage',
    'FinishReason',
    'generate_tool_call_id',
)


RETURN_VALUE_KEY = 'return_value'
"""The key under which `ToolReturnPart.model_response_object` wraps a return value that is not a JSON object."""

INVALID_JSON_KEY = 'INVALID_JSON'
"""The key under which `ToolCallPart.args_as_dict` gives arguments that are not a JSON object (the key Anthropic
suggests for resending them)."""


def _now_utc() -> datetime:
    return datetime.now(tz=timezone.utc)


def generate_tool_call_id() -> str:
    """A new unique tool call id, for models that do not supply one (the `pyd_ai_` prefix of pydantic-ai)."""
    return f'pyd_ai_{os.urandom(16).hex()}'


@dataclass(repr=False)
class SystemPromptPart:
    """A system prompt: instructions kept in the message history (unlike `ModelRequest.instructions`)."""

    content: str
    """The prompt's text."""
    _: KW_ONLY
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    dynamic_ref: str | None = None
    """The qualified name of the `dynamic=True` system prompt function that wrote it, if any."""
    part_kind: Literal['system-prompt'] = 'system-prompt'
    """Tag of this part kind in serialized messages."""

    def __repr__(self) -> str:
        return _repr(self, ('content', 'timestamp', 'dynamic_ref'))


@dataclass(repr=False)
class UserPromptPart:
    """The user's prompt."""

    content: str | Sequence[UserContent]
    """The prompt: text, or a sequence of content items."""
    _: KW_ONLY
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    part_kind: Literal['user-prompt'] = 'user-prompt'
    """Tag of this part kind in serialized messages."""

    def __repr__(self) -> str:
        return _repr(self, ('content', 'timestamp'))


@dataclass(repr=False)
class BaseToolReturnPart:
    """What a tool returned: the fields of `ToolReturnPart` (a function tool's return, sent to the model) and
    `NativeToolReturnPart` (what a tool the provider runs returned, in its response)."""

    tool_name: str
    """The name of the tool that was called."""
    content: ToolReturnContent
    """The tool's return value (files in it are sent as files to the APIs that take them)."""
    tool_call_id: str = field(default_factory=generate_tool_call_id)
    """The id of the tool call this answers."""
    _: KW_ONLY
    tool_kind: str | None = None
    """The kind of tool, when it is not a plain function tool."""
    metadata: Any = None
    """Data kept for the application and not sent to the model."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    outcome: Literal['success', 'failed', 'denied', 'interrupted'] = 'success'
    """How the tool call ended."""

    def has_content(self) -> bool:
        """Whether the tool returned something (not `None`)."""
        return self.content is not None

    @property
    def files(self) -> list[MultiModalContent]:
        """The files in the return value (the value itself, or the items of a returned list)."""
        return self._split()[1]

    def _split(self) -> tuple[list[Any], list[MultiModalContent], bool]:
        # (data items, file items, whether the content is a list)
        if is_multi_modal_content(self.content):
            return [], [self.content], False
        if isinstance(self.content, list):
            files = [item for item in self.content if is_multi_modal_content(item)]
            return [item for item in self.content if not is_multi_modal_content(item)], files, True
        return [self.content], [], False

    def _data(self) -> Any:
        # The return value without its files (`None` if nothing is left; one remaining item is unwrapped
        # when the content was not a list, or when taking the files out left one item).
        data, files, was_list = self._split()
        if not data:
            return None
        if len(data) == 1 and (not was_list or files):
            return data[0]
        return data

    def content_items(
        self, *, mode: Literal['raw', 'str', 'jsonable'] = 'raw', wrap_if_error: bool = True
    ) -> list[Any]:
        """The return value as a list (a list as is, anything else as its one item).

        Args:
            mode: `'raw'` gives the items as they are; `'str'` gives each item that is neither text nor a file
                as JSON text, `'jsonable'` as JSON-compatible data (files and text are left as they are).
            wrap_if_error: for a failed return (`outcome='failed'`) in `'str'` or `'jsonable'` mode, give the data
                as one `{"error": ...}` item (before the files), so that a model without an error channel of its
                own sees the failure; `False` for APIs that flag errors themselves.
        """
        items: list[Any] = self.content if isinstance(self.content, list) else [self.content]
        if mode == 'raw':
            return items
        if wrap_if_error and self.outcome == 'failed':
            error = self.model_response_str() if mode == 'str' else self.model_response_object()
            return [error, *self.files]
        convert = _tool_return_json if mode == 'str' else _tool_return_jsonable
        return [item if isinstance(item, str) or is_multi_modal_content(item) else convert(item) for item in items]

    def model_response_str(self, *, wrap_if_error: bool = True) -> str:
        """The return value as the text a model sees, without its files (see `files`).

        Args:
            wrap_if_error: give a failed return (`outcome='failed'`) as `{"error": <text>}` JSON; `False` for APIs
                that flag errors themselves (Anthropic's `is_error`).
        """
        value = self._data()
        text = '' if value is None else value if isinstance(value, str) else _tool_return_json(value)
        if wrap_if_error and self.outcome == 'failed':
            return _tool_return_json({'error': text})
        return text

    def model_response_object(self, *, wrap_if_error: bool = True) -> dict[str, Any]:
        """The return value as a JSON object (non-objects are wrapped as `{'return_value': ...}`), without its
        files.

        Args:
            wrap_if_error: give a failed return (`outcome='failed'`) as `{'error': <text>}`.
        """
        if wrap_if_error and self.outcome == 'failed':
            return {'error': self.model_response_str(wrap_if_error=False)}
        value = self._data()
        if value is None:
            return {}
        json_content = _tool_return_jsonable(value)
        return json_content if isinstance(json_content, dict) else {RETURN_VALUE_KEY: json_content}

    def model_response_str_and_user_content(self, *, wrap_if_error: bool = True) -> tuple[str, list[UserContent]]:
        """For APIs whose tool results take only text: the result's text, where each file is replaced by
        `See file <identifier>.`, and the user content that carries the files (`This is file <identifier>:`
        before each). A failed return's text is `[{"error": <text>}, "See file <identifier>.", ...]` unless
        `wrap_if_error` is `False`."""
        _, files, was_list = self._split()
        if not files:
            return self.model_response_str(wrap_if_error=wrap_if_error), []
        if wrap_if_error and self.outcome == 'failed':
            error = {'error': self.model_response_str(wrap_if_error=False)}
            carried: list[UserContent] = []
            for item in files:
                carried.extend((f'This is file {item.identifier}:', item))
            return _tool_return_json([error, *(f'See file {item.identifier}.' for item in files)]), carried
        items: list[Any] = cast(list[Any], self.content) if was_list else [self.content]
        texts: list[str] = []
        user_content: list[UserContent] = []
        for item in items:
            if is_multi_modal_content(item):
                texts.append(f'See file {item.identifier}.')
                user_content.extend((f'This is file {item.identifier}:', item))
            else:
                texts.append(item if isinstance(item, str) else _tool_return_json(item))
        return (_tool_return_json(texts) if was_list else texts[0]), user_content

    def __repr__(self) -> str:
        names = ('tool_name', 'content', 'tool_call_id', 'tool_kind', 'metadata', 'timestamp')
        return _repr(self, names if self.outcome == 'success' else (*names, 'outcome'))


@dataclass(repr=False)
class ToolReturnPart(BaseToolReturnPart):
    """What a tool returned, sent back to the model."""

    _: KW_ONLY
    part_kind: Literal['tool-return'] = 'tool-return'
    """Tag of this part kind in serialized messages."""

    @staticmethod
    def narrow_type(part: ToolReturnPart, *, tool_kind: str | None = None) -> ToolReturnPart:
        """`part` as its typed subclass (`LoadCapabilityReturnPart`) when its `tool_kind` (or the one given) has
        one; else `part` itself."""
        kind = part.tool_kind if tool_kind is None else tool_kind
        if kind != CAPABILITY_LOAD_TOOL_KIND or isinstance(part, LoadCapabilityReturnPart):
            return part
        content = part.content if isinstance(part.content, dict) else {}
        return LoadCapabilityReturnPart(
            part.tool_call_id, content=cast(Any, content), metadata=part.metadata, timestamp=part.timestamp,
            outcome=part.outcome,
        )  # fmt: skip


CAPABILITY_LOAD_TOOL_KIND = 'capability-load'
"""The `tool_kind` of the `load_capability` tool's definition, call parts and return parts."""


class LoadCapabilityArgs(TypedDict):
    """The arguments of a `load_capability` call."""

    id: Annotated[str, pydantic.Field(description='The id of the capability to load.')]
    """The id of the deferred capability to load."""


class LoadCapabilityReturn(TypedDict):
    """What a successful `load_capability` call returns."""

    instructions: NotRequired[str]
    """The loaded capability's instructions (and its toolsets'), when it has any."""


@dataclass(repr=False)
class LoadCapabilityReturnPart(ToolReturnPart):
    """The return of a successful `load_capability` call: with its call, it marks the capability loaded for the
    rest of the conversation (a history holding the pair has the capability loaded)."""

    _: KW_ONLY
    content: LoadCapabilityReturn
    """The loaded capability's instructions, if any."""
    tool_name: Literal['load_capability'] = 'load_capability'
    """Always `'load_capability'`."""
    tool_kind: Literal['capability-load'] = 'capability-load'
    """Always `'capability-load'` (what deserialization tells this part by)."""

    @property
    def instructions(self) -> str | None:
        """The loaded capability's instructions, or `None`."""
        return self.content.get('instructions')


@dataclass(repr=False)
class NativeToolReturnPart(BaseToolReturnPart):
    """What a tool the provider runs (see `edgewise.agent.native_tools`) returned, as the provider reported it
    in its response; sent back only to the provider that made it."""

    _: KW_ONLY
    provider_name: str | None = None
    """The provider that ran the tool."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data (what the API needs back, or what it gave beyond `content`)."""
    part_kind: Literal['builtin-tool-return'] = 'builtin-tool-return'
    """Tag of this part kind in serialized messages (pydantic-ai's, from before the rename to "native")."""

    def __repr__(self) -> str:
        names = ('tool_name', 'content', 'tool_call_id', 'tool_kind', 'metadata', 'timestamp', 'provider_name')
        return _repr(self, (*names, 'provider_details'))


@dataclass(repr=False)
class RetryPromptPart:
    """Tells the model why its last answer was rejected (a `ModelRetry`, validation errors) and to try again."""

    content: list[pydantic_core.ErrorDetails] | str
    """The validation errors, or the message of a `ModelRetry`."""
    _: KW_ONLY
    tool_name: str | None = None
    """The tool whose call failed; `None` when the output text failed."""
    tool_call_id: str = field(default_factory=generate_tool_call_id)
    """The id of the failed tool call."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    part_kind: Literal['retry-prompt'] = 'retry-prompt'
    """Tag of this part kind in serialized messages."""

    def model_response(self) -> str:
        """The text the model is sent."""
        if isinstance(self.content, str):
            description = self.content if self.tool_name is not None else f'Validation feedback:\n{self.content}'
        else:
            errors: list[dict[str, Any]] = [{k: v for k, v in e.items() if k != 'ctx'} for e in self.content]
            if self.tool_name is None:
                # The model already sees the JSON it wrote; repeating top-level inputs adds nothing.
                errors = [{k: v for k, v in e.items() if k != 'input' or len(e['loc']) > 1} for e in errors]
            json_errors = pydantic_core.to_json(errors, indent=2).decode()
            count = len(self.content)
            description = f'{count} validation error{"" if count == 1 else "s"}:\n```json\n{json_errors}\n```'
        return f'{description}\n\nFix the errors and try again.'

    def __repr__(self) -> str:
        return _repr(self, ('content', 'tool_name', 'tool_call_id', 'timestamp'))


@dataclass(repr=False)
class InstructionPart:
    """One block of a request's instructions, and whether it came from a function (dynamic) or a literal."""

    content: str
    """The block's text."""
    _: KW_ONLY
    dynamic: bool = False
    """Whether a function, a template or a toolset wrote it (rather than a literal string)."""
    part_kind: Literal['instruction'] = 'instruction'
    """Tag of this part kind in serialized messages."""

    @staticmethod
    def join(parts: Sequence[InstructionPart]) -> str | None:
        """The blocks' text separated by blank lines, or `None` when that is empty."""
        return '\n\n'.join(part.content for part in parts).strip() or None

    @staticmethod
    def sorted(parts: Sequence[InstructionPart]) -> list[InstructionPart]:
        """The blocks with the static ones first, each group in its order."""
        return sorted(parts, key=lambda part: part.dynamic)

    def __repr__(self) -> str:
        return _repr(self, ('content',)) if not self.dynamic else _repr(self, ('content', 'dynamic'))


ModelRequestPart = Annotated[
    SystemPromptPart | UserPromptPart | SpeechPart | ToolReturnPart | RetryPromptPart,
    pydantic.Discriminator('part_kind'),
]
"""A part of a request to a model."""


def _typed_parts(parts: list[Any]) -> list[Any]:
    """Validated parts with the `load_capability` calls and returns as their typed parts, told by `tool_kind` (not
    by tool name, so a user's own `load_capability` tool stays a plain part). A check per part after validation:
    a discriminator function would make pydantic validate every part from Python objects, not from the JSON."""
    for index, part in enumerate(parts):
        if getattr(part, 'tool_kind', None) == CAPABILITY_LOAD_TOOL_KIND:
            kind = part.part_kind
            if kind == 'tool-call':
                parts[index] = ToolCallPart.narrow_type(part)
            elif kind == 'tool-return':
                parts[index] = ToolReturnPart.narrow_type(part)
    return parts


def _as_list(parts: Sequence[Any]) -> list[Any]:
    """Parts serialized as a list, with the parts' own schema: pydantic serializes a `Sequence` field by inferring
    each item's type, several times slower in JSON (and every snapshot of a durable agent run holds messages)."""
    return parts if type(parts) is list else list(parts)


@dataclass(repr=False)
class ModelRequest:
    """A request to a model: prompts, tool returns and retry prompts."""

    parts: Annotated[
        Sequence[ModelRequestPart],
        pydantic.AfterValidator(_typed_parts),
        pydantic.PlainSerializer(_as_list, return_type=list[ModelRequestPart]),
    ]
    """The parts of the request."""
    _: KW_ONLY
    timestamp: datetime | None = None
    """When the request was sent."""
    instructions: str | None = None
    """Instructions sent with this request only (not kept as a system prompt in the history)."""
    kind: Literal['request'] = 'request'
    """Tag of requests in serialized histories."""
    run_id: str | None = None
    """The id of the agent run that sent the request."""
    conversation_id: str | None = None
    """The id of the conversation (runs sharing a message history) the request belongs to."""
    metadata: dict[str, Any] | None = None
    """Data kept for the application and not sent to the model."""
    state: ModelRequestState = 'complete'
    """`'interrupted'` for a request the run was still putting together (the results of the tool calls that had
    finished) when an error or a cancellation stopped it: it was never sent. `capture_run_messages()` and
    `RunCancelled.all_messages()` keep it so that the partial state can be seen; a run given such a history answers
    the calls left open as interrupted and sends the rest."""

    def __post_init__(self) -> None:
        _check_speakers(self.parts, 'user', 'ModelRequest')

    @classmethod
    def user_text_prompt(cls, user_prompt: str, *, instructions: str | None = None) -> ModelRequest:
        """A request holding only the user's prompt."""
        return cls(parts=[UserPromptPart(user_prompt)], instructions=instructions)

    def __repr__(self) -> str:
        shown = _repr(self, ('parts', 'timestamp', 'instructions', 'run_id', 'conversation_id', 'metadata'))
        return shown if self.state == 'complete' else f'{shown[:-1]}, state={self.state!r})'


ModelRequestState: TypeAlias = Literal['complete', 'interrupted']
"""Where a request stands: `'complete'`, or `'interrupted'` while it was being put together (never sent)."""


@dataclass(repr=False)
class TextPart:
    """Text from the model."""

    content: str
    """The text."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the part."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    part_kind: Literal['text'] = 'text'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether the text is not empty."""
        return bool(self.content)

    def __repr__(self) -> str:
        return _repr(self, ('content', 'id', 'provider_name', 'provider_details'))


@dataclass(repr=False)
class ThinkingPart:
    """The model's reasoning, for models that share it."""

    content: str
    """The reasoning text."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the part."""
    signature: str | None = None
    """The provider's signature of the reasoning, sent back to it unchanged."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    part_kind: Literal['thinking'] = 'thinking'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether the reasoning is not empty."""
        return bool(self.content)

    def __repr__(self) -> str:
        return _repr(self, ('content', 'id', 'signature', 'provider_name', 'provider_details'))


@dataclass(repr=False)
class BaseToolCallPart:
    """A tool call: the fields of `ToolCallPart` (a call the agent runs) and `NativeToolCallPart` (a call the
    provider ran itself)."""

    tool_name: str
    """The name of the tool to call."""
    args: str | dict[str, Any] | None = None
    """The arguments: a JSON string or a dict, as the model sent them."""
    tool_call_id: str = field(default_factory=generate_tool_call_id)
    """The id of the call, echoed in its `ToolReturnPart` or `RetryPromptPart`."""
    _: KW_ONLY
    tool_kind: str | None = None
    """The kind of tool, when it is not a plain function tool."""
    id: str | None = None
    """The provider's id of the part."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""

    def args_as_dict(self, *, raise_if_invalid: bool = False) -> dict[str, Any]:
        """The arguments as a dict (a JSON string is parsed).

        Args:
            raise_if_invalid: Raise `ValueError` when the arguments are not a JSON object; by default they come
                back as `{'INVALID_JSON': <the raw text>}`, which can still be sent to an API.
        """
        if not self.args:
            return {}
        if isinstance(self.args, dict):
            return self.args
        try:
            parsed = pydantic_core.from_json(self.args)
            if not isinstance(parsed, dict):
                raise _NotAnObjectError(f'Tool call {self.tool_name!r} arguments are not a JSON object: {self.args!r}')
        except ValueError:
            if raise_if_invalid:
                raise
            return {INVALID_JSON_KEY: self.args}
        return parsed

    def args_as_json_str(self) -> str:
        """The arguments as a JSON string (a dict is serialized)."""
        if not self.args:
            return '{}'
        if isinstance(self.args, str):
            return self.args
        return pydantic_core.to_json(self.args).decode()

    def has_content(self) -> bool:
        """Whether the call has arguments."""
        return bool(self.args)

    def __repr__(self) -> str:
        return _repr(self, ('tool_name', 'args', 'tool_call_id', 'tool_kind', 'id', 'provider_name'))


@dataclass(repr=False)
class ToolCallPart(BaseToolCallPart):
    """A call to a tool requested by the model."""

    _: KW_ONLY
    part_kind: Literal['tool-call'] = 'tool-call'
    """Tag of this part kind in serialized messages."""

    @staticmethod
    def narrow_type(part: ToolCallPart, *, tool_kind: str | None = None) -> ToolCallPart:
        """`part` as its typed subclass (`LoadCapabilityCallPart`) when its `tool_kind` (or the one given) has
        one; else `part` itself."""
        kind = part.tool_kind if tool_kind is None else tool_kind
        if kind != CAPABILITY_LOAD_TOOL_KIND or isinstance(part, LoadCapabilityCallPart):
            return part
        return LoadCapabilityCallPart(
            part.tool_call_id, args=cast(Any, part.args), id=part.id, provider_name=part.provider_name,
            provider_details=part.provider_details,
        )  # fmt: skip


@dataclass(repr=False)
class LoadCapabilityCallPart(ToolCallPart):
    """A call of the `load_capability` tool: the model asks for a deferred capability."""

    _: KW_ONLY
    tool_name: Literal['load_capability'] = 'load_capability'
    """Always `'load_capability'`."""
    args: str | LoadCapabilityArgs | None = None  # type: ignore[assignment]
    """The arguments (`{'id': ...}`), as JSON text or a dict."""
    tool_kind: Literal['capability-load'] = 'capability-load'
    """Always `'capability-load'` (what deserialization tells this part by)."""

    @property
    def typed_args(self) -> LoadCapabilityArgs | None:
        """The arguments as a dict, or `None` when they are missing or not a JSON object."""
        if self.args is None:
            return None
        try:
            return cast(LoadCapabilityArgs, self.args_as_dict(raise_if_invalid=True))
        except ValueError:
            return None

    @property
    def capability_id(self) -> str | None:
        """The id of the capability asked for, or `None` when the arguments do not give one."""
        found = self.typed_args
        return None if found is None else found.get('id')


@dataclass(repr=False)
class NativeToolCallPart(BaseToolCallPart):
    """A call the model made to a tool its provider runs (see `edgewise.agent.native_tools`); the agent does not
    run it. Its result follows as a `NativeToolReturnPart` with the same `tool_call_id`, in the same response
    when the provider reports it. Sent back only to the provider that made it."""

    _: KW_ONLY
    part_kind: Literal['builtin-tool-call'] = 'builtin-tool-call'
    """Tag of this part kind in serialized messages (pydantic-ai's, from before the rename to "native")."""


@dataclass(repr=False)
class FilePart:
    """A file made by the model (an image it drew)."""

    content: Annotated[BinaryContent, pydantic.AfterValidator(BinaryContent.narrow_type)]
    """The file; a `BinaryImage` when it is an image."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the part."""
    provider_name: str | None = None
    """The provider that produced the part."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    part_kind: Literal['file'] = 'file'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether the file has data."""
        return bool(self.content.data)

    def __repr__(self) -> str:
        return _repr(self, ('content', 'id', 'provider_name', 'provider_details'))


ModelResponsePart = Annotated[
    TextPart
    | ThinkingPart
    | ToolCallPart
    | NativeToolCallPart
    | NativeToolReturnPart
    | CompactionPart
    | FilePart
    | SpeechPart,
    pydantic.Discriminator('part_kind'),
]
"""A part of a model's response."""

FinishReason = Literal['stop', 'length', 'content_filter', 'tool_call', 'error']
"""Why the model stopped generating, normalized across providers."""


ModelResponseState: TypeAlias = Literal['complete', 'incomplete', 'interrupted']
"""Where a response stands: received whole, still streaming, or cut off by `cancel()`."""


@dataclass(repr=False)
class ModelResponse:
    """A model's response: text, thinking and tool calls, with the request's usage."""

    parts: Annotated[
        Sequence[ModelResponsePart],
        pydantic.AfterValidator(_typed_parts),
        pydantic.PlainSerializer(_as_list, return_type=list[ModelResponsePart]),
    ]
    """The parts of the response."""
    _: KW_ONLY
    usage: RequestUsage = field(default_factory=RequestUsage)
    """The tokens used by the request."""
    model_name: str | None = None
    """The name of the model that answered."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the response was received."""
    kind: Literal['response'] = 'response'
    """Tag of responses in serialized histories."""
    provider_name: str | None = None
    """The provider that answered."""
    provider_url: str | None = None
    """The base URL of the provider's API that answered (set by the HTTP models)."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    provider_response_id: str | None = None
    """The provider's id of the response."""
    finish_reason: FinishReason | None = None
    """Why the model stopped generating."""
    run_id: str | None = None
    """The id of the agent run that received the response."""
    conversation_id: str | None = None
    """The id of the conversation (runs sharing a message history) the response belongs to."""
    metadata: dict[str, Any] | None = None
    """Data kept for the application."""
    state: ModelResponseState = 'complete'
    """`'incomplete'` while the response is being streamed, `'interrupted'` once a stream is cancelled."""

    def __post_init__(self) -> None:
        _check_speakers(self.parts, 'assistant', 'ModelResponse')

    @property
    def text(self) -> str | None:
        """The text of the response, or `None` when there is none: adjacent text parts joined, runs of text
        separated by other parts joined with a blank line. The transcript of a spoken part counts as text (a
        spoken part without one does not)."""
        runs: list[str] = []
        in_run = False
        for part in self.parts:
            if isinstance(part, TextPart) or (isinstance(part, SpeechPart) and part.transcript):
                if in_run:
                    runs[-1] += part.content
                else:
                    runs.append(part.content)
                in_run = True
            else:
                in_run = False
        return '\n\n'.join(runs) if runs else None

    @property
    def thinking(self) -> str | None:
        """The thinking parts joined with blank lines, or `None` when there are none."""
        thoughts = [part.content for part in self.parts if isinstance(part, ThinkingPart)]
        return '\n\n'.join(thoughts) if thoughts else None

    @property
    def files(self) -> list[BinaryContent]:
        """The files the model made."""
        return [part.content for part in self.parts if isinstance(part, FilePart)]

    @property
    def images(self) -> list[BinaryImage]:
        """The images the model made."""
        return [file for file in self.files if isinstance(file, BinaryImage)]

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool call parts."""
        return [part for part in self.parts if isinstance(part, ToolCallPart)]

    @property
    def native_tool_calls(self) -> list[tuple[NativeToolCallPart, NativeToolReturnPart]]:
        """The calls of tools the provider ran, each with its result (calls without one in this response are
        left out)."""
        returns = {p.tool_call_id: p for p in self.parts if isinstance(p, NativeToolReturnPart)}
        calls = (p for p in self.parts if isinstance(p, NativeToolCallPart))
        return [(call, returns[call.tool_call_id]) for call in calls if call.tool_call_id in returns]

    @property
    def builtin_tool_calls(self) -> list[tuple[NativeToolCallPart, NativeToolReturnPart]]:
        """Deprecated: `native_tool_calls`."""
        warnings.warn(
            '`ModelResponse.builtin_tool_calls` is deprecated, use `ModelResponse.native_tool_calls` instead.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self.native_tool_calls

    def __repr__(self) -> str:
        names = ('parts', 'usage', 'model_name', 'timestamp', 'provider_name', 'provider_response_id', 'run_id')
        return _repr(self, (*names, 'conversation_id'))


ModelMessage = Annotated[ModelRequest | ModelResponse, pydantic.Discriminator('kind')]
"""A message of a conversation: a request or a response."""


def _check_speakers(parts: Sequence[Any], speaker: str, message: str) -> None:
    # A ValueError (not a UserError): when a history is loaded, pydantic turns it into a ValidationError that
    # says where the part is.
    for part in parts:
        if isinstance(part, SpeechPart) and part.speaker != speaker:
            raise ValueError(f'`SpeechPart` in `{message}.parts` must have `speaker={speaker!r}`, got {part.speaker!r}')


def _tool_return_json(value: Any) -> str:
    # Tool results as JSON text for the model; bytes as base64, as pydantic-ai serializes them.
    return pydantic_core.to_json(value, bytes_mode='base64').decode()


class _NotAnObjectError(ValueError, AssertionError):
    # pydantic-ai raises AssertionError for JSON that is not an object, ValueError for JSON that does not parse.
    pass


def _tool_return_jsonable(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value, bytes_mode='base64')


def _repr(obj: object, names: tuple[str, ...]) -> str:
    # Like the dataclass repr, without fields left at their empty default (as pydantic-ai shows them).
    shown = ', '.join(f'{n}={v!r}' for n in names if (v := getattr(obj, n)) is not None)
    return f'{type(obj).__name__}({shown})'


_type_adapter: pydantic.TypeAdapter[list[ModelMessage]] | None = None


def messages_type_adapter() -> pydantic.TypeAdapter[list[ModelMessage]]:
    """The type adapter of message lists (`messages.ModelMessagesTypeAdapter`), built on first use: building it
    takes milliseconds, which only programs that (de)serialize histories pay for."""
    global _type_adapter
    if _type_adapter is None:
        config = pydantic.ConfigDict(defer_build=True, ser_json_bytes='base64', val_json_bytes='base64')
        _type_adapter = pydantic.TypeAdapter(list[ModelMessage], config=config)
    return _type_adapter
