"""The dependencies of an agent run's graph nodes: the agent's configuration, the model, the user's deps (per
run, never persisted), with the checks the nodes make against them."""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias

from typing_extensions import TypeIs, TypeVar

from edgewise.graph import BaseStatePersistence, GraphRunContext

from .._functions.runners import (
    CapabilityInstructionRunner,
    InstructionsItem,
    OutputValidator,
    SystemPromptRunner,
    call_user_function,
)
from .._message_flow.cancellation import RunCancellation
from .._output.schema import OutputSchema
from .._tools.deferred_calls import DeferredToolResults
from .._utils import field_defaults
from ..exceptions import UserError
from ..messages import (
    AgentInstructionSource,
    CapabilityLoadDeltaPart,
    InstructionId,
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ToolAvailabilityDeltaPart,
    UserContent,
)
from ..models import Model
from ..models.instrumented import InstrumentationSettings
from ..native_tools import AbstractNativeTool
from ..settings import ModelSettings
from ..tools import AgentNativeTool, RunContext, ToolDefinition
from ..toolsets import AbstractToolset, ToolsetTool
from ..toolsets._default_methods import gives_no_instructions
from ..usage import RequestUsage, RunUsage, UsageLimits
from ..workspaces import Workspace, WorkspaceRef
from .history_scan import HistoryScan
from .state import GraphAgentState

if TYPE_CHECKING:  # (made by the first traced response: a run without logfire never loads it)
    from ..models._cache_health import CacheHealthDetector
    from .operation_journal import OperationJournal  # (made by durable runs with operations only)

__all__ = (
    'stored_through',
    'token_check',
    'check_uncommitted_usage',
    'check_continuation_usage',
    'EndStrategy',
    'GraphAgentDeps',
    'resolve_native_tools',
)

DepsT = TypeVar('DepsT', default=object)
_new = object.__new__
OutputT = TypeVar('OutputT', default=Any)

EndStrategy: TypeAlias = Literal['early', 'graceful', 'exhaustive']
"""What happens to the other tool calls of a response that gives the final output: skipped, or run."""


async def resolve_native_tools(tools: Sequence[AgentNativeTool[Any]], ctx: RunContext[Any]) -> list[AbstractNativeTool]:
    """The native tools of one request: tool instances as they are, functions called with the run context
    (those returning `None` leave their tool out of this request), one per `unique_id`."""
    resolved: dict[str, AbstractNativeTool] = {}
    for tool in tools:
        built = tool if isinstance(tool, AbstractNativeTool) else await call_user_function(tool, ctx)
        if built is not None:
            # One tool per `unique_id`: a later one (the run's, after the agent's) takes the earlier one's place.
            resolved[built.unique_id] = built
    return list(resolved.values())


_NOT_COMPUTED: Any = object()

_CONTEXT_TEMPLATE, _ = field_defaults(RunContext)
"""The `__dict__` of a run's `RunContext`, every key in the order of the fields, with the defaults of those a run
does not set (`GraphAgentDeps.run_context` fills in the rest)."""


@dataclass(kw_only=True)
class GraphAgentDeps(Generic[DepsT, OutputT]):
    """What the nodes of an agent run need besides the state: configuration, the model, the user's deps."""

    user_deps: DepsT
    """The run's dependencies, given to tools as `ctx.deps`."""
    prompt: str | Sequence[UserContent] | None
    """The user prompt the run started with."""
    new_message_index: int
    """Where the run's own messages start in `message_history`."""
    model: Model
    """The model of the run."""
    model_settings: ModelSettings | None
    """The merged settings of the model, the agent and the run (when none is a function)."""
    settings_resolver: Callable[[RunContext[Any]], ModelSettings | None] | None = None
    """Merges the settings for each request, when some are functions of the run context."""
    request_hooks: Sequence[Any] = ()
    """Capabilities with a `before_model_request` hook, in order."""
    root_capability: Any = None
    """The run's capabilities as one `CombinedCapability` (typed loosely: capabilities sit above this module)."""
    capabilities: dict[str, Any] = field(default_factory=dict)
    """The run's capabilities by id (`RunContext.capabilities`)."""
    loaded_capability_ids: set[str] = field(default_factory=set)
    """The deferred capabilities loaded so far (`RunContext.loaded_capability_ids`): one set, changed in place."""
    cancellation: RunCancellation = field(default_factory=RunCancellation)
    """The run's cancellation (`AgentRun.cancel()`, `RunContext.cancel()`, its `CancellationToken`)."""
    deadline: datetime | None = None
    """When the run must end (UTC; its `timeout`, or the run it was started in): `RunContext.deadline`."""
    hooked: frozenset[str] = frozenset()
    """The lifecycle hooks (`before_tool_execute`, ...) some capability of the run implements, looked up once per
    run: the run skips the others, at no cost per step."""
    tool_manager: Any = None
    """The current step's `ToolManager` (made at the first step; typed loosely: it sits above this module)."""
    loads_ahead: list[CapabilityLoadDeltaPart | ToolAvailabilityDeltaPart] | None = None
    """The capability loads `before_run` hooks made (`RunContext.load_capability`), for the run's first request."""
    native_tools: Sequence[AgentNativeTool[Any]] = ()
    """The native tools (run by the provider) of every request, or functions building them per step."""
    tracing: bool = True
    """Whether the run makes spans."""
    instrumentation: InstrumentationSettings = field(default_factory=InstrumentationSettings)
    """The run's tracing options (its total usage goes on the run span as they say)."""
    trace_include_content: bool = False
    """Whether the run's spans record content: it makes spans and its `InstrumentationSettings.include_content` is on
    (`RunContext.trace_include_content`)."""
    resumed_request: ModelRequest | None = None
    """The request of the given history the run sends again (run without a user prompt), not a new message."""
    resumed_request_index: int | None = None
    """Where `resumed_request` sits in the history after the capabilities' request hooks, for `new_messages` to
    leave it out when a hook rebuilt it (neither the same object nor equal any more); `-1` until its first request
    pins it, `None` once a hook dropped it."""
    validation_context: Any = None
    """The pydantic validation context of tool arguments and outputs, or a function of the run context giving it."""
    merge_adjacent: bool = False
    """Whether the history may hold adjacent requests (or responses), merged when sent to the model."""
    speech: HistoryScan = field(default_factory=HistoryScan)
    """Whether the history holds a `SpeechPart` (then `Model.prepare_messages` converts it before each request)."""
    lookalike: HistoryScan = field(default_factory=HistoryScan)
    """Whether the history sent holds text copying a framework tag (then `Model.prepare_messages` adds its notes)."""
    discovered_tool_names: set[str] = field(default_factory=set)
    """The deferred tools the history revealed (`RunContext.discovered_tool_names`): one set, changed in place."""
    defers_tools: bool = False
    """Whether the step's tools include deferred ones (`defer_loading`, or covered by a tool search)."""
    workspace: Workspace = field(default_factory=Workspace.detached)
    """The run's workspace, chosen from the capabilities' `get_workspace` as the run starts (`RunContext.workspace`)."""
    carried_workspace_ref: WorkspaceRef | None = None
    """The workspace ref of the history's last response (`None` under `workspace='new'`): recorded on this run's
    responses while the run has no workspace attached, so a turn that could not reach it does not lose it."""
    event_buffer: list[Any] = field(default_factory=list)
    """The events emitted (`RunContext.emit`, `AgentRun.emit`) and not yet given by a node's stream."""
    implicit_tool_search: bool = False
    """Whether the run's tool search is the one every run has (no `ToolSearch` capability given): its provider-run
    search (`ToolSearchTool(optional=True)`) is then added to the requests of steps with deferred tools."""
    tool_deltas: bool = False
    """Whether the history may hold `ToolAvailabilityDeltaPart`s or records of instructions, capability loads or
    settings, which `Model.prepare_messages` renders for the model (a run that never records one skips that pass over
    its history)."""
    usage_limits: UsageLimits
    """The run's usage limits."""
    max_result_retries: int
    """The output retry budget."""
    default_tool_retries: int
    """The retry budget of tools that set none."""
    end_strategy: EndStrategy
    """What happens to other tool calls once the output is given."""
    output_schema: OutputSchema
    """How the output is asked for and validated."""
    output_validators: Sequence[OutputValidator]
    """The output validators, in order."""
    toolset: AbstractToolset[Any]
    """The run's toolset: the agent's function tools and every other toolset of the agent and the run."""
    instructions: Sequence[InstructionsItem]
    """Instructions texts and functions, in order."""
    system_prompts: Sequence[str | SystemPromptRunner]
    """System prompt texts and functions, in order."""
    agent_name: str | None = None
    """The agent's name, for spans."""
    agent: Any = None
    """The `Agent` running (`ctx.agent`; typed loosely: the agent sits above this module)."""
    step_tools: dict[str, ToolDefinition] | None = None
    """The tools visible in the current step (after `prepare`), by the name the model sees."""
    step_tool_functions: dict[str, ToolsetTool[Any]] = field(default_factory=dict)
    """The toolset's tool behind each name of `step_tools`."""
    request_tools: list[ToolDefinition] = field(default_factory=list)
    """The definitions of `step_tools` the model is shown (not those hidden by `defer_loading`)."""
    tool_kinds: dict[str, str] = field(default_factory=dict)
    """The `tool_kind` of the step's tools that have one (`'tool-search'`), by name."""
    step_output_tools: set[str] | None = None
    """The output tools the current step shows the model, when a `prepare_output_tools` hook chose them (`None`:
    all of the output schema's)."""
    persistence: BaseStatePersistence[Any, Any] | None = None
    """Where the run is stored, when it is durable (its persistence stores checkpoints): snapshots then hold only
    new messages, and each finished tool call is checkpointed."""
    stores_waiting: bool = False
    """Whether a run stopping on deferred tool calls is stored as waiting (its persistence is durable)."""
    deferred_tool_results: DeferredToolResults | None = None
    """The answers a stored run waiting on deferred tool calls is resumed with (taken by the node that waits)."""
    model_id: str | None = None
    """The model id `model` was picked or resolved from, if any (`ModelRequestContext.model_id`)."""
    request_model: Model | None = None
    """The model of the current request when a `before_model_request` hook swapped it for `model` (for that request
    only: `ctx.model` stays the run's)."""
    model_choice: Any = None
    """How the run's model was chosen, when the capabilities picked it (typed loosely: an
    `agent._model_choice.ModelChoice`, which sits above this module): it enters the picked models' contexts and
    asks a selector for each step's model; `None`: `model` serves the whole run."""
    operation_journal: OperationJournal | None = None
    """Journals the results of the capabilities' `durable_operation` methods, in a durable run that has any."""
    listing: Any = field(default=None, init=False, repr=False)
    """The toolset's listing `step_tools` were built from (a listing that does not change costs no work)."""
    tools_step: int = field(default=-1, init=False, repr=False)
    """The run step `tool_manager` was last prepared for (a step's toolsets are prepared once)."""
    _static_instructions: Any = field(default=None, init=False, repr=False)
    blocks_checked: bool = field(default=False, init=False, repr=False)
    """Whether a request of the run has read the history for the loaded capabilities' blocks (`_state_blocks`)."""
    cache_health: CacheHealthDetector | None = field(default=None, init=False, repr=False)
    """The run's prompt-cache health detector, made on the first response of an instrumented run."""

    @property
    def workspace_ref(self) -> WorkspaceRef | None:
        """The `ModelResponse.workspace_ref` this run records: its attached workspace's ref, else the carried one."""
        return self.workspace.ref if self.workspace.attached else self.carried_workspace_ref

    @classmethod
    def made(cls, **given: Any) -> GraphAgentDeps[Any, Any]:
        """`GraphAgentDeps(**given)`, at about half its cost: the instance's `__dict__` is a copy of the fields'
        defaults (in the order of the fields) updated with `given`, and the default factories are called for the
        fields not given. The class has more fields than an instance dict shares keys for, so the generated
        `__init__` builds the dict attribute by attribute, growing it as it goes.

        Raises:
            TypeError: a required field is missing, or `given` names a field that `__init__` does not take.
        """
        if not given.keys() >= _DEPS_REQUIRED:
            return cls(**given)  # (its error)
        return cls.made_from(given)

    @classmethod
    def made_from(cls, given: dict[str, Any]) -> GraphAgentDeps[Any, Any]:
        """`made(**given)` for a caller that gives every required field (the run setup): a dict display costs less
        than as many keyword arguments.

        Raises:
            TypeError: `given` names a field that `__init__` does not take.
        """
        values = _DEPS_DEFAULTS.copy()
        values.update(given)
        if len(values) != len(_DEPS_DEFAULTS):  # a name that is no field of `__init__` (the defaults hold every one)
            return cls(**given)  # (its error)
        deps = _new(cls)
        for name, factory in _DEPS_FACTORIES:
            if name not in given:
                values[name] = factory()
        deps.__dict__ = values
        deps.__post_init__()
        return deps

    def __post_init__(self) -> None:
        self._static_instructions = _NOT_COMPUTED
        persistence = self.persistence
        if persistence is not None and type(persistence).checkpoint is BaseStatePersistence.checkpoint:
            self.persistence = None  # in memory: nothing outlives the process, snapshots keep whole histories

    @property
    def durable(self) -> bool:
        """Whether the run is stored durably (a persistence that stores checkpoints)."""
        return self.persistence is not None

    def run_context(
        self,
        state: GraphAgentState,
        *,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        retry: int = 0,
        max_retries: int = 0,
    ) -> RunContext[DepsT]:
        """A `RunContext` for the current point of the run (for a tool call, when its name is given)."""
        # `RunContext(...)` with every field given, without its `__init__` (a run makes a few contexts per step;
        # the class has no `__post_init__`). The fields not taken from the run keep the template's defaults: a copy
        # of a dict holding every key already costs half of a dict display of this size (built key by key).
        ctx: RunContext[DepsT] = _new(RunContext)
        fields = _CONTEXT_TEMPLATE.copy()
        fields['deps'] = self.user_deps
        fields['model'] = self.model
        fields['usage'] = state.usage
        fields['usage_limits'] = self.usage_limits
        fields['prompt'] = self.prompt
        fields['messages'] = state.message_history
        fields['retries'] = state.tool_retries
        if tool_call_id is not None:
            fields['tool_call_id'] = tool_call_id
        if tool_name is not None:
            fields['tool_name'] = tool_name
        if retry:
            fields['retry'] = retry
        if max_retries:
            fields['max_retries'] = max_retries
        fields['run_step'] = state.run_step
        fields['run_id'] = state.run_id
        fields['conversation_id'] = state.conversation_id
        fields['metadata'] = state.metadata
        fields['agent'] = self.agent
        fields['tool_manager'] = self.tool_manager
        fields['pending_messages'] = state.pending_messages
        fields['capabilities'] = self.capabilities
        fields['loaded_capability_ids'] = self.loaded_capability_ids
        fields['_cancellation'] = self.cancellation
        if self.operation_journal is not None:
            fields['_durable_operations'] = self.operation_journal.dispatchers
        fields['deadline'] = self.deadline
        fields['_event_stream_buffer'] = self.event_buffer
        fields['discovered_tool_names'] = self.discovered_tool_names
        fields['instrumentation_version'] = self.instrumentation.version
        fields['workspace'] = self.workspace
        fields['root_capability'] = self.root_capability
        fields['trace_include_content'] = self.trace_include_content
        fields['_model_id'] = self.model_id
        ctx.__dict__ = fields
        return ctx

    def validation_context_for(self, ctx: RunContext[Any]) -> Any:
        """The validation context for a validation at `ctx` (set on `ctx.validation_context` too)."""
        context = self.validation_context
        if callable(context):
            context = context(ctx)
        ctx.validation_context = context
        return context

    async def instruction_parts(self, state: GraphAgentState) -> list[InstructionPart]:
        """The instruction blocks of the next request, as pydantic-ai 1.107 orders them: the texts joined by lines
        (one literal block; those of a capability with an `id` are its own blocks, `capability:<id>`, after it, as in
        pydantic-ai 2.68), then each function's result, then the toolsets' blocks (the prompted-output
        instructions are not among them: models add them, see `ModelRequestParameters.prompted_output_template`).

        A function may return an `InstructionPart` (pydantic-ai 2.68): a `name` without an `id` is qualified as the
        agent's (`agent:<name>`). A blank block is left out, unless it is `on_change='append'` (its withdrawal).

        Raises:
            UserError: a block's `name` holds `:` or is `'agent'`.
        """
        ctx: RunContext[DepsT] | None = None
        if self._static_instructions is not _NOT_COMPUTED:
            parts: list[InstructionPart] = list(self._static_instructions)
        elif not self.instructions:  # (most agents: none of their own)
            parts = []
            self._static_instructions = ()
        else:
            texts = '\n'.join(item for item in self.instructions if isinstance(item, str) and item).strip()
            parts = [InstructionPart(texts)] if texts else []
            # the literal blocks of capabilities with an id (`capability:<id>`) next, with the other literal text
            parts += [item.literal_part() for item in self.instructions if _keyed_literal(item)]
            for item in self.instructions:
                if not isinstance(item, str) and not _keyed_literal(item):
                    ctx = ctx or self.run_context(state)
                    if (part := _block(await item.run(ctx), agent=True)) is not None:
                        parts.append(part)
            if all(isinstance(item, str) or _keyed_literal(item) for item in self.instructions):
                # Texts only: the same for every request of the run.
                self._static_instructions = tuple(parts)
        if gives_no_instructions(self.toolset):  # (no run context to make for it)
            return parts
        found = await self.toolset.get_instructions(ctx or self.run_context(state))
        for block in [found] if isinstance(found, str | InstructionPart) else found or ():
            if (part := _block(block, agent=False)) is not None:
                parts.append(part)
        return parts

    async def instructions_text(self, state: GraphAgentState) -> str | None:
        """The instructions of the next request as one text (`instruction_parts` joined by blank lines)."""
        return InstructionPart.join(await self.instruction_parts(state))


_DEPS_FIELDS = dataclasses.fields(GraphAgentDeps)
_DEPS_DEFAULTS, _DEPS_FACTORIES = field_defaults(  # (`__init__` leaves the fields it does not take to the class)
    GraphAgentDeps, names=lambda field: field.init or field.default_factory is not dataclasses.MISSING
)
_DEPS_REQUIRED = frozenset(
    f.name for f in _DEPS_FIELDS if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
)


def _keyed_literal(item: InstructionsItem) -> TypeIs[CapabilityInstructionRunner]:
    return isinstance(item, CapabilityInstructionRunner) and item.text is not None


def _block(found: str | InstructionPart | None, *, agent: bool) -> InstructionPart | None:
    """`found` (a function's or a toolset's instructions) as a block, stripped; `None` for a blank one."""
    if not isinstance(found, InstructionPart):
        text = (found or '').strip()
        return InstructionPart(text, dynamic=True) if text else None
    if not found.content.strip() and found.on_change != 'append':
        return None
    if found.name is not None and (':' in found.name or found.name == 'agent'):
        raise UserError(
            f"Instruction name {found.name!r} cannot be used: a name is one segment of the block's id, so it cannot "
            "hold `:`, and 'agent' is the key of the agent's own instructions. Choose another name."
        )
    if agent and found.name is not None and found.id is None:
        found = replace(found, id=InstructionId(AgentInstructionSource(), name=found.name))
    return replace(found, content=found.content.strip(), dynamic=found.dynamic or agent)


def token_check(state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> Callable[[RequestUsage], None] | None:
    """Checks the run's token limits against the usage so far plus a streamed response's (when it has limits)."""
    limits = deps.usage_limits
    if not limits.has_token_limits():
        return None

    def check(usage: RequestUsage) -> None:
        check_uncommitted_usage(limits, state.usage, usage, state.message_history)

    return check


def check_uncommitted_usage(
    limits: UsageLimits | None,
    run_usage: RunUsage,
    usage: RequestUsage,
    messages: list[ModelMessage] | None = None,
) -> None:
    """Check the run's limits against its usage plus `usage`, the usage of a response not yet added to the run (a
    response still streaming, or the parts of a continued response that is not whole yet): the token limits, and
    `cost_limit` when that usage's cost is known. The run's usage is not changed; `limits=None` checks nothing.

    Raises:
        UsageLimitExceeded: a limit would be exceeded once the response is added.
    """
    if limits is None:
        return
    provisional = run_usage + usage
    limits.check_tokens(provisional, messages, usage)
    if usage.cost is not None:  # an unknown cost is reported as the run ends, not for a response in progress
        limits.check_cost(provisional, warn_if_cost_unavailable=False, messages=messages)


def check_continuation_usage(run_context: RunContext[Any], usage: RequestUsage) -> None:
    """`check_uncommitted_usage` for the run of `run_context` (pydantic-ai's `_agent_graph._check_continuation_usage`):
    nothing to check for a context of no run (`run_context.usage_limits` is `None`)."""
    check_uncommitted_usage(run_context.usage_limits, run_context.usage, usage, run_context.messages)


def begin_node(ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], node: Any) -> None:
    """Tell the run's operation journal (if it has one) that `node` starts running."""
    journal = ctx.deps.operation_journal
    if journal is not None:
        journal.begin(ctx.state, node)


def end_node(deps: GraphAgentDeps[Any, Any]) -> None:
    """Tell the run's operation journal (if it has one) that the node it journals for has finished (or failed): the
    operations called before the next node starts (in `after_node_run` hooks, say) run in place."""
    journal = deps.operation_journal
    if journal is not None:
        journal.end()


def stored_through(ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], count: int) -> None:
    """Let the next snapshot of a durable run store only the messages from `count` on: the ones before are stored
    (and unchanged) in the snapshot of the node that is running."""
    if ctx.deps.durable:
        ctx.state.message_offset = count
        ctx.state.response_in_node = False
