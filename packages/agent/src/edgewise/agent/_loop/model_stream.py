"""`AgentStream`: one streamed model response inside `agent.iter()` (what `ModelRequestNode.stream` gives), with
pydantic-ai 1.107's API: its events, its text, its output, its response snapshots and the run's usage."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from copy import deepcopy
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, overload

from typing_extensions import TypeVar

from edgewise.graph import GraphRunContext

from .._functions.runners import OutputValidator
from .._output.schema import OutputSchema
from .._run.deps import GraphAgentDeps, token_check
from .._run.result import CallableDatetime, CallableRunUsage
from .._run.state import GraphAgentState
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UnexpectedModelBehavior, UserError
from ..messages import (
    AgentStreamEvent,
    EnqueuedMessagesEvent,
    ModelResponse,
    ModelResponseStreamEvent,
    ModelSettingsDeltaEvent,
    TextPart,
    ToolCallPart,
)
from ..models import ModelRequestParameters, StreamedResponse
from ..models._completed_response import CompletedStreamedResponse
from ..tools import RunContext
from ..usage import RequestUsage, UsageLimits
from ..workspaces import WorkspaceRef
from .debounce import debounce
from .output_reader import INVALID, OutputReader, text_pieces
from .response_output import deferred_requests, validate_response

if TYPE_CHECKING:
    from ..capabilities import AbstractCapability
    from ..tool_manager import ToolManager

__all__ = ('AgentStream', 'whole_stream')

AgentDepsT = TypeVar('AgentDepsT', default=object, contravariant=True)
OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)

_NOTHING: Any = object()


class _After:
    """The `first` events, then those of `events` (a class, not a generator: nothing to close when left early)."""

    def __init__(self, first: Sequence[Any], events: AsyncIterator[Any]) -> None:
        self._first = list(first)
        self._events = events

    def __aiter__(self) -> _After:
        return self

    async def __anext__(self) -> Any:
        if self._first:
            return self._first.pop(0)
        return await self._events.__anext__()


def _no_max_tokens() -> int | None:
    return None


@dataclass(kw_only=True, init=False)
class AgentStream(Generic[AgentDepsT, OutputDataT]):
    """The events of one streamed model response, and what they add up to.

    Iterate it for the raw events (`PartStartEvent`, `PartDeltaEvent`, `FinalResultEvent`, ...), or read the
    text (`stream_text`), the output (`stream_output`, `get_output`) or response snapshots (`stream_response`).
    Every reader shares one pass over the events: what one has read, another does not see again.

    A dataclass, as in pydantic-ai 2.x: its fields are 2.x's constructor keywords, in 2.x's order (a stream made by
    a run has them from its run); `dataclasses.replace` makes another stream of the same response, `==` compares
    the fields, and the repr shows those 2.x shows.
    """

    # pydantic-ai 2.x's fields (its keyword constructor's arguments): what `fields`, `replace`, `==` and the repr see.
    _raw_stream_response: StreamedResponse
    _output_schema: OutputSchema[Any]
    _model_request_parameters: ModelRequestParameters
    _output_validators: Sequence[OutputValidator]
    _run_ctx: RunContext[Any] = field(repr=False)  # (its deps may hold secrets: out of the repr, unlike 2.x's)
    _carried_workspace_ref: WorkspaceRef | None = field(default=None, repr=False)
    _model_id: str | None = field(default=None, repr=False)
    _usage_limits: UsageLimits | None
    _tool_manager: ToolManager[Any] = field(repr=False)  # (its context too)
    _root_capability: AbstractCapability[Any]
    _metadata_getter: Callable[[], dict[str, Any] | None] | None = field(default=None, repr=False)
    _event_stream_buffer_getter: Callable[[], list[AgentStreamEvent]] = field(default=list, repr=False)
    _max_tokens_getter: Callable[[], int | None] = field(default=_no_max_tokens, repr=False)

    @overload
    def __init__(
        self,
        response: StreamedResponse,
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
        check_tokens: Callable[[RequestUsage], None] | None = None,
        leading: Sequence[EnqueuedMessagesEvent | ModelSettingsDeltaEvent] = (),
    ) -> None: ...

    @overload
    def __init__(
        self,
        *,
        _raw_stream_response: StreamedResponse,
        _output_schema: OutputSchema,
        _model_request_parameters: ModelRequestParameters,
        _output_validators: Sequence[OutputValidator],
        _run_ctx: RunContext[Any],
        _usage_limits: UsageLimits | None,
        _tool_manager: ToolManager[Any],
        _root_capability: AbstractCapability[Any],
        _carried_workspace_ref: WorkspaceRef | None = None,
        _model_id: str | None = None,
        _metadata_getter: Callable[[], dict[str, Any] | None] | None = None,
        _event_stream_buffer_getter: Callable[[], list[AgentStreamEvent]] = list,
        _max_tokens_getter: Callable[[], int | None] = ...,
    ) -> None: ...

    def __init__(
        self,
        response: StreamedResponse | None = None,
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]] | None = None,
        check_tokens: Callable[[RequestUsage], None] | None = None,
        leading: Sequence[EnqueuedMessagesEvent | ModelSettingsDeltaEvent] = (),
        **parts: Any,
    ) -> None:
        """Stream `response` inside the run of `ctx` (how a run makes it).

        pydantic-ai 2.x's keyword form (`AgentStream(_raw_stream_response=..., _run_ctx=..., ...)`, its dataclass
        fields) works too: the run is then made of the given run context, output schema and validators, usage limits,
        tool manager and root capability. A `_metadata_getter` gives `metadata`; the events in the
        `_event_stream_buffer_getter`'s list when the stream is made are taken out of it and come first.

        Raises:
            TypeError: neither form's arguments are all given, or a keyword names nothing of either.
        """
        if parts:
            if response is not None or ctx is not None:
                raise TypeError("AgentStream takes either a response and a run's context, or pydantic-ai's keywords")
            response, ctx, check_tokens, leading = _from_fields(**parts)
            self._max_tokens_getter = _no_max_tokens  # (an instance's: the class's default would be a method)
            self.__dict__.update(parts)  # the fields as given, as 2.x's dataclass keeps them
        elif response is None or ctx is None:
            raise TypeError('AgentStream needs a streamed response and the run context of the graph run')
        else:
            deps = ctx.deps  # the fields, from the run (once per response)
            self._raw_stream_response = response
            self._output_schema = deps.output_schema
            self._model_request_parameters = response.model_request_parameters
            self._output_validators = deps.output_validators
            self._run_ctx = deps.run_context(ctx.state)
            self._carried_workspace_ref = deps.carried_workspace_ref
            self._model_id = deps.model_id
            self._usage_limits = deps.usage_limits
            self._tool_manager = deps.tool_manager
            self._root_capability = deps.root_capability
            self._max_tokens_getter = partial(_last_max_tokens, ctx)  # (a method of its own would be a cycle)
        self._leading = leading
        self._ctx = ctx
        self._check_tokens = check_tokens
        self._initial_usage = deepcopy(ctx.state.usage)
        self._iterator: AsyncIterator[ModelResponseStreamEvent] | None = None
        self._cached_output: Any = _NOTHING
        self._reader = OutputReader(ctx)

    # -- events ---------------------------------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[ModelResponseStreamEvent]:
        if self._iterator is None:
            events = self._raw_stream_response.__aiter__()
            if self._check_tokens is not None:
                events = _TokenCheckedEvents(events, self._raw_stream_response, self._check_tokens)
            if self._leading:  # queued messages the request delivered, a settings change: before the response
                events = _After(self._leading, events)
            self._iterator = events
        return self._iterator

    async def drain(self) -> None:
        """Read the rest of the events, discarding them."""
        async for _ in self:
            pass

    # -- text, output, responses ----------------------------------------------------------------------------------

    async def stream_text(self, *, delta: bool = False, debounce_by: float | None = 0.1) -> AsyncIterator[str]:
        """Stream the response's text: the text so far (after the output validators, with `ctx.partial_output`
        set), or with `delta=True` each new piece (validators not applied). Once `get_output` or
        `stream_output` have the output, it is yielded whole instead.

        Args:
            delta: Yield the new pieces rather than the whole text so far.
            debounce_by: Yield at most once per this many seconds (pieces joined when `delta`); `None`: every chunk.

        Raises:
            UserError: the output is not text (use `stream_output`).
        """
        schema = self._ctx.deps.output_schema
        if not schema.allow_text_output or schema.text_function is not None or schema.tools:
            raise UserError('stream_text() can only be used with text responses')
        if isinstance(self._cached_output, str):
            yield self._cached_output
            return
        pieces = text_pieces(self)
        generators: list[AsyncGenerator[str]] = [pieces]
        if not delta:  # the text so far, through the output validators (a `ModelRetry` from them is raised)
            generators.append(self._reader.texts(pieces, skip_retries=False))
        if debounce_by is not None:
            generators.append(debounce(generators[-1], debounce_by, ''.join if delta else None))
        try:
            async for text in generators[-1]:
                yield text
        finally:
            # a reader that leaves early (or a failing validator) leaves the chain half read: close it outside in
            for generator in reversed(generators):
                await generator.aclose()

    async def stream_output(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[OutputDataT]:
        """Stream the output as it grows: a partial value for each event that changes it (output validators see
        it with `ctx.partial_output` set, a `ModelRetry` from them skips it; a text part that starts empty gives
        an empty text), then the validated output, always last. The partial values are computed incrementally,
        by the reader `StreamedRunResult` uses too.

        Args:
            debounce_by: Yield at most once per this many seconds (the latest value); `None`: every change.
        """
        if self._cached_output is not _NOTHING:
            yield deepcopy(self._cached_output)
            return
        # what other readers took of the response already counts: the partial values start from it
        deferred = self._deferred_partial if self._ctx.deps.output_schema.allows_deferred_tools else None
        partials = self._reader.partial_outputs(self, empty_text=True, received=self.response.parts, deferred=deferred)
        source = partials if debounce_by is None else debounce(partials, debounce_by, None)
        try:
            async for value in source:
                yield value
        finally:
            await source.aclose()
            await partials.aclose()
        if self._raw_stream_response.final_result_event is not None:
            self._cached_output = await self.validate_response_output(self.response)
            yield deepcopy(self._cached_output)

    def _deferred_partial(self) -> Any:
        """The `DeferredToolRequests` of the response so far, if it holds deferred calls and no text or output call
        and its final result event came: else `INVALID`."""
        response = self.response
        if self._raw_stream_response.final_result_event is None or any(
            (isinstance(part, TextPart) and part.content)
            or (isinstance(part, ToolCallPart) and part.tool_name in self._ctx.deps.output_schema.tools)
            for part in response.parts
        ):
            return INVALID
        requests = deferred_requests(response, self._ctx.deps)
        return INVALID if requests is None else requests

    async def stream_response(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[ModelResponse]:
        """Stream snapshots of the response: `state='incomplete'` while it streams, then one last snapshot
        (`'complete'`, or `'interrupted'` after `cancel()`). Content already received comes first."""
        current = self.response
        if current.state == 'incomplete' and any(part.has_content() for part in current.parts):
            yield current
        if debounce_by is None:
            async for _ in self:
                yield self.response
        else:
            grouped = debounce(self.__aiter__(), debounce_by, None)
            try:
                async for _ in grouped:
                    yield self.response
            finally:
                await grouped.aclose()
        yield self.response

    async def stream_responses(self, *, debounce_by: float | None = 0.1) -> AsyncIterator[ModelResponse]:
        """Deprecated spelling of `stream_response` (pydantic-ai 1.107 deprecates it too)."""
        warnings.warn(
            '`AgentStream.stream_responses()` is deprecated: use `stream_response()` (singular), which yields the '
            'same snapshots.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        async for response in self.stream_response(debounce_by=debounce_by):
            yield response

    async def get_output(self) -> OutputDataT:
        """Read the whole response and return the validated output."""
        if self._cached_output is _NOTHING:
            await self.drain()
            self._cached_output = await self.validate_response_output(self.response)
        return deepcopy(self._cached_output)  # type: ignore[no-any-return]

    async def validate_response_output(self, message: ModelResponse, *, allow_partial: bool = False) -> OutputDataT:
        """The output `message` holds (a snapshot from `stream_response`, say), validated; with `allow_partial`
        an unfinished value is accepted and output functions are not called.

        Raises:
            UnexpectedModelBehavior: the response holds no output of the run's output type.
            pydantic.ValidationError: (with `allow_partial`) the output does not validate yet.
        """
        if self._raw_stream_response.final_result_event is None:
            raise UnexpectedModelBehavior('Invalid response, unable to find output')
        output: OutputDataT = await validate_response(self._ctx, message, allow_partial=allow_partial)
        return output

    # -- the response and the run ---------------------------------------------------------------------------------

    @property
    def response(self) -> ModelResponse:
        """The response so far (`state='incomplete'` while it streams)."""
        return self._raw_stream_response.get()

    @property
    def raw_response(self) -> StreamedResponse:
        """The model's streamed response itself."""
        return self._raw_stream_response

    def get(self) -> ModelResponse:
        """The response so far (deprecated: use the `response` property)."""
        warnings.warn(
            '`AgentStream.get` is deprecated; use the `response` property instead.', PydanticAIDeprecationWarning, 2
        )
        return self._raw_stream_response.get()

    @property
    def usage(self) -> CallableRunUsage:
        """The run's usage including this response so far (callable too, the spelling before 1.107)."""
        return CallableRunUsage.of(self._initial_usage + self._raw_stream_response.usage)

    @property
    def timestamp(self) -> CallableDatetime:
        """When the response started (callable too, the spelling before 1.107)."""
        return CallableDatetime.of(self._raw_stream_response.timestamp)

    async def cancel(self) -> None:
        """Stop the response: the model stops generating and the response is kept `'interrupted'`."""
        await self._raw_stream_response.cancel()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._raw_stream_response.cancelled

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._ctx.state.run_id

    @property
    def conversation_id(self) -> str:
        """The conversation's id."""
        return self._ctx.state.conversation_id

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata."""
        if self._metadata_getter is not None:
            return self._metadata_getter()
        return self._ctx.deps.run_context(self._ctx.state).metadata


def _last_max_tokens(ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]]) -> int | None:
    return ctx.state.last_max_tokens


def _from_fields(
    *,
    _raw_stream_response: StreamedResponse,
    _output_schema: OutputSchema,
    _model_request_parameters: ModelRequestParameters,
    _output_validators: Sequence[OutputValidator],
    _run_ctx: RunContext[Any],
    _usage_limits: UsageLimits | None,
    _tool_manager: ToolManager[Any],
    _root_capability: AbstractCapability[Any],
    _carried_workspace_ref: WorkspaceRef | None = None,
    _model_id: str | None = None,
    _metadata_getter: Callable[[], dict[str, Any] | None] | None = None,
    _event_stream_buffer_getter: Callable[[], list[AgentStreamEvent]] = list,
    _max_tokens_getter: Callable[[], int | None] | None = None,
) -> tuple[
    StreamedResponse,
    GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    Callable[[RequestUsage], None] | None,
    list[Any],
]:
    """What an `AgentStream` made with pydantic-ai 2.x's keywords streams in: the run its fields describe."""
    run = _run_ctx
    state = GraphAgentState(
        message_history=run.messages,
        usage=run.usage,
        tool_retries=run.retries,
        run_step=run.run_step,
        metadata=run.metadata,
        last_max_tokens=None if _max_tokens_getter is None else _max_tokens_getter(),
    )
    # A run context made by hand may have no ids: the state's own are made then.
    if run.run_id is not None:
        state.run_id = run.run_id
    if run.conversation_id is not None:
        state.conversation_id = run.conversation_id
    deps: GraphAgentDeps[Any, Any] = GraphAgentDeps(
        user_deps=run.deps,
        prompt=run.prompt,
        new_message_index=0,
        model=run.model,
        model_settings=run.model_settings,
        usage_limits=_usage_limits or UsageLimits(),
        max_result_retries=run.max_retries,
        default_tool_retries=_tool_manager.default_max_retries,
        end_strategy='early',
        output_schema=_output_schema,
        output_validators=list(_output_validators),
        toolset=_tool_manager.toolset,
        instructions=(),
        system_prompts=(),
        agent=run.agent,
        tool_manager=_tool_manager,
        root_capability=_root_capability,
        model_id=_model_id,
        workspace=run.workspace,
        carried_workspace_ref=_carried_workspace_ref,
        validation_context=run.validation_context,
    )
    buffered = _event_stream_buffer_getter()
    leading = list(buffered)
    buffered.clear()  # taken, as 2.x's stream takes the events it delivers
    ctx = GraphRunContext(state=state, deps=deps)
    return _raw_stream_response, ctx, token_check(state, deps), leading


class _TokenCheckedEvents(AsyncIterator[ModelResponseStreamEvent]):
    """A response's events, with the run's token limits checked against the usage so far after each one (only
    when the run has token limits: the usage of a streamed response grows as it arrives)."""

    def __init__(
        self,
        events: AsyncIterator[ModelResponseStreamEvent],
        response: StreamedResponse,
        check_tokens: Callable[[RequestUsage], None],
    ) -> None:
        self._events = events
        self._response = response
        self._check_tokens = check_tokens

    def __aiter__(self) -> _TokenCheckedEvents:
        return self

    async def __anext__(self) -> ModelResponseStreamEvent:
        event = await anext(self._events)
        self._check_tokens(self._response._usage)  # the live usage: no copy per event
        return event


@asynccontextmanager
async def whole_stream(
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    response: ModelResponse,
    leading: Sequence[EnqueuedMessagesEvent | ModelSettingsDeltaEvent] = (),
) -> AsyncIterator[AgentStream[Any, Any]]:
    """An `AgentStream` of a response given whole (a hook's, without the model), read to its end after the block."""
    stream: AgentStream[Any, Any] = AgentStream(
        CompletedStreamedResponse(response, model_request_parameters=ModelRequestParameters()), ctx, None, leading
    )
    yield stream
    await stream.drain()
