"""The provider-neutral message model: what an agent sends to a model and what it gets back.

A conversation is a list of `ModelMessage`: `ModelRequest`s (prompts, tool returns, retry prompts) and
`ModelResponse`s (text, thinking, tool calls). Field names and the `kind` / `part_kind` tags match
pydantic-ai 1.x, so histories serialized by one load in the other (`ModelMessagesTypeAdapter`).

The public home of these classes is `edgewise.agent.messages`, which re-exports them with the streaming events
(defined above this module, in `_event_types`, since events carry parts).
"""

from __future__ import annotations as _annotations

import os
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, TypeAlias

import pydantic
import pydantic_core

from ._usage_counts import RequestUsage

__all__ = (
    'SystemPromptPart',
    'UserPromptPart',
    'UserContent',
    'ToolReturnPart',
    'RetryPromptPart',
    'ModelRequestPart',
    'ModelRequest',
    'TextPart',
    'ThinkingPart',
    'ToolCallPart',
    'ModelResponsePart',
    'ModelResponse',
    'ModelMessage',
    'FinishReason',
    'generate_tool_call_id',
)


def _now_utc() -> datetime:
    return datetime.now(tz=timezone.utc)


def generate_tool_call_id() -> str:
    """A new unique tool call id, for models that do not supply one (the `pyd_ai_` prefix of pydantic-ai)."""
    return f'pyd_ai_{os.urandom(16).hex()}'


UserContent: TypeAlias = str
"""Content of a user prompt; text for now (images, audio and documents come with the providers)."""


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
class ToolReturnPart:
    """What a tool returned, sent back to the model."""

    tool_name: str
    """The name of the tool that was called."""
    content: Any
    """The tool's return value."""
    tool_call_id: str = field(default_factory=generate_tool_call_id)
    """The id of the tool call this answers."""
    _: KW_ONLY
    tool_kind: str | None = None
    """The kind of tool, when it is not a plain function tool."""
    metadata: Any = None
    """Data kept for the application and not sent to the model."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the part was created."""
    outcome: Literal['success', 'failed', 'denied'] = 'success'
    """How the tool call ended."""
    part_kind: Literal['tool-return'] = 'tool-return'
    """Tag of this part kind in serialized messages."""

    def model_response_str(self) -> str:
        """The return value as the text a model sees."""
        if isinstance(self.content, str):
            return self.content
        return pydantic_core.to_json(self.content).decode()

    def model_response_object(self) -> dict[str, Any]:
        """The return value as a JSON object (non-objects are wrapped as `{'return_value': ...}`)."""
        json_content = pydantic_core.to_jsonable_python(self.content)
        return json_content if isinstance(json_content, dict) else {'return_value': json_content}

    def __repr__(self) -> str:
        return _repr(self, ('tool_name', 'content', 'tool_call_id', 'tool_kind', 'metadata', 'timestamp'))


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


ModelRequestPart = Annotated[
    SystemPromptPart | UserPromptPart | ToolReturnPart | RetryPromptPart, pydantic.Discriminator('part_kind')
]
"""A part of a request to a model."""


@dataclass(repr=False)
class ModelRequest:
    """A request to a model: prompts, tool returns and retry prompts."""

    parts: Sequence[ModelRequestPart]
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
    metadata: dict[str, Any] | None = None
    """Data kept for the application and not sent to the model."""

    @classmethod
    def user_text_prompt(cls, user_prompt: str, *, instructions: str | None = None) -> ModelRequest:
        """A request holding only the user's prompt."""
        return cls(parts=[UserPromptPart(user_prompt)], instructions=instructions)

    def __repr__(self) -> str:
        return _repr(self, ('parts', 'timestamp', 'instructions', 'run_id', 'metadata'))


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
class ToolCallPart:
    """A call to a tool requested by the model."""

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
    part_kind: Literal['tool-call'] = 'tool-call'
    """Tag of this part kind in serialized messages."""

    def args_as_dict(self) -> dict[str, Any]:
        """The arguments as a dict (a JSON string is parsed)."""
        if not self.args:
            return {}
        if isinstance(self.args, dict):
            return self.args
        parsed = pydantic_core.from_json(self.args)
        if not isinstance(parsed, dict):
            raise ValueError(f'Tool call {self.tool_name!r} arguments are not a JSON object: {self.args!r}')
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


ModelResponsePart = Annotated[TextPart | ThinkingPart | ToolCallPart, pydantic.Discriminator('part_kind')]
"""A part of a model's response."""

FinishReason = Literal['stop', 'length', 'content_filter', 'tool_call', 'error']
"""Why the model stopped generating, normalized across providers."""


ModelResponseState: TypeAlias = Literal['complete', 'incomplete', 'interrupted']
"""Where a response stands: received whole, still streaming, or cut off by `cancel()`."""


@dataclass(repr=False)
class ModelResponse:
    """A model's response: text, thinking and tool calls, with the request's usage."""

    parts: Sequence[ModelResponsePart]
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
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    provider_response_id: str | None = None
    """The provider's id of the response."""
    finish_reason: FinishReason | None = None
    """Why the model stopped generating."""
    run_id: str | None = None
    """The id of the agent run that received the response."""
    metadata: dict[str, Any] | None = None
    """Data kept for the application."""
    state: ModelResponseState = 'complete'
    """`'incomplete'` while the response is being streamed, `'interrupted'` once a stream is cancelled."""

    @property
    def text(self) -> str | None:
        """The text parts joined, or `None` when there are none."""
        texts = [part.content for part in self.parts if isinstance(part, TextPart)]
        return ''.join(texts) if texts else None

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool call parts."""
        return [part for part in self.parts if isinstance(part, ToolCallPart)]

    def __repr__(self) -> str:
        return _repr(
            self, ('parts', 'usage', 'model_name', 'timestamp', 'provider_name', 'provider_response_id', 'run_id')
        )


ModelMessage = Annotated[ModelRequest | ModelResponse, pydantic.Discriminator('kind')]
"""A message of a conversation: a request or a response."""


def _repr(obj: object, names: tuple[str, ...]) -> str:
    # Like the dataclass repr, without fields left at their empty default (as pydantic-ai shows them).
    shown = ', '.join(f'{n}={v!r}' for n in names if (v := getattr(obj, n)) is not None)
    return f'{type(obj).__name__}({shown})'
