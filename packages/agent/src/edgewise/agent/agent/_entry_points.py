"""The streaming entry points of `Agent` (`run_stream`, `run_stream_events`, `run_stream_sync`), the keyword
arguments its entry points share, and the static checks of agent graph nodes."""

from __future__ import annotations as _annotations

import inspect
import types
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, Generic, overload

from typing_extensions import TypedDict, TypeIs, TypeVar, Unpack

from edgewise.graph import BaseStatePersistence, End

from .._loop.agent_run import AgentRun
from .._loop.nodes import AgentNode, CallToolsNode, ModelRequestNode, UserPromptNode
from .._output.json_schema import output_json_schema
from .._run.options import AgentInstructions, AgentMetadata, AgentModelSettings, AgentRetries
from .._run.result import FinalResult
from .._streaming.event_stream import AgentEventStream, run_events
from .._streaming.node_loop import EventStreamHandler
from .._streaming.run_result import StreamedRunResult
from .._streaming.run_result_sync import StreamedRunResultSync
from .._threads import using_thread_executor
from .._tools.deferred_calls import DeferredToolResults
from ..capabilities import AgentCapability
from ..messages import ModelMessage, UserContent
from ..models import KnownModelName, Model
from ..output import OutputDataT, OutputSpec
from ..tool_manager import ParallelExecutionMode, ToolManager
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset
from ..usage import RunUsage, UsageLimits
from ._from_spec import AgentSpec
from ._registration import AgentRegistry

__all__ = ('AgentStreaming', 'IterOptions', 'RunOptions')

RunOutputDataT = TypeVar('RunOutputDataT')
_T = TypeVar('_T')
_S = TypeVar('_S')


class IterOptions(TypedDict, Generic[AgentDepsT], total=False):
    """The keyword arguments of `iter` after `output_type`, shared by the typed overloads of `iter`, `run_stream`
    and `run_stream_events` (which differ only in `output_type`, the type of the result)."""

    message_history: Sequence[ModelMessage] | None
    conversation_id: str | None
    run_id: str | None
    model: Model | KnownModelName | None
    instructions: AgentInstructions
    deps: AgentDepsT
    model_settings: AgentModelSettings | None
    usage_limits: UsageLimits | None
    usage: RunUsage | None
    metadata: AgentMetadata | None
    retries: int | AgentRetries | None
    infer_name: bool
    capabilities: Sequence[AgentCapability[AgentDepsT]] | None
    persistence: BaseStatePersistence[Any, Any] | None
    toolsets: Sequence[AbstractToolset[AgentDepsT]] | None
    deferred_tool_results: DeferredToolResults | None
    spec: dict[str, Any] | AgentSpec | None


class RunOptions(IterOptions[AgentDepsT], total=False):
    """The keyword arguments of `run` and `run_sync` after `output_type`: those of `iter` and a handler of events."""

    event_stream_handler: EventStreamHandler | None


class AgentStreaming(AgentRegistry[AgentDepsT, OutputDataT]):
    """The entry points of `Agent` built on its `iter`: streamed runs, and checks of the nodes `iter` gives."""

    _name: str | None
    _overrides: ContextVar[dict[str, Any]]
    _output_type: OutputSpec[OutputDataT]
    _event_stream_handler: EventStreamHandler | None

    using_thread_executor = staticmethod(using_thread_executor)

    @property
    def output_type(self) -> OutputSpec[OutputDataT]:
        """The output type the agent was built with."""
        return self._output_type

    @property
    def name(self) -> str | None:
        """The agent's name, used in spans and by `as_tool` (inferred from the variable holding it if unset)."""
        return self._overrides.get().get('name', self._name)

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value

    def _open_run(
        self, user_prompt: str | Sequence[UserContent] | None, kwargs: dict[str, Any]
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, Any]]:
        """`self.iter(user_prompt, infer_name=False, **kwargs)`."""
        raise NotImplementedError

    def _infer_name(self, frame: types.FrameType | None) -> None:
        """Name the agent after the variable holding it in the caller of `frame`, when it has no name."""
        if self.name is not None or frame is None or (caller := frame.f_back) is None:
            return
        for name, value in caller.f_locals.items():
            if value is self:
                self.name = name
                return
        for name, value in caller.f_globals.items():
            if value is self:
                self.name = name
                return

    @overload
    def run_stream(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[StreamedRunResult[OutputDataT]]: ...

    @overload
    def run_stream(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[StreamedRunResult[RunOutputDataT]]: ...

    @asynccontextmanager
    async def run_stream(
        self, user_prompt: str | Sequence[UserContent] | None = None, **kwargs: Any
    ) -> AsyncIterator[StreamedRunResult[Any]]:
        """Run the agent with streamed model responses: `async with agent.run_stream(prompt) as result:`.

        The block is entered once the response that starts the final result streams (as in pydantic-ai): the
        tools of the responses before it have run by then. Read `result.stream_text()`, `result.stream_output()`
        or `result.stream_response()` as the run goes on; tools called along the way (even after text, or after
        the output tool call) run as in `run`, and the stream goes on until the run's final result. Leaving the
        block early stops the run. Takes the same arguments as `run`; an `event_stream_handler` gets each
        streamed node's events once that node's
        stream has been read (reading the result drives the run).
        """
        if kwargs.pop('infer_name', True):
            frame = inspect.currentframe()
            # Skip the frame of `asynccontextmanager` between `run_stream(...)` and its caller.
            self._infer_name(frame.f_back if frame is not None else None)
        handler = kwargs.pop('event_stream_handler', None) or self._event_stream_handler
        async with self._open_run(user_prompt, kwargs) as agent_run:
            result: StreamedRunResult[Any] = StreamedRunResult(agent_run, handler)
            try:
                await result.start()
                yield result
            finally:
                await result.aclose()

    @overload
    def run_stream_events(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> AgentEventStream[OutputDataT]: ...

    @overload
    def run_stream_events(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> AgentEventStream[RunOutputDataT]: ...

    def run_stream_events(
        self, user_prompt: str | Sequence[UserContent] | None = None, **kwargs: Any
    ) -> AgentEventStream[Any]:
        """Every event of a run, ending with an `AgentRunResultEvent` holding the result.

        Use `async with agent.run_stream_events(prompt) as events: async for event in events: ...` (iterating
        it without `async with` is deprecated). Takes the same arguments as `run` except `event_stream_handler`.
        """
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        return AgentEventStream(run_events(self._open_run(user_prompt, kwargs)))

    @overload
    def run_stream_sync(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> StreamedRunResultSync[OutputDataT]: ...

    @overload
    def run_stream_sync(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> StreamedRunResultSync[RunOutputDataT]: ...

    def run_stream_sync(
        self, user_prompt: str | Sequence[UserContent] | None = None, **kwargs: Any
    ) -> StreamedRunResultSync[Any]:
        """`run_stream` from synchronous code: the run goes on in an event loop in a thread, and the result's
        streams are plain iterators (not for use inside an event loop). Same arguments as `run_stream`."""
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        return StreamedRunResultSync(partial(self.run_stream, user_prompt, infer_name=False, **kwargs))

    def output_json_schema(self, output_type: OutputSpec[Any] | None = None) -> dict[str, Any]:
        """The JSON schema of the agent's output values (of `output_type` if given): what a caller of the
        agent gets back, e.g. to describe it to another system."""
        return output_json_schema(self.output_type if output_type is None else output_type)

    @staticmethod
    def is_user_prompt_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[UserPromptNode[_T, _S]]:
        """Whether `node` is a `UserPromptNode` (narrowing its type, generic parameters kept)."""
        return isinstance(node, UserPromptNode)

    @staticmethod
    def is_model_request_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[ModelRequestNode[_T, _S]]:
        """Whether `node` is a `ModelRequestNode` (narrowing its type, generic parameters kept)."""
        return isinstance(node, ModelRequestNode)

    @staticmethod
    def is_call_tools_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[CallToolsNode[_T, _S]]:
        """Whether `node` is a `CallToolsNode` (narrowing its type, generic parameters kept)."""
        return isinstance(node, CallToolsNode)

    @staticmethod
    @contextmanager
    def parallel_tool_call_execution_mode(mode: ParallelExecutionMode = 'parallel') -> Iterator[None]:
        """Inside the block, the tool calls of every run go as `mode` says (`'sequential'`: one at a time)."""
        with ToolManager.parallel_execution_mode(mode):
            yield

    @staticmethod
    def is_end_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[End[FinalResult[_S]]]:
        """Whether `node` is the `End` of the run (narrowing its type, generic parameters kept)."""
        return isinstance(node, End)
