"""`WrapperAgent`: an agent that hands everything to another agent (re-exported by `agent`).

Subclass it to change one entry point: the run entry points (`run`, `run_sync`, `run_stream`,
`run_stream_sync`, `run_stream_events`) are built on `self.iter`, so overriding `iter` changes them all.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager, contextmanager
from functools import partial
from types import TracebackType
from typing import Any, Protocol, Self

from .._loop.agent_run import AgentRun
from .._run.result import AgentRunResult
from .._streaming.event_stream import AgentEventStream, run_events
from .._streaming.node_loop import EventStreamHandler, run_for_result
from .._streaming.run_result import StreamedRunResult
from .._streaming.run_result_sync import StreamedRunResultSync
from .._threads import run_in_new_loop, using_thread_executor
from ..capabilities import CombinedCapability
from ..messages import SystemPromptPart, UserContent
from ..models import KnownModelName, Model
from ..output import OutputDataT, OutputSpec
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset
from ._options import (
    is_call_tools_node,
    is_end_node,
    is_model_request_node,
    is_user_prompt_node,
    parallel_tool_call_execution_mode,
)
from .abstract import AbstractAgent

__all__ = ('WrapperAgent',)

_Prompt = str | Sequence[UserContent] | None


class _Agent(Protocol):
    """What `WrapperAgent` needs of the agent it wraps (an `Agent`, or another `WrapperAgent`)."""

    model: Model | KnownModelName | None
    description: str | None

    @property
    def name(self) -> str | None: ...
    @name.setter
    def name(self, value: str | None) -> None: ...
    @property
    def deps_type(self) -> type[Any]: ...
    @property
    def output_type(self) -> OutputSpec[Any]: ...
    @property
    def toolsets(self) -> Sequence[AbstractToolset[Any]]: ...
    @property
    def root_capability(self) -> CombinedCapability[Any]: ...
    @property
    def event_stream_handler(self) -> EventStreamHandler | None: ...
    # Properties, not methods: `Agent`'s overloaded `iter` and keyword-only `override` match these.
    @property
    def iter(self) -> Callable[..., AbstractAsyncContextManager[AgentRun[Any, Any]]]: ...
    @property
    def override(self) -> Callable[..., AbstractContextManager[None]]: ...
    def output_json_schema(self, output_type: OutputSpec[Any] | None = None) -> dict[str, Any]: ...
    @property
    def system_prompt_parts(self) -> Callable[..., Awaitable[list[SystemPromptPart]]]: ...
    async def __aenter__(self) -> Any: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Any: ...


class WrapperAgent(AbstractAgent[AgentDepsT, OutputDataT]):
    """An agent that hands every call to `wrapped` (see the module docstring)."""

    wrapped: _Agent
    """The agent calls go to."""

    is_user_prompt_node = staticmethod(is_user_prompt_node)
    is_model_request_node = staticmethod(is_model_request_node)
    is_call_tools_node = staticmethod(is_call_tools_node)
    is_end_node = staticmethod(is_end_node)
    using_thread_executor = staticmethod(using_thread_executor)
    parallel_tool_call_execution_mode = staticmethod(parallel_tool_call_execution_mode)

    def __init__(self, wrapped: _Agent) -> None:
        self.wrapped = wrapped

    @property
    def model(self) -> Model | KnownModelName | None:
        """The wrapped agent's model."""
        return self.wrapped.model

    @property
    def name(self) -> str | None:
        """The wrapped agent's name (setting it names the wrapped agent)."""
        return self.wrapped.name

    @name.setter
    def name(self, value: str | None) -> None:
        self.wrapped.name = value

    @property
    def description(self) -> str | None:
        """The wrapped agent's description (setting it sets the wrapped agent's)."""
        return self.wrapped.description

    @description.setter
    def description(self, value: str | None) -> None:
        self.wrapped.description = value

    @property
    def deps_type(self) -> type[AgentDepsT]:
        """The wrapped agent's deps type."""
        return self.wrapped.deps_type

    @property
    def output_type(self) -> OutputSpec[OutputDataT]:
        """The wrapped agent's output type."""
        return self.wrapped.output_type

    @property
    def toolsets(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        """The wrapped agent's toolsets."""
        return self.wrapped.toolsets

    @property
    def event_stream_handler(self) -> EventStreamHandler | None:
        """The wrapped agent's default event stream handler."""
        return self.wrapped.event_stream_handler

    @property
    def root_capability(self) -> CombinedCapability[AgentDepsT]:
        """The wrapped agent's capabilities, as one."""
        return self.wrapped.root_capability

    async def __aenter__(self) -> Self:
        """Enter the wrapped agent (its toolsets and model stay open until the matching exit)."""
        await self.wrapped.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Exit the wrapped agent."""
        await self.wrapped.__aexit__(exc_type, exc, tb)

    def output_json_schema(self, output_type: OutputSpec[Any] | None = None) -> dict[str, Any]:
        """The wrapped agent's output JSON schema."""
        return self.wrapped.output_json_schema(output_type)

    async def system_prompt_parts(self, **kwargs: Any) -> list[SystemPromptPart]:
        """The wrapped agent's system prompt parts (same arguments)."""
        return await self.wrapped.system_prompt_parts(**kwargs)

    @asynccontextmanager
    async def iter(self, user_prompt: _Prompt = None, **kwargs: Any) -> AsyncIterator[AgentRun[AgentDepsT, Any]]:
        """The wrapped agent's `iter` (same arguments)."""
        kwargs.setdefault('infer_name', False)
        async with self.wrapped.iter(user_prompt, **kwargs) as agent_run:
            yield agent_run

    @contextmanager
    def override(self, **kwargs: Any) -> Iterator[None]:
        """The wrapped agent's `override` (same arguments)."""
        with self.wrapped.override(**kwargs):
            yield

    async def run(
        self, user_prompt: _Prompt = None, *, event_stream_handler: EventStreamHandler | None = None, **kwargs: Any
    ) -> AgentRunResult[Any]:
        """Run through `self.iter` until the output, as `Agent.run` (same arguments)."""
        self._infer_name(kwargs)
        return await run_for_result(self.iter(user_prompt, **kwargs), event_stream_handler or self.event_stream_handler)

    def run_sync(self, user_prompt: _Prompt = None, **kwargs: Any) -> AgentRunResult[Any]:
        """`run` from synchronous code, as `Agent.run_sync`."""
        self._infer_name(kwargs)
        return run_in_new_loop(partial(self.run, user_prompt, infer_name=False, **kwargs))

    @asynccontextmanager
    async def run_stream(self, user_prompt: _Prompt = None, **kwargs: Any) -> AsyncIterator[StreamedRunResult[Any]]:
        """A streamed run through `self.iter`, as `Agent.run_stream` (same arguments)."""
        self._infer_name(kwargs)
        handler = kwargs.pop('event_stream_handler', None) or self.event_stream_handler
        async with self.iter(user_prompt, **kwargs) as agent_run:
            result: StreamedRunResult[Any] = StreamedRunResult(agent_run, handler)
            try:
                yield result
            finally:
                await result.aclose()

    def run_stream_sync(self, user_prompt: _Prompt = None, **kwargs: Any) -> StreamedRunResultSync[Any]:
        """`run_stream` from synchronous code, as `Agent.run_stream_sync`."""
        self._infer_name(kwargs)
        return StreamedRunResultSync(partial(self.run_stream, user_prompt, infer_name=False, **kwargs))

    def run_stream_events(self, user_prompt: _Prompt = None, **kwargs: Any) -> AgentEventStream[Any]:
        """Every event of a run through `self.iter`, as `Agent.run_stream_events`."""
        self._infer_name(kwargs)
        return AgentEventStream(run_events(self.iter(user_prompt, **kwargs)))

    def _infer_name(self, kwargs: dict[str, Any]) -> None:
        # Name an unnamed wrapped agent after the variable holding this wrapper in the caller's caller.
        if not kwargs.pop('infer_name', True) or self.name is not None:
            return
        frame = inspect.currentframe()
        caller = frame.f_back.f_back if frame is not None and frame.f_back is not None else None
        if caller is None:
            return
        for scope in (caller.f_locals, caller.f_globals):
            for name, value in scope.items():
                if value is self:
                    self.name = name
                    return
