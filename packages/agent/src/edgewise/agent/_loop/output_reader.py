"""`OutputReader`: the text and the partial output of streamed model responses, read from their events as they
arrive. The one reader behind `AgentStream` (one response) and `StreamedRunResult` (each response of a run).

Partial output is computed incrementally: each output part (the call of an output tool, the JSON text of native
or prompted output, or text) feeds its chunks to a parser that keeps its state, so a chunk costs its own size,
not the size of the response so far; a partial value is built and validated only when the chunk changed it.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable, Container, Sequence
from typing import Any

import pydantic_core

from edgewise.graph import GraphRunContext

from .._output.envelope import EnvelopeBuilder
from .._output.partial_json import IncrementalJsonParser, PartialJsonError
from .._output.partial_output import INVALID, PartialOutputBuilder
from .._output.schema import OutputProcessor
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..exceptions import ModelRetry
from ..messages import FinalResultEvent, ModelResponsePart, PartDeltaEvent, PartStartEvent, TextPart, ToolCallPart
from ..tools import RunContext
from .output_hooks import OUTPUT_HOOKS, output_context, process_with_hooks, validate_with_hooks

__all__ = ('INVALID', 'OutputReader', 'text_pieces')


def _first_response() -> int:
    return 0


async def text_pieces(events: AsyncIterable[Any]) -> AsyncGenerator[str]:
    """The pieces of text of the events' text parts, as they arrive (empty pieces left out)."""
    async for event in events:
        if isinstance(event, PartStartEvent):
            if isinstance(event.part, TextPart) and event.part.content:
                yield event.part.content
        elif isinstance(event, PartDeltaEvent) and event.delta.part_delta_kind == 'text' and event.delta.content_delta:
            yield event.delta.content_delta


class _AfterParts:
    """A start event for each of `parts` (at its index), then `events`: an iterator rather than a generator, so
    that a reader leaving early leaves nothing unfinished behind."""

    def __init__(self, parts: Sequence[ModelResponsePart], events: AsyncIterable[Any]) -> None:
        self._starts = [PartStartEvent(index=index, part=part) for index, part in enumerate(parts)]
        self._starts.reverse()
        self._events = aiter(events)

    def __aiter__(self) -> _AfterParts:
        return self

    async def __anext__(self) -> Any:
        if self._starts:
            return self._starts.pop()
        return await anext(self._events)


def _grows_other_call(event: Any, output_tools: Container[str], others: set[int]) -> bool:
    """Whether `event` is a final result event, or starts or adds to a call of a tool other than an output tool
    (whose index it then adds to `others`)."""
    if isinstance(event, FinalResultEvent):
        return event.tool_name is None
    if isinstance(event, PartStartEvent):
        if isinstance(event.part, ToolCallPart) and event.part.tool_name not in output_tools:
            others.add(event.index)
            return True
        others.discard(event.index)
        return False
    return isinstance(event, PartDeltaEvent) and event.index in others


class OutputReader:
    """Reads text and partial output from the events of a run's streamed responses (`run`: the run's graph
    context). `response` tells which response an event belongs to (a count that changes when a new one starts):
    the text and the partial output start over with each response."""

    def __init__(
        self,
        run: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
        response: Callable[[], int] = _first_response,
    ) -> None:
        self._run = run
        self._response = response

    async def texts(self, pieces: AsyncIterable[str], *, skip_retries: bool = True) -> AsyncGenerator[str]:
        """The text of the current response so far, after each piece; with output validators, what they make of
        it (`ctx.partial_output` set).

        Args:
            pieces: The pieces of text (`text_pieces`).
            skip_retries: Leave out a text for which a validator raises `ModelRetry` (else it is raised).
        """
        text = ''
        response = self._response()
        validate = bool(self._run.deps.output_validators)
        async for piece in pieces:
            if self._response() != response:
                response, text = self._response(), ''
            text += piece
            if not validate:
                yield text
            elif not skip_retries:
                yield await self._validated(text)
            elif (value := await self.validate_partial(text)) is not INVALID:
                yield value

    async def partial_outputs(
        self,
        events: AsyncIterable[Any],
        *,
        empty_text: bool = False,
        received: Sequence[ModelResponsePart] = (),
        deferred: Callable[[], Any] | None = None,
    ) -> AsyncGenerator[Any]:
        """A validated partial value of the output for each event (of the run's, or of one response's) that
        changes it (output validators see it
        with `ctx.partial_output` set; a `ModelRetry` from them, or from an output function, skips it).

        Args:
            events: The events to read.
            empty_text: A text output part that starts empty gives an empty text at its start (what one
                response's stream, `AgentStream`, yields there); without it the first text is the first piece.
            received: The parts of the response received before `events` (read by another reader): read first,
                as if each had just started with its content so far (an empty one gives nothing), so that the
                deltas that follow add to them.
            deferred: The partial `DeferredToolRequests` of the response so far (or `INVALID`), asked at a final
                result event and whenever a call of a tool other than an output tool starts or grows; a value is
                yielded when it differs from the last one.
        """
        schema = self._run.deps.output_schema
        text_output = schema.allow_text_output
        json_text = schema.mode in ('native', 'prompted')
        parsers: dict[int, _PartialParser] = {}
        hooked = bool(self._run.deps.hooked & OUTPUT_HOOKS)  # partial values go through the output hooks too
        raws: dict[int, tuple[OutputProcessor, str]] = {}  # the answer so far of each parsed part (when `hooked`)
        texts: dict[int, str] = {}
        calls: dict[int, _FunctionArgs] = {}  # output function calls: their arguments so far
        others: set[int] = set()  # the indices of calls of tools other than output tools (for `deferred`)
        last_deferred: Any = INVALID
        response = self._response()
        replays = len(received)  # the first events read are the received parts, replayed
        async for event in _AfterParts(received, events):
            replays -= 1
            if self._response() != response:
                response = self._response()
                parsers.clear()
                texts.clear()
                calls.clear()
                others.clear()
            if deferred is not None and _grows_other_call(event, schema.tools, others):
                value = deferred()
                if value is not INVALID and value != last_deferred:
                    last_deferred = value
                    yield value
                continue
            chunk: Any = None
            if isinstance(event, PartStartEvent):
                index, part = event.index, event.part
                entry = None
                if isinstance(part, ToolCallPart) and part.tool_name in schema.tools:
                    processor = schema.tools[part.tool_name]
                    entry = _partial_parser(processor)
                    if processor.calls_function:
                        calls[index] = _FunctionArgs(processor)
                    chunk = part.args
                elif isinstance(part, TextPart) and json_text and schema.object_processor is not None:
                    processor = schema.object_processor
                    if processor.calls_function:  # native or prompted output through an output function
                        calls[index] = _FunctionArgs(processor)
                    else:
                        entry = _partial_parser(processor)
                    chunk = part.content
                elif isinstance(part, TextPart) and text_output:
                    texts[index] = ''
                    chunk = part.content
                if entry is not None:
                    parsers[index] = entry
                    raws[index] = (processor, '')
            elif isinstance(event, PartDeltaEvent):
                index, delta = event.index, event.delta
                if delta.part_delta_kind == 'text':
                    chunk = delta.content_delta
                elif delta.part_delta_kind == 'tool_call':
                    chunk = delta.args_delta
            if chunk is None:
                continue
            if index in texts:
                texts[index] = text = texts[index] + chunk
                if not text and not (empty_text and replays < 0 and isinstance(event, PartStartEvent)):
                    continue  # an empty piece changes nothing; an empty start only counts for `empty_text`
                value = await self._partial_function_output(schema.process_text, text)
                if value is not INVALID:
                    value = await self.validate_partial(value)
                if value is not INVALID:
                    yield value
                continue
            if (args := calls.get(index)) is not None:
                value = await args.feed(chunk, self._partial_function_output)
                if value is not INVALID:
                    value = await self.validate_partial(value)
                if value is not INVALID:
                    yield value
                continue
            entry = parsers.get(index)
            if entry is None:
                continue
            parser, builder, unwrap = entry
            before = (builder.changes, parser.partial_string)
            text = chunk if isinstance(chunk, str) else _to_json(chunk)
            try:
                parser.feed(text)
            except PartialJsonError:
                del parsers[index]  # not JSON: the final validation will tell the model
                continue
            if hooked:
                raws[index] = raws[index][0], raws[index][1] + text
            if (builder.changes, parser.partial_string) == before:
                continue
            previous = builder.signature
            value = builder.value(parser)
            if value is INVALID or builder.signature == previous:
                continue
            value = unwrap(value)
            if hooked:
                value = await self._through_hooks(*raws[index], value)
            if value is not INVALID:
                value = await self.validate_partial(value)
            if value is not INVALID:
                yield value

    async def _through_hooks(self, processor: OutputProcessor, raw: str, value: Any) -> Any:
        """A partial `value` (of the answer `raw` so far) through the output hooks, with `ctx.partial_output` set:
        the validate hooks (a hook that changes the raw answer has it validated partially), then the process hooks;
        `INVALID` when a hook rejects it."""
        deps = self._run.deps
        ctx = self._partial_context()
        context = output_context(deps.output_schema, processor)

        async def validate(data: Any) -> Any:
            return value if data is raw else processor.validate(data, ctx.validation_context, allow_partial=True)

        async def process(found: Any) -> Any:
            return found

        try:
            found = await validate_with_hooks(deps.root_capability, ctx, context, raw, validate, allow_partial=True)
            return await process_with_hooks(deps.root_capability, ctx, context, found, process)
        except (ValueError, ModelRetry):  # `ValidationError` too: not a value yet
            return INVALID

    def _partial_context(self) -> RunContext[Any]:
        run = self._run
        return run.deps.run_context(run.state).replace_with(partial_output=True)

    async def _partial_function_output(
        self, function: Callable[[Any, RunContext[Any]], Awaitable[Any]], value: Any
    ) -> Any:
        """What an output function (or `TextOutput` function) makes of a partial value, called with
        `ctx.partial_output` set as pydantic-ai 1.107 does; `INVALID` when it raises `ModelRetry`."""
        try:
            return await function(value, self._partial_context())
        except ModelRetry:
            return INVALID

    async def validate_partial(self, value: Any) -> Any:
        """`value` through the output validators (`ctx.partial_output` set); `INVALID` if one raises `ModelRetry`."""
        try:
            return await self._validated(value)
        except ModelRetry:
            return INVALID

    async def _validated(self, value: Any) -> Any:
        validators = self._run.deps.output_validators
        if not validators:
            return value
        ctx = self._partial_context()
        for validator in validators:
            value = await validator.validate(value, ctx)
        return value


def _to_json(value: Any) -> str:
    return pydantic_core.to_json(value).decode()


_PartialParser = tuple[IncrementalJsonParser, PartialOutputBuilder | EnvelopeBuilder, Callable[[Any], Any]]


def _partial_parser(processor: OutputProcessor) -> _PartialParser | None:
    """A parser and builder of partial values for the processor's answers; `None` for output functions."""
    made = processor.partial_builder()
    if made is None:
        return None
    builder, unwrap = made
    return IncrementalJsonParser(builder), builder, unwrap


class _FunctionArgs:
    """The arguments of an output function call (or the JSON text of native or prompted output that may go
    through one) as they stream: validated whole (partially) on each chunk, as pydantic-ai does, and passed to
    the function when they changed."""

    def __init__(self, processor: OutputProcessor) -> None:
        self._processor = processor
        self._text = ''
        self._last: Any = INVALID

    async def feed(self, chunk: str | dict[str, Any], call: Callable[..., Awaitable[Any]]) -> Any:
        if isinstance(chunk, dict):
            self._text = _to_json(chunk)
        else:
            self._text += chunk
        try:
            args = self._processor.validate(self._text, allow_partial=True)
        except ValueError:  # `ValidationError` too: not enough of the arguments yet
            return INVALID
        if args == self._last:
            return INVALID
        self._last = args
        return await call(self._processor.finish, args)
