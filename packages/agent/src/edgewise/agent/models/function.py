"""`FunctionModel`: a model whose answers come from a function you write; for tests and offline examples."""

from __future__ import annotations as _annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any, TypeAlias

from .._message_flow.events import ModelResponseStreamEvent
from .._messages.capability_loading import owned_by_deferred_capability
from .._messages.usage_counts import RequestUsage
from .._threads import run_in_thread
from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..messages import FilePart, ModelMessage, ModelResponse, NativeToolCallPart, NativeToolReturnPart
from ..native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ..profiles import ModelProfileSpec
from ..settings import ModelSettings
from ._in_memory_batch import InMemoryBatchModel
from ._model import RunContext
from ._native_support import resolve_model_tools
from ._request_parameters import ModelRequestParameters, request_instructions
from ._streamed_response import StreamedResponse
from ._thinking import resolve_thinking
from ._usage_estimate import REQUEST_OVERHEAD, UsageEstimator, estimate_tokens, estimate_usage
from .test import TEST_PROFILE

__all__ = (
    'FunctionModel',
    'AgentInfo',
    'FunctionDef',
    'StreamFunctionDef',
    'DeltaToolCall',
    'DeltaToolCalls',
    'DeltaThinkingPart',
    'DeltaThinkingCalls',
    'BuiltinToolCallsReturns',
    'FileParts',
)


@dataclass(kw_only=True)
class AgentInfo:
    """What the function of a `FunctionModel` is told about the request besides the messages."""

    function_tools: list[ToolDefinition]
    """The function tools the model may call."""
    allow_text_output: bool
    """Whether plain text is an acceptable final answer."""
    output_tools: list[ToolDefinition]
    """The output tools the model may call to answer."""
    model_settings: ModelSettings | None
    """The request's settings."""
    model_request_parameters: ModelRequestParameters = field(default_factory=ModelRequestParameters)
    """All the request's parameters."""
    instructions: str | None = None
    """The instructions of the request."""


@dataclass
class DeltaToolCall:
    """A piece of a streamed tool call (used by `stream_function`s)."""

    name: str | None = None
    """The tool name, if known in this piece."""
    json_args: str | None = None
    """A chunk of the JSON arguments."""
    _: KW_ONLY
    tool_call_id: str | None = None
    """The tool call id, if known in this piece."""


@dataclass(kw_only=True)
class DeltaThinkingPart:
    """A piece of streamed reasoning (used by `stream_function`s)."""

    content: str | None = None
    """A chunk of the reasoning text."""
    signature: str | None = None
    """The reasoning's signature, if known in this piece."""


DeltaToolCalls: TypeAlias = dict[int, DeltaToolCall]
"""Pieces of streamed tool calls, by index."""
DeltaThinkingCalls: TypeAlias = dict[int, DeltaThinkingPart]
"""Pieces of streamed reasoning parts, by index."""
BuiltinToolCallsReturns: TypeAlias = dict[int, NativeToolCallPart | NativeToolReturnPart]
"""Whole native tool calls and results a `stream_function` streams, by index (each starts its own part)."""
FileParts: TypeAlias = dict[int, FilePart]
"""Whole files (images the model made) a `stream_function` streams, by index (each starts its own part; an Edgewise
addition: pydantic-ai's stream functions cannot stream files)."""
FunctionDef: TypeAlias = Callable[[list[ModelMessage], AgentInfo], ModelResponse | Awaitable[ModelResponse]]
"""A function answering requests: `(messages, info) -> ModelResponse`, sync or async."""
_StreamItem: TypeAlias = str | DeltaToolCalls | DeltaThinkingCalls | BuiltinToolCallsReturns | FileParts
StreamFunctionDef: TypeAlias = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[_StreamItem]]
"""An async generator streaming an answer as text chunks, tool call pieces or reasoning pieces."""


class FunctionModel(InMemoryBatchModel):
    """A model answering with `function(messages, info)`; sync functions run in a worker thread."""

    _default_profile = TEST_PROFILE
    supported_tool_deferral_modes = frozenset({'standalone', 'with_tool_search'})
    """Both, when a profile claims one: the function is then shown the hidden tools of a provider-run tool search
    (`defer_loading=True`) next to the `ToolSearchTool`, as a provider would get them."""
    supported_tool_addition_modes = frozenset({'by_reference', 'with_definitions'})
    """Both, when a profile claims one: the request's `tool_visibility` is then resolved as for a provider that takes
    revealed tools natively (`'via_history'` with `'with_definitions'`)."""

    function: FunctionDef | None
    """Answers non-streamed requests."""
    stream_function: StreamFunctionDef | None
    """Answers streamed requests (used from the streaming release on)."""

    def __init__(
        self,
        function: FunctionDef | None = None,
        *,
        stream_function: StreamFunctionDef | None = None,
        model_name: str | None = None,
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Make a model of `function` and/or `stream_function`.

        Args:
            function: Answers requests; may be omitted when only `stream_function` is given.
            stream_function: Streams answers; may be omitted when `function` is given.
            model_name: The model's name; `function:<function name>:<stream function name>` if `None`.
            profile: What the model accepts (its output mode by default, image output...); a profile with native
                and prompted output (`models.test.TEST_PROFILE`) if `None`, as pydantic-ai's.
            settings: Default settings of requests to this model.

        Raises:
            TypeError: neither function is given.
        """
        if function is None and stream_function is None:
            raise TypeError('Either `function` or `stream_function` must be provided')
        self.function = function
        self.stream_function = stream_function
        self._model_name = model_name or f'function:{_name_of(function)}:{_name_of(stream_function)}'
        super().__init__(settings=settings, profile=profile)
        self._is_async = _is_async_callable(function)
        self._estimator = UsageEstimator()

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Every native tool: the function sees them in `info.model_request_parameters.native_tools`."""
        return SUPPORTED_NATIVE_TOOLS

    def _checked(self, params: ModelRequestParameters, settings: ModelSettings | None) -> ModelRequestParameters:
        # As every model: the native tools its profile does not allow are swapped for their local fallbacks, and the
        # unified `thinking` setting is resolved for its profile (the function sees both in its `info`).
        params = resolve_model_tools(
            params,
            lambda: self.supported_native_tools() & self.profile.get('supported_native_tools', SUPPORTED_NATIVE_TOOLS),
            self.tool_deferral_mode,
            self.tool_addition_mode,
        )
        return resolve_thinking(settings or {}, params, self.profile)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Answer with the function; set the model name and, if the function set none, estimated usage."""
        function = self.function
        if function is None:
            raise UserError(
                f'FunctionModel {self._model_name!r} has only a `stream_function`; non-streamed runs need `function`.'
            )
        model_request_parameters = self._checked(model_request_parameters, model_settings)
        info = _agent_info(messages, model_settings, model_request_parameters)
        # The function gets a list of its own: the run's history list grows after the request, and a function that
        # keeps what it was given must keep what this request sent (as in pydantic-ai).
        sent = list(messages)
        if self._is_async:
            response = await function(sent, info)  # type: ignore[misc]
        else:
            response = await run_in_thread(function, sent, info)
            if inspect.isawaitable(response):  # a plain function may return an awaitable (as pydantic-ai awaits it)
                response = await response
        if not isinstance(response, ModelResponse):
            raise UserError(
                f'The function of FunctionModel {self._model_name!r} returned {response!r}, not a ModelResponse.'
            )
        response.model_name = self._model_name  # the model's name, whatever the function put there (as pydantic-ai)
        usage = response.usage
        if not usage.has_values():  # nothing set by the function (a cost counts): estimated, as pydantic-ai 2.x does
            response.usage = self._estimator.estimate(messages, response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Stream the answer of `stream_function`; usage is estimated as it streams (the request overhead as input
        tokens, each chunk's words as output tokens), as pydantic-ai's does.

        Raises:
            UserError: the model has no `stream_function`.
        """
        if self.stream_function is None:
            raise UserError(f'FunctionModel {self._model_name!r} has no `stream_function`; streamed runs need one.')
        model_request_parameters = self._checked(model_request_parameters, model_settings)
        info = _agent_info(messages, model_settings, model_request_parameters)
        items = self.stream_function(list(messages), info)  # a list of its own, as `request` gives
        try:
            first = await anext(items)
        except StopAsyncIteration:
            raise ValueError('Stream function must return at least one item') from None
        except BaseException:
            await items.aclose()  # type: ignore[attr-defined]
            raise
        stream = _FunctionStreamedResponse(model_request_parameters, self, items, first)
        try:
            yield stream
        finally:
            await stream.close()

    @property
    def model_name(self) -> str:
        """`function:<function name>:<stream function name>`, unless given."""
        return self._model_name

    @property
    def system(self) -> str:
        """Always `'function'`."""
        return 'function'


def _name_of(function: Callable[..., Any] | None) -> str:
    # A callable without a `__name__` (an instance, a `functools.partial`) is named by its class.
    if function is None:
        return ''
    return getattr(function, '__name__', type(function).__name__)


def _is_async_callable(function: Callable[..., Any] | None) -> bool:
    """Whether calling `function` gives a coroutine by its definition (an `async def`, also behind
    `functools.partial` or as an instance's `__call__`): such a function needs no worker thread."""
    while isinstance(function, functools.partial):
        function = function.func
    return inspect.iscoroutinefunction(function) or (
        callable(function) and inspect.iscoroutinefunction(function.__call__)  # type: ignore[operator]
    )


def _estimate_usage(messages: Iterable[ModelMessage]) -> RequestUsage:
    """A plausible usage for a request that sent `messages`, from their words (pydantic-ai's private name, kept for
    ported tests; `FunctionModel` counts a run's history incrementally with the same rules)."""
    return estimate_usage(messages)


def _agent_info(
    messages: list[ModelMessage], model_settings: ModelSettings | None, params: ModelRequestParameters
) -> AgentInfo:
    return AgentInfo(
        function_tools=_authored_deferral(params),
        allow_text_output=params.allow_text_output,
        output_tools=params.output_tools,
        model_settings=model_settings,
        model_request_parameters=params,
        instructions=request_instructions(messages, params),
    )


def _authored_deferral(params: ModelRequestParameters) -> list[ToolDefinition]:
    # As pydantic-ai 2.x: the function is shown the tools among the request's tools (`declared_function_tools`: not
    # those withheld, nor those whose definitions go in the history), and the tools of a loaded deferred capability
    # still marked `defer_loading=True` (the capability deferred them); that they are visible is told by
    # `revealed_tool_names`. The run itself marks them shown, so that the providers' mappings send them as ordinary
    # tools.
    declared = params.declared_function_tools
    revealed = params.revealed_tool_names
    if not revealed:
        return declared
    return [
        replace(t, defer_loading=True)
        if owned_by_deferred_capability(t) and not t.defer_loading and t.name in revealed
        else t
        for t in declared
    ]


class _FunctionStreamedResponse(StreamedResponse):
    def __init__(
        self,
        params: ModelRequestParameters,
        model: FunctionModel,
        items: AsyncIterator[_StreamItem],
        first: _StreamItem,
    ) -> None:
        super().__init__(params)
        self._model = model
        self._items = items
        self._first = first  # read ahead by `request_stream`, to tell an empty stream
        # As pydantic-ai's: the request overhead as input, then the output counted chunk by chunk.
        self._usage.input_tokens = REQUEST_OVERHEAD

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        items = self._items
        item = self._first
        try:
            while True:
                if isinstance(item, str):
                    self._usage.output_tokens += estimate_tokens(item)
                    if (event := manager.text_delta('content', item)) is not None:
                        yield event
                else:
                    for index, delta in item.items():
                        if isinstance(delta, DeltaThinkingPart):
                            self._usage.output_tokens += estimate_tokens(delta.content or '')
                            event = manager.thinking_delta(index, delta.content, delta.signature)
                        elif isinstance(delta, DeltaToolCall):
                            self._usage.output_tokens += estimate_tokens(delta.json_args or '')
                            event = manager.tool_call_delta(index, delta.name, delta.json_args, delta.tool_call_id)
                        elif isinstance(delta, FilePart):
                            event = manager.whole_part(index, delta)
                        elif isinstance(delta, NativeToolCallPart | NativeToolReturnPart):
                            text = (
                                delta.args_as_json_str()
                                if isinstance(delta, NativeToolCallPart)
                                else delta.model_response_str()
                            )
                            self._usage.output_tokens += estimate_tokens(text)
                            event = manager.whole_part(index, delta)
                        else:
                            raise UserError(
                                f'The stream function of FunctionModel {self._model.model_name!r} yielded '
                                f'{delta!r}; expected `str`, `{{index: DeltaToolCall(...)}}`, '
                                '`{index: DeltaThinkingPart(...)}`, `{index: NativeToolCallPart(...)}` or '
                                '`{index: FilePart(...)}`.'
                            )
                        if event is not None:
                            yield event
                try:
                    item = await anext(items)
                except StopAsyncIteration:
                    break
        finally:
            # Stop the user's generator at once when the stream is left early.
            await items.aclose()  # type: ignore[attr-defined]

    @property
    def model_name(self) -> str:
        return self._model.model_name
