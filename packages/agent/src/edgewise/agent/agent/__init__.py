"""`Agent`: a model, instructions, tools and an output type; run it with `run`, `run_sync` or `iter`."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from types import NoneType
from typing import Any, ClassVar, Literal, overload

import anyio
from typing_extensions import TypeVar, Unpack

from edgewise.graph import BaseStatePersistence, Graph
from edgewise.graph.persistence.store import DurableStatePersistence

from .. import _instrument, models
from .._functions.runners import OutputValidator, SystemPromptRunner, normalize_instructions, system_prompt_parts
from .._loop.agent_run import AgentRun, bind_captured_messages
from .._loop.history import check_prompt_fits, has_adjacent_same_kind, merge_adjacent, validate_history
from .._loop.nodes import UserPromptNode, agent_graph
from .._loop.run_hooks import RUN_HOOKS, wrapped_run
from .._output.schema import build_output_schema, schema_for_profile
from .._run.deps import EndStrategy, GraphAgentDeps
from .._run.options import (
    AgentInstructions,
    AgentMetadata,
    AgentModelSettings,
    AgentRetries,
    agent_retry_budgets,
    pop_deprecated,
    pop_deprecated_builtin_tools,
    resolve_metadata,
    run_native_tools,
    run_output_retries,
    settings_resolver,
)
from .._run.result import AgentRunResult, FinalResult
from .._run.state import GraphAgentState, resolve_conversation_id, resolve_run_id
from .._streaming.node_loop import EventStreamHandler, run_with_event_handler
from .._tools.deferred_calls import DeferredToolResults
from ..capabilities import AbstractCapability, AgentCapability, CombinedCapability, Instrumentation, ProcessHistory
from ..capabilities._dynamic import as_capabilities, configured_for_run
from ..capabilities._loaded_on_demand import deferred_run_capabilities, validate_capability_ids
from ..capabilities.abstract import LIFECYCLE_HOOKS
from ..capabilities.combined import combined_or_none
from ..capabilities.thread_executor import run_thread_executor
from ..concurrency import AnyConcurrencyLimit, concurrency_slot, normalize_to_limiter
from ..exceptions import UserError
from ..messages import ModelMessage, ModelRequest, SystemPromptPart, UserContent
from ..models import KnownModelName, Model
from ..models.instrumented import InstrumentationSettings
from ..output import OutputDataT, OutputSpec
from ..settings import ModelSettings
from ..tools import (
    AgentDepsT,
    AgentNativeTool,
    RunContext,
    Tool,
    ToolFuncEither,
)
from ..toolsets import AbstractToolset
from ..toolsets._dynamic import DynamicToolset, ToolsetFunc
from ..usage import RunUsage, UsageLimits
from . import _resume as _durable_run
from ._as_tool import agent_as_tool
from ._entry_points import AgentStreaming, IterOptions, RunOptions
from ._from_spec import AgentSpec, build_agent, override_from_spec, run_from_spec
from ._toolsets import AgentFunctionToolset
from ._wrapper import WrapperAgent

__all__ = ('Agent', 'EndStrategy', 'WrapperAgent', 'AgentRunResult')

RunOutputDataT = TypeVar('RunOutputDataT')
_F = TypeVar('_F', bound=Callable[..., Any])
_UNSET: Any = object()
_NO_OVERRIDES: dict[str, Any] = {}  # never changed: `override` sets a new dict


class Agent(AgentStreaming[AgentDepsT, OutputDataT]):
    """An LLM agent: a model, instructions, tools and an output type, run as an Edgewise graph.

    `AgentDepsT` is the type of the dependencies given to tools (`ctx.deps`); `OutputDataT` the type of
    the output.
    """

    model: Model | KnownModelName | None
    """The default model of runs."""
    end_strategy: EndStrategy
    """What happens to other tool calls once the output is given: `'early'` skips them, `'graceful'` runs the
    function tools but not other output tools, `'exhaustive'` runs them all."""
    model_settings: AgentModelSettings | None
    """Default settings of the agent's model requests (or a function of the run context returning them)."""

    _instrument_default: ClassVar[InstrumentationSettings | bool] = True

    def __init__(
        self,
        model: Model | KnownModelName | None = None,
        *,
        output_type: OutputSpec[OutputDataT] = str,  # type: ignore[assignment]
        instructions: AgentInstructions = None,
        system_prompt: str | Sequence[str] = (),
        deps_type: type[AgentDepsT] = NoneType,  # type: ignore[assignment]
        name: str | None = None,
        description: str | None = None,
        model_settings: AgentModelSettings | None = None,
        retries: int | AgentRetries | None = None,
        validation_context: Any = None,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (),
        toolsets: Sequence[AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT]] | None = None,
        defer_model_check: bool = False,
        end_strategy: EndStrategy = 'graceful',
        metadata: AgentMetadata | None = None,
        tool_timeout: float | None = None,
        max_concurrency: AnyConcurrencyLimit = None,
        capabilities: Sequence[AgentCapability[AgentDepsT]] | None = None,
        **deprecated_kwargs: Any,
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
            description: What the agent does (recorded on its run spans).
            model_settings: Default settings of the agent's model requests, or a function of the `RunContext`
                returning them (called before every request).
            retries: The retry budgets: an `int` for both tools and output, or `{'tools': n, 'output': m}`
                (a missing key keeps the default, 1). `tool_retries=` and `output_retries=` are deprecated
                spellings, accepted with a `DeprecationWarning`.
            validation_context: The pydantic validation context of tool arguments and outputs (`info.context` in
                validators), or a function of the `RunContext` returning it.
            tools: Tools: `Tool` instances or functions (taking the `RunContext` first, or not).
            toolsets: More toolsets (or functions building one from the `RunContext` at each step); their tools
                join the agent's own, a name clash being a `UserError` naming both toolsets.
            defer_model_check: Accepted for compatibility: Edgewise always resolves a model name when a run starts.
            end_strategy: What becomes of the tool calls beside an output tool call that succeeds. `'graceful'`
                (the default, as in pydantic-ai 2.x): the function tools run, and one asking for a retry keeps the
                output from ending the run (the model answers the retry first); later output calls are skipped.
                `'exhaustive'`: as `'graceful'`, and the later output calls are processed too. `'early'`: the
                run ends on the output, the function tool calls are skipped (the 1.x default).
            metadata: The runs' metadata: a dict, or a function of the `RunContext` returning one (computed
                when a run starts and again when it ends well; read it on `result.metadata`).
            tool_timeout: The timeout in seconds of the agent's own tools that set none (a timed-out call is
                retried): the `timeout` of the toolset holding them.
            max_concurrency: The most runs of this agent at the same time; more wait for a slot. A number, a
                `ConcurrencyLimit` (whose `max_queued` bounds the waiters: one more fails with
                `ConcurrencyLimitExceeded`), or a limiter shared with other agents.
            capabilities: Capabilities such as `ProcessHistory(fn)` or `Instrumentation(settings)`.
            **deprecated_kwargs: `tool_retries`, `output_retries`, `instrument`, `history_processors` and
                `builtin_tools` (native tools, see `edgewise.agent.native_tools`), deprecated in pydantic-ai 1.107
                and accepted here with a `DeprecationWarning`.
        """
        self.model = model
        self._inferred_model: tuple[str, Model] | None = None
        self._name = name
        self.description = description
        self.end_strategy = end_strategy
        self.model_settings = model_settings
        self.validation_context = validation_context
        self._deps_type = deps_type
        self._output_type = output_type
        self._output_schema = build_output_schema(output_type)
        self._metadata = metadata
        self._limiter = normalize_to_limiter(max_concurrency)
        caps: list[AgentCapability[AgentDepsT]] = list(as_capabilities(capabilities))
        self._instrument: InstrumentationSettings | bool | None = pop_deprecated(
            deprecated_kwargs, 'instrument', 'capabilities=[Instrumentation(...)]'
        )
        processors = pop_deprecated(deprecated_kwargs, 'history_processors', 'capabilities=[ProcessHistory(fn), ...]')
        self.history_processors = list(processors or ())
        caps.extend(ProcessHistory(p) for p in self.history_processors)
        # The run's default handler (as pydantic-ai 1.x still honours it); a run's own handler takes its place.
        self._event_stream_handler: EventStreamHandler | None = pop_deprecated(
            deprecated_kwargs, 'event_stream_handler', 'run(..., event_stream_handler=handler)'
        )
        self._capabilities = caps
        validate_capability_ids(as_capabilities(caps))  # deferred ones need an id; ids are unique
        self._root_capability = CombinedCapability(as_capabilities(caps))
        self._native_tools: list[AgentNativeTool[AgentDepsT]] = list(
            pop_deprecated_builtin_tools(deprecated_kwargs, 'Agent', stacklevel=3) or ()
        )
        self._default_retries, self._max_result_retries = agent_retry_budgets(retries, deprecated_kwargs)
        if deprecated_kwargs:
            raise UserError(f'Unknown keyword arguments: {", ".join(f"`{k}`" for k in deprecated_kwargs)}')
        self._instructions = normalize_instructions(instructions)
        self._system_prompts: list[str | SystemPromptRunner] = (
            [system_prompt] if isinstance(system_prompt, str) else list(system_prompt)
        )
        self._output_validators: list[OutputValidator] = []
        self._tool_timeout = tool_timeout
        self._function_toolset: AgentFunctionToolset[AgentDepsT] = AgentFunctionToolset(
            max_retries=self._default_retries, timeout=tool_timeout
        )
        for tool in tools:
            self._register_tool(tool if isinstance(tool, Tool) else Tool(tool))
        self._toolsets: list[AbstractToolset[AgentDepsT]] = [
            t if isinstance(t, AbstractToolset) else DynamicToolset(t) for t in toolsets or ()
        ]
        self._enter_lock = anyio.Lock()
        self._exit_stack: AsyncExitStack | None = None
        self._override_model: ContextVar[Model | KnownModelName | None] = ContextVar('_override_model', default=None)
        self._override_deps: ContextVar[tuple[Any] | None] = ContextVar('_override_deps', default=None)
        self._override_tools: ContextVar[AgentFunctionToolset[AgentDepsT] | None] = ContextVar(
            '_override_tools', default=None
        )
        self._override_toolsets: ContextVar[Sequence[AbstractToolset[AgentDepsT]] | None] = ContextVar(
            '_override_toolsets', default=None
        )
        self._overrides: ContextVar[dict[str, Any]] = ContextVar('_overrides', default=_NO_OVERRIDES)
        self._entered = 0

    @classmethod
    def from_spec(
        cls,
        spec: dict[str, Any] | AgentSpec,
        *,
        deps_type: type[Any] = NoneType,
        custom_capability_types: Sequence[type[AbstractCapability[Any]]] = (),
        model: Model | KnownModelName | str | None = None,
        output_type: OutputSpec[Any] = str,
        instructions: AgentInstructions = None,
        system_prompt: str | Sequence[str] = (),
        name: str | None = None,
        description: str | None = None,
        model_settings: AgentModelSettings | None = None,
        retries: int | AgentRetries | None = None,
        validation_context: Any = None,
        tools: Sequence[Tool[Any] | ToolFuncEither[Any, ...]] = (),
        toolsets: Sequence[AbstractToolset[Any] | ToolsetFunc[Any]] | None = None,
        defer_model_check: bool = False,
        end_strategy: EndStrategy | None = None,
        metadata: AgentMetadata | None = None,
        tool_timeout: float | None = None,
        max_concurrency: AnyConcurrencyLimit = None,
        capabilities: Sequence[AgentCapability[Any]] | None = None,
        **deprecated_kwargs: Any,
    ) -> Agent[Any, Any]:
        """Build an agent from a spec (a dict or an `AgentSpec`, see `edgewise.agent.agent.spec`).

        The arguments are those of `Agent(...)`; one given wins over the spec's field, `instructions` and
        `capabilities` are added after the spec's, `model_settings` merge over the spec's. With the default
        `output_type`, a spec's `output_schema` gives the output type (`StructuredDict`).

        Args:
            spec: The spec.
            custom_capability_types: Capability classes (dataclasses) the spec may name besides
                `CAPABILITY_TYPES`.
            **deprecated_kwargs: as in `Agent(...)`.

        Raises:
            UserError: neither the spec nor `model` gives a model.
            SpecError: a capability of the spec is unknown, or its arguments do not build it.
            pydantic.ValidationError: the spec dict is malformed (the error names the field).
        """
        given = {
            'model': model, 'output_type': output_type, 'instructions': instructions, 'name': name,
            'description': description, 'model_settings': model_settings, 'retries': retries,
            'end_strategy': end_strategy, 'metadata': metadata, 'tool_timeout': tool_timeout,
            'capabilities': capabilities,
        }  # fmt: skip
        passed = {
            'deps_type': deps_type, 'system_prompt': system_prompt, 'validation_context': validation_context,
            'tools': tools, 'toolsets': toolsets, 'defer_model_check': defer_model_check,
            'max_concurrency': max_concurrency, **deprecated_kwargs,
        }  # fmt: skip
        built: Agent[Any, Any] = build_agent(Agent, spec, custom_capability_types, given, passed)
        return built

    @classmethod
    def from_file(
        cls,
        path: Path | str,
        *,
        fmt: Literal['yaml', 'json'] | None = None,
        **kwargs: Any,
    ) -> Agent[Any, Any]:
        """Build an agent from a YAML or JSON spec file: `Agent.from_spec(AgentSpec.from_file(path, fmt), **kwargs)`.

        Raises:
            ValueError: `fmt` is not given and the file's suffix is neither `.yaml`, `.yml` nor `.json`.
            ImportError: the file is YAML and PyYAML is not installed.
        """
        return cls.from_spec(AgentSpec.from_file(path, fmt=fmt), **kwargs)

    @staticmethod
    def instrument_all(instrument: InstrumentationSettings | bool = True) -> None:
        """Set how agents that set no `instrument` of their own are traced (`False` turns their spans off)."""
        Agent._instrument_default = instrument

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
        """The agent's system prompts as the first request of a run with these arguments would hold them."""
        ctx: RunContext[AgentDepsT] = RunContext(
            deps=deps, model=self._resolve_model(model), usage=usage or RunUsage(),
            prompt=prompt if isinstance(prompt, str) else None, messages=list(message_history or ()), run_step=1,
            model_settings=model_settings,
        )  # fmt: skip
        return await system_prompt_parts(self._system_prompts, ctx)

    def render_description(self, deps: AgentDepsT = None) -> str | None:  # type: ignore[assignment]
        """The agent's description for runs with `deps` (Edgewise descriptions are plain texts: `deps` is accepted
        for pydantic-ai's template descriptions, which Edgewise does not have)."""
        return self.description

    @property
    def event_stream_handler(self) -> EventStreamHandler | None:
        """The handler of runs given none (the deprecated `Agent(event_stream_handler=...)`), if any."""
        return self._event_stream_handler

    @property
    def root_capability(self) -> CombinedCapability[AgentDepsT]:
        """The agent's capabilities as one (those given as functions of the run context are made per run)."""
        return self._root_capability

    @property
    def instrument(self) -> InstrumentationSettings | bool | None:
        """How this agent's runs are traced (`None`: as `Agent.instrument_all` says)."""
        return self._instrument

    @instrument.setter
    def instrument(self, value: InstrumentationSettings | bool | None) -> None:
        self._instrument = value

    def _tracing(self, capabilities: Sequence[Any]) -> bool:
        if any(isinstance(c, Instrumentation) for c in capabilities):
            return True
        setting = self._instrument if self._instrument is not None else Agent._instrument_default
        return setting is not False

    @property
    def graph(self) -> Graph[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]:
        """The Edgewise graph agent runs are (shared by all agents): to load their persisted snapshots or draw it."""
        return agent_graph()

    @property
    def deps_type(self) -> type[AgentDepsT]:
        """The type of the run's dependencies."""
        return self._deps_type

    # -- running ----------------------------------------------------------------------------------------------

    @overload
    async def run(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: None = None,
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AgentRunResult[OutputDataT]: ...

    @overload
    async def run(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[RunOptions[AgentDepsT]],
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
            await run_with_event_handler(agent_run, event_stream_handler or self._event_stream_handler)
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
        **kwargs: Unpack[RunOptions[AgentDepsT]],
    ) -> AgentRunResult[OutputDataT]: ...

    @overload
    def run_sync(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[RunOptions[AgentDepsT]],
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
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, OutputDataT]]: ...

    @overload
    def iter(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[RunOutputDataT],
        **kwargs: Unpack[IterOptions[AgentDepsT]],
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, RunOutputDataT]]: ...

    @asynccontextmanager
    async def iter(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[Any] | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        conversation_id: str | None = None,
        run_id: str | None = None,
        model: Model | KnownModelName | None = None,
        instructions: AgentInstructions = None,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model_settings: AgentModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        usage: RunUsage | None = None,
        metadata: AgentMetadata | None = None,
        retries: int | AgentRetries | None = None,
        infer_name: bool = True,
        capabilities: Sequence[AgentCapability[AgentDepsT]] | None = None,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None = None,
        deferred_tool_results: DeferredToolResults | None = None,
        spec: dict[str, Any] | AgentSpec | None = None,
        **deprecated_kwargs: Any,
    ) -> AsyncIterator[AgentRun[AgentDepsT, Any]]:
        """Start a run driven node by node: `async with agent.iter(prompt) as run: async for node in run: ...`.

        Takes the same arguments as `run` except `event_stream_handler`.
        """
        if infer_name:
            frame = inspect.currentframe()
            # Skip the frame of `asynccontextmanager` between `iter(...)` and its caller.
            self._infer_name(frame.f_back if frame is not None else None)
        run_native_tools = pop_deprecated_builtin_tools(deprecated_kwargs, 'agent.iter')
        output_retries = None
        if retries is not None or deprecated_kwargs:
            output_retries = run_output_retries(retries, deprecated_kwargs, 'agent.iter')
        spec_metadata = None
        if spec is not None:  # the spec fills in what the run leaves unset, and adds to the rest
            model, output_retries, instructions, model_settings, capabilities, spec_metadata = run_from_spec(
                spec, model, output_retries, instructions, model_settings, capabilities
            )
        configure = partial(
            self._configure_run, model=model, deps=deps, model_settings=model_settings, usage_limits=usage_limits,
            capabilities=capabilities, instructions=instructions, output_type=output_type,
            output_retries=output_retries, persistence=persistence, native_tools=run_native_tools,
        )  # fmt: skip
        graph_deps = configure()
        overrides = self._overrides.get()
        history = validate_history(message_history)
        if len(history) > 1 and has_adjacent_same_kind(history):
            history = merge_adjacent(history)  # as pydantic-ai keeps a given history
        if deferred_tool_results is None:  # with results, a prompt follows the answers to the open calls
            check_prompt_fits(user_prompt, history)
        state = GraphAgentState(
            message_history=bind_captured_messages(history),
            usage=usage or RunUsage(),
            conversation_id=resolve_conversation_id(conversation_id, history),
            run_id=resolve_run_id(run_id, history),
        )
        graph_deps.prompt = user_prompt
        graph_deps = await configured_for_run(graph_deps, state, configure)
        graph_deps.new_message_index = len(history)
        graph_deps.merge_adjacent = bool(history) and isinstance(history[-1], ModelRequest)
        model_used = graph_deps.model
        metadata_layers = overrides.get('metadata', [self._metadata, spec_metadata, metadata])
        metadata_layers = [m for m in metadata_layers if m is not None]
        if metadata_layers:
            state.metadata = resolve_metadata(metadata_layers, graph_deps.run_context(state))
        run_toolset = await self._run_toolset(graph_deps, state, toolsets)
        start: UserPromptNode[AgentDepsT, Any] = UserPromptNode(user_prompt, deferred_tool_results)
        async with concurrency_slot(self._limiter, f'agent:{self.name or "agent"}'):
            with _instrument.span_if(
                graph_deps.tracing, 'agent run', agent_name=self.name or 'agent', model_name=model_used.model_name
            ), run_thread_executor(graph_deps.root_capability):  # fmt: skip
                async with (
                    run_toolset,
                    agent_graph().iter(
                        start, state=state, deps=graph_deps, persistence=persistence, infer_name=False
                    ) as graph_run,
                ):
                    agent_run = AgentRun(graph_run)
                    root = graph_deps.root_capability
                    if graph_deps.hooked & RUN_HOOKS:
                        async with wrapped_run(root, graph_deps.run_context(state), agent_run):
                            yield agent_run
                    else:
                        yield agent_run
                if metadata_layers and agent_run.result is not None:
                    state.metadata = resolve_metadata(metadata_layers, graph_deps.run_context(state))

    def _configure_run(
        self,
        *,
        model: Model | KnownModelName | None,
        deps: Any,
        model_settings: AgentModelSettings | None,
        usage_limits: UsageLimits | None,
        capabilities: Sequence[AgentCapability[AgentDepsT]] | None,
        instructions: AgentInstructions,
        output_type: OutputSpec[Any] | None,
        output_retries: int | None,
        persistence: BaseStatePersistence[Any, Any] | None,
        native_tools: Sequence[AgentNativeTool[AgentDepsT]] | None = None,
        resolved: Sequence[AgentCapability[AgentDepsT]] | None = None,
    ) -> GraphAgentDeps[AgentDepsT, Any]:
        """The deps of a run, new (`iter`) or resumed (`resume`): the agent's configuration, its overrides and
        capabilities, the run's arguments; the caller sets what depends on the history (`prompt`,
        `new_message_index`, `merge_adjacent`); `resolved`: the run's capabilities as made for it (`for_run`)."""
        overrides = self._overrides.get()
        if overrides:
            output_retries = overrides.get('retries', output_retries)
        model_used = self._resolve_model(model)
        deps = self._resolve_deps(deps)
        if output_type is not None and self._output_validators:
            raise UserError('Cannot set a custom run `output_type` when the agent has output validators')
        schema = self._output_schema if output_type is None else build_output_schema(output_type)
        schema = schema_for_profile(schema, model_used.profile)
        caps = as_capabilities([*overrides.get('capabilities', self._capabilities), *(capabilities or ())])
        caps = deferred_run_capabilities(caps if resolved is None else as_capabilities(resolved))
        run_instructions = overrides.get('instructions')
        if run_instructions is None:  # an override replaces every other instruction, the capabilities' too
            run_instructions = self._instructions
            if caps or instructions is not None:
                run_instructions = [*run_instructions]
                for cap in caps:
                    run_instructions += normalize_instructions(cap.get_instructions())
                run_instructions += normalize_instructions(instructions)
        layers: list[Any] = [c.get_model_settings() for c in caps]
        if 'model_settings' in overrides:
            layers.append(overrides['model_settings'])
        else:
            layers += [self.model_settings, model_settings]
        static_settings, resolver = settings_resolver(model_used.settings, [x for x in layers if x is not None])
        tool_choice = (static_settings or {}).get('tool_choice')
        if tool_choice == 'required' or isinstance(tool_choice, list):
            raise UserError(
                f'`tool_choice={tool_choice!r}` prevents the agent from producing a final response because output '
                'tools are excluded. Use `ToolOrOutput` to combine specific function tools with output capability, '
                "or return a callable from a capability's `get_model_settings()` (or give `model_settings` as a "
                'function of the run context) to vary `tool_choice` per step.'
            )
        root = combined_or_none(caps)
        graph_deps: GraphAgentDeps[AgentDepsT, Any] = GraphAgentDeps(
            user_deps=deps,
            prompt=None,  # the run's, set by the caller
            new_message_index=0,
            model=model_used,
            model_settings=static_settings,
            settings_resolver=resolver,
            request_hooks=[c for c in caps if c.has_request_hook()],
            root_capability=root,
            hooked=frozenset(h for h in LIFECYCLE_HOOKS if root.overrides(h)) if root is not None else frozenset(),
            native_tools=run_native_tools(
                self._overrides.get(), self._native_tools, self._capabilities, caps, native_tools
            ),
            tracing=self._tracing(caps),
            validation_context=self.validation_context,
            usage_limits=usage_limits or UsageLimits(),
            max_result_retries=self._max_result_retries if output_retries is None else output_retries,
            default_tool_retries=self._default_retries,
            end_strategy=self.end_strategy,
            output_schema=schema,
            output_validators=self._output_validators,
            toolset=self._function_toolset,
            instructions=run_instructions,
            system_prompts=self._system_prompts,
            agent_name=self.name,
            agent=self,
            persistence=persistence,
            stores_waiting=isinstance(persistence, DurableStatePersistence),
        )
        return graph_deps

    async def resume(
        self,
        persistence: BaseStatePersistence[Any, Any],
        *,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model: Model | KnownModelName | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        event_stream_handler: EventStreamHandler | None = None,
        deferred_tool_results: DeferredToolResults | Mapping[str, Any] | None = None,
    ) -> AgentRunResult[OutputDataT]:
        """Finish a stored run (one started with `persistence=`) from where it stopped, e.g. after a crash.

        Model requests whose response was stored are not sent again, and tool calls whose result was stored
        are not run again; what was running when the run stopped runs again (at least once: a tool can tell a
        repeated call by `ctx.tool_call_id`). Deps are never stored: give them again.

        Args:
            persistence: The run's persistence (the same backend and run id it was started with).
            deps: The run's deps, checked against the agent's `deps_type`.
            model: The model to go on with (default: the agent's).
            model_settings: Settings of the model requests still to come.
            usage_limits: Limits of the resumed run (its stored usage counts towards them).
            event_stream_handler: As for `run`.
            deferred_tool_results: The answers to the deferred tool calls a run stored as waiting stopped on
                (approvals, outside results): a `DeferredToolResults`, or the same as a dict of JSON values
                (`{'approvals': {'p1': True, 'p2': {'kind': 'tool-denied', 'message': '...'}}}`), as a web
                request or the command line gives them.

        Raises:
            GraphRuntimeError: the stored run has ended (or was never stored): nothing to resume.
            RunInProgressError: a live process is advancing the run.
            UserError: the run waits on deferred tool calls and `deferred_tool_results` does not answer them.
        """
        return await _durable_run.resume(
            self, persistence, deps=deps, model=model, model_settings=model_settings, usage_limits=usage_limits,
            event_stream_handler=event_stream_handler, deferred_tool_results=deferred_tool_results,
        )  # fmt: skip

    def iter_from_persistence(
        self,
        persistence: BaseStatePersistence[Any, Any],
        *,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model: Model | KnownModelName | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        deferred_tool_results: DeferredToolResults | Mapping[str, Any] | None = None,
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, OutputDataT]]:
        """Continue a stored run node by node: `async with agent.iter_from_persistence(p, deps=...) as run:`.

        Takes the arguments of `resume` but `event_stream_handler`; the run is held by this process inside the
        block (a second resume elsewhere is refused with `RunInProgressError`).
        """
        return _durable_run.iter_from_persistence(
            self, persistence, deps=deps, model=model, model_settings=model_settings, usage_limits=usage_limits,
            deferred_tool_results=deferred_tool_results,
        )  # fmt: skip

    def _resolve_model(self, model: Model | KnownModelName | None) -> Model:
        override = self._override_model.get()
        if override is not None and model is None and self.model is None:
            raise UserError(
                '`model` must either be set on the agent or included when calling it. '
                '(Even when `override(model=...)` is customizing the model that will actually be called)'
            )
        chosen = override or model or self.model
        if chosen is None:
            raise UserError('`model` must either be set on the agent or included when calling it.')
        if isinstance(chosen, str) and chosen == self.model:
            # The agent's own model is inferred once, so that its provider's HTTP client serves every run.
            if self._inferred_model is None or self._inferred_model[0] != chosen:
                self._inferred_model = (chosen, models.infer_model(chosen))
            return self._inferred_model[1]
        return models.infer_model(chosen)

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
        name: str | None = _UNSET,
        model: Model | KnownModelName | None = _UNSET,
        deps: AgentDepsT = _UNSET,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] | None = _UNSET,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None = _UNSET,
        instructions: AgentInstructions = _UNSET,
        model_settings: AgentModelSettings | None = _UNSET,
        metadata: AgentMetadata | None = _UNSET,
        retries: int | AgentRetries | None = _UNSET,
        native_tools: Sequence[AgentNativeTool[AgentDepsT]] = _UNSET,
        spec: dict[str, Any] | AgentSpec | None = None,
        **deprecated_kwargs: Any,
    ) -> Iterator[None]:
        """Replace the name, model, deps, tools, toolsets, instructions, model settings, metadata, output retry
        budget or native tools of every run started inside the block (e.g. in tests); a run's own arguments for
        them are then ignored. `builtin_tools=` is the deprecated spelling of `native_tools=`."""
        legacy_native = pop_deprecated_builtin_tools(deprecated_kwargs, 'agent.override', has_native_tools=True)
        if deprecated_kwargs:
            raise UserError(f'Unknown keyword arguments: {", ".join(f"`{k}`" for k in deprecated_kwargs)}')
        if native_tools is _UNSET and legacy_native is not None:
            native_tools = legacy_native
        spec_capabilities = None
        if spec is not None:  # the spec's fields stand in for the arguments not given
            from_spec, spec_capabilities = override_from_spec(spec, {
                'name': name, 'model': model, 'instructions': instructions, 'model_settings': model_settings,
                'metadata': metadata, 'retries': retries,
            }, _UNSET)  # fmt: skip
            name, model, instructions = from_spec['name'], from_spec['model'], from_spec['instructions']
            model_settings, metadata, retries = from_spec['model_settings'], from_spec['metadata'], from_spec['retries']
        with ExitStack() as stack:

            def override_var(var: ContextVar[Any], value: Any) -> None:
                stack.callback(var.reset, var.set(value))

            if model is not _UNSET:
                override_var(self._override_model, model)
            if deps is not _UNSET:
                override_var(self._override_deps, (deps,))
            if tools is not _UNSET and tools is not None:
                toolset = AgentFunctionToolset(tools, max_retries=self._default_retries, timeout=self._tool_timeout)
                override_var(self._override_tools, toolset)
            if toolsets is not _UNSET and toolsets is not None:
                override_var(self._override_toolsets, list(toolsets))
            given = {
                'name': name,
                'instructions': instructions if instructions is _UNSET else normalize_instructions(instructions),
                'model_settings': model_settings,
                'metadata': metadata if metadata is _UNSET else [metadata],
                'retries': retries if retries is _UNSET else run_output_retries(retries, {}, 'agent.override'),
                'native_tools': native_tools if native_tools is _UNSET else list(native_tools),
                'capabilities': _UNSET if spec_capabilities is None else spec_capabilities,
            }
            override_var(
                self._overrides, {**self._overrides.get(), **{k: v for k, v in given.items() if v is not _UNSET}}
            )
            yield

    def _open_run(
        self, user_prompt: str | Sequence[UserContent] | None, kwargs: dict[str, Any]
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, Any]]:
        return self.iter(user_prompt, infer_name=False, **kwargs)

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
        return agent_as_tool(self, name or self.name or 'agent', description, custom_output_extractor)

    def __repr__(self) -> str:
        return (
            f'{type(self).__name__}(model={self.model!r}, name={self.name!r}, end_strategy={self.end_strategy!r}, '
            f'model_settings={self.model_settings!r}, output_type={self.output_type!r})'
        )
