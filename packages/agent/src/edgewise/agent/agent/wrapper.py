"""`WrapperAgent`: an agent that hands everything to another agent (re-exported by `edgewise.agent.agent`).

Subclass it to change one entry point: the run entry points (`run`, `run_sync`, `run_stream`,
`run_stream_sync`, `run_stream_events`, from `AbstractAgent`) are built on `self.iter`, so overriding `iter` changes
them all.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager, contextmanager
from types import TracebackType
from typing import Any, Protocol, Self

from .._loop.agent_run import AgentRun
from .._streaming.node_loop import EventStreamHandler
from ..capabilities import CombinedCapability
from ..messages import SystemPromptPart, UserContent
from ..models import KnownModelName, Model
from ..output import OutputDataT, OutputSpec
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset
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
