"""`Agent`: a model, instructions, tools and an output type; run it with `run`, `run_sync` or `iter`.

`Agent` is one class (its public methods are pydantic-ai's, with their typed overloads); the run entry points built
on `iter` (`run`, `run_sync`, `run_stream`, ...) are `AbstractAgent`'s (`abstract`), shared with `WrapperAgent`. The
work is handed to its parts:

- `_toolsets`: `AgentToolsets`, the agent's toolsets, the toolset of each run, `async with agent:`;
- `_options`: the keyword arguments the entry points share, and the checks of a run's nodes;
- `_resume`: what resuming a stored run reads back (its history, the answers it waits on);
- `_from_spec`: agents, runs and overrides described by a spec (`spec`: the public `AgentSpec`);
- `_as_tool`: `Agent.as_tool`; `wrapper`: `WrapperAgent`; `_chat_cli`: the terminal chat of `to_cli()`;
- `_registration`: the decorators that register tools, toolsets, prompts and validators.

- `_run_setup`, `_run_opening`: every run, new (`iter`) or stored (`iter_from_persistence`), is prepared by
  `_run_setup` and starts in `open_run`, the one run setup; `run` and `resume` drive it to its end the same way
  (`run_for_result`).
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, ExitStack, contextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from types import NoneType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, overload

from typing_extensions import TypeVar, Unpack

from edgewise.graph import BaseStatePersistence, Graph

from .. import models
from .._functions.runners import (
    OutputValidator,
    SystemPromptRunner,
    normalize_instructions,
    system_prompt_parts,
)
from .._loop.agent_run import AgentRun, capture_run_messages
from .._loop.nodes import CallToolsNode, ModelRequestNode, UserPromptNode, agent_graph
from .._message_flow.cancellation import CancellationToken
from .._output.json_schema import output_json_schema
from .._output.schema import build_output_schema
from .._run.deps import EndStrategy, GraphAgentDeps
from .._run.options import (
    AgentInstructions,
    AgentMetadata,
    AgentModelSettings,
    AgentRetries,
    EventStreamProcessor,
    agent_retry_budgets,
    check_agent_native_tools,
    pop_deprecated,
    pop_deprecated_builtin_tools,
    run_retry_budgets,
)
from .._run.result import AgentRunResult, FinalResult
from .._run.state import GraphAgentState
from .._streaming.event_stream import AgentRunEvents
from .._streaming.node_loop import EventStreamHandler, run_for_result
from .._tools.deferred_calls import DeferredToolResults
from ..capabilities import AbstractCapability, AgentCapability, CombinedCapability, Instrumentation
from ..capabilities._dynamic import as_capabilities
from ..capabilities._loaded_on_demand import validate_capability_ids
from ..concurrency import AnyConcurrencyLimit, normalize_to_limiter
from ..conversation import Conversation, resolve_conversation
from ..exceptions import PydanticAIDeprecationWarning, UserError
from ..messages import ModelMessage, SystemPromptPart, UserContent
from ..models import KnownModelName, Model
from ..models.instrumented import InstrumentationSettings
from ..output import OutputDataT, OutputSpec
from ..settings import ModelSettings
from ..template import TemplateStr
from ..tool_manager import ParallelExecutionMode
from ..tools import (
    TOOL_OPTIONS,
    AgentDepsT,
    AgentNativeTool,
    NativeToolFunc,
    RunContext,
    Tool,
    ToolDenied,
    ToolFuncEither,
    ToolsPrepareFunc,
)
from ..toolsets import AbstractToolset
from ..toolsets._dynamic import DynamicToolset, ToolsetFunc
from ..usage import RunUsage, UsageLimits
from ..workspaces import WorkspaceBackend, WorkspaceRef
from ._as_tool import agent_as_tool
from ._model_choice import choose_model, model_for_agent_context, static_pick
from ._options import IterOptions
from ._registration import AgentRegistration
from ._run_opening import open_run
from ._run_setup import new_run, resolve_model, stored_run
from ._run_workspace import check_workspace_argument
from ._toolsets import AgentFunctionToolset, AgentToolsets
from .abstract import AbstractAgent
from .wrapper import WrapperAgent

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from edgewise.graph.persistence.store import DurableStatePersistence

    from ..native_tools import AbstractNativeTool
    from ._from_spec import AgentSpec

__all__ = (
    'AbstractAgent',
    'Agent',
    'AgentRunEvents',
    'EndStrategy',
    'WrapperAgent',
    'AgentRunResult',
    # The names pydantic-ai 2.x's `agent` module re-exports too.
    'AgentModelSettings',
    'CallToolsNode',
    'EventStreamProcessor',
    'ModelRequestNode',
    'NativeToolFunc',
    'ParallelExecutionMode',
    'PydanticAIDeprecationWarning',
    'ToolDenied',
    'ToolsPrepareFunc',
    'UserPromptNode',
    'capture_run_messages',
)

RunOutputDataT = TypeVar('RunOutputDataT')
_F = TypeVar('_F', bound=Callable[..., Any])
_UNSET: Any = object()
_NO_OVERRIDES: dict[str, Any] = {}  # never changed: `override` sets a new dict


_DEFAULT_INSTRUMENTATION = InstrumentationSettings()
"""The tracing options of an agent traced with no settings of its own."""


class Agent(AgentRegistration[AgentDepsT], AbstractAgent[AgentDepsT, OutputDataT]):
    """An LLM agent: a model, instructions, tools and an output type, run as an Edgewise graph.

    `AgentDepsT` is the type of the dependencies given to tools (`ctx.deps`); `OutputDataT` the type of
    the output.
    """

    model: Model | KnownModelName | None
    """The default model of runs."""
    end_strategy: EndStrategy
    """What happens to other tool calls once the output is given: `'early'` skips them, `'graceful'` runs the
    function tools but not other output tools, `'exhaustive'` runs them all."""
    model_settings: AgentModelSettings[Any] | None
    """Default settings of the agent's model requests (or a function of the run context returning them)."""

    _instrument_default: ClassVar[InstrumentationSettings | bool] = True

    def __init__(
        self,
        model: Model | KnownModelName | None = None,
        *,
        output_type: OutputSpec[OutputDataT] = str,  # type: ignore[assignment]
        instructions: AgentInstructions = None,
        system_prompt: str | Sequence[str] = (),
        deps_type: type[AgentDepsT] = object,  # type: ignore[assignment]
        name: str | None = None,
        description: TemplateStr[Any] | str | None = None,
        model_settings: AgentModelSettings[Any] | None = None,
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
            description: What the agent does (recorded on its run spans); a `TemplateStr` is rendered from each
                run's deps.
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
        self._entered_model: tuple[Model | str, Model] | None = None  # what `async with agent:` entered, and from
        self._name = name
        self._description: TemplateStr[Any] | str | None = description
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
        if self.history_processors:
            from ..capabilities.process_history import ProcessHistory  # (loaded by the agents that have processors)

            caps.extend(ProcessHistory(p) for p in self.history_processors)
        # The run's default handler (as pydantic-ai 1.x still honours it); a run's own handler takes its place.
        self._event_stream_handler: EventStreamHandler | None = pop_deprecated(
            deprecated_kwargs, 'event_stream_handler', 'run(..., event_stream_handler=handler)'
        )
        self._capabilities = caps
        validate_capability_ids(as_capabilities(caps))  # deferred ones need an id; ids are unique
        check_agent_native_tools(caps)
        self._root_capability = CombinedCapability(as_capabilities(caps))
        self._native_tools: list[AgentNativeTool[AgentDepsT]] = list(
            pop_deprecated_builtin_tools(deprecated_kwargs, 'Agent', stacklevel=3) or ()
        )
        self._max_tool_retries, self._max_output_retries = agent_retry_budgets(retries, deprecated_kwargs)
        if deprecated_kwargs:
            raise UserError(f'Unknown keyword arguments: {", ".join(f"`{k}`" for k in deprecated_kwargs)}')
        self._instructions = normalize_instructions(instructions)
        self._system_prompts: list[str | SystemPromptRunner] = (
            [system_prompt] if isinstance(system_prompt, str) else list(system_prompt)
        )
        self._output_validators: list[OutputValidator] = []
        self._tool_timeout = tool_timeout
        self._tools: AgentToolsets[AgentDepsT] = AgentToolsets(
            AgentFunctionToolset(timeout=tool_timeout),  # the agent's tool budget comes with each run (`retries=`)
            [t if isinstance(t, AbstractToolset) else DynamicToolset(t) for t in toolsets or ()],
        )
        for tool in tools:
            self._register_tool(tool if isinstance(tool, Tool) else Tool(tool))
        self._override_model: ContextVar[Model | KnownModelName | None] = ContextVar('_override_model', default=None)
        self._override_deps: ContextVar[tuple[Any] | None] = ContextVar('_override_deps', default=None)
        self._overrides: ContextVar[dict[str, Any]] = ContextVar('_overrides', default=_NO_OVERRIDES)
        # Bound once the agent is configured: a capability may return a copy of itself made for this agent.
        bound = [capability.for_agent(self) for capability in as_capabilities(caps)]
        if any(b is not c for b, c in zip(bound, caps, strict=True)):
            self._capabilities = list(bound)
            validate_capability_ids(bound)
            self._root_capability = CombinedCapability(bound)

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
        description: TemplateStr[Any] | str | None = None,
        model_settings: AgentModelSettings[Any] | None = None,
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
        from ._from_spec import build_agent  # (specs are loaded only by the programs that use them)

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
        from ._from_spec import AgentSpec

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
        usage = usage or RunUsage()
        history = list(message_history or ())
        choice = await choose_model(
            self, model, self._root_capability, deps=deps, history=history, usage=usage,
            missing='`model` must either be set on the agent or supplied by a capability.',
        )  # fmt: skip
        assert choice.model is not None  # a choice has its model
        ctx: RunContext[AgentDepsT] = RunContext(
            deps=deps, model=choice.model, usage=usage,
            prompt=prompt if isinstance(prompt, str) else None, messages=history, run_step=1,
            model_settings=model_settings,
        )  # fmt: skip
        return await system_prompt_parts(self._system_prompts, ctx)

    @property
    def description(self) -> str | None:
        """What the agent does; of a `TemplateStr` description, its source (`render_description` fills it in)."""
        return None if self._description is None else str(self._description)

    @description.setter
    def description(self, value: TemplateStr[Any] | str | None) -> None:
        self._description = value

    def render_description(self, deps: AgentDepsT = None) -> str | None:  # type: ignore[assignment]
        """The agent's description for a run with `deps`: a `TemplateStr` description rendered from them."""
        description = self._description
        if isinstance(description, TemplateStr):
            return description.render(deps)
        return description

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

    def _instrumentation_settings(self, capabilities: Sequence[Any]) -> InstrumentationSettings:
        """The tracing options of a run: its `Instrumentation` capability's, else the agent's, else the defaults."""
        for capability in capabilities:
            if isinstance(capability, Instrumentation):
                return capability.settings
        setting = self._instrument if self._instrument is not None else Agent._instrument_default
        return setting if isinstance(setting, InstrumentationSettings) else _DEFAULT_INSTRUMENTATION

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

    @property
    def _function_toolset(self) -> AgentFunctionToolset[AgentDepsT]:
        """The toolset of the agent's own function tools (pydantic-ai's private name, read by its tests)."""
        return self._tools.function_toolset

    @property
    def toolsets(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        """The agent's toolsets: the one holding its own function tools first, then those given or registered."""
        return self._tools.members

    async def __aenter__(self) -> Self:
        """Enter the model's context and the agent's toolsets: `async with agent:` keeps toolsets that hold a
        connection (MCP servers) open across the runs inside the block, and closes the provider's HTTP client
        at the end.

        Re-entrant: only the first entry enters them and only the matching last exit leaves them.
        """
        await self._tools.enter(self._model_to_enter, self._root_capability)
        return self

    def _model_to_enter(self) -> Model | None:
        return model_for_agent_context(self)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the toolsets and the model's context, closing the HTTP client its provider made (once every
        `async with agent:` is left)."""
        await self._tools.exit(exc_type, exc, tb)
        if self._tools.entered == 0:
            self._entered_model = None

    def set_mcp_sampling_model(self, model: Model | KnownModelName | None = None) -> None:
        """Make `model` (the agent's model when `None`) answer the sampling requests of the agent's MCP servers.

        Without it, a server's sampling requests are answered by the model of the run that uses the server.
        """
        if model is None and self._override_model.get() is None:
            model = static_pick(self, 'cannot be used for MCP sampling setup')
        try:
            sampling_model = models.infer_model(model) if model is not None else resolve_model(self, None)
        except UserError as e:
            raise UserError('No sampling model was given and the agent has no model.') from e
        self._tools.set_sampling_model(sampling_model, self._root_capability)

    # -- what runs see of the agent ------------------------------------------------------------------------

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

    def output_json_schema(self, output_type: OutputSpec[Any] | None = None) -> dict[str, Any]:
        """The JSON schema of the agent's output values (of `output_type` if given): what a caller of the
        agent gets back, e.g. to describe it to another system."""
        return output_json_schema(self.output_type if output_type is None else output_type)

    # -- running ----------------------------------------------------------------------------------------------

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

    def iter(
        self,
        user_prompt: str | Sequence[UserContent] | None = None,
        *,
        output_type: OutputSpec[Any] | None = None,
        conversation: Conversation | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        conversation_id: str | None = None,
        run_id: str | None = None,
        model: Model | KnownModelName | None = None,
        instructions: AgentInstructions = None,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model_settings: AgentModelSettings[Any] | None = None,
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
        cancellation_token: CancellationToken | None = None,
        timeout: float | None = None,
        workspace: WorkspaceBackend | WorkspaceRef | Literal['new'] | None = None,
        **deprecated_kwargs: Any,
    ) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, Any]]:
        """Start a run driven node by node: `async with agent.iter(prompt) as run: async for node in run: ...`.

        Takes the same arguments as `run` except `event_stream_handler`. `run.cancel()` (or `cancellation_token`)
        cancels the run: the code driving it sees the event loop's cancellation, and the block ends with
        `RunCancelled`; so does `timeout` (seconds from the start of the run), with `RunTimedOut`. `conversation`
        (a `Conversation`) stands for `message_history`, `usage` and `conversation_id` together (giving one of them
        too is a `UserError`); the result's `conversation` goes on from it. `workspace` is the run's `ctx.workspace`:
        a backend (or `Workspace`) used as it is, a `WorkspaceRef` a capability's `get_workspace` must reach, or
        `'new'` for a fresh one from the capabilities; by default the first one a capability supplies.
        """
        if infer_name:
            self._infer_name(inspect.currentframe())
        message_history, usage, conversation_id, carried = resolve_conversation(
            conversation, message_history=message_history, usage=usage, conversation_id=conversation_id
        )
        return open_run(
            self,
            partial(
                new_run, self, user_prompt, output_type=output_type, message_history=message_history,
                conversation_id=conversation_id, run_id=run_id, model=model, instructions=instructions, deps=deps,
                model_settings=model_settings, usage_limits=usage_limits, usage=usage, metadata=metadata,
                retries=retries, capabilities=capabilities, persistence=persistence, toolsets=toolsets,
                deferred_tool_results=deferred_tool_results, spec=spec, deprecated_kwargs=deprecated_kwargs,
                conversation=carried, workspace=workspace,
            ),
            cancellation_token,
            timeout,
        )  # fmt: skip

    async def resume(
        self,
        persistence: BaseStatePersistence[Any, Any] | str,
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
            persistence: The run's persistence (the same backend and run id it was started with), or the run's id
                when the agent has an `EdgewiseDurability` capability, which stored it.
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
            UserError: the run waits on deferred tool calls and `deferred_tool_results` does not answer them, or a
                run id is given to an agent without an `EdgewiseDurability` capability.
        """
        return await run_for_result(
            self.iter_from_persistence(
                persistence, deps=deps, model=model, model_settings=model_settings, usage_limits=usage_limits,
                deferred_tool_results=deferred_tool_results,
            ),
            event_stream_handler,
        )  # fmt: skip

    def iter_from_persistence(
        self,
        persistence: BaseStatePersistence[Any, Any] | str,
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
        return open_run(
            self,
            partial(
                stored_run, self, persistence, deps=deps, model=model, model_settings=model_settings,
                usage_limits=usage_limits, deferred_tool_results=deferred_tool_results,
            )
        )  # fmt: skip

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
        model_settings: AgentModelSettings[Any] | None = _UNSET,
        metadata: AgentMetadata | None = _UNSET,
        retries: int | AgentRetries | None = _UNSET,
        native_tools: Sequence[AgentNativeTool[AgentDepsT]] = _UNSET,
        spec: dict[str, Any] | AgentSpec | None = None,
        workspace: WorkspaceBackend | WorkspaceRef | Literal['new'] | None = _UNSET,
        **deprecated_kwargs: Any,
    ) -> Iterator[None]:
        """Replace the name, model, deps, tools, toolsets, instructions, model settings, metadata, output retry
        budget, native tools or workspace (what a run's `workspace=` takes) of every run started inside the block
        (e.g. in tests); a run's own arguments for them are then ignored. `builtin_tools=` is the deprecated spelling
        of `native_tools=`."""
        legacy_native = pop_deprecated_builtin_tools(deprecated_kwargs, 'agent.override', has_native_tools=True)
        if deprecated_kwargs:
            raise UserError(f'Unknown keyword arguments: {", ".join(f"`{k}`" for k in deprecated_kwargs)}')
        if native_tools is _UNSET and legacy_native is not None:
            native_tools = legacy_native
        if workspace is not _UNSET:
            check_workspace_argument(workspace)
        spec_capabilities = None
        if spec is not None:  # the spec's fields stand in for the arguments not given
            from ._from_spec import override_from_spec

            from_spec, spec_capabilities = override_from_spec(spec, {
                'name': name, 'model': model, 'instructions': instructions, 'model_settings': model_settings,
                'metadata': metadata, 'retries': retries,
            }, _UNSET, self._deps_type)  # fmt: skip
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
                toolset = AgentFunctionToolset(tools, timeout=self._tool_timeout)
                override_var(self._tools.override_tools, toolset)
            if toolsets is not _UNSET and toolsets is not None:
                override_var(self._tools.override_toolsets, list(toolsets))
            given = {
                'name': name,
                'instructions': instructions if instructions is _UNSET else normalize_instructions(instructions),
                'model_settings': model_settings,
                'metadata': metadata if metadata is _UNSET else [metadata],
                'retries': retries if retries is _UNSET else run_retry_budgets(retries, {}, 'agent.override'),
                'native_tools': native_tools if native_tools is _UNSET else list(native_tools),
                'workspace': workspace,
                'capabilities': _UNSET
                if spec_capabilities is None
                else [c.for_agent(self) for c in as_capabilities(spec_capabilities)],
            }
            override_var(
                self._overrides, {**self._overrides.get(), **{k: v for k, v in given.items() if v is not _UNSET}}
            )
            yield

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

    def to_web(
        self,
        *,
        models: Sequence[Model | KnownModelName | str] | Mapping[str, Model | KnownModelName | str] | None = None,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model_settings: ModelSettings | None = None,
        instructions: str | None = None,
        html_source: str | Path | None = None,
        allowed_hosts: Sequence[str] | None = None,
        native_tools: Sequence[AbstractNativeTool] | None = None,
        persistence: str | Callable[[str], DurableStatePersistence[Any, Any]] | None = None,
    ) -> Starlette:
        """A Starlette app serving a chat page for this agent, offline (the `web` extra; run it with any ASGI server,
        e.g. `uvicorn`). See `edgewise.agent.ui.web.create_web_app`.

        Args:
            models: Models the page offers besides the agent's own: names or models, or a dict of them by label.
            deps: The deps of every run the page starts.
            model_settings: The model settings of every run.
            instructions: Instructions added to those of the agent in every run.
            html_source: Another page to serve instead of the bundled one: a file, or an `http(s)://` URL fetched
                once; `edgewise.agent.ui.OFFLINE_HTML_URL` serves the bundled page as one self-contained
                document, `DEFAULT_HTML_URL` as the default does.
            allowed_hosts: Host names to answer under besides IP addresses and `localhost` (`'chat.example.com'`,
                `'*.example.com'` for subdomains, `'*'` for any); any other `Host` is refused with a 421.
            native_tools: Native tools the user may switch on (Edgewise's addition).
            persistence: Store each chat's turns as durable agent runs: a store URL or a function from a run id to
                a durable persistence (Edgewise's addition).

        Raises:
            UserError: an `allowed_hosts` entry names no domain, or a model name is unknown.
        """
        from ..ui.web import create_web_app

        return create_web_app(
            self,
            models=models,
            native_tools=native_tools,
            deps=deps,
            model_settings=model_settings,
            instructions=instructions,
            html_source=html_source,
            allowed_hosts=allowed_hosts,
            persistence=persistence,
        )

    def __repr__(self) -> str:
        return (
            f'{type(self).__name__}(model={self.model!r}, name={self.name!r}, end_strategy={self.end_strategy!r}, '
            f'model_settings={self.model_settings!r}, output_type={self.output_type!r})'
        )


TOOL_OPTIONS.signed(Agent.tool)
TOOL_OPTIONS.signed(Agent.tool_plain)
