"""The tool parts of the message model: a tool's call (`ToolCallPart`, `NativeToolCallPart`) and return
(`ToolReturnPart`, `NativeToolReturnPart`), with the typed parts of the tools the agent itself adds (`load_capability`,
`search_tools`), told apart by `tool_kind`. Re-exported by `model_messages`, which builds the messages from them.
"""

from __future__ import annotations as _annotations

import functools
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Literal, NotRequired, cast

import pydantic
import pydantic_core
from typing_extensions import TypedDict, TypeVar

from .content import MultiModalContent, ToolReturnContent, UserContent, is_multi_modal_content
from .framing import TOOL_RESULT_TAG, frame_tags

if TYPE_CHECKING:
    from .otel import OtelMessagePart, TraceContentOptions

__all__ = (
    'RETURN_VALUE_KEY',
    'INVALID_JSON_KEY',
    'CAPABILITY_LOAD_TOOL_KIND',
    'TOOL_SEARCH_TOOL_KIND',
    'TOOL_SEARCH_NATIVE_KIND',
    'BaseToolReturnPart',
    'ToolReturnPart',
    'LoadCapabilityArgs',
    'LoadCapabilityReturn',
    'LoadCapabilityReturnPart',
    'ToolSearchArgs',
    'ToolSearchMatch',
    'ToolSearchReturnContent',
    'ToolSearchReturnPart',
    'NativeToolReturnPart',
    'BaseToolCallPart',
    'ToolCallPart',
    'LoadCapabilityCallPart',
    'ToolSearchCallPart',
    'NativeToolCallPart',
    'generate_tool_call_id',
    'narrow_tool_parts',
)

RETURN_VALUE_KEY = 'return_value'
"""The key under which `ToolReturnPart.model_response_object` wraps a return value that is not a JSON object."""

INVALID_JSON_KEY = 'INVALID_JSON'
"""The key under which `ToolCallPart.args_as_dict` gives arguments that are not a JSON object (the key Anthropic
suggests for resending them)."""


_PartT = TypeVar('_PartT')

ArgsT_co = TypeVar('ArgsT_co', covariant=True, default=Any)
"""The shape of the arguments of a kind's tools, and of the typed call parts registered for it."""

ContentT_co = TypeVar('ContentT_co', covariant=True, default=Any)
"""The shape of the result of a kind's tools, and of the typed return parts registered for it."""

KIND_CALL_PARTS: dict[str, type[ToolCallPart[Any]]] = {}
"""The typed call part registered for each kind id (`class P(ToolCallPart[Args], kind=...)`)."""
KIND_RETURN_PARTS: dict[str, type[ToolReturnPart[Any]]] = {}
"""The typed return part registered for each kind id (`class P(ToolReturnPart[Content], kind=...)`)."""
TYPED_PART_REGISTRAR: list[Callable[[type[Any], type[Any], Literal['args', 'content'], Any], None]] = []
"""The function that checks and registers a typed tool part (`_tools.tool_kinds` sets it: the checks raise
`UserError`, which this floor cannot import)."""


def _register_typed_part(cls: type[Any], base: type[Any], payload: Literal['args', 'content'], kind: Any) -> None:
    if TYPED_PART_REGISTRAR:
        TYPED_PART_REGISTRAR[0](cls, base, payload, kind)


def _now_utc() -> datetime:
    return datetime.now(tz=timezone.utc)


def generate_tool_call_id() -> str:
    """A new unique tool call id, for models that do not supply one (the `pyd_ai_` prefix of pydantic-ai)."""
    return f'pyd_ai_{os.urandom(16).hex()}'


@dataclass(repr=False)
class BaseToolReturnPart(Generic[ContentT_co]):
    """What a tool returned: the fields of `ToolReturnPart` (a function tool's return, sent to the model) and
    `NativeToolReturnPart` (what a tool the provider runs returned, in its response).

    Generic in the shape of `typed_content`, which a typed return part declares through its kind.
    """

    _kind: ClassVar[Any] = None
    """The `ToolKind` a typed subclass is registered for; `None` on the base classes."""

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

    @property
    def typed_content(self) -> ContentT_co | None:
        """The content validated against the shape the part's kind declares (a JSON string is parsed), or `None`
        when it does not fit, or when the return is not a success (its content is then an error). On a part with
        no kind, or whose kind declares no content shape, the content as it is."""
        if self.outcome != 'success':
            return None
        if self._kind is None:
            return cast(ContentT_co, self.content)
        return cast(ContentT_co | None, self._kind._validate_content(self.content))

    def has_content(self) -> bool:
        """Whether the tool returned something (not `None`)."""
        return self.content is not None

    def structured_content(self) -> dict[str, Any] | list[Any] | None:
        """The return value as structured JSON data: a dict or list as it is, a JSON string holding an object or
        an array parsed (some UI protocols send tool results as JSON text); `None` for anything else (plain text,
        a JSON scalar, a number, a file)."""
        content: Any = self.content
        if isinstance(content, str):
            try:
                content = pydantic_core.from_json(content)
            except ValueError:
                return None
        return cast(dict[str, Any] | list[Any], content) if isinstance(content, dict | list) else None

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
        `See file <identifier>.`, and the user content that carries the files, each framed on its own in
        `<pyai:tool_result tool_name=".." tool_call_id=".." file_id="<identifier>">` and its closing tag (the user
        channel also carries the user's own files; the frame names the call a file came from). A failed return's
        text is `[{"error": <text>}, "See file <identifier>.", ...]` unless `wrap_if_error` is `False`."""
        _, files, was_list = self._split()
        if not files:
            return self.model_response_str(wrap_if_error=wrap_if_error), []
        if wrap_if_error and self.outcome == 'failed':
            error = {'error': self.model_response_str(wrap_if_error=False)}
            carried: list[UserContent] = []
            for item in files:
                carried.extend(self._framed_file(item))
            return _tool_return_json([error, *(f'See file {item.identifier}.' for item in files)]), carried
        items: list[Any] = cast(list[Any], self.content) if was_list else [self.content]
        texts: list[str] = []
        user_content: list[UserContent] = []
        for item in items:
            if is_multi_modal_content(item):
                texts.append(f'See file {item.identifier}.')
                user_content.extend(self._framed_file(item))
            else:
                texts.append(item if isinstance(item, str) else _tool_return_json(item))
        return (_tool_return_json(texts) if was_list else texts[0]), user_content

    def _framed_file(self, item: MultiModalContent) -> tuple[str, MultiModalContent, str]:
        opening, closing = frame_tags(
            TOOL_RESULT_TAG, tool_name=self.tool_name, tool_call_id=self.tool_call_id, file_id=item.identifier
        )
        return opening, item, closing

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The return as an OpenTelemetry GenAI `tool_call_response` part (its result only when `settings` let
        content be recorded; files without their data unless binary content may be)."""
        from .otel import OtelToolCallResponsePart, traced_value  # (loaded by the first traced run)

        part = OtelToolCallResponsePart(type='tool_call_response', id=self.tool_call_id, name=self.tool_name)
        if settings.include_content and self.content is not None:
            part['result'] = traced_value(self.content, settings)
        return [part]

    def __repr__(self) -> str:
        names = ('tool_name', 'content', 'tool_call_id', 'tool_kind', 'metadata', 'timestamp')
        return _repr(self, names if self.outcome == 'success' else (*names, 'outcome'))


@dataclass(repr=False)
class ToolReturnPart(BaseToolReturnPart[ContentT_co]):
    """What a tool returned, sent back to the model."""

    _: KW_ONLY
    part_kind: Literal['tool-return'] = 'tool-return'
    """Tag of this part kind in serialized messages."""

    def __init_subclass__(cls, *, kind: Any = None, **kwargs: Any) -> None:
        """Register a typed return part for `kind` (a `ToolKind`): `class P(ToolReturnPart[Content], kind=k)`."""
        super().__init_subclass__(**kwargs)
        _register_typed_part(cls, ToolReturnPart, 'content', kind)

    @staticmethod
    def narrow_type(part: ToolReturnPart, *, tool_kind: str | None = None) -> ToolReturnPart:
        """`part` as its typed subclass (`LoadCapabilityReturnPart`, `ToolSearchReturnPart`) when its `tool_kind`
        (or the one given) has one and its content (a JSON string is parsed first, see `structured_content`) has
        that subclass's shape.

        Best effort, never raising: content of another shape leaves `part` as it is, except that a `tool_kind` the
        part itself claims is dropped (a copy with `tool_kind=None`), so that the part loads back as a plain part.
        """
        kind = part.tool_kind if tool_kind is None else tool_kind
        if kind is not None and (registered := KIND_RETURN_PARTS.get(kind)) is not None:
            return _narrow_kind_return(part, kind, registered)
        typed = _TYPED_RETURNS.get(kind) if kind is not None else None
        if typed is None or isinstance(part, typed[0]):
            return part
        structured = part.structured_content()
        found = _valid(typed[1](), part.content if structured is None else structured)
        if found is _INVALID:
            return part if part.tool_kind is None else replace(part, tool_kind=None)
        return _as_typed(part, typed[0], content=found)


CAPABILITY_LOAD_TOOL_KIND = 'capability-load'
"""The `tool_kind` of the `load_capability` tool's definition, call parts and return parts."""


class LoadCapabilityArgs(TypedDict):
    """The arguments of a `load_capability` call."""

    id: Annotated[str, pydantic.Field(description='The id of the capability to load.')]
    """The id of the deferred capability to load."""


class LoadCapabilityReturn(TypedDict):
    """What a successful `load_capability` call returns."""

    message: NotRequired[str]
    """The confirmation of the load the model reads (absent from histories of earlier Edgewise versions)."""
    instructions: NotRequired[str]
    """The loaded capability's instructions, in histories of earlier Edgewise versions only: they are now stated as
    the block `capability:<id>` after the return (an `InstructionDeltaPart`), as in pydantic-ai 2.68."""


TOOL_SEARCH_TOOL_KIND = 'tool-search'
"""The `tool_kind` of the `search_tools` tool's definition, call parts and return parts."""

TOOL_SEARCH_NATIVE_KIND = 'tool_search'
"""The native tool kind of provider-side tool search, set as `with_native` on the tools a tool search covers."""


class ToolSearchArgs(TypedDict):
    """The arguments of a tool search call."""

    queries: list[str]
    """What the model searches for (each query is matched on its own)."""


class ToolSearchMatch(TypedDict):
    """A tool a search found (its whole definition reaches the model with the next request)."""

    name: str
    """The tool's name, as the model calls it."""


class ToolSearchReturnContent(TypedDict):
    """What a tool search returns."""

    discovered_tools: list[ToolSearchMatch]
    """The tools found, best first; empty when nothing matched."""
    message: NotRequired[str]
    """Set when nothing matched: says so to the model."""


@dataclass(repr=False)
class LoadCapabilityReturnPart(ToolReturnPart):
    """The return of a successful `load_capability` call: with its call, it marks the capability loaded for the
    rest of the conversation (a history holding the pair has the capability loaded)."""

    _: KW_ONLY
    content: LoadCapabilityReturn
    """The load's confirmation (and, in histories of earlier Edgewise versions, the capability's instructions)."""
    tool_name: Literal['load_capability'] = 'load_capability'
    """Always `'load_capability'`."""
    tool_kind: Literal['capability-load'] = 'capability-load'
    """Always `'capability-load'` (what deserialization tells this part by)."""

    @property
    def instructions(self) -> str | None:
        """The loaded capability's instructions the return carries (a return of an earlier Edgewise), or `None`."""
        return self.content.get('instructions')


@dataclass(repr=False)
class ToolSearchReturnPart(ToolReturnPart):
    """The return of the `search_tools` tool: the deferred tools it found, shown to the model from then on."""

    content: ToolSearchReturnContent = field(kw_only=True)
    """The tools found (and, when there are none, the message saying so)."""
    tool_name: Literal['search_tools'] = 'search_tools'
    """Always `'search_tools'`."""
    _: KW_ONLY
    tool_kind: Literal['tool-search'] = 'tool-search'
    """Always `'tool-search'` (what deserialization tells this part by)."""

    @property
    def discovered_tools(self) -> list[ToolSearchMatch]:
        """The tools found, best first."""
        return self.content['discovered_tools']

    @property
    def message(self) -> str | None:
        """The message shown when nothing matched, or `None`."""
        return self.content.get('message')


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

    @staticmethod
    def narrow_type(part: NativeToolReturnPart, *, tool_kind: str | None = None) -> NativeToolReturnPart:
        """Check a typed kind's claim on `part` (`'tool-search'`: content of `ToolSearchReturnContent`'s shape).

        Edgewise has no typed subclasses of native parts, so a part whose content fits is returned as it is; one
        whose content does not fit loses a `tool_kind` it claims itself (a copy with `tool_kind=None`), as
        `ToolReturnPart.narrow_type` drops an unfitting claim.
        """
        return _checked_native_claim(part, tool_kind, _search_return_adapter, part.content)

    def __repr__(self) -> str:
        names = ('tool_name', 'content', 'tool_call_id', 'tool_kind', 'metadata', 'timestamp', 'provider_name')
        return _repr(self, (*names, 'provider_details'))


@dataclass(repr=False)
class BaseToolCallPart(Generic[ArgsT_co]):
    """A tool call: the fields of `ToolCallPart` (a call the agent runs) and `NativeToolCallPart` (a call the
    provider ran itself).

    Generic in the shape of `typed_args`, which a typed call part declares through its kind.
    """

    _kind: ClassVar[Any] = None
    """The `ToolKind` a typed subclass is registered for; `None` on the base classes."""

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
        """The arguments as a JSON string: a dict is serialized, a JSON object string comes back as it is (byte for
        byte, which keeps a provider's prompt cache warm), and text that is not a JSON object comes back as
        `{"INVALID_JSON": <the raw text>}` (as `args_as_dict` gives it), which an API that wants an object still takes.

        Not for arguments still streaming in: a fragment that is not yet valid JSON would be wrapped.
        """
        if not self.args:
            return '{}'
        if isinstance(self.args, str):
            args = self.args_as_dict()
            if set(args) == {INVALID_JSON_KEY} and args[INVALID_JSON_KEY] == self.args:
                return pydantic_core.to_json(args).decode()
            return self.args
        return pydantic_core.to_json(self.args).decode()

    @property
    def typed_args(self) -> ArgsT_co | None:
        """The arguments validated against the shape the part's kind declares (JSON text is parsed), or `None` when
        they do not fit (yet: they may still be streaming in). On a part with no kind, or whose kind declares no
        arguments shape, the arguments as a dict (`None` when they are not a JSON object)."""
        if self._kind is None:
            try:
                return cast(ArgsT_co, self.args_as_dict(raise_if_invalid=True))
            except ValueError:
                return None
        return cast(ArgsT_co | None, self._kind._validate_args(self.args))

    def has_content(self) -> bool:
        """Whether the call has arguments."""
        return bool(self.args)

    def __repr__(self) -> str:
        return _repr(self, ('tool_name', 'args', 'tool_call_id', 'tool_kind', 'id', 'provider_name'))


@dataclass(repr=False)
class ToolCallPart(BaseToolCallPart[ArgsT_co]):
    """A call to a tool requested by the model."""

    _: KW_ONLY
    part_kind: Literal['tool-call'] = 'tool-call'
    """Tag of this part kind in serialized messages."""

    def __init_subclass__(cls, *, kind: Any = None, **kwargs: Any) -> None:
        """Register a typed call part for `kind` (a `ToolKind`): `class P(ToolCallPart[Args], kind=k)`."""
        super().__init_subclass__(**kwargs)
        _register_typed_part(cls, ToolCallPart, 'args', kind)

    @staticmethod
    def narrow_type(part: ToolCallPart, *, tool_kind: str | None = None) -> ToolCallPart:
        """`part` as its typed subclass (`LoadCapabilityCallPart`, `ToolSearchCallPart`) when its `tool_kind` (or
        the one given) has one and its arguments (JSON text, a dict of that subclass's shape, or none) fit it.

        Best effort, never raising: arguments of another shape leave `part` as it is, except that a `tool_kind`
        the part itself claims is dropped (a copy with `tool_kind=None`).
        """
        kind = part.tool_kind if tool_kind is None else tool_kind
        if kind is not None and (registered := KIND_CALL_PARTS.get(kind)) is not None:
            return _narrow_kind_call(part, kind, registered)
        typed = _TYPED_CALLS.get(kind) if kind is not None else None
        if typed is None or isinstance(part, typed[0]):
            return part
        found = _valid(typed[1](), part.args)
        if found is _INVALID:
            return part if part.tool_kind is None else replace(part, tool_kind=None)
        return _as_typed(part, typed[0], args=found)


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
class ToolSearchCallPart(ToolCallPart):
    """A call of the `search_tools` tool: the model searches the tools hidden from it (`defer_loading=True`)."""

    tool_name: Literal['search_tools'] = 'search_tools'
    """Always `'search_tools'`."""
    args: str | ToolSearchArgs | None = None  # type: ignore[assignment]
    """The arguments (`{'queries': [...]}`), as a dict, or as JSON text while they stream."""
    _: KW_ONLY
    tool_kind: Literal['tool-search'] = 'tool-search'
    """Always `'tool-search'` (what deserialization tells this part by)."""

    @property
    def typed_args(self) -> ToolSearchArgs | None:
        """The arguments as a dict, or `None` when they are missing or not (yet) a JSON object."""
        if self.args is None:
            return None
        try:
            return cast(ToolSearchArgs, self.args_as_dict(raise_if_invalid=True))
        except ValueError:
            return None

    @property
    def queries(self) -> list[str]:
        """The queries searched for (empty while the arguments are incomplete)."""
        found = self.typed_args
        return [] if found is None else list(found.get('queries', []))


@dataclass(repr=False)
class NativeToolCallPart(BaseToolCallPart):
    """A call the model made to a tool its provider runs (see `edgewise.agent.native_tools`); the agent does not
    run it. Its result follows as a `NativeToolReturnPart` with the same `tool_call_id`, in the same response
    when the provider reports it. Sent back only to the provider that made it."""

    _: KW_ONLY
    part_kind: Literal['builtin-tool-call'] = 'builtin-tool-call'
    """Tag of this part kind in serialized messages (pydantic-ai's, from before the rename to "native")."""

    @staticmethod
    def narrow_type(part: NativeToolCallPart, *, tool_kind: str | None = None) -> NativeToolCallPart:
        """Check a typed kind's claim on `part` (`'tool-search'`: arguments of `ToolSearchArgs`'s shape), as
        `NativeToolReturnPart.narrow_type` does: fitting, the part as it is; not fitting, without its own claim."""
        return _checked_native_claim(part, tool_kind, _search_args_adapter, part.args)


_NativePartT = TypeVar('_NativePartT', NativeToolCallPart, NativeToolReturnPart)


def _checked_native_claim(
    part: _NativePartT, tool_kind: str | None, adapter: Callable[[], pydantic.TypeAdapter[Any]], data: Any
) -> _NativePartT:
    kind = part.tool_kind if tool_kind is None else tool_kind
    if kind != TOOL_SEARCH_TOOL_KIND or _valid(adapter(), data) is not _INVALID:
        return part
    return part if part.tool_kind is None else replace(part, tool_kind=None)


def _tool_return_json(value: Any) -> str:
    # Tool results as JSON text for the model; bytes as base64, as pydantic-ai serializes them.
    return pydantic_core.to_json(value, bytes_mode='base64').decode()


class _NotAnObjectError(ValueError, AssertionError):
    # pydantic-ai raises AssertionError for JSON that is not an object, ValueError for JSON that does not parse.
    pass


def _tool_return_jsonable(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value, bytes_mode='base64')


def narrow_tool_parts(parts: list[Any], *, registered_only: bool = False) -> list[Any]:
    """`parts` (in place) with the calls and returns of `load_capability` and `search_tools`, and of the kinds typed
    parts are registered for, as their typed parts, told by `tool_kind` (not by tool name, so a user's own tool of
    that name stays a plain part). `registered_only`: leave the agent's own kinds as they are."""
    for index, part in enumerate(parts):
        kind = getattr(part, 'tool_kind', None)
        if kind is None:
            continue
        if (kind in _TYPED_TOOL_KINDS and not registered_only) or kind in KIND_CALL_PARTS or kind in KIND_RETURN_PARTS:
            kind = part.part_kind
            if kind == 'tool-call':
                parts[index] = ToolCallPart.narrow_type(part)
            elif kind == 'tool-return':
                parts[index] = ToolReturnPart.narrow_type(part)
    return parts


_TYPED_TOOL_KINDS = frozenset((CAPABILITY_LOAD_TOOL_KIND, TOOL_SEARCH_TOOL_KIND))


# The adapters are built on first use: a program that never meets a typed tool part pays nothing at import.
@functools.cache
def _search_args_adapter() -> pydantic.TypeAdapter[str | ToolSearchArgs | None]:
    return pydantic.TypeAdapter(str | ToolSearchArgs | None)


@functools.cache
def _search_return_adapter() -> pydantic.TypeAdapter[ToolSearchReturnContent]:
    return pydantic.TypeAdapter(ToolSearchReturnContent)


@functools.cache
def _load_args_adapter() -> pydantic.TypeAdapter[str | LoadCapabilityArgs | None]:
    return pydantic.TypeAdapter(str | LoadCapabilityArgs | None)


@functools.cache
def _load_return_adapter() -> pydantic.TypeAdapter[LoadCapabilityReturn]:
    return pydantic.TypeAdapter(LoadCapabilityReturn)


# tool_kind -> (typed part, the adapter its arguments or content must pass)
_TYPED_CALLS: dict[str, tuple[type[ToolCallPart], Callable[[], pydantic.TypeAdapter[Any]]]] = {
    CAPABILITY_LOAD_TOOL_KIND: (LoadCapabilityCallPart, _load_args_adapter),
    TOOL_SEARCH_TOOL_KIND: (ToolSearchCallPart, _search_args_adapter),
}
_TYPED_RETURNS: dict[str, tuple[type[ToolReturnPart], Callable[[], pydantic.TypeAdapter[Any]]]] = {
    CAPABILITY_LOAD_TOOL_KIND: (LoadCapabilityReturnPart, _load_return_adapter),
    TOOL_SEARCH_TOOL_KIND: (ToolSearchReturnPart, _search_return_adapter),
}


_INVALID: Any = object()
# The fields a typed tool part takes from its plain part (its name and kinds are the typed class's own).
_OWN_FIELDS = frozenset(('tool_name', 'tool_kind', 'part_kind'))


def _narrow_kind_call(part: ToolCallPart, kind: str, typed: type[ToolCallPart[Any]]) -> ToolCallPart:
    """`part` as the typed call part registered for `kind`, unless its arguments, a dict, do not fit the kind's
    shape (JSON text is left to `typed_args`): it then stays a plain part that keeps its kind."""
    if isinstance(part, typed):
        return part
    declared = typed._kind
    if isinstance(part.args, dict) and declared.args is not None and declared._validate_args(part.args) is None:
        return part if part.tool_kind == kind else replace(part, tool_kind=kind)
    return _copied_as(part, typed, tool_kind=kind)


def _narrow_kind_return(part: ToolReturnPart, kind: str, typed: type[ToolReturnPart[Any]]) -> ToolReturnPart:
    """`part` as the typed return part registered for `kind` when it is a success whose content (a JSON string is
    parsed) fits the kind's shape; otherwise a plain part that keeps its kind. The content is kept as it was sent."""
    if isinstance(part, typed):
        return part
    declared = typed._kind
    if part.outcome != 'success' or (declared.content is not None and declared._validate_content(part.content) is None):
        return part if part.tool_kind == kind else replace(part, tool_kind=kind)
    return _copied_as(part, typed, tool_kind=kind)


def _copied_as(part: Any, typed: type[_PartT], **changes: Any) -> _PartT:
    copied = {f.name: getattr(part, f.name) for f in fields(part) if f.init and f.name != 'part_kind'}
    return typed(**{**copied, **changes})


def _valid(adapter: pydantic.TypeAdapter[Any], value: Any) -> Any:
    try:
        return adapter.validate_python(value)
    except pydantic.ValidationError:
        return _INVALID


def _as_typed(part: Any, typed: type[_PartT], **changes: Any) -> _PartT:
    copied = {f.name: getattr(part, f.name) for f in fields(part) if f.init and f.name not in _OWN_FIELDS}
    return typed(**{**copied, **changes})


def _repr(obj: object, names: tuple[str, ...]) -> str:
    # Like the dataclass repr, without fields left at their empty default (as pydantic-ai shows them).
    shown = ', '.join(f'{n}={v!r}' for n in names if (v := getattr(obj, n)) is not None)
    return f'{type(obj).__name__}({shown})'
