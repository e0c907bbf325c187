"""`Agent`: a model, instructions, tools and an output type; run it with `run`, `run_sync` or `iter`."""

from __future__ import annotations as _annotations

import inspect
import types
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import partial
from types import NoneType, TracebackType
from typing import Any, Generic, Self, overload

import anyio
from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import TypedDict, TypeVar, Unpack

from edgewise.graph import BaseStatePersistence, Graph
from edgewise.graph.persistence.store import DurableStatePersistence

from . import _instrument
from . import messages as _messages
from ._agent_event_stream import AgentEventStream
from ._agent_graph import UserPromptNode, agent_graph
from ._agent_run import AgentRun, bind_captured_messages
from ._deferred_tools import DeferredToolResults
from ._function_schema import DocstringFormat, GenerateToolJsonSchema
from ._node_stream_loop import EventStreamHandler, run_with_event_handler
from ._output import build_output_schema
from ._run_deps import EndStrategy, GraphAgentDeps, GraphAgentState, OutputValidator, SystemPromptRunner
from ._run_result import AgentRunResult, FinalResult
from ._streamed_run_result import StreamedRunResult
from .exceptions import UserError
from .messages import ModelMessage, ModelRequest, ModelResponse, UserContent
from .models import KnownModelName, Model, infer_model
from .output import OutputDataT, OutputSpec
from .settings import ModelSettings, merge_model_settings
from .tools import (
    AgentDepsT,
    ArgsValidatorFunc,
    RunContext,
    Tool,
    ToolFuncEither,
    ToolPrepareFunc,
)
from .toolsets import AbstractToolset, CombinedToolset, FunctionToolset
from .toolsets._dynamic import DynamicToolset, ToolsetFunc
from .usage import RunUsage, UsageLimits

__all__ = ('Agent', 'EndStrategy')

RunOutputDataT = TypeVar('RunOutputDataT')
_F = TypeVar('_F', bound=Callable[..., Any])
_UNSET: Any = object()


class _IterOptions(TypedDict, Generic[AgentDepsT], total=False):
    """The keyword arguments of `iter` after `output_type`, shared by the typed overloads of `iter`, `run_stream`
    and `run_stream_events` (which differ only in `output_type`, the type of the result)."""

    message_history: Sequence[ModelMessage] | None
    model: Model | KnownModelName | None
    deps: AgentDepsT
    model_settings: ModelSettings | None
    usage_limits: UsageLimits | None
    usage: RunUsage | None
    persistence: BaseStatePersistence[Any, Any] | None
    infer_name: bool
    toolsets: Sequence[AbstractToolset[AgentDepsT]] | None
    deferred_tool_results: DeferredToolResults | None


class _RunOptions(_IterOptions[AgentDepsT], total=False):
    """The keyword arguments of `run` and `run_sync` after `output_type`: those of `iter` and a handler of events."""

    event_stream_handler: EventStreamHandler | None


class Agent(Generic[AgentDepsT, OutputDataT]):
    """An LLM agent: a model, instructions, tools and an output type, run as an Edgewise graph.

    `AgentDepsT` is the type of the dependencies given to tools (`ctx.deps`); `OutputDataT` the type of
    the output.
    """

    model: Model | KnownModelName | None
    """The default model of runs."""
    name: str | None
    """The agent's name, used in spans and by `as_tool`."""
    end_strategy: EndStrategy
    """What happens to other tool calls once the output is given: `'early'` skips them, `'exhaustive'` runs them."""
    model_settings: ModelSettings | None
    """Default settings of the agent's model requests."""

    def __init__(
        self,
        model: Model | KnownModelName | None = None,
        *,
        output_type: OutputSpec[OutputDataT] = str,  # type: ignore[assignment]
        instructions: str | Callable[..., Any] | Sequence[str | Callable[..., Any]] | None = None,
        system_prompt: str | Sequence[str] = (),
        deps_type: type[AgentDepsT] = NoneType,  # type: ignore[assignment]
        name: str | None = None,
        model_settings: ModelSettings | None = None,
        retries: int = 1,
        output_retries: int | None = None,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (),
        toolsets: Sequence[AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT]] | None = None,
        end_strategy: EndStrategy = 'early',
    ) -> None:
        """Configure the agent.

        Args:
            model: The default model: a `Model`, or a name such as `'test'` (checked when a run starts).
            output_type: The output: a type, a function, `ToolOutput`, `NativeOutput`, `PromptedOutput`,
                `TextOutput`, or a sequence of them.
            instructions: Instructions sent with every request (texts, or functions taking the `RunContext`).
            system_prompt: System prompts that start a new conversation.
            deps_type: The type of the run's dependencies; a run given deps of another type fails.
            name: The agent's name.
            model_settings: Default settings of the agent's model requests.
            retries: The retry budget of each tool (and of the output, unless `output_retries` is set).
            output_retries: The retry budget of the output.
            tools: Tools: `Tool` instances or functions (taking the `RunContext` first, or not).
            toolsets: More toolsets (or functions building one from the `RunContext` at each step); their tools
                join the agent's own, a name clash being a `UserError` naming both toolsets.
            end_strategy: `'early'` or `'exhaustive'`.
        """
        self.model = model
        self._inferred_model: tuple[str, Model] | None = None
        self.name = name
        self.end_strategy = end_strategy
        self.model_settings = model_settings
        self._deps_type = deps_type
        self._output_type = output_type
        self._output_schema = build_output_schema(output_type)
        self._default_retries = retries
        self._max_result_retries = output_retries if output_retries is not None else retries
        self._instructions: list[str | SystemPromptRunner] = []
        if isinstance(instructions, str) or callable(instructions):
            instructions = [instructions]
        for item in instructions or ():
            self._instructions.append(item if isinstance(item, str) else SystemPromptRunner(item))
        self._system_prompts: list[str | SystemPromptRunner] = (
            [system_prompt] if isinstance(system_prompt, str) else list(system_prompt)
        )
        self._output_validators: list[OutputValidator] = []
        self._function_toolset: FunctionToolset[AgentDepsT] = _AgentFunctionToolset(max_retries=retries)
        for tool in tools:
            self._register_tool(tool if isinstance(tool, Tool) else Tool(tool))
        self._toolsets: list[AbstractToolset[AgentDepsT]] = [
            t if isinstance(t, AbstractToolset) else DynamicToolset(t) for t in toolsets or ()
        ]
        self._entered = 0
        self._enter_lock = anyio.Lock()
        self._exit_stack: AsyncExitStack | None = None
        self._override_model: ContextVar[Model | KnownModelName | None] = ContextVar('_override_model', default=None)
        self._override_deps: ContextVar[tuple[Any] | None] = ContextVar('_override_deps', default=None)
        self._override_tools: ContextVar[FunctionToolset[AgentDepsT] | None] = ContextVar(
            '_override_tools', default=None
        )
        self._override_toolsets: ContextVar[Sequence[AbstractToolset[AgentDepsT]] | None] = ContextVar(
            '_override_toolsets', default=None
        )

    @property
    def output_type(self) -> OutputSpec[OutputDataT]:
        """The output type the agent was built with."""
        return self._output_type

    @property
    def graph(self) -> Graph[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]:
        """The Edgewise graph agent runs are (shared by all agents): to load their persisted snapshots or draw it."""
        return agent_graph()

    @property
    def deps_type(self) -> type[AgentDepsT]:
        """The type of the run's dependencies."""
        return self._deps_type

    # -- decorators -------------------------------------------------------------------------------------------

    @overload
    def tool(self, func: _F, /) -> _F: ...

    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        retries: int | None = None,
        prepare: ToolPrepareFunc[AgentDepsT] | None = None,
        args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None = None,
        docstring_format: DocstringFormat = 'auto',
        require_parameter_descriptions: bool = False,
        schema_generator: type[GenerateJsonSchema] = GenerateToolJsonSchema,
        strict: bool | None = None,
        sequential: bool = False,
        requires_approval: bool = False,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        defer_loading: bool = False,
        include_return_schema: bool | None = None,
    ) -> Callable[[_F], _F]: ...

    def tool(self, func: Any = None, /, **options: Any) -> Any:
        """Register a tool whose function takes the `RunContext` first: `@agent.tool` or `@agent.tool(...)`."""
        return self._tool_decorator(func, True, options)

    @overload
    def tool_plain(self, func: _F, /) -> _F: ...

    @overload
    def tool_plain(
        self,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        retries: int | None = None,
        prepare: ToolPrepareFunc[AgentDepsT] | None = None,
        args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None = None,
        docstring_format: DocstringFormat = 'auto',
        require_parameter_descriptions: bool = False,
        schema_generator: type[GenerateJsonSchema] = GenerateToolJsonSchema,
        strict: bool | None = None,
        sequential: bool = False,
        requires_approval: bool = False,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        defer_loading: bool = False,
        include_return_schema: bool | None = None,
    ) -> Callable[[_F], _F]: ...

    def tool_plain(self, func: Any = None, /, **options: Any) -> Any:
        """Register a tool whose function does not take the `RunContext`: `@agent.tool_plain` or `(...)`."""
        return self._tool_decorator(func, False, options)

    def _tool_decorator(self, func: Any, takes_ctx: bool, options: dict[str, Any]) -> Any:
        # Taken out once, not in `register`: one decorator object may register several functions.
        retries = options.pop('retries', None)

        def register(function: _F) -> _F:
            self._register_tool(Tool(function, takes_ctx=takes_ctx, max_retries=retries, **options))
            return function

        return register if func is None else register(func)

    def _register_tool(self, tool: Tool[AgentDepsT]) -> None:
        if tool.name in self._output_schema.tools:
            raise UserError(
                "The agent defines a tool whose name conflicts with existing tool from the agent's output tools: "
                f'{tool.name!r}. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.'
            )
        self._function_toolset.add_tool(tool)

    @overload
    def toolset(self, func: ToolsetFunc[AgentDepsT], /) -> ToolsetFunc[AgentDepsT]: ...

    @overload
    def toolset(
        self, /, *, per_run_step: bool = True, id: str | None = None
    ) -> Callable[[ToolsetFunc[AgentDepsT]], ToolsetFunc[AgentDepsT]]: ...

    def toolset(self, func: Any = None, /, *, per_run_step: bool = True, id: str | None = None) -> Any:
        """Register a function building a toolset from the `RunContext` (sync or async, `None` for no tools):
        `@agent.toolset` or `@agent.toolset(per_run_step=False)` to build it once per run instead of per step."""

        def register(function: Any) -> Any:
            self._toolsets.append(DynamicToolset(function, per_run_step=per_run_step, id=id))
            return function

        return register if func is None else register(func)

    @property
    def toolsets(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        """The agent's toolsets: the one holding its own function tools first, then those given or registered."""
        override = self._override_toolsets.get()
        return [
            self._override_tools.get() or self._function_toolset,
            *(self._toolsets if override is None else override),
        ]

    @overload
    def system_prompt(self, func: _F, /) -> _F: ...

    @overload
    def system_prompt(self, /, *, dynamic: bool = False) -> Callable[[_F], _F]: ...

    def system_prompt(self, func: Any = None, /, *, dynamic: bool = False) -> Any:
        """Register a system prompt function (`(ctx) -> str` or `() -> str`, sync or async).

        With `dynamic=True` it is re-evaluated when a run continues a message history that holds its text.
        """

        def register(function: _F) -> _F:
            self._system_prompts.append(SystemPromptRunner(function, dynamic=dynamic))
            return function

        return register if func is None else register(func)

    @overload
    def instructions(self, func: _F, /) -> _F: ...

    @overload
    def instructions(self, /) -> Callable[[_F], _F]: ...

    def instructions(self, func: Any = None, /) -> Any:
        """Register an instructions function (`(ctx) -> str` or `() -> str`), evaluated for every request:
        `@agent.instructions` or `@agent.instructions()`."""

        def register(function: _F) -> _F:
            self._instructions.append(SystemPromptRunner(function))
            return function

        return register if func is None else register(func)

    def output_validator(self, func: _F, /) -> _F:
        """Register an output validator (`(output)` or `(ctx, output)`, sync or async) that may raise `ModelRetry`."""
        self._output_validators.append(OutputValidator(func))
        return func

    # -- running ----------------------------------------------------------------------------------------------

    @overload
    async def run(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[_RunOptions[AgentDepsT]],
    ) -> AgentRunResult[OutputDataT]: ...

    @overload
    async def run(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[_RunOptions[AgentDepsT]],
    ) -> AgentRunResult[RunOutputDataT]: ...

    async def run(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        event_stream_handler: EventStreamHandler | None = None,
        **kwargs: Any,
    ) -> AgentRunResult[Any]:
        """Run the agent on `user_prompt` until it gives its output.

        Args:
            user_prompt: The user's prompt (may be omitted when `message_history` ends with a request).
            **kwargs: `output_type`, `message_history`, `model`, `deps`, `model_settings`, `usage_limits`,
                `usage` (a `RunUsage` to add this run's usage to), `persistence` (an Edgewise persistence
                to store the run's snapshots in), `infer_name` (name an unnamed agent after the variable
                holding it, for spans and errors).
            event_stream_handler: `async def handler(ctx, events)`, called for each model request and each
                handling of tool calls with the stream of their events (the run streams its model requests).

        Raises:
            UserError: no model, or deps of the wrong type.
            UnexpectedModelBehavior: the model kept answering in unusable ways past the retry budgets.
            UsageLimitExceeded: the run went past its `usage_limits`.
        """
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        async with self.iter(user_prompt, infer_name=False, **kwargs) as agent_run:
            if event_stream_handler is None:
                async for _ in agent_run:
                    pass
            else:
                await run_with_event_handler(agent_run, event_stream_handler)
        # `**kwargs` may hold `output_type`, so mypy cannot tell which overload of `iter` this is.
        result: AgentRunResult[Any] | None = agent_run.result
        assert result is not None
        return result

    @overload
    def run_sync(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[_RunOptions[AgentDepsT]],
    ) -> AgentRunResult[OutputDataT]: ...

    @overload
    def run_sync(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[_RunOptions[AgentDepsT]],
    ) -> AgentRunResult[RunOutputDataT]: ...

    def run_sync(self, user_prompt: str | Sequence[UserContent] | None = None, **kwargs: Any) -> AgentRunResult[Any]:
        """`run` from synchronous code (starts an event loop; not for use inside one). Same arguments."""
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        return anyio.run(partial(self.run, user_prompt, infer_name=False, **kwargs))

    @overload
    def iter(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[_IterOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, OutputDataT]]: ...

    @overload
    def iter(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[_IterOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, RunOutputDataT]]: ...

    @asynccontextmanager
    async def iter(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[Any] | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        model: Model | KnownModelName | None = None,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        usage: RunUsage | None = None,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        infer_name: bool = True,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None = None,
        deferred_tool_results: DeferredToolResults | None = None,
    ) -> AsyncIterator[AgentRun[AgentDepsT, Any]]:
        """Start a run driven node by node: `async with agent.iter(prompt) as run: async for node in run: ...`.

        Takes the same arguments as `run` except `event_stream_handler`.
        """
        if infer_name:
            frame = inspect.currentframe()
            # Skip the frame of `asynccontextmanager` between `iter(...)` and its caller.
            self._infer_name(frame.f_back if frame is not None else None)
        model_used = self._resolve_model(model)
        deps = self._resolve_deps(deps)
        schema = self._output_schema if output_type is None else build_output_schema(output_type)
        history = _validate_history(message_history)
        state = GraphAgentState(message_history=bind_captured_messages(history), usage=usage or RunUsage())
        graph_deps: GraphAgentDeps[AgentDepsT, Any] = GraphAgentDeps(
            user_deps=deps,
            prompt=user_prompt,
            new_message_index=len(history),
            model=model_used,
            model_settings=merge_model_settings(
                merge_model_settings(model_used.settings, self.model_settings), model_settings
            ),
            usage_limits=usage_limits or UsageLimits(),
            max_result_retries=self._max_result_retries,
            default_tool_retries=self._default_retries,
            end_strategy=self.end_strategy,
            output_schema=schema,
            output_validators=self._output_validators,
            toolset=self._function_toolset,
            instructions=self._instructions,
            system_prompts=self._system_prompts,
            agent_name=self.name,
            stores_waiting=isinstance(persistence, DurableStatePersistence),
        )
        members = [*self.toolsets, *(toolsets or ())]
        run_toolset = members[0] if len(members) == 1 else CombinedToolset(members)
        ctx = graph_deps.run_context(state, max_retries=self._default_retries)
        graph_deps.toolset = run_toolset = await run_toolset.for_run(ctx)
        start: UserPromptNode[AgentDepsT, Any] = UserPromptNode(user_prompt, deferred_tool_results)
        with _instrument.span('agent run', agent_name=self.name or 'agent', model_name=model_used.model_name):
            async with (
                run_toolset,
                agent_graph().iter(
                    start, state=state, deps=graph_deps, persistence=persistence, infer_name=False
                ) as graph_run,
            ):
                yield AgentRun(graph_run)

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

    def _resolve_model(self, model: Model | KnownModelName | None) -> Model:
        chosen = self._override_model.get() or model or self.model
        if chosen is None:
            raise UserError('`model` must either be set on the agent or included when calling it.')
        if isinstance(chosen, str) and chosen == self.model:
            # The agent's own model is inferred once, so that its provider's HTTP client serves every run.
            if self._inferred_model is None or self._inferred_model[0] != chosen:
                self._inferred_model = (chosen, infer_model(chosen))
            return self._inferred_model[1]
        return infer_model(chosen)

    async def __aenter__(self) -> Self:
        """Enter the model's context and the agent's toolsets: `async with agent:` keeps toolsets that hold a
        connection (MCP servers) open across the runs inside the block, and closes the provider's HTTP client
        at the end."""
        async with self._enter_lock:
            if self._entered == 0:
                async with AsyncExitStack() as stack:
                    if self.model is not None or self._override_model.get() is not None:
                        await stack.enter_async_context(self._resolve_model(None))
                    toolset = CombinedToolset(list(self.toolsets))
                    await stack.enter_async_context(toolset)
                    self._exit_stack = stack.pop_all()
            self._entered += 1
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the toolsets and the model's context (once every `async with agent:` is left)."""
        async with self._enter_lock:
            self._entered -= 1
            if self._entered == 0:
                stack, self._exit_stack = self._exit_stack, None
                if stack is not None:
                    await stack.__aexit__(exc_type, exc, tb)

    def set_mcp_sampling_model(self, model: Model | KnownModelName | None = None) -> None:
        """Make `model` (the agent's model when `None`) answer the sampling requests of the agent's MCP servers.

        Without it, a server's sampling requests are answered by the model of the run that uses the server.
        """
        try:
            sampling_model = infer_model(model) if model is not None else self._resolve_model(None)
        except UserError as e:
            raise UserError('No sampling model was given and the agent has no model.') from e
        try:
            from .mcp import MCPServer
        except ModuleNotFoundError:  # pragma: no cover - without the `mcp` extra there is no MCP server
            return

        def set_model(toolset: AbstractToolset[AgentDepsT]) -> None:
            if isinstance(toolset, MCPServer):
                toolset.sampling_model = sampling_model

        for toolset in self.toolsets:
            toolset.apply(set_model)

    def _resolve_deps(self, deps: Any) -> Any:
        if (override := self._override_deps.get()) is not None:
            return override[0]
        deps_type = self._deps_type
        if isinstance(deps_type, type) and deps_type is not NoneType and not isinstance(deps, deps_type):
            raise UserError(
                f'Agent {self.name or "[unnamed]"!r} expects deps of type {deps_type.__name__}, got '
                f'{type(deps).__name__}: pass `deps=` a {deps_type.__name__} instance.'
            )
        return deps

    @contextmanager
    def override(
        self,
        *,
        model: Model | KnownModelName | None = _UNSET,
        deps: AgentDepsT = _UNSET,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] | None = _UNSET,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None = _UNSET,
    ) -> Iterator[None]:
        """Replace the model, deps, tools or toolsets of every run started inside the block (e.g. in tests)."""
        tokens: list[Callable[[], None]] = []
        if model is not _UNSET:
            token_m = self._override_model.set(model)
            tokens.append(lambda: self._override_model.reset(token_m))
        if deps is not _UNSET:
            token_d = self._override_deps.set((deps,))
            tokens.append(lambda: self._override_deps.reset(token_d))
        if tools is not _UNSET and tools is not None:
            token_t = self._override_tools.set(_AgentFunctionToolset(tools, max_retries=self._default_retries))
            tokens.append(lambda: self._override_tools.reset(token_t))
        if toolsets is not _UNSET and toolsets is not None:
            token_s = self._override_toolsets.set(list(toolsets))
            tokens.append(lambda: self._override_toolsets.reset(token_s))
        try:
            yield
        finally:
            for reset in reversed(tokens):
                reset()

    @overload
    def run_stream(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[_IterOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[StreamedRunResult[OutputDataT]]: ...

    @overload
    def run_stream(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[_IterOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[StreamedRunResult[RunOutputDataT]]: ...

    @asynccontextmanager
    async def run_stream(
        self, user_prompt: str | Sequence[UserContent] | None = None, **kwargs: Any
    ) -> AsyncIterator[StreamedRunResult[Any]]:
        """Run the agent with streamed model responses: `async with agent.run_stream(prompt) as result:`.

        Read `result.stream_text()`, `result.stream_output()` or `result.stream_responses()` as the run goes
        on; tools called along the way (even after text, or after the output tool call) run as in `run`, and
        the stream goes on until the run's final result. Leaving the block early stops the run. Takes the
        same arguments as `run` except `event_stream_handler`.
        """
        if kwargs.pop('infer_name', True):
            frame = inspect.currentframe()
            # Skip the frame of `asynccontextmanager` between `run_stream(...)` and its caller.
            self._infer_name(frame.f_back if frame is not None else None)
        async with self.iter(user_prompt, infer_name=False, **kwargs) as agent_run:
            result: StreamedRunResult[Any] = StreamedRunResult(agent_run)
            try:
                yield result
            finally:
                await result.aclose()

    @overload
    def run_stream_events(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[_IterOptions[AgentDepsT]],
    ) -> AgentEventStream[OutputDataT]: ...

    @overload
    def run_stream_events(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[_IterOptions[AgentDepsT]],
    ) -> AgentEventStream[RunOutputDataT]: ...

    def run_stream_events(
        self, user_prompt: str | Sequence[UserContent] | None = None, **kwargs: Any
    ) -> AgentEventStream[Any]:
        """Every event of a run, ending with an `AgentRunResultEvent` holding the result.

        Use `async with agent.run_stream_events(prompt) as events: async for event in events: ...` (or
        iterate it directly). Takes the same arguments as `run` except `event_stream_handler`.
        """
        if kwargs.pop('infer_name', True):
            self._infer_name(inspect.currentframe())
        return AgentEventStream(self.iter(user_prompt, infer_name=False, **kwargs))

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        custom_output_extractor: Callable[[AgentRunResult[Any]], Any] | None = None,
    ) -> Tool[AgentDepsT]:
        """This agent as a tool of another agent: the calling model passes the request as `input`, the sub-run gets
        the caller's deps and its usage counts towards the caller's run.

        Args:
            name: The tool's name; the agent's name, or `'agent'`.
            description: The tool's description for the model.
            custom_output_extractor: Picks what the caller gets from the sub-run's result (sync or async); the
                sub-run's output by default.
        """
        tool_name = name or self.name or 'agent'

        async def delegate(ctx: RunContext[AgentDepsT], input: str) -> Any:
            """Run the agent.

            Args:
                input: The request for the agent, with everything it needs to know.
            """
            result = await self.run(input, deps=ctx.deps, usage=ctx.usage, infer_name=False)
            if custom_output_extractor is None:
                return result.output
            extracted = custom_output_extractor(result)
            if inspect.isawaitable(extracted):
                extracted = await extracted
            return extracted

        text = description or f'Ask the {tool_name} agent. Pass it the full request as `input`.'
        return Tool(delegate, takes_ctx=True, name=tool_name, description=text)

    def __repr__(self) -> str:
        return f'Agent(model={self.model!r}, name={self.name!r}, end_strategy={self.end_strategy!r})'


class _AgentFunctionToolset(FunctionToolset[AgentDepsT]):
    """The toolset of the agent's own function tools, named 'the agent' in errors."""

    @property
    def id(self) -> str | None:
        """The agent's function tools have a fixed id."""
        return '<agent>'

    @property
    def label(self) -> str:
        """How name clash errors name the agent's own tools."""
        return 'the agent'


def _validate_history(history: Sequence[ModelMessage] | None) -> list[ModelMessage]:
    if not history:
        return []
    if all(isinstance(m, ModelRequest | ModelResponse) for m in history):
        return list(history)
    try:
        return _messages.ModelMessagesTypeAdapter.validate_python(list(history))
    except Exception as exc:
        raise UserError(f'`message_history` holds items that are not valid messages: {exc}') from exc
