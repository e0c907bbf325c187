"""`StreamedResponse`: a model response arriving as events, and its complete `ModelResponse` at the end
(re-exported by `models`)."""

from __future__ import annotations as _annotations

import copy
import dataclasses
import functools
import warnings
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import anyio

from .._message_flow.events import FinalResultEvent, ModelResponseStreamEvent, PartEndEvent, PartStartEvent
from .._message_flow.streamed_parts import PartsManager
from .._messages.attempts import ModelRequestAttempt
from .._messages.content import BinaryImage
from .._messages.continuation_pin import FALLBACK_MODEL_PIN_KEY, with_framework_marks
from .._messages.model_messages import (
    FilePart,
    FinishReason,
    ModelResponse,
    ModelResponseState,
    TextPart,
    ToolCallPart,
)
from .._messages.usage_counts import RequestUsage
from .._warnings import PydanticAIDeprecationWarning
from ._request_parameters import ModelRequestParameters
from ._special_tokens import restore_special_tokens_in_response

if TYPE_CHECKING:
    from ._deadline import RequestDeadline

__all__ = ('StreamedResponse',)


class CallableRequestUsage(RequestUsage):
    """A `RequestUsage` that can also be called, as `StreamedResponse.usage()` was before pydantic-ai 2.x made it a
    property: the call warns and returns the usage."""

    @classmethod
    def of(cls, usage: RequestUsage) -> CallableRequestUsage:
        """A callable copy of `usage`."""
        callable_usage = cls.__new__(cls)
        callable_usage.__dict__.update(usage.__dict__)
        return callable_usage

    def __call__(self) -> RequestUsage:
        warnings.warn(
            '`StreamedResponse.usage` is a property since pydantic-ai 2.x: drop the parentheses.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RequestUsage):
            return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(RequestUsage))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return 'Request' + RequestUsage.__repr__(self).removeprefix('CallableRequest')


@dataclasses.dataclass(eq=False, repr=False)
class StreamedResponse(ABC):
    """A streamed model response: `async for event in response`, then `get()` for the whole `ModelResponse`.

    Subclasses implement `_get_event_iterator`, feeding deltas to `self._parts_manager` and yielding the
    events it returns, and keep `self._usage` up to date. The iterator adds `PartEndEvent`s and, at the first
    candidate for the final result (the start of a text part when text is an acceptable output, a call of an
    output tool, a call of a deferred tool, or an image when an image is an acceptable output), a
    `FinalResultEvent`, as pydantic-ai's does.

    It is a dataclass whose only init field is `model_request_parameters`, as in pydantic-ai: a subclass can be a
    `@dataclass` adding its own fields after it (`MyStream(params, ...)`), or call `super().__init__(params)`.
    """

    model_request_parameters: ModelRequestParameters
    """The request's tools and output kind."""
    final_result_event: FinalResultEvent | None = dataclasses.field(default=None, init=False)
    """The `FinalResultEvent` once one was emitted."""
    provider_response_id: str | None = dataclasses.field(default=None, init=False)
    """The provider's id of the response."""
    finish_reason: FinishReason | None = dataclasses.field(default=None, init=False)
    """Why the model stopped, once it has."""
    provider_details: dict[str, Any] | None = dataclasses.field(default=None, init=False)
    """The provider's own details of the response (its raw finish reason...), given to the `ModelResponse`."""
    canonical_system: str | None = dataclasses.field(default=None, init=False)
    """The `ModelResponse.canonical_system` of the response (set by the model that streams it)."""
    state: ModelResponseState = dataclasses.field(default='complete', init=False)
    """What the model says of the response's state: a model whose provider paused the turn sets `'suspended'`, which
    `get()` then reports (the run asks the model to continue the turn); `get()` works the other states out itself."""
    failed_attempts: list[ModelRequestAttempt] | None = dataclasses.field(default=None, init=False)
    """The attempts at the request that failed before this stream opened (see `ModelResponse.failed_attempts`)."""
    # The state of the stream, set up for every subclass without an `__init__` or `__post_init__` of the base to
    # call (a `@dataclass` subclass's generated `__init__` calls neither).
    _usage: RequestUsage = dataclasses.field(default_factory=RequestUsage, init=False)
    _events: AsyncIterator[ModelResponseStreamEvent] | None = dataclasses.field(default=None, init=False)
    _complete: bool = dataclasses.field(default=False, init=False)
    _cancelled: bool = dataclasses.field(default=False, init=False)
    _request_deadline: RequestDeadline | None = dataclasses.field(default=None, init=False)
    """The `request_timeout` / `first_event_timeout` deadline each pull of the next event runs under, if set."""
    _restores_special_tokens: bool = dataclasses.field(default=False, init=False, repr=False)
    """Set (by a provider model whose profile has `may_tokenize_special_tokens_in_content`): `get()`
    removes the joiner from the special tokens of the response's text and tool call arguments. The events keep it."""
    _framework_marks: dict[str, Any] | None = dataclasses.field(default=None, init=False, repr=False)
    """Set by a `FallbackModel`: marks `get()` puts under the response's `metadata['__pydantic_ai__']`."""
    _continuation_pin: str | None = dataclasses.field(default=None, init=False, repr=False)
    """Set by a `FallbackModel`: the `model_id` of its model streaming, which `get()` pins a suspended response to."""

    def __post_init__(self) -> None:
        # Not a field: a `@dataclass` subclass may declare its own `_timestamp` field, with a default, after
        # fields without one (pydantic-ai's models do), which a field of the base would put out of order.
        if '_timestamp' not in self.__dict__:
            self._timestamp = datetime.now(tz=timezone.utc)

    @functools.cached_property
    def _parts_manager(self) -> PartsManager:
        """What turns the model's deltas into parts and events (made on first use, for the request's tools)."""
        return PartsManager(self.model_request_parameters)

    @abstractmethod
    def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        """The model's events, as the parts manager produced them."""
        raise NotImplementedError

    def __aiter__(self) -> AsyncIterator[ModelResponseStreamEvent]:
        if self._events is None:
            self._events = self._iterate()
        return self._events

    async def _iterate(self) -> AsyncIterator[ModelResponseStreamEvent]:
        params = self.model_request_parameters
        text_is_output = params.allow_text_output or params.output_mode in ('native', 'prompted')
        image_is_output = params.allow_image_output
        # The tools whose call is a final result: output tools, and deferred tools (their requests are the output).
        final_tools = {t.name: t.kind == 'output' for t in params.tool_defs.values() if t.kind == 'output' or t.defer}
        manager = self._parts_manager
        last_start: PartStartEvent | None = None
        inner = self._get_event_iterator()
        deadline = self._request_deadline
        try:
            async for event in inner if deadline is None else deadline.iterate(inner):
                if isinstance(event, PartStartEvent):
                    if last_start is not None:
                        event.previous_part_kind = last_start.part.part_kind
                        yield PartEndEvent(index=last_start.index, part=manager.get_part(last_start.index),
                                           next_part_kind=event.part.part_kind)  # fmt: skip
                    last_start = event
                yield event
                if self.final_result_event is not None:
                    continue
                final: FinalResultEvent | None = None
                if isinstance(event, PartStartEvent):
                    part = event.part
                    if isinstance(part, TextPart) and text_is_output:
                        final = FinalResultEvent(tool_name=None, tool_call_id=None)
                    elif isinstance(part, ToolCallPart) and (is_output := final_tools.get(part.tool_name)) is not None:
                        final = (
                            FinalResultEvent(tool_name=part.tool_name, tool_call_id=part.tool_call_id)
                            if is_output
                            else FinalResultEvent(tool_name=None, tool_call_id=None)
                        )
                    elif image_is_output and isinstance(part, FilePart) and isinstance(part.content, BinaryImage):
                        final = FinalResultEvent(tool_name=None, tool_call_id=None)
                if final is not None:
                    self.final_result_event = final
                    yield final
        finally:
            # Close the model's own iterator now, not when the garbage collector finds it (the HTTP response).
            with anyio.CancelScope(shield=True):
                await inner.aclose()  # type: ignore[attr-defined]
        if last_start is not None:
            yield PartEndEvent(index=last_start.index, part=manager.get_part(last_start.index))
        self._complete = True

    @property
    def complete(self) -> bool:
        """Whether the model finished its response (every event was read)."""
        return self._complete

    def get(self) -> ModelResponse:
        """The response received so far as a `ModelResponse` (the whole response once the stream is done).

        Its `state` is `'incomplete'` until every event was read, `'interrupted'` after `cancel()`, and `'suspended'`
        whenever the model set `state` so.
        """
        response = self._marked(self._get())
        return restore_special_tokens_in_response(response) if self._restores_special_tokens else response

    def _get(self) -> ModelResponse:
        state: ModelResponseState = (
            'suspended'
            if self.state == 'suspended'
            else 'interrupted'
            if self._cancelled
            else 'complete'
            if self._complete
            else 'incomplete'
        )
        return ModelResponse(
            parts=self._parts_manager.get_parts(),
            usage=copy.copy(self._usage),  # a snapshot: the stream's own usage goes on growing
            model_name=self.model_name,
            timestamp=self.timestamp,
            provider_name=self.provider_name,
            provider_url=self.provider_url,
            canonical_system=self.canonical_system,
            provider_response_id=self.provider_response_id,
            finish_reason=self.finish_reason,
            provider_details=dict(self.provider_details) if self.provider_details else None,
            failed_attempts=list(self.failed_attempts) if self.failed_attempts else None,
            state=state,
        )

    def _marked(self, response: ModelResponse) -> ModelResponse:
        """`response` with the marks a `FallbackModel` set on the stream (`_framework_marks`, and its pin when the
        response is suspended) in its metadata."""
        marks = dict(self._framework_marks or {})
        if response.state == 'suspended' and self._continuation_pin is not None:
            marks[FALLBACK_MODEL_PIN_KEY] = self._continuation_pin
        if not marks:
            return response
        return dataclasses.replace(response, metadata=with_framework_marks(response.metadata, **marks))

    @property
    def usage(self) -> RequestUsage:
        """The usage so far (final once the stream is done); a property, as in pydantic-ai 2.x.

        Calling it (`response.usage()`, the 1.x spelling) still works and warns.
        """
        return CallableRequestUsage.of(self._usage)

    @property
    def timestamp(self) -> datetime:
        """When the response started."""
        # (Set here too for a subclass whose own `__post_init__` does not call the base's.)
        stamp: datetime = self.__dict__.setdefault('_timestamp', datetime.now(tz=timezone.utc))
        return stamp

    @property
    @abstractmethod
    def model_name(self) -> str:
        """The name of the model that answers."""
        raise NotImplementedError

    @property
    def provider_name(self) -> str | None:
        """The provider that answers, if any."""
        return None

    @property
    def provider_url(self) -> str | None:
        """The base URL of the provider that answers, if any."""
        return None

    async def cancel(self) -> None:
        """Stop the stream on purpose: the model stops generating, and `get()` says `state='interrupted'`.

        A second call, or a call once the stream is done, only sets `cancelled`.
        """
        if not self._cancelled:
            self._cancelled = True
            await self.close()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._cancelled

    async def close(self) -> None:
        """Stop the stream and release its resources (the HTTP response, for provider models)."""
        if self._events is not None:
            await self._events.aclose()  # type: ignore[attr-defined]
