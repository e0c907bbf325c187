"""What the per-API mappings share: schema customization, instructions, and streams fed by decoded events.

Each API module (`_anthropic_mapping`, `_google_mapping`, `_openai_responses_mapping`) turns messages into a
request body and a response body (or its server-sent events) into a `ModelResponse`; none does any I/O.
"""

from __future__ import annotations as _annotations

import dataclasses
from abc import abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any

import pydantic_core

from .._messages.framing import ASSISTANT_THINKING_TAG, frame
from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..messages import (
    BinaryContent,
    CachePoint,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    MultiModalContent,
    PartDeltaEvent,
    PartStartEvent,
    RetryPromptPart,
    TextContent,
    ThinkingPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)
from ..output import OutputObjectDefinition
from ..profiles import DEFAULT_THINKING_TAGS, ModelProfile
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse

__all__ = (
    'customize_request_parameters',
    'transformed_schema',
    'transformed_tool',
    'user_turn_items',
    'unsupported_file',
    'file_label',
    'uploaded_file_id',
    'inline_text_file',
    'is_text_like',
    'settings_fields',
    'replayed_thinking',
    'thinking_as_text',
    'EventStreamedResponse',
    'StatelessArtifactCheck',
    'by_provider_name',
)


def customize_request_parameters(params: ModelRequestParameters, profile: ModelProfile) -> ModelRequestParameters:
    """`params` with every tool and output schema rewritten by the profile's `json_schema_transformer`.

    A definition whose `strict` is `None` gets `strict=True` when its schema already fits the dialect.

    Raises:
        UserError: the output mode asks for what the model cannot do (native or tool output).
    """
    if params.output_mode == 'native' and not profile.get('supports_json_schema_output', False):
        raise UserError('Native structured output is not supported by this model.')
    if params.output_mode == 'tool' and not profile.get('supports_tools', True):
        raise UserError('Tool output is not supported by this model.')
    transformer = profile.get('json_schema_transformer', None)
    if transformer is None:
        return params

    output_object = params.output_object
    if output_object is not None:
        schema, strict = transformed_schema(transformer, output_object.json_schema, output_object.strict)
        output_object = OutputObjectDefinition(
            json_schema=schema, name=output_object.name, description=output_object.description, strict=strict
        )
    return dataclasses.replace(
        params,
        function_tools=[transformed_tool(transformer, t) for t in params.function_tools],
        output_tools=[transformed_tool(transformer, t) for t in params.output_tools],
        output_object=output_object,
    )


def transformed_tool(transformer: Any, definition: ToolDefinition) -> ToolDefinition:
    """The definition with its schema rewritten by the transformer (`transformed_schema`) and its strictness."""
    schema, strict = transformed_schema(transformer, definition.parameters_json_schema, definition.strict)
    if type(definition) is not ToolDefinition:  # a subclass may check its fields in `__init__`
        return dataclasses.replace(definition, parameters_json_schema=schema, strict=strict)
    # `dataclasses.replace` without its cost (a fifth of a request's own work with three tools): the fields copied.
    copied = object.__new__(ToolDefinition)
    copied.__dict__.update(definition.__dict__)
    copied.parameters_json_schema = schema
    copied.strict = strict
    return copied


_TRANSFORMED: dict[tuple[Any, bool | None, bytes], tuple[dict[str, Any], bool]] = {}
_TRANSFORMED_LIMIT = 512


def transformed_schema(transformer: Any, schema: dict[str, Any], strict: bool | None) -> tuple[dict[str, Any], bool]:
    """The schema rewritten by the transformer, and its strictness (`strict`, else whether it fits strict mode).

    An agent sends the same tools with every request: their rewritten schemas are kept, keyed by the
    schema's JSON (so a schema changed in place is rewritten again), a bounded number of them.
    """
    key = (transformer, strict, pydantic_core.to_json(schema))
    if (found := _TRANSFORMED.get(key)) is not None:
        return found
    walker = transformer(schema, strict=strict)
    result = walker.walk(), strict if strict is not None else walker.is_strict_compatible
    if len(_TRANSFORMED) >= _TRANSFORMED_LIMIT:
        del _TRANSFORMED[next(iter(_TRANSFORMED))]
    _TRANSFORMED[key] = result
    return result


def user_turn_items(
    part: Any,
    *,
    text: Callable[[Any], dict[str, Any]],
    file: Callable[[Any], dict[str, Any]],
    tool_return: Callable[[ToolReturnPart], dict[str, Any]],
    tool_error: Callable[[RetryPromptPart], dict[str, Any]],
    cache_point: Callable[[list[dict[str, Any]], CachePoint], None] | None = None,
    skip_empty: bool = False,
) -> list[dict[str, Any]]:
    """An API's items for one part of a request's user turn; each API gives how it writes each kind of item.

    Args:
        part: A part of a `ModelRequest` (system prompts and unknown parts give no item).
        text: The item of a piece of the user's prompt (`TextContent` gives its `content`), and of a retry
            prompt that names no tool.
        file: The item of a file in the user's prompt (`ImageUrl`, ..., `BinaryContent`); it raises `UserError`
            for a file the API cannot take.
        tool_return: The item of a tool's result.
        tool_error: The item of a retry prompt for a tool call (the tool's error).
        cache_point: Marks the items so far as a cacheable prefix; cache points are dropped without it.
        skip_empty: Leave out empty pieces of the user's prompt.
    """
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return [text(part.content)] if part.content or not skip_empty else []
        items: list[dict[str, Any]] = []
        for piece in part.content:
            if isinstance(piece, str | TextContent):
                value = piece if isinstance(piece, str) else piece.content
                if value or not skip_empty:
                    items.append(text(value))
            elif isinstance(piece, CachePoint):
                if cache_point is not None:
                    cache_point(items, piece)
            else:
                items.append(file(piece))
        return items
    if isinstance(part, ToolReturnPart):
        return [tool_return(part)]
    if isinstance(part, RetryPromptPart):
        return [text(part.model_response()) if part.tool_name is None else tool_error(part)]
    return []


def is_text_like(media_type: str) -> bool:
    """Whether a media type is text (`text/*`, JSON, XML, YAML), which some APIs take only inline."""
    return (
        media_type.startswith('text/')
        or media_type in ('application/json', 'application/xml', 'application/yaml', 'application/x-yaml')
        or media_type.endswith(('+json', '+xml'))
    )


def inline_text_file(text: str, *, media_type: str, identifier: str) -> str:
    """A text file's content as prompt text, between markers naming the file (for APIs that take no text files,
    and for files described in text)."""
    begin = f'-----BEGIN FILE id="{identifier}" type="{media_type}"-----'
    return f'{begin}\n{text}\n-----END FILE id="{identifier}"-----'


def file_label(item: MultiModalContent) -> str:
    """How an error names a file: its class, with the media type of binary content (`BinaryContent (audio/wav)`)."""
    return f'{type(item).__name__} ({item.media_type})' if isinstance(item, BinaryContent) else type(item).__name__


def unsupported_file(model_name: str, item: MultiModalContent, where: str = 'user prompts') -> UserError:
    """The error for a file the model's API cannot take."""
    return UserError(f'Model {model_name!r} cannot take {file_label(item)} in {where}.')


def uploaded_file_id(item: UploadedFile, model_class: str, providers: Iterable[str]) -> str:
    """The id of a file in the provider's storage, checked to belong to one of `providers`.

    Raises:
        UserError: the file is in another provider's storage.
    """
    allowed = sorted(providers)
    if item.provider_name not in allowed:
        expected = repr(allowed[0]) if len(allowed) == 1 else f'one of {allowed!r}'
        raise UserError(
            f'UploadedFile with `provider_name={item.provider_name!r}` cannot be used with {model_class}. '
            f'Expected `provider_name` to be {expected}.'
        )
    return item.file_id


def settings_fields(settings: Mapping[str, object], names: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The settings that are set among `names` (pairs of a setting and its field in the API), by field name."""
    return {field: settings[key] for key, field in names if key in settings}


def thinking_as_text(part: ThinkingPart, profile: ModelProfile) -> str:
    """Reasoning from another provider, as text between the profile's thinking tags."""
    start, end = profile.get('thinking_tags', DEFAULT_THINKING_TAGS)
    return f'{start}\n{part.content}\n{end}'


def replayed_thinking(part: ThinkingPart, profile: ModelProfile) -> tuple[str, bool]:
    """Reasoning that cannot go back natively, as text, and whether it belongs in a user turn ahead of its own.

    With the profile's `mimics_assistant_message_formatting`, the text is framed as `<assistant_thinking>` and goes
    in a user turn just before the assistant turn it came from (so the model does not learn to write reasoning tags
    into its answers); otherwise it is `thinking_as_text` and stays in the assistant turn.
    """
    if profile.get('mimics_assistant_message_formatting', False):
        return frame(ASSISTANT_THINKING_TAG, f'\n{part.content}\n'), True
    return thinking_as_text(part, profile), False


class EventStreamedResponse(StreamedResponse):
    """A streamed response fed by an API's decoded server-sent events (one JSON object each).

    Subclasses map one event at a time in `_map_event`, through `self._parts_manager`. Fields the parts
    manager does not keep (a part's `id`, `provider_name`, `provider_details`) are recorded per part with
    `_set_part_fields` and applied by `get()`.
    """

    def __init__(
        self,
        model_request_parameters: ModelRequestParameters,
        events: AsyncIterable[dict[str, Any]],
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        """A response read from `events`, for the model `model_name` of the provider `provider_name`."""
        super().__init__(model_request_parameters)
        self._source = events
        self._model_name = model_name
        self._provider_name = provider_name
        self.provider_details: dict[str, Any] | None = None
        """Provider-specific data of the response (the raw finish reason, ...)."""
        self._part_fields: dict[int, dict[str, Any]] = {}

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        try:
            async for data in self._source:
                for event in self._map_event(data):
                    yield event
        finally:
            # Close the source now (for provider models: the HTTP response), also when mapping failed.
            close = getattr(self._source, 'aclose', None)
            if close is not None:
                await close()

    @abstractmethod
    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        """The stream events for one decoded server-sent event."""
        raise NotImplementedError

    def _set_part_fields(self, event: PartStartEvent | PartDeltaEvent | None, **fields: Any) -> None:
        if event is not None:
            self._part_fields.setdefault(event.index, {}).update(fields)

    def _set_provider_detail(self, key: str, value: Any) -> None:
        self.provider_details = {**(self.provider_details or {}), key: value}

    def get(self) -> ModelResponse:
        """The response so far, with each part's provider fields and the response's provider details."""
        response = super().get()
        parts: list[ModelResponsePart] = list(response.parts)
        for index, fields in self._part_fields.items():
            if index < len(parts):
                known = {f.name for f in dataclasses.fields(parts[index])}
                parts[index] = dataclasses.replace(parts[index], **{k: v for k, v in fields.items() if k in known})
        return dataclasses.replace(response, parts=parts, provider_details=self.provider_details)

    @property
    def model_name(self) -> str:
        """The name of the model that answers (as the API reports it, once it has)."""
        return self._model_name

    @property
    def provider_name(self) -> str | None:
        """The provider that answers."""
        return self._provider_name


StatelessArtifactCheck = Callable[[ModelResponse, ModelResponsePart | None], bool]
"""Whether the receiving model's API verifies the signed or encrypted data (thinking signatures, encrypted reasoning,
compaction items) of a part of a response, or of the response itself when the part is `None`:
`Model.accepts_stateless_artifacts`."""


def by_provider_name(provider_name: str) -> StatelessArtifactCheck:
    """The check a mapping makes when its model asks nothing: the part's (else the response's) provider is
    `provider_name`."""

    def accepts(response: ModelResponse, part: ModelResponsePart | None) -> bool:
        return ((part.provider_name if part is not None else None) or response.provider_name) == provider_name

    return accepts
