"""The setup of an agent's runs: what prepares a new run (`new_run`) or a stored one (`stored_run`) for `open_run`
(`_run_opening`), the one setup every run goes through; `configure_run` makes a run's deps from the agent, its
overrides and capabilities, and the run's arguments.

These are functions of the `Agent` they are given (the class keeps its public methods, with their typed
overloads, in `agent/__init__.py`); they read the agent's private configuration, which is why they live in
this package.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from functools import partial
from types import NoneType
from typing import TYPE_CHECKING, Any, Literal, Protocol

from edgewise.graph import BaseStatePersistence, GraphRun

from .. import _instrument
from .._functions.runners import (
    OutputValidator,
    SystemPromptRunner,
    keyed_capability_instructions,
    normalize_instructions,
)
from .._loop.agent_run import AgentRun, bind_captured_messages
from .._loop.history import (
    check_prompt_fits,
    close_interrupted_calls,
    has_adjacent_same_kind,
    has_tool_deltas,
    merge_adjacent,
    validate_history,
)
from .._loop.nodes import UserPromptNode, agent_graph
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
    run_retry_budgets,
    settings_resolver,
)
from .._run.result import FinalResult
from .._run.state import GraphAgentState, resolve_conversation_id, resolve_run_id
from .._tools.deferred_calls import DeferredToolResults
from ..capabilities import AgentCapability
from ..capabilities._dynamic import as_capabilities, configured_for_run
from ..capabilities._loaded_on_demand import deferred_run_capabilities
from ..capabilities.abstract import LIFECYCLE_HOOKS, AbstractCapability
from ..capabilities.combined import CombinedCapability, combined_or_none
from ..capabilities.durability import durability_of
from ..capabilities.durable_operation import run_operations
from ..capabilities.instrumentation import Instrumentation
from ..conversation import RUN_CONVERSATION, RunConversation
from ..exceptions import UserError
from ..messages import ModelMessage, ModelRequest, UserContent
from ..models import KnownModelName, Model
from ..models.instrumented import InstrumentationSettings, InstrumentedModel
from ..output import OutputSpec
from ..settings import ModelSettings
from ..tools import AgentNativeTool, RunContext
from ..toolsets import AbstractToolset
from ..usage import RunUsage, UsageLimits
from ..workspaces import WorkspaceBackend, WorkspaceRef
from ._model_choice import NO_MODEL, ModelChoice, choose_model, infer_agent_model
from ._run_opening import NO_TOOLSET_YET, PreparedRun
from ._run_workspace import (
    check_workspace_argument,
    history_workspace_ref,
    refuse_unresolved_workspace,
    select_workspace,
)
from ._toolsets import AgentToolsets

if TYPE_CHECKING:
    from ._from_spec import AgentSpec

_NO_HOOKS: frozenset[str] = frozenset()
_NO_USAGE = RunUsage()  # never changed: a run given no usage starts from a copy of it


class SetUpAgent(Protocol):
    """What the run setup reads of an `Agent`: its configuration (set in `Agent.__init__`) and its overrides."""

    model: Model | KnownModelName | None
    model_settings: AgentModelSettings[Any] | None
    validation_context: Any
    end_strategy: EndStrategy
    _inferred_model: tuple[str, Model] | None
    _entered_model: tuple[Model | str, Model] | None
    _deps_type: Any
    _output_schema: Any
    _output_validators: list[OutputValidator]
    _metadata: AgentMetadata | None
    _limiter: Any
    _capabilities: list[AgentCapability[Any]]
    _native_tools: list[AgentNativeTool[Any]]
    _max_tool_retries: int
    _max_output_retries: int
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
    model_settings: AgentModelSettings[Any] | None,
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
    conversation: RunConversation | None = None,
    workspace: WorkspaceBackend | WorkspaceRef | Literal['new'] | None = None,
) -> PreparedRun:
    """A new run (`iter`), prepared: its deps and state from the agent and the arguments, its toolset made (not
    entered), its graph run ready to open at the user prompt node, and the metadata computed again at its end."""
    # The warnings name the run's entry point (`agent.run`, ...) and point at the application's call of it.
    run_native_tools = pop_deprecated_builtin_tools(deprecated_kwargs) if deprecated_kwargs else None
    budgets = AgentRetries()
    if retries is not None or deprecated_kwargs:
        budgets = run_retry_budgets(retries, deprecated_kwargs)
    spec_metadata = None
    if spec is not None:  # the spec fills in what the run leaves unset, and adds to the rest
        from ._from_spec import run_from_spec  # (specs are loaded only by the programs that use them)

        model, budgets, instructions, model_settings, capabilities, spec_metadata = run_from_spec(
            spec, model, budgets, instructions, model_settings, capabilities, agent._deps_type
        )
    history = validate_history(message_history)
    run_id = resolve_run_id(run_id, history)
    stored_by = None
    agent_capabilities = agent._overrides.get().get('capabilities', agent._capabilities)
    capable = bool(capabilities or agent_capabilities)  # (a run without any skips looking through them)
    if persistence is None and capable:  # a durability capability stores the run
        durability = durability_of([*agent_capabilities, *(capabilities or ())])
        if durability is not None:
            persistence = stored_by = durability.persistence(run_id)
            run_id = getattr(persistence, 'run_id', run_id)
    if capabilities:
        capabilities = [c.for_agent(agent) for c in as_capabilities(capabilities)]  # bound once per run
    run_usage = usage or _NO_USAGE.__copy__()  # (a `RunUsage()`, at two thirds of its cost)
    choice: ModelChoice | None = None
    if capable:
        choice = await choose_model(
            agent, model, combined_or_none(_run_capabilities(agent, capabilities)),
            deps=resolve_deps(agent, deps), history=history, usage=run_usage,
        )  # fmt: skip
    else:
        run_deps = resolve_deps(agent, deps)
        raw = agent._override_model.get() or model or agent.model
        if raw is None or isinstance(raw, str):  # no model, or an id to resolve (the agent's entered model, say)
            choice = await choose_model(agent, model, None, deps=run_deps, history=history, usage=run_usage)
        # else a model and no capability to pick another: `configure_run` takes it as the run's, as the choice would
    configure = partial(
        configure_run, agent, model=model, deps=deps, model_settings=model_settings, usage_limits=usage_limits,
        capabilities=capabilities, instructions=instructions, output_type=output_type,
        retries=budgets, persistence=persistence, native_tools=run_native_tools, choice=choice,
    )  # fmt: skip
    graph_deps = configure()
    overrides = agent._overrides.get()
    if history:  # (an empty one has no call to close, no message to merge, no call to answer)
        history = close_interrupted_calls(history, user_prompt is not None)  # a history a cancelled run left
        if len(history) > 1 and has_adjacent_same_kind(history):
            history = merge_adjacent(history)  # as pydantic-ai keeps a given history
        if deferred_tool_results is None:  # with results, a prompt follows the answers to the open calls
            check_prompt_fits(user_prompt, history)
    state = GraphAgentState.started(
        message_history=bind_captured_messages(history),
        usage=run_usage,
        conversation_id=resolve_conversation_id(conversation_id, history),
        run_id=run_id,
    )
    if conversation is not None:  # beside the state, not stored with it: for the result's `conversation`
        state.__dict__[RUN_CONVERSATION] = conversation
    graph_deps.prompt = user_prompt
    metadata_layers = overrides.get('metadata', [agent._metadata, spec_metadata, metadata])
    metadata_layers = [m for m in metadata_layers if m is not None]
    if metadata_layers:  # before `for_run`, whose context carries it
        state.metadata = resolve_metadata(metadata_layers, graph_deps.run_context(state))
    workspace = overrides.get('workspace', workspace)  # `agent.override(workspace=...)`'s wins over the run's
    if workspace is None and graph_deps.root_capability is None:
        # No workspace asked for, and no capability to supply one or to be made for the run: the run only carries
        # the workspace ref of its history.
        graph_deps.carried_workspace_ref = history_workspace_ref(state) if state.message_history else None
    else:
        graph_deps = await _with_workspace(graph_deps, state, workspace, configure, choice)
    graph_deps.new_message_index = len(history)
    graph_deps.merge_adjacent = bool(history) and isinstance(history[-1], ModelRequest)
    graph_deps.tool_deltas = bool(history) and has_tool_deltas(history)
    finish = None
    if metadata_layers:

        def finish(agent_run: AgentRun[Any, Any]) -> None:
            if agent_run.result is not None:
                state.metadata = resolve_metadata(metadata_layers, graph_deps.run_context(state))

    run_toolset = await agent._tools.for_run(graph_deps, state, toolsets, graph_deps.default_tool_retries)
    start: UserPromptNode[Any, Any] = UserPromptNode(user_prompt, deferred_tool_results)
    opening = agent_graph().iter(start, state=state, deps=graph_deps, persistence=persistence, infer_name=False)
    if stored_by is not None:
        opening = _closing_after(stored_by, opening)
    return graph_deps, run_toolset, opening, finish


async def _with_workspace(
    graph_deps: GraphAgentDeps[Any, Any],
    state: GraphAgentState,
    workspace: WorkspaceBackend | WorkspaceRef | Literal['new'] | None,
    configure: Callable[..., GraphAgentDeps[Any, Any]],
    choice: ModelChoice | None,
) -> GraphAgentDeps[Any, Any]:
    """The deps of a new run once its workspace is chosen (the one given, else a capability's) and its capabilities
    are made for it (`for_run`, which may use the workspace; new deps when some capability changed).

    Raises:
        UserError: `workspace` is no workspace, or one asked for (or the history's) that no capability supplies.
    """
    check_workspace_argument(workspace)
    history_ref = history_workspace_ref(state)
    graph_deps.carried_workspace_ref = None if workspace == 'new' else history_ref
    chosen = select_workspace(graph_deps, state, workspace)  # before `for_run`, which may use it
    configured = await configured_for_run(graph_deps, state, configure)
    if configured is not graph_deps:  # capabilities made for the run: their model pick decides now
        assert choice is not None  # (a run with capabilities has its model chosen by `choose_model`)
        configured.workspace = graph_deps.workspace
        if not chosen:  # a workspace capability that only `for_run` made
            chosen = select_workspace(configured, state, workspace)
        configured.model = await choice.after_for_run(configured.root_capability)
        configured.model_choice = choice if choice.picked or choice.selector is not None else None
        configured.model_id = choice.model_id
        graph_deps = configured
    if not chosen:
        refuse_unresolved_workspace(graph_deps, workspace, history_ref=history_ref)
    return graph_deps


def _stores_waiting(persistence: BaseStatePersistence[Any, Any] | None) -> bool:
    """Whether `persistence` is a durable store (it keeps what a waiting run waits on)."""
    if persistence is None:
        return False
    # Imported here: a run without a persistence (and the agent's import) never loads the durable stores.
    from edgewise.graph.persistence.store import DurableStatePersistence

    return isinstance(persistence, DurableStatePersistence)


def configure_run(
    agent: SetUpAgent,
    *,
    model: Model | KnownModelName | None,
    deps: Any,
    model_settings: AgentModelSettings[Any] | None,
    usage_limits: UsageLimits | None,
    capabilities: Sequence[AgentCapability[Any]] | None,
    instructions: AgentInstructions,
    output_type: OutputSpec[Any] | None,
    retries: AgentRetries,
    persistence: BaseStatePersistence[Any, Any] | None,
    native_tools: Sequence[AgentNativeTool[Any]] | None = None,
    resolved: Sequence[AgentCapability[Any]] | None = None,
    choice: ModelChoice | None = None,
) -> GraphAgentDeps[Any, Any]:
    """The deps of a run, new (`iter`) or resumed (`resume`): the agent's configuration, its overrides and
    capabilities, the run's arguments; the caller sets what depends on the history (`prompt`,
    `new_message_index`, `merge_adjacent`); `retries`: the run's retry budgets (an `override(retries=...)` block
    wins over them, and they over the agent's); `resolved`: the run's capabilities as made for it (`for_run`);
    `choice`: the run's model, as chosen before (else the run's, the override's or the agent's)."""
    overrides = agent._overrides.get()
    if overrides and 'retries' in overrides:
        retries = AgentRetries(**{**retries, **overrides['retries']})
    model_used = resolve_model(agent, model) if choice is None else choice.model
    assert model_used is not None  # a choice has its model
    traced_as: InstrumentationSettings | None = None
    if isinstance(model_used, InstrumentedModel):  # the run's spans are the model's: it is traced with its settings
        traced_as, model_used = model_used.instrumentation_settings, model_used.wrapped
    deps = resolve_deps(agent, deps)
    if output_type is not None and agent._output_validators:
        raise UserError('Cannot set a custom run `output_type` when the agent has output validators')
    schema = agent._output_schema if output_type is None else build_output_schema(output_type)
    schema = schema_for_profile(schema, model_used.profile)
    if resolved is not None:
        caps = deferred_run_capabilities(as_capabilities(resolved))
    elif capabilities or overrides.get('capabilities', agent._capabilities):
        caps = deferred_run_capabilities(_run_capabilities(agent, capabilities))
    else:
        caps = []  # (a run without capabilities: none to wrap, gate, combine or ask for hooks)
    run_instructions = overrides.get('instructions')
    if run_instructions is None:  # an override replaces every other instruction, the capabilities' too
        run_instructions = agent._instructions
        if caps or instructions is not None:
            run_instructions = [*run_instructions]
            for cap in caps:
                run_instructions += _capability_instructions(cap)
            run_instructions += normalize_instructions(instructions)
    layers: list[Any] = [c.get_model_settings() for c in caps]
    if 'model_settings' in overrides:
        layers.append(overrides['model_settings'])
    else:
        layers += [agent.model_settings, model_settings]
    layers = [x for x in layers if x is not None]
    static_settings, resolver = settings_resolver(model_used.settings, layers)
    if choice is not None and choice.selector is not None:  # the model, and its settings, may change per step
        static_settings, resolver = None, partial(_step_settings, layers)
    tool_choice = static_settings.get('tool_choice') if static_settings else None
    if tool_choice == 'required' or isinstance(tool_choice, list):
        raise UserError(
            f'`tool_choice={tool_choice!r}` prevents the agent from producing a final response because output '
            'tools are excluded. Use `ToolOrOutput` to combine specific function tools with output capability, '
            "or return a callable from a capability's `get_model_settings()` (or give `model_settings` as a "
            'function of the run context) to vary `tool_choice` per step.'
        )
    root = combined_or_none(caps) if caps else None
    tracing = _instrument.TRACING and (traced_as is not None or agent._tracing(caps))  # (none without logfire)
    instrumentation = _run_instrumentation(agent, caps, traced_as)
    graph_deps: GraphAgentDeps[Any, Any] = GraphAgentDeps.made_from(
        {  # (every required field)
            'user_deps': deps,
            'prompt': None,  # the run's, set by the caller
            'new_message_index': 0,
            'model': model_used,
            'model_settings': static_settings,
            'settings_resolver': resolver,
            'request_hooks': [c for c in caps if c.has_request_hook()] if caps else [],
            'root_capability': root,
            'hooked': frozenset(h for h in LIFECYCLE_HOOKS if root.overrides(h)) if root is not None else _NO_HOOKS,
            'native_tools': run_native_tools(overrides, agent._native_tools, agent._capabilities, caps, native_tools),
            'tracing': tracing,
            'instrumentation': instrumentation,
            'trace_include_content': tracing and instrumentation.include_content,
            'validation_context': agent.validation_context,
            'usage_limits': usage_limits or UsageLimits(),
            'max_result_retries': retries.get('output', agent._max_output_retries),
            'default_tool_retries': retries.get('tools', agent._max_tool_retries),
            'end_strategy': agent.end_strategy,
            'output_schema': schema,
            'output_validators': agent._output_validators,
            'toolset': agent._tools.function_toolset,
            'instructions': run_instructions,
            'system_prompts': agent._system_prompts,
            'agent_name': agent.name,
            'agent': agent,
            'persistence': persistence,
            'stores_waiting': _stores_waiting(persistence),
            'model_choice': choice if choice is not None and (choice.picked or choice.selector is not None) else None,
            'model_id': _model_id(agent, model) if choice is None else choice.model_id,
        }
    )
    if graph_deps.persistence is not None and (operations := run_operations(caps)):  # durable: journaled
        from .._run.operation_journal import OperationJournal  # (loaded by the first run with durable operations)

        graph_deps.operation_journal = OperationJournal(graph_deps.persistence, operations)
    return graph_deps


def _run_instrumentation(
    agent: SetUpAgent, caps: Sequence[AbstractCapability[Any]], traced_as: InstrumentationSettings | None
) -> InstrumentationSettings:
    """The run's tracing options: its `Instrumentation` capability's, else those of the `InstrumentedModel` it was
    given (`traced_as`), else the agent's."""
    if traced_as is not None and not any(isinstance(c, Instrumentation) for c in caps):
        return traced_as
    return agent._instrumentation_settings(caps)


def _capability_instructions(capability: AbstractCapability[Any]) -> list[Any]:
    """The instructions of `capability` as items of the run's instructions: those of a capability with an `id` keyed
    as its own block, `capability:<id>` (pydantic-ai 2.68), each capability of a plain `CombinedCapability` on its
    own."""
    if isinstance(capability, CombinedCapability) and (
        type(capability).get_instructions is CombinedCapability.get_instructions
    ):
        return [item for inner in capability.capabilities for item in _capability_instructions(inner)]
    items = normalize_instructions(capability.get_instructions())
    if capability.id is None or not items:
        return items
    return keyed_capability_instructions(capability.id, items)


def _run_capabilities(
    agent: SetUpAgent, capabilities: Sequence[AgentCapability[Any]] | None
) -> list[AbstractCapability[Any]]:
    """The run's capabilities, functions wrapped: the agent's (or the override's), then the run's."""
    return as_capabilities([*agent._overrides.get().get('capabilities', agent._capabilities), *(capabilities or ())])


def _model_id(agent: SetUpAgent, model: Model | KnownModelName | None) -> str | None:
    chosen = agent._override_model.get() or model or agent.model
    return chosen if isinstance(chosen, str) else None


def _step_settings(layers: Sequence[Any], ctx: RunContext[Any]) -> ModelSettings | None:
    """The settings of a request whose model a selector chose: the step's model's settings under the layers."""
    static, resolve = settings_resolver(ctx.model.settings, layers)
    return static if resolve is None else resolve(ctx)


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
    from ._resume import check_stored_answers, deferred_answers  # only resuming runs read stored answers

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
        instructions=None, output_type=None, retries=AgentRetries(), persistence=persistence,
    )  # fmt: skip
    answers = graph_deps.deferred_tool_results = deferred_answers(deferred_tool_results)
    if answers is not None:
        await check_stored_answers(persistence, answers)
    opening = stored_graph_run(agent, persistence, graph_deps)
    if stored_by is not None:
        opening = _closing_after(stored_by, opening)
    return graph_deps, NO_TOOLSET_YET, opening, None


@asynccontextmanager
async def stored_graph_run(
    agent: SetUpAgent, persistence: BaseStatePersistence[Any, Any], graph_deps: GraphAgentDeps[Any, Any]
) -> AsyncIterator[GraphRun[GraphAgentState, GraphAgentDeps[Any, Any], FinalResult[Any]]]:
    from ._resume import check_claimed_answers, restore_history

    async with agent_graph().iter_from_persistence(persistence, deps=graph_deps, infer_name=False) as graph_run:
        # Held by this process now: the history read here is the one the run goes on from.
        check_claimed_answers(persistence, graph_run.next_node, graph_deps.deferred_tool_results)
        await restore_history(graph_run, persistence, graph_deps)
        # Chosen again (a live workspace is never stored): `agent.override(workspace=...)`'s, else as the history says.
        workspace = agent._overrides.get().get('workspace')
        # As a new run: a run without a workspace of its own records the one its history worked in.
        graph_deps.carried_workspace_ref = None if workspace == 'new' else history_workspace_ref(graph_run.state)
        if not select_workspace(graph_deps, graph_run.state, workspace) and workspace is not None:
            refuse_unresolved_workspace(graph_deps, workspace)
        async with await agent._tools.for_run(graph_deps, graph_run.state, None, graph_deps.default_tool_retries):
            yield graph_run


def resolve_model(agent: SetUpAgent, model: Model | KnownModelName | None) -> Model:
    """The model given to the run, the override's or the agent's, without the capabilities (a stored run)."""
    chosen = agent._override_model.get() or model or agent.model
    if chosen is None:
        raise UserError(NO_MODEL)
    return infer_agent_model(agent, chosen) if isinstance(chosen, str) else chosen


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
