"""The setup of an agent's runs: `open_run`, the one setup every run goes through, and what prepares a new run
(`new_run`) or a stored one (`stored_run`) for it; `configure_run` makes a run's deps from the agent, its
overrides and capabilities, and the run's arguments.

These are functions of the `Agent` they are given (the class keeps its public methods, with their typed
overloads, in `agent/__init__.py`); they read the agent's private configuration, which is why they live in
this package.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from contextvars import ContextVar
from functools import partial
from types import NoneType
from typing import Any, Protocol, TypeAlias

from edgewise.graph import BaseStatePersistence, GraphRun
from edgewise.graph.persistence.store import DurableStatePersistence

from .. import _instrument, models
from .._functions.runners import OutputValidator, SystemPromptRunner, normalize_instructions
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
    pop_deprecated_builtin_tools,
    resolve_metadata,
    run_native_tools,
    run_output_retries,
    settings_resolver,
)
from .._run.result import FinalResult
from .._run.state import GraphAgentState, resolve_conversation_id, resolve_run_id
from .._tools.deferred_calls import DeferredToolResults
from ..capabilities import AgentCapability
from ..capabilities._dynamic import as_capabilities, configured_for_run
from ..capabilities._loaded_on_demand import deferred_run_capabilities
from ..capabilities.abstract import LIFECYCLE_HOOKS
from ..capabilities.combined import combined_or_none
from ..capabilities.durability import durability_of
from ..capabilities.thread_executor import run_thread_executor
from ..concurrency import concurrency_slot
from ..exceptions import UserError
from ..messages import ModelMessage, ModelRequest, UserContent
from ..models import KnownModelName, Model
from ..models.instrumented import InstrumentationSettings
from ..output import OutputSpec
from ..settings import ModelSettings
from ..tools import (
    AgentNativeTool,
)
from ..toolsets import AbstractToolset
from ..usage import RunUsage, UsageLimits
from ._from_spec import AgentSpec, run_from_spec
from ._resume import check_claimed_answers, check_stored_answers, deferred_answers, restore_history
from ._toolsets import AgentToolsets

_NO_TOOLSET_YET: AbstractAsyncContextManager[None] = nullcontext()  # a stored run's toolset comes with its graph run


class SetUpAgent(Protocol):
    """What the run setup reads of an `Agent`: its configuration (set in `Agent.__init__`) and its overrides."""

    model: Model | KnownModelName | None
    model_settings: AgentModelSettings | None
    validation_context: Any
    end_strategy: EndStrategy
    _inferred_model: tuple[str, Model] | None
    _deps_type: Any
    _output_schema: Any
    _output_validators: list[OutputValidator]
    _metadata: AgentMetadata | None
    _limiter: Any
    _capabilities: list[AgentCapability[Any]]
    _native_tools: list[AgentNativeTool[Any]]
    _default_retries: int
    _max_result_retries: int
    _instructions: list[Any]
    _system_prompts: list[str | SystemPromptRunner]
    _tools: AgentToolsets[Any]
    _override_model: ContextVar[Model | KnownModelName | None]
    _override_deps: ContextVar[tuple[Any] | None]
    _overrides: ContextVar[dict[str, Any]]

    @property
    def name(self) -> str | None: ...

    def _tracing(self, capabilities: Sequence[Any]) -> bool: ...

    def _instrumentation_settings(self, capabilities: Sequence[Any]) -> InstrumentationSettings: ...


@asynccontextmanager
async def _closing_after(persistence: BaseStatePersistence[Any, Any], opening: AbstractAsyncContextManager[Any]) -> Any:
    """`opening`, then `persistence` closed: a persistence that a durability capability made for the run."""
    close = getattr(persistence, 'aclose', None)
    try:
        async with opening as graph_run:
            yield graph_run
    finally:
        if close is not None:
            await close()


PreparedRun: TypeAlias = tuple[
    GraphAgentDeps[Any, Any],
    AbstractAsyncContextManager[Any],
    AbstractAsyncContextManager[GraphRun[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]],
    Callable[[AgentRun[Any, Any]], None] | None,
]
"""A run ready to start: its deps, the toolset to enter before its graph run opens, the graph run to open, and
what to do at its end (given the run)."""


@asynccontextmanager
async def open_run(
    agent: SetUpAgent, prepare: Callable[[], Awaitable[PreparedRun]]
) -> AsyncIterator[AgentRun[Any, Any]]:
    """The one setup of every run, new (`iter`) or stored (`iter_from_persistence`): `prepare()` configures it;
    then the agent's concurrency slot, the run's span and thread executor, the toolset and the graph run that
    `prepare` made, the `AgentRun`, and the capabilities' run hooks around it."""
    graph_deps, toolset, opening, finish = await prepare()
    async with concurrency_slot(agent._limiter, f'agent:{agent.name or "agent"}'):
        with _instrument.span_if(
            graph_deps.tracing, 'agent run', agent_name=agent.name or 'agent', model_name=graph_deps.model.model_name
        ) as run_span, run_thread_executor(graph_deps.root_capability):  # fmt: skip
            async with toolset, opening as graph_run:
                agent_run = AgentRun(graph_run)
                try:
                    if graph_deps.hooked & RUN_HOOKS:
                        context = graph_deps.run_context(graph_run.state)
                        async with wrapped_run(graph_deps.root_capability, context, agent_run):
                            yield agent_run
                    else:
                        yield agent_run
                finally:
                    if run_span is not None:
                        # The run's total usage, as pydantic-ai 2.x's format 5 gives it on the run span.
                        settings = graph_deps.instrumentation
                        run_span.set_attributes(settings.aggregated_usage_attributes(graph_run.state.usage))
            if finish is not None:
                finish(agent_run)


async def new_run(
    agent: SetUpAgent,
    user_prompt: str | Sequence[UserContent] | None,
    *,
    output_type: OutputSpec[Any] | None,
    message_history: Sequence[ModelMessage] | None,
    conversation_id: str | None,
    run_id: str | None,
    model: Model | KnownModelName | None,
    instructions: AgentInstructions,
    deps: Any,
    model_settings: AgentModelSettings | None,
    usage_limits: UsageLimits | None,
    usage: RunUsage | None,
    metadata: AgentMetadata | None,
    retries: int | AgentRetries | None,
    capabilities: Sequence[AgentCapability[Any]] | None,
    persistence: BaseStatePersistence[Any, Any] | None,
    toolsets: Sequence[AbstractToolset[Any]] | None,
    deferred_tool_results: DeferredToolResults | None,
    spec: dict[str, Any] | AgentSpec | None,
    deprecated_kwargs: dict[str, Any],
) -> PreparedRun:
    """A new run (`iter`), prepared: its deps and state from the agent and the arguments, its toolset made (not
    entered), its graph run ready to open at the user prompt node, and the metadata computed again at its end."""
    # The warnings name the caller of `iter`: past this method, `_run` and the context manager's `__aenter__`.
    run_native_tools = pop_deprecated_builtin_tools(deprecated_kwargs, 'agent.iter', stacklevel=5)
    output_retries = None
    if retries is not None or deprecated_kwargs:
        output_retries = run_output_retries(retries, deprecated_kwargs, 'agent.iter', stacklevel=5)
    spec_metadata = None
    if spec is not None:  # the spec fills in what the run leaves unset, and adds to the rest
        model, output_retries, instructions, model_settings, capabilities, spec_metadata = run_from_spec(
            spec, model, output_retries, instructions, model_settings, capabilities
        )
    history = validate_history(message_history)
    run_id = resolve_run_id(run_id, history)
    stored_by = None
    if persistence is None:  # a durability capability stores the run
        durability = durability_of(
            [*agent._overrides.get().get('capabilities', agent._capabilities), *(capabilities or ())]
        )
        if durability is not None:
            persistence = stored_by = durability.persistence(run_id)
            run_id = getattr(persistence, 'run_id', run_id)
    configure = partial(
        configure_run, agent, model=model, deps=deps, model_settings=model_settings, usage_limits=usage_limits,
        capabilities=capabilities, instructions=instructions, output_type=output_type,
        output_retries=output_retries, persistence=persistence, native_tools=run_native_tools,
    )  # fmt: skip
    graph_deps = configure()
    overrides = agent._overrides.get()
    if len(history) > 1 and has_adjacent_same_kind(history):
        history = merge_adjacent(history)  # as pydantic-ai keeps a given history
    if deferred_tool_results is None:  # with results, a prompt follows the answers to the open calls
        check_prompt_fits(user_prompt, history)
    state = GraphAgentState(
        message_history=bind_captured_messages(history),
        usage=usage or RunUsage(),
        conversation_id=resolve_conversation_id(conversation_id, history),
        run_id=run_id,
    )
    graph_deps.prompt = user_prompt
    graph_deps = await configured_for_run(graph_deps, state, configure)
    graph_deps.new_message_index = len(history)
    graph_deps.merge_adjacent = bool(history) and isinstance(history[-1], ModelRequest)
    metadata_layers = overrides.get('metadata', [agent._metadata, spec_metadata, metadata])
    metadata_layers = [m for m in metadata_layers if m is not None]
    finish = None
    if metadata_layers:
        state.metadata = resolve_metadata(metadata_layers, graph_deps.run_context(state))

        def finish(agent_run: AgentRun[Any, Any]) -> None:
            if agent_run.result is not None:
                state.metadata = resolve_metadata(metadata_layers, graph_deps.run_context(state))

    run_toolset = await agent._tools.for_run(graph_deps, state, toolsets, agent._default_retries)
    start: UserPromptNode[Any, Any] = UserPromptNode(user_prompt, deferred_tool_results)
    opening = agent_graph().iter(start, state=state, deps=graph_deps, persistence=persistence, infer_name=False)
    if stored_by is not None:
        opening = _closing_after(stored_by, opening)
    return graph_deps, run_toolset, opening, finish


def configure_run(
    agent: SetUpAgent,
    *,
    model: Model | KnownModelName | None,
    deps: Any,
    model_settings: AgentModelSettings | None,
    usage_limits: UsageLimits | None,
    capabilities: Sequence[AgentCapability[Any]] | None,
    instructions: AgentInstructions,
    output_type: OutputSpec[Any] | None,
    output_retries: int | None,
    persistence: BaseStatePersistence[Any, Any] | None,
    native_tools: Sequence[AgentNativeTool[Any]] | None = None,
    resolved: Sequence[AgentCapability[Any]] | None = None,
) -> GraphAgentDeps[Any, Any]:
    """The deps of a run, new (`iter`) or resumed (`resume`): the agent's configuration, its overrides and
    capabilities, the run's arguments; the caller sets what depends on the history (`prompt`,
    `new_message_index`, `merge_adjacent`); `resolved`: the run's capabilities as made for it (`for_run`)."""
    overrides = agent._overrides.get()
    if overrides:
        output_retries = overrides.get('retries', output_retries)
    model_used = resolve_model(agent, model)
    deps = resolve_deps(agent, deps)
    if output_type is not None and agent._output_validators:
        raise UserError('Cannot set a custom run `output_type` when the agent has output validators')
    schema = agent._output_schema if output_type is None else build_output_schema(output_type)
    schema = schema_for_profile(schema, model_used.profile)
    caps = as_capabilities([*overrides.get('capabilities', agent._capabilities), *(capabilities or ())])
    caps = deferred_run_capabilities(caps if resolved is None else as_capabilities(resolved))
    run_instructions = overrides.get('instructions')
    if run_instructions is None:  # an override replaces every other instruction, the capabilities' too
        run_instructions = agent._instructions
        if caps or instructions is not None:
            run_instructions = [*run_instructions]
            for cap in caps:
                run_instructions += normalize_instructions(cap.get_instructions())
            run_instructions += normalize_instructions(instructions)
    layers: list[Any] = [c.get_model_settings() for c in caps]
    if 'model_settings' in overrides:
        layers.append(overrides['model_settings'])
    else:
        layers += [agent.model_settings, model_settings]
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
    graph_deps: GraphAgentDeps[Any, Any] = GraphAgentDeps(
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
            agent._overrides.get(), agent._native_tools, agent._capabilities, caps, native_tools
        ),
        tracing=agent._tracing(caps),
        instrumentation=agent._instrumentation_settings(caps),
        validation_context=agent.validation_context,
        usage_limits=usage_limits or UsageLimits(),
        max_result_retries=agent._max_result_retries if output_retries is None else output_retries,
        default_tool_retries=agent._default_retries,
        end_strategy=agent.end_strategy,
        output_schema=schema,
        output_validators=agent._output_validators,
        toolset=agent._tools.function_toolset,
        instructions=run_instructions,
        system_prompts=agent._system_prompts,
        agent_name=agent.name,
        agent=agent,
        persistence=persistence,
        stores_waiting=isinstance(persistence, DurableStatePersistence),
    )
    return graph_deps


async def stored_run(
    agent: SetUpAgent,
    persistence: BaseStatePersistence[Any, Any] | str,
    *,
    deps: Any,
    model: Model | KnownModelName | None,
    model_settings: ModelSettings | None,
    usage_limits: UsageLimits | None,
    deferred_tool_results: DeferredToolResults | Mapping[str, Any] | None,
) -> PreparedRun:
    """A stored run (`iter_from_persistence`), prepared: configured as a new run of the agent is (its overrides,
    capabilities, instrumentation, validation context and concurrency limit) with the deps, model and settings
    given now; its graph run opens from the persistence, and then makes and enters the run's toolset."""
    stored_by = None
    if isinstance(persistence, str):  # a run id: the durability capability's store holds the run
        durability = durability_of(agent._overrides.get().get('capabilities', agent._capabilities))
        if durability is None:
            raise UserError(
                f'Cannot resume run {persistence!r} by its id: the agent has no `EdgewiseDurability` capability '
                "naming the store that holds it. Pass the run's persistence instead, or add the capability."
            )
        persistence = stored_by = durability.persistence(persistence)
    graph_deps = configure_run(
        agent,
        model=model, deps=deps, model_settings=model_settings, usage_limits=usage_limits, capabilities=None,
        instructions=None, output_type=None, output_retries=None, persistence=persistence,
    )  # fmt: skip
    answers = graph_deps.deferred_tool_results = deferred_answers(deferred_tool_results)
    if answers is not None:
        await check_stored_answers(persistence, answers)
    opening = stored_graph_run(agent, persistence, graph_deps)
    if stored_by is not None:
        opening = _closing_after(stored_by, opening)
    return graph_deps, _NO_TOOLSET_YET, opening, None


@asynccontextmanager
async def stored_graph_run(
    agent: SetUpAgent, persistence: BaseStatePersistence[Any, Any], graph_deps: GraphAgentDeps[Any, Any]
) -> AsyncIterator[GraphRun[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]]:
    async with agent_graph().iter_from_persistence(persistence, deps=graph_deps, infer_name=False) as graph_run:
        # Held by this process now: the history read here is the one the run goes on from.
        check_claimed_answers(persistence, graph_run.next_node, graph_deps.deferred_tool_results)
        await restore_history(graph_run, persistence, graph_deps)
        async with await agent._tools.for_run(graph_deps, graph_run.state, None, agent._default_retries):
            yield graph_run


def resolve_model(agent: SetUpAgent, model: Model | KnownModelName | None) -> Model:
    override = agent._override_model.get()
    if override is not None and model is None and agent.model is None:
        raise UserError(
            '`model` must either be set on the agent or included when calling it. '
            '(Even when `override(model=...)` is customizing the model that will actually be called)'
        )
    chosen = override or model or agent.model
    if chosen is None:
        raise UserError('`model` must either be set on the agent or included when calling it.')
    if isinstance(chosen, str) and chosen == agent.model:
        # The agent's own model is inferred once, so that its provider's HTTP client serves every run.
        if agent._inferred_model is None or agent._inferred_model[0] != chosen:
            agent._inferred_model = (chosen, models.infer_model(chosen))
        return agent._inferred_model[1]
    return models.infer_model(chosen)


def resolve_deps(agent: SetUpAgent, deps: Any) -> Any:
    if (override := agent._override_deps.get()) is not None:
        return override[0]
    deps_type = agent._deps_type
    if isinstance(deps_type, type) and deps_type is not NoneType and not isinstance(deps, deps_type):
        raise UserError(
            f'Agent {agent.name or "[unnamed]"!r} expects deps of type {deps_type.__name__}, got '
            f'{type(deps).__name__}: pass `deps=` a {deps_type.__name__} instance.'
        )
    return deps
