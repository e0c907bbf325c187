"""`AbstractAgent`: what every agent offers (`Agent`, `WrapperAgent` and an agent of your own), as in pydantic-ai 2.x.

It holds no state. The run entry points (`run`, `run_sync`, `run_stream`, `run_stream_events`, `run_stream_sync`)
are written once here, over the abstract `iter` (as in pydantic-ai 2.x); `Agent` and `WrapperAgent` subclass it
directly (one level: each implements the abstract members in its own module), so `isinstance(agent, AbstractAgent)`
holds for both, and a function typed `agent: AbstractAgent[Deps, Any]` (a capability's `for_agent`, say) takes
either.
"""

from __future__ import annotations as _annotations

import inspect
import types
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, overload

from typing_extensions import TypeIs, TypeVar, Unpack

from edgewise.graph import End

from .._loop.continuation import using_sleep
from .._loop.nodes import AgentNode, CallToolsNode, ModelRequestNode, UserPromptNode
from .._run.result import AgentRunResult, FinalResult
from .._streaming.event_stream import AgentRunEvents, run_events
from .._streaming.node_loop import EventStreamHandler, run_for_result
from .._streaming.run_result import StreamedRunResult
from .._threads import run_in_new_loop, using_thread_executor
from ..messages import UserContent
from ..output import OutputDataT, OutputSpec
from ..tools import AgentDepsT
from ._options import (
    IterOptions,
    RunOptions,
    is_call_tools_node,
    is_end_node,
    is_model_request_node,
    is_user_prompt_node,
    parallel_tool_call_execution_mode,
)

if TYPE_CHECKING:
    from .._loop.agent_run import AgentRun
    from .._streaming.run_result_sync import StreamedRunResultSync
    from ..capabilities import CombinedCapability
    from ..messages import ModelMessage, SystemPromptPart
    from ..models import KnownModelName, Model
    from ..settings import ModelSettings
    from ..toolsets import AbstractToolset
    from ..usage import RunUsage, UsageLimits

__all__ = ('AbstractAgent',)

RunOutputDataT = TypeVar('RunOutputDataT')
_Prompt = str | Sequence[UserContent] | None
_T = TypeVar('_T')
_S = TypeVar('_S')


class AbstractAgent(ABC, Generic[AgentDepsT, OutputDataT]):
    """The interface of an agent: its name, types and toolsets, `iter` and `override`, and the run entry points
    (`run`, `run_sync`, `run_stream`, `run_stream_events`, `run_stream_sync`) built on `iter`.

    A subclass implements the abstract members; `system_prompt_parts` defaults to no system prompt.
    """

    @staticmethod
    def is_user_prompt_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[UserPromptNode[_T, _S]]:
        """Whether `node` is a `UserPromptNode` (narrowing its type, generic parameters kept)."""
        return is_user_prompt_node(node)

    @staticmethod
    def is_model_request_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[ModelRequestNode[_T, _S]]:
        """Whether `node` is a `ModelRequestNode` (narrowing its type, generic parameters kept)."""
        return is_model_request_node(node)

    @staticmethod
    def is_call_tools_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[CallToolsNode[_T, _S]]:
        """Whether `node` is a `CallToolsNode` (narrowing its type, generic parameters kept)."""
        return is_call_tools_node(node)

    @staticmethod
    def is_end_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[End[FinalResult[_S]]]:
        """Whether `node` is the `End` of the run (narrowing its type, generic parameters kept)."""
        return is_end_node(node)

    using_thread_executor = staticmethod(using_thread_executor)
    using_sleep = staticmethod(using_sleep)
    parallel_tool_call_execution_mode = staticmethod(parallel_tool_call_execution_mode)

    description: str | None
    """What the agent does, for a caller choosing among agents (a parent agent's tool, an A2A card)."""

    @property
    @abstractmethod
    def name(self) -> str | None:
        """The agent's name (in spans, and as a tool of another agent); `None` until set or inferred."""

    @name.setter
    @abstractmethod
    def name(self, value: str | None) -> None:
        """Set the agent's name."""

    @property
    @abstractmethod
    def deps_type(self) -> type[AgentDepsT]:
        """The type of the dependencies the agent's tools receive (`ctx.deps`)."""

    @property
    @abstractmethod
    def output_type(self) -> OutputSpec[OutputDataT]:
        """The output type of runs that give none of their own."""

    @property
    @abstractmethod
    def event_stream_handler(self) -> EventStreamHandler | None:
        """The handler of the events of runs given none, if any."""

    @property
    @abstractmethod
    def toolsets(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        """The agent's toolsets (output tools not included)."""

    @property
    def root_capability(self) -> CombinedCapability[AgentDepsT]:
        """The agent's capabilities as one; an agent that has none raises `NotImplementedError`."""
        raise NotImplementedError(f'{type(self).__name__} has no capabilities')

    async def system_prompt_parts(
        self,
        *,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model: Model | KnownModelName | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        prompt: str | Sequence[UserContent] | None = None,
        usage: RunUsage | None = None,
        model_settings: ModelSettings | None = None,
    ) -> list[SystemPromptPart]:
        """The system prompts the first request of a run with these arguments would hold; none unless a subclass
        says otherwise (`Agent` and `WrapperAgent` do)."""
        return []

    @abstractmethod
    def iter(self, *args: Any, **kwargs: Any) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, Any]]:
        """Start a run to be driven node by node (`async with agent.iter(prompt) as run`)."""

    @abstractmethod
    def override(self, *args: Any, **kwargs: Any) -> AbstractContextManager[None]:
        """Within the block, replace parts of the agent (model, deps, tools, ...) for the runs made in it."""

    # -- the run entry points, over `iter` ---------------------------------------------------------------------

    @overload
    async def run(
        self, user_prompt: _Prompt = None, *, output_type: None = None, **kwargs: Unpack[RunOptions[AgentDepsT]]
    ) -> AgentRunResult[OutputDataT]: ...

    @overload
    async def run(
        self,
        user_prompt: _Prompt = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AgentRunResult[RunOutputDataT]: ...

    async def run(
        self, user_prompt: _Prompt = None, *, event_stream_handler: EventStreamHandler | None = None, **kwargs: Any
    ) -> AgentRunResult[Any]:
        """Run the agent on `user_prompt` until it gives its output.

        Args:
            user_prompt: The user's prompt (may be omitted when `message_history` ends with a request).
            **kwargs: `output_type`, `message_history`, `model`, `deps`, `model_settings`, `usage_limits`,
                `usage` (a `RunUsage` to add this run's usage to), `persistence` (an Edgewise persistence
                to store the run's snapshots in), `infer_name` (name an unnamed agent after the variable
                holding it, for spans and errors), `cancellation_token` (a `CancellationToken` whose `cancel()`,
                from any task or thread, cancels the run), `timeout` (the most seconds the whole run may take):
                the arguments of `iter`.
            event_stream_handler: `async def handler(ctx, events)`, called for each model request and each
                handling of tool calls with the stream of their events (the run streams its model requests).

        Raises:
            UserError: no model, or deps of the wrong type.
            UnexpectedModelBehavior: the model kept answering in unusable ways past the retry budgets.
            UsageLimitExceeded: the run went past its `usage_limits`.
            RunCancelled: the run was cancelled (`RunContext.cancel()`, its `cancellation_token`); it holds the
                messages up to the cancellation.
            RunTimedOut: the run went past its `timeout` (a `RunCancelled`, holding the same).
        """
        if kwargs.pop('infer_name', True) and self.name is None:  # (a named agent has no frame to look at)
            self._infer_name(inspect.currentframe())
        opened = self.iter(user_prompt, infer_name=False, **kwargs)
        return await run_for_result(opened, event_stream_handler or self.event_stream_handler)

    @overload
    def run_sync(
        self, user_prompt: _Prompt = None, *, output_type: None = None, **kwargs: Unpack[RunOptions[AgentDepsT]]
    ) -> AgentRunResult[OutputDataT]: ...

    @overload
    def run_sync(
        self,
        user_prompt: _Prompt = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AgentRunResult[RunOutputDataT]: ...

    def run_sync(self, user_prompt: _Prompt = None, **kwargs: Any) -> AgentRunResult[Any]:
        """`run` from synchronous code (starts an event loop; not for use inside one). Same arguments."""
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        return run_in_new_loop(partial(self.run, user_prompt, infer_name=False, **kwargs))

    @overload
    def run_stream(
        self, user_prompt: _Prompt = None, *, output_type: None = None, **kwargs: Unpack[RunOptions[AgentDepsT]]
    ) -> AbstractAsyncContextManager[StreamedRunResult[AgentDepsT, OutputDataT]]: ...

    @overload
    def run_stream(
        self,
        user_prompt: _Prompt = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[StreamedRunResult[AgentDepsT, RunOutputDataT]]: ...

    @asynccontextmanager
    async def run_stream(
        self, user_prompt: _Prompt = None, **kwargs: Any
    ) -> AsyncIterator[StreamedRunResult[AgentDepsT, Any]]:
        """Run the agent with streamed model responses: `async with agent.run_stream(prompt) as result:`.

        The block is entered once the response that starts the final result streams (as in pydantic-ai): the
        tools of the responses before it have run by then. Read `result.stream_text()`, `result.stream_output()`
        or `result.stream_response()` as the run goes on; tools called along the way (even after text, or after
        the output tool call) run as in `run`, and the stream goes on until the run's final result. Leaving the
        block early stops the run. Takes the same arguments as `run`; an `event_stream_handler` gets each
        streamed node's events once that node's stream has been read (reading the result drives the run).
        """
        if kwargs.pop('infer_name', True):
            # Skip the frame of `asynccontextmanager` between `run_stream(...)` and its caller. (No local holds this
            # frame: the generator's frame would hold itself, a cycle keeping the whole run until the collector ran.)
            self._infer_name(getattr(inspect.currentframe(), 'f_back', None))
        handler = kwargs.pop('event_stream_handler', None) or self.event_stream_handler
        async with self.iter(user_prompt, infer_name=False, **kwargs) as agent_run:
            result: StreamedRunResult[AgentDepsT, Any] = StreamedRunResult(agent_run, handler)
            try:
                await result.start()
                yield result
            finally:
                await result.aclose()

    @overload
    def run_stream_events(
        self, user_prompt: _Prompt = None, *, output_type: None = None, **kwargs: Unpack[IterOptions[AgentDepsT]]
    ) -> AgentRunEvents[OutputDataT]: ...

    @overload
    def run_stream_events(
        self,
        user_prompt: _Prompt = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> AgentRunEvents[RunOutputDataT]: ...

    def run_stream_events(self, user_prompt: _Prompt = None, **kwargs: Any) -> AgentRunEvents[Any]:
        """Every event of a run, ending with an `AgentRunResultEvent` holding the result.

        Use `async with agent.run_stream_events(prompt) as events: async for event in events: ...` (iterating
        it without `async with` is deprecated). Takes the same arguments as `run` except `event_stream_handler`.
        """
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        return AgentRunEvents(run_events(self.iter(user_prompt, infer_name=False, **kwargs)))

    @overload
    def run_stream_sync(
        self, user_prompt: _Prompt = None, *, output_type: None = None, **kwargs: Unpack[IterOptions[AgentDepsT]]
    ) -> StreamedRunResultSync[AgentDepsT, OutputDataT]: ...

    @overload
    def run_stream_sync(
        self,
        user_prompt: _Prompt = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> StreamedRunResultSync[AgentDepsT, RunOutputDataT]: ...

    def run_stream_sync(self, user_prompt: _Prompt = None, **kwargs: Any) -> StreamedRunResultSync[AgentDepsT, Any]:
        """`run_stream` from synchronous code: the run goes on in an event loop in a thread, and the result's
        streams are plain iterators (not for use inside an event loop). Same arguments as `run_stream`."""
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        # (loaded here: only a program streaming from sync code needs the thread bridge)
        from .._streaming.run_result_sync import StreamedRunResultSync

        return StreamedRunResultSync(partial(self.run_stream, user_prompt, infer_name=False, **kwargs))

    async def to_cli(
        self,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        prog_name: str = 'edgewise',
        message_history: Sequence[ModelMessage] | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        model: Model | KnownModelName | str | None = None,
    ) -> None:
        """Chat with the agent in the terminal until `/exit` or the end of input (the `cli` extra: rich).

        Each prompt runs the agent on the chat's history so far and streams its answer as Markdown. Commands:
        `/exit`, `/markdown` (the last answer's source), `/multiline` (a prompt then ends at an empty line), `/cp`
        (the last answer to the clipboard) and `/usage` (`/usage --json`).

        Args:
            deps: The deps of every run.
            prog_name: The name shown in the prompt.
            message_history: The conversation so far.
            model_settings: The model settings of every run.
            usage_limits: The limits of each run.
            model: The model of every run, instead of the agent's.
        """
        from ._chat_cli import run_chat

        await run_chat(
            self,
            prog_name=prog_name,
            deps=deps,
            message_history=message_history,
            model_settings=model_settings,
            usage_limits=usage_limits,
            model=model,
        )

    def to_cli_sync(
        self,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        prog_name: str = 'edgewise',
        message_history: Sequence[ModelMessage] | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        model: Model | KnownModelName | str | None = None,
    ) -> None:
        """`to_cli` from synchronous code (in an event loop of its own)."""
        run_in_new_loop(
            partial(
                self.to_cli,
                deps=deps,
                prog_name=prog_name,
                message_history=message_history,
                model_settings=model_settings,
                usage_limits=usage_limits,
                model=model,
            )
        )

    def _infer_name(self, frame: types.FrameType | None) -> None:
        """Name the agent after the variable holding it in the caller of `frame`, when it has no name."""
        if self.name is not None or frame is None or (caller := frame.f_back) is None:
            return
        for scope in (caller.f_locals, caller.f_globals):
            for name, value in scope.items():
                if value is self:
                    self.name = name
                    return
