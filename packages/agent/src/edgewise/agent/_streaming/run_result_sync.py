"""`StreamedRunResultSync`: what `Agent.run_stream_sync` returns, a streamed run read from synchronous code.

The run goes on through a `SyncStreamBridge` (an event loop of the bridge's own, with the run entered and exited in
one task and each stream read in one task); every method waits for it. The run stops once it ends (a stream read
to its end, or `get_output()`), on `close()`, or as a `with` block around the result ends (pydantic-ai 2.x's
spelling: `with agent.run_stream_sync(...) as result:`).
`get_output()` after a stream was read to its end gives the finished run's output.
"""

from __future__ import annotations as _annotations

import copy
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self

from typing_extensions import TypeVar

from .._run.result import CallableDatetime, CallableRunUsage
from ..messages import ModelMessage, ModelResponse
from .run_result import StreamedRunResult
from .sync_bridge import SyncStreamBridge

if TYPE_CHECKING:
    from ..workspaces import Workspace

__all__ = ('StreamedRunResultSync',)

AgentDepsT = TypeVar('AgentDepsT', default=object, contravariant=True)
OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)
_T = TypeVar('_T')


class StreamedRunResultSync(Generic[AgentDepsT, OutputDataT]):
    """A streamed run read from synchronous code: the methods of `StreamedRunResult`, without `await`."""

    def __init__(
        self,
        run_stream_cm: AbstractAsyncContextManager[StreamedRunResult[AgentDepsT, OutputDataT]]
        | Callable[[], AbstractAsyncContextManager[StreamedRunResult[AgentDepsT, OutputDataT]]],
    ) -> None:
        """Start the run of `run_stream_cm` (the `run_stream()` context manager, or a function making it; the
        parameter's name is pydantic-ai 2.x's).

        Raises:
            TypeError: `run_stream_cm` is an already entered `StreamedRunResult` (what pydantic-ai 1.x took).
            RuntimeError: called inside an event loop: use `run_stream` there.
        """
        run_stream = run_stream_cm
        if isinstance(run_stream, StreamedRunResult):
            raise TypeError(
                '`StreamedRunResultSync` now takes the `run_stream()` context manager rather than an already-entered '
                '`StreamedRunResult`; use `agent.run_stream_sync(...)` to construct it.'
            )
        opened = run_stream if isinstance(run_stream, AbstractAsyncContextManager) else run_stream()
        self._bridge = SyncStreamBridge(opened, async_alternative='`run_stream`')
        self._result = self._bridge.stream

    def _iterate(self, make_aiter: Callable[[], AsyncIterator[_T]]) -> Iterator[_T]:
        try:
            yield from self._bridge.stream_sync(make_aiter)
        finally:
            if self._result.is_complete:
                self.close()

    def stream_text(self, *, delta: bool = False, debounce_by: float | None = 0.1) -> Iterator[str]:
        """The text as it comes: the whole text so far, or (`delta=True`) each new piece."""
        return self._iterate(partial(self._result.stream_text, delta=delta, debounce_by=debounce_by))

    def stream_output(self, *, debounce_by: float | None = 0.1) -> Iterator[OutputDataT]:
        """The output as it is built (partial outputs, then the final one)."""
        return self._iterate(partial(self._result.stream_output, debounce_by=debounce_by))

    def stream_response(self, *, debounce_by: float | None = 0.1) -> Iterator[ModelResponse]:
        """The model's response as it is built (`response.state` is `'incomplete'` until it is whole)."""
        return self._iterate(partial(self._result.stream_response, debounce_by=debounce_by))

    def stream_responses(self, *, debounce_by: float | None = 0.1) -> Iterator[tuple[ModelResponse, bool]]:
        """`stream_response()` as `(response, is_last)` pairs (deprecated in pydantic-ai 1.107, as here)."""
        return self._iterate(partial(self._result.stream_responses, debounce_by=debounce_by))

    def validate_response_output(self, message: ModelResponse, *, allow_partial: bool = False) -> OutputDataT:
        """`StreamedRunResult.validate_response_output`, from synchronous code."""
        output: OutputDataT = self._bridge.call(
            partial(self._result.validate_response_output, message, allow_partial=allow_partial)
        )
        return output

    def get_output(self) -> OutputDataT:
        """Run to the end and return the output (also once a stream was read to its end, which stopped the run's
        event loop: the output is the finished run's)."""
        if self._bridge.closed and self._result.is_complete:  # a copy each time, as `get_output` gives
            output: OutputDataT = copy.deepcopy(self._result.result.output)
            return output
        output = self._bridge.call(self._result.get_output)
        self.close()
        return output

    @property
    def is_complete(self) -> bool:
        """Whether the run has ended with its final result."""
        return self._result.is_complete

    @property
    def run_id(self) -> str:
        """The id of the run."""
        return self._result.run_id

    @property
    def conversation_id(self) -> str:
        """The id of the conversation the run belongs to."""
        return self._result.conversation_id

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata."""
        return self._result.metadata

    @property
    def workspace(self) -> Workspace:
        """The workspace of the run (see `StreamedRunResult.workspace`)."""
        return self._result.workspace

    @property
    def usage(self) -> CallableRunUsage:
        """The usage of the run so far (`result.usage`; calling it, as before pydantic-ai 1.107, still works)."""
        return self._result.usage

    @property
    def timestamp(self) -> CallableDatetime:
        """When the current response started (the last one once the run is over)."""
        return self._result.timestamp

    @property
    def response(self) -> ModelResponse:
        """The current response (see `StreamedRunResult.response`)."""
        return self._result.response

    def all_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """Every message so far, including the message history the run was given."""
        return self._result.all_messages(output_tool_return_content=output_tool_return_content)

    def all_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`all_messages()` as JSON."""
        return self._result.all_messages_json(output_tool_return_content=output_tool_return_content)

    def new_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """The messages of this run so far."""
        return self._result.new_messages(output_tool_return_content=output_tool_return_content)

    def new_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`new_messages()` as JSON."""
        return self._result.new_messages_json(output_tool_return_content=output_tool_return_content)

    def close(self) -> None:
        """Stop the run if it is still going, and the event loop it runs in (at most once)."""
        self._bridge.shutdown()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc_value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f'<StreamedRunResultSync is_complete={self.is_complete}>'
