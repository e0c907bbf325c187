"""The agent graph's state (persisted) and dependencies (per run, never persisted)."""

from __future__ import annotations as _annotations

import inspect
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeAlias

import pydantic
from pydantic_core import core_schema
from typing_extensions import TypeVar

from edgewise.graph import BaseStatePersistence, GraphRunContext

from .._message_flow.pending import PendingMessage
from .._output.schema import OutputSchema
from .._tools.deferred_calls import DeferredToolResults
from ..exceptions import IncompleteToolCall, UnexpectedModelBehavior
from ..messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    UserContent,
)
from ..models import Model
from ..native_tools import AbstractNativeTool
from ..settings import ModelSettings
from ..tools import AgentNativeTool, RunContext, ToolDefinition
from ..toolsets import AbstractToolset, ToolsetTool
from ..usage import RequestUsage, RunUsage, UsageLimits

__all__ = (
    'stored_through',
    'token_check',
    'EndStrategy',
    'GraphAgentState',
    'GraphAgentDeps',
    'SystemPromptRunner',
    'OutputValidator',
    'call_user_function',
    'system_prompt_parts',
    'new_run_id',
    'new_conversation_id',
    'resolve_conversation_id',
    'resolve_native_tools',
    'NEW_CONVERSATION',
)

DepsT = TypeVar('DepsT', default=None)
OutputT = TypeVar('OutputT', default=Any)

EndStrategy: TypeAlias = Literal['early', 'graceful', 'exhaustive']
"""What happens to the other tool calls of a response that gives the final output: skipped, or run."""


def new_run_id() -> str:
    """A new unique run id."""
    return os.urandom(16).hex()


NEW_CONVERSATION = 'new'
"""The `conversation_id` that starts a new conversation whatever the message history holds."""


def new_conversation_id() -> str:
    """A new conversation id: a UUID version 7 (time-ordered: 48 bits of Unix milliseconds, then random bits)."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), 'big')
    value = value & ~(0xF000 << 64) | 0x7000 << 64  # version 7
    value = value & ~(0xC << 60) | 0x8 << 60  # RFC 9562 variant
    h = f'{value:032x}'
    return f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'


def resolve_conversation_id(explicit: str | None, history: Sequence[ModelMessage]) -> str:
    """The run's conversation id: `explicit` (`'new'` for a fresh one), else the latest one in `history`, else new."""
    if explicit == NEW_CONVERSATION:
        return new_conversation_id()
    if explicit is not None:
        return explicit
    for message in reversed(history):
        if message.conversation_id is not None:
            return message.conversation_id
    return new_conversation_id()


@dataclass(kw_only=True)
class GraphAgentState:
    """The state of an agent run: everything needed to continue it, all of it serializable with pydantic."""

    message_history: list[ModelMessage] = field(default_factory=list)
    """The conversation so far, including the message history the run was given."""
    usage: RunUsage = field(default_factory=RunUsage)
    """The usage of the run so far."""
    retries: int = 0
    """How many times in a row the output has been retried."""
    tool_retries: dict[str, int] = field(default_factory=dict)
    """How many times in a row each tool has been retried."""
    run_step: int = 0
    """How many model requests the run has made."""
    run_id: str = field(default_factory=new_run_id)
    """The run's id."""
    conversation_id: str = field(default_factory=new_conversation_id)
    """The id of the conversation the run belongs to (shared by runs continuing one message history)."""
    metadata: dict[str, Any] | None = None
    """The run's metadata, computed when it starts and again when it ends well."""
    message_offset: int = 0
    """Where the messages this state stores start: a durable run stores in each snapshot only the messages after
    those its previous snapshot held (`message_history[message_offset:]`), so a step costs the same however
    long the conversation; resuming puts the history back together from the run's snapshots. 0 otherwise."""
    response_in_node: bool = False
    """Whether the last message of the history, the model's response, is stored in the snapshot's node only (the
    `CallToolsNode` that handles it), not in `message_history` too: a durable run sets it from recording a response
    to the end of its handling. Snapshots stored with it put the response back after their messages when a run is
    resumed or shown. Snapshots of earlier versions (without it) hold the response twice."""
    step_results: list[ModelRequestPart] = field(default_factory=list)
    """The results of the tool calls of the step in progress that have finished (a durable run checkpoints
    them one by one, so that a resumed step runs only the calls that had not finished)."""
    pending_messages: list[PendingMessage] = field(default_factory=list)
    """Content enqueued (`RunContext.enqueue`, `AgentRun.enqueue`) and not yet delivered to the model; stored with
    the run, so that a resumed run still delivers it."""
    last_max_tokens: Annotated[int | None, pydantic.Field(exclude=True)] = field(
        default=None, repr=False, compare=False
    )
    """The `max_tokens` setting of the last request (for error messages only; not persisted)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: pydantic.GetCoreSchemaHandler) -> Any:
        # `message_history` is written from `_stored_messages` (under the same key, last), not from the field: a
        # function wrapping the whole state's serialization would convert it to Python data and serialize that.
        schema: Any = handler(source)
        resolved: Any = handler.resolve_ref_schema(schema)
        args = resolved['schema']
        field = next(f for f in args['fields'] if f['name'] == 'message_history')
        field['serialization_exclude'] = True
        stored = core_schema.computed_field('_stored_messages', field['schema'], alias='message_history')
        args['computed_fields'] = [*(args.get('computed_fields') or ()), stored]
        resolved['config'] = {**(resolved.get('config') or {}), 'serialize_by_alias': True}
        return schema

    @property
    def _stored_messages(self) -> list[ModelMessage]:
        """The messages a snapshot of this state stores: those after `message_offset` (the others are in the run's
        earlier snapshots), but the response its node holds (`response_in_node`)."""
        offset, history = self.message_offset, self.message_history
        if self.response_in_node:
            return history[offset:-1]
        return history[offset:] if offset else history

    def increment_retries(self, max_retries: int, error: BaseException | None = None) -> None:
        """Count one more output retry.

        Raises:
            UnexpectedModelBehavior: the output retry budget is spent.
        """
        self.retries += 1
        if self.retries > max_retries:
            self.check_incomplete_tool_call()
            raise UnexpectedModelBehavior(f'Exceeded maximum output retries ({max_retries})') from error

    def check_incomplete_tool_call(self) -> None:
        """Raise `IncompleteToolCall` when the last response stopped at the token limit in the middle of a tool
        call (its arguments are not a whole JSON object): retrying it would be cut short again."""
        history = self.message_history
        response = history[-1] if history else None
        if not isinstance(response, ModelResponse) or response.finish_reason != 'length' or not response.parts:
            return
        call = response.parts[-1]
        if not isinstance(call, ToolCallPart):
            return
        try:
            call.args_as_dict(raise_if_invalid=True)
        except ValueError:
            raise IncompleteToolCall(
                f'Model token limit ({self.last_max_tokens or "provider default"}) exceeded while generating a tool '
                'call, resulting in incomplete arguments. Increase the `max_tokens` model setting, or simplify the '
                'prompt to result in a shorter response that will fit within the limit.'
            ) from None


async def call_user_function(function: Callable[..., Any], *args: Any) -> Any:
    """Call a user's (sync or async) instructions, system prompt or validator function."""
    result = function(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


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


def _takes_ctx(function: Callable[..., Any], plain_arity: int) -> bool:
    return len(inspect.signature(function).parameters) > plain_arity


@dataclass
class SystemPromptRunner:
    """A system prompt or instructions function, knowing whether it takes the `RunContext`."""

    function: Callable[..., Any]
    """The function."""
    dynamic: bool = False
    """Re-evaluated when a run continues a message history holding its earlier output."""
    takes_ctx: bool = field(init=False)

    def __post_init__(self) -> None:
        self.takes_ctx = _takes_ctx(self.function, 0)

    async def run(self, ctx: RunContext[Any]) -> str | None:
        """The function's text (`None` or empty for none)."""
        text: str | None = await call_user_function(self.function, *((ctx,) if self.takes_ctx else ()))
        return text


async def system_prompt_parts(
    prompts: Sequence[str | SystemPromptRunner], ctx: RunContext[Any]
) -> list[SystemPromptPart]:
    """The system prompt parts of a run's first request: the texts, and each function's text (a dynamic one's
    part is kept even when empty, so that a later run can fill it in)."""
    parts: list[SystemPromptPart] = []
    for prompt in prompts:
        if isinstance(prompt, str):
            parts.append(SystemPromptPart(prompt))
        elif prompt.dynamic:
            text = await prompt.run(ctx)
            parts.append(SystemPromptPart(text or '', dynamic_ref=prompt.function.__qualname__))
        elif text := await prompt.run(ctx):
            parts.append(SystemPromptPart(text))
    return parts


@dataclass
class OutputValidator:
    """An output validator, knowing whether it takes the `RunContext`."""

    function: Callable[..., Any]
    """The function: `(output) -> output` or `(ctx, output) -> output`, sync or async."""
    takes_ctx: bool = field(init=False)

    def __post_init__(self) -> None:
        self.takes_ctx = _takes_ctx(self.function, 1)

    async def validate(self, output: Any, ctx: RunContext[Any]) -> Any:
        """Run the validator; it may return a changed output or raise `ModelRetry`."""
        return await call_user_function(self.function, *((ctx, output) if self.takes_ctx else (output,)))


_NOT_COMPUTED: Any = object()

InstructionsItem: TypeAlias = str | SystemPromptRunner


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
    hooked: frozenset[str] = frozenset()
    """The lifecycle hooks (`before_tool_execute`, ...) some capability of the run implements, looked up once per
    run: the run skips the others, at no cost per step."""
    tool_manager: Any = None
    """The current step's `ToolManager` (made at the first step; typed loosely: it sits above this module)."""
    native_tools: Sequence[AgentNativeTool[Any]] = ()
    """The native tools (run by the provider) of every request, or functions building them per step."""
    tracing: bool = True
    """Whether the run makes spans."""
    resumed_request: ModelRequest | None = None
    """The request of the given history the run sends again (run without a user prompt), not a new message."""
    validation_context: Any = None
    """The pydantic validation context of tool arguments and outputs, or a function of the run context giving it."""
    merge_adjacent: bool = False
    """Whether the history may hold adjacent requests (or responses), merged when sent to the model."""
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
    listing: Any = field(default=None, init=False, repr=False)
    """The toolset's listing `step_tools` were built from (a listing that does not change costs no work)."""
    _static_instructions: Any = field(default=None, init=False, repr=False)

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
        return RunContext(
            deps=self.user_deps,
            model=self.model,
            usage=state.usage,
            prompt=self.prompt,
            messages=state.message_history,
            run_step=state.run_step,
            run_id=state.run_id,
            conversation_id=state.conversation_id,
            metadata=state.metadata,
            retries=state.tool_retries,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            retry=retry,
            max_retries=max_retries,
            tool_manager=self.tool_manager,
            agent=self.agent,
            pending_messages=state.pending_messages,
            capabilities=self.capabilities,
            loaded_capability_ids=self.loaded_capability_ids,
        )

    def validation_context_for(self, ctx: RunContext[Any]) -> Any:
        """The validation context for a validation at `ctx` (set on `ctx.validation_context` too)."""
        context = self.validation_context
        if callable(context):
            context = context(ctx)
        ctx.validation_context = context
        return context

    async def instructions_text(self, state: GraphAgentState) -> str | None:
        """The instructions of the next request, as pydantic-ai 1.107 builds them: the texts joined by lines,
        then each function's result as a paragraph, then the toolsets' instructions (the prompted-output
        instructions are not among them: models add them, see `ModelRequestParameters.prompted_output_template`)."""
        ctx: RunContext[DepsT] | None = None
        if self._static_instructions is not _NOT_COMPUTED:
            paragraphs: list[str] = list(self._static_instructions)
        else:
            texts = '\n'.join(item for item in self.instructions if isinstance(item, str) and item)
            paragraphs = [texts.strip()] if texts.strip() else []
            for item in self.instructions:
                if not isinstance(item, str):
                    ctx = ctx or self.run_context(state)
                    if text := await item.run(ctx):
                        paragraphs.append(text.strip())
            if all(isinstance(item, str) for item in self.instructions):
                # Texts only: the same for every request of the run.
                self._static_instructions = tuple(paragraphs)
        found = await self.toolset.get_instructions(ctx or self.run_context(state))
        if found:
            paragraphs.extend(t.strip() for t in ([found] if isinstance(found, str) else found))
        return '\n\n'.join(paragraphs) if paragraphs else None


def token_check(state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> Callable[[RequestUsage], None] | None:
    """Checks the run's token limits against the usage so far plus a streamed response's (when it has limits)."""
    limits = deps.usage_limits
    if not limits.has_token_limits():
        return None

    def check(usage: RequestUsage) -> None:
        limits.check_tokens(state.usage + usage, state.message_history)

    return check


def stored_through(ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], count: int) -> None:
    """Let the next snapshot of a durable run store only the messages from `count` on: the ones before are stored
    (and unchanged) in the snapshot of the node that is running."""
    if ctx.deps.durable:
        ctx.state.message_offset = count
        ctx.state.response_in_node = False
