"""`Model`, the interface every LLM backend implements, and `RunContext`, what tools and validators receive
about a run (re-exported by `models` and `tools`).

The two name each other (a run context holds the run's model; a streamed request may be given the run
context), so they live in one module, below the tools and the model backends that use them.
"""

from __future__ import annotations as _annotations

import dataclasses
import functools
import sys
import warnings
from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from .._message_flow.cancellation import RunCancellation
from .._message_flow.custom_events import CapabilityEvent, CustomEvent
from .._message_flow.pending import (
    EnqueueContent,
    PendingMessage,
    PendingMessagePriority,
    remove_pending,
    reprioritize_pending,
)
from .._messages.context_size import context_window_fraction
from .._messages.model_messages import (
    ModelMessage,
    ModelResponse,
    UserContent,
)
from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from .._messages.usage_counts import RunUsage
from .._tools.tool_kinds import ToolKindLike, tool_kind_id
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UserError
from ..native_tools import SUPPORTED_NATIVE_TOOLS
from ..settings import ModelSettings, merge_model_settings
from ..usage import UsageLimits
from ..workspaces import Workspace
from ._capability_loads import load_capability
from ._configured_model import ConfiguredModel
from ._instrumentation_settings import DEFAULT_INSTRUMENTATION_VERSION
from ._message_preparation import prepare_history
from ._native_support import resolve_model_tools
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse
from ._thinking import resolve_thinking
from ._tool_announcements import TOOL_AVAILABILITY_ANNOUNCEMENT, announce_tool_availability

if TYPE_CHECKING:
    from .._tools.definition import ToolDefinition
    from .batch import Batch, BatchRequest, BatchResult, BatchResultStatus, EncodedBatchRequest

__all__ = (
    'ALLOW_MODEL_REQUESTS',
    'TOOL_AVAILABILITY_ANNOUNCEMENT',
    'AgentDepsT',
    'RunContextAgentDepsT',
    'Model',
    'RunContext',
    'announce_tool_availability',
    'check_allow_model_requests',
)

ALLOW_MODEL_REQUESTS = True
"""Set `edgewise.agent.models.ALLOW_MODEL_REQUESTS = False` (e.g. in tests) to make every request to a real
provider fail; test models are exempt."""


def check_allow_model_requests() -> None:
    """Raise `RuntimeError` if `ALLOW_MODEL_REQUESTS` is off; provider models call it before each request."""
    # The switch is set on the public `models` package (as in pydantic-ai); read it there at call time, so
    # that this module needs no import of the package above it.
    package = sys.modules.get(__package__ or '')
    if not getattr(package, 'ALLOW_MODEL_REQUESTS', ALLOW_MODEL_REQUESTS):
        raise RuntimeError('Model requests are not allowed, since ALLOW_MODEL_REQUESTS is False')


_EventT = TypeVar('_EventT', bound=CustomEvent | CapabilityEvent)

_CAPABILITY_LOADED_DEPRECATION = (
    '`capability_loaded` is deprecated, use `capability_active` instead: the value is `True` for an always-on '
    'capability that was never loaded.'
)

AgentDepsT = TypeVar('AgentDepsT', default=object, contravariant=True)
"""Type of an agent's dependencies, as the things that use them see it: an agent, tool, toolset or capability
typed for `object` takes any dependencies."""

RunContextAgentDepsT = TypeVar('RunContextAgentDepsT', default=object, covariant=True)
"""Type of the dependencies a `RunContext` carries: a context with `MyDeps` is also a `RunContext[object]`."""


@dataclass(repr=False, kw_only=True)
class RunContext(Generic[RunContextAgentDepsT]):
    """What tools, instructions, system prompt functions and output validators receive about the run."""

    deps: RunContextAgentDepsT
    """The run's dependencies."""
    model: Model
    """The model of the run."""
    usage: RunUsage
    """The usage of the run so far."""
    usage_limits: UsageLimits | None = None
    """The limits of the run (the default `UsageLimits()` when the run was given none); `None` only for a
    context that belongs to no run."""
    prompt: str | Sequence[UserContent] | None = None
    """The user prompt the run started with (for a run resending the last request of its history, that request's
    user prompt content)."""
    messages: list[ModelMessage] = field(default_factory=list)
    """The messages of the run so far."""
    retries: dict[str, int] = field(default_factory=dict)
    """How many times each tool has been retried in a row."""
    tool_call_id: str | None = None
    """The id of the tool call being handled, if any."""
    tool_name: str | None = None
    """The name of the tool being called, if any."""
    retry: int = 0
    """How many times the current tool (or the output) has been retried in a row."""
    max_retries: int = 0
    """The retry budget of the current tool (or of the output)."""
    run_step: int = 0
    """The number of model requests made so far in the run."""
    run_id: str | None = None
    """The id of the run."""
    conversation_id: str | None = None
    """The id of the conversation the run belongs to."""
    metadata: dict[str, Any] | None = None
    """The run's metadata (`Agent(metadata=...)`, `run(metadata=...)`)."""
    model_settings: ModelSettings | None = None
    """The settings of the current model request, as merged so far (what a settings function builds on)."""
    validation_context: Any = None
    """The pydantic validation context of the current validation (`Agent(validation_context=...)`)."""
    partial_output: bool = False
    """Whether an output validator is seeing a partial output (streaming)."""
    tool_call_approved: bool = False
    """Whether the tool call being handled was approved (by `DeferredToolResults.approvals`)."""
    tool_call_metadata: Any = None
    """The metadata given for the tool call being handled in `DeferredToolResults.metadata`, if any."""
    agent: Any = field(default=None, repr=False)
    """The `Agent` running this context (`None` outside an agent run; typed loosely: it sits above this module)."""
    tool_manager: Any = None
    """The `ToolManager` of the current step's function tools (`None` before the step's tools are listed; typed
    loosely: it sits above this module)."""
    pending_messages: list[PendingMessage] | None = None
    """The run's queue of content waiting to be delivered to the model (the list `enqueue` adds to); `None` for a
    context that belongs to no running agent. Add to it with `enqueue`, which checks the content."""
    capabilities: dict[str, Any] = field(default_factory=dict, repr=False)
    """The run's capabilities by id, the deferred ones (`defer_loading=True`) too; a capability without an `id` is
    listed under one made from its class name (`my_capability`, then `my_capability_2`...). Typed loosely:
    capabilities sit above this module."""
    loaded_capability_ids: set[str] = field(default_factory=set)
    """The ids of the deferred capabilities the model has loaded (`load_capability`), read from the history before
    each model request; a load during a step adds to it (the run's one set, shared by its contexts)."""
    capability_active: bool | None = None
    """`True` in the hooks of a capability in effect: one always on (for the whole run) or a deferred one once loaded
    (in its settings and native-tool functions too); `None` where no capability's hook runs (tools, say). Was
    `capability_loaded`, which still works, with a deprecation warning."""
    _cancellation: RunCancellation | None = field(default=None, repr=False)
    """The run's cancellation (what `cancel()` goes through); `None` for a context of no running agent."""
    _durable_operations: dict[tuple[str, str], Any] | None = field(default=None, repr=False)
    """The run's dispatchers of `durable_operation` methods, by (capability id, operation name): set in a durable run
    of an agent whose capabilities have such methods (they are journaled), `None` otherwise (they run in place)."""
    deadline: datetime | None = None
    """When the run must end (UTC), or `None`: from `timeout=` on the run methods, or inherited from the run this
    one was started in (a sub-agent run from a tool), whose deadline its own `timeout` can only bring forward. Past
    it, the run ends with `RunTimedOut`; `remaining_time()` says how long is left."""
    _event_stream_buffer: list[Any] | None = field(default=None, repr=False)
    """Where `emit` puts events for the run's stream; `None` for a context of no running agent."""
    discovered_tool_names: set[str] = field(default_factory=set)
    """The names of the deferred tools the history has revealed (found by a tool search, named by a
    `ToolAvailabilityDeltaPart`), read from it before each step: raw evidence, not checked against the tools of the
    step (`is_tool_available` does that). The run's one set, shared by its contexts; read it, do not change it."""
    instrumentation_version: int = DEFAULT_INSTRUMENTATION_VERSION
    """The version of the run's instrumentation format (`InstrumentationSettings.version`; the default one when
    the run is not instrumented)."""
    workspace: Workspace = field(default_factory=Workspace.detached)
    """The run's workspace (files and commands): the first a capability's `get_workspace` supplies (`LocalWorkspace`,
    say). Without one, a workspace whose every operation raises `WorkspaceUnavailableError` saying how to attach
    one (its `attached` is `False`)."""
    root_capability: Any = field(default=None, repr=False)
    """The run's capabilities as one `CombinedCapability` (the agent's and the run's, as made for the run), which
    runs their hooks; `None` when the run has none or the context belongs to no run. Typed loosely: capabilities
    sit above this module."""
    trace_include_content: bool = False
    """Whether the run's spans record content (prompts, outputs, tool arguments): its
    `InstrumentationSettings.include_content` when it makes spans, `False` when it makes none (the agent's
    `instrument` is off, or logfire is not installed)."""
    _model_id: str | None = field(default=None, repr=False)
    """The model id the run's `model` was resolved from (what `model_id` gives)."""

    @property
    def model_id(self) -> str | None:
        """The model id (`'openai:gpt-5'`, say) `model` was resolved from: the one the agent or the run was given, or
        the one a capability picked for the step; `None` when the model was given as a `Model` instance."""
        return self._model_id

    @property
    def in_durable_context(self) -> bool:
        """Whether this code runs inside a durable workflow, which replays it on recovery (so it must be
        deterministic): in a DBOS workflow of an agent with `DBOSDurability`, outside its steps (model requests run in
        steps; tools run in the workflow unless configured otherwise). `False` in a run without such a capability,
        outside a workflow, inside a step, and for a context that belongs to no run."""
        # Asked of the run's capabilities (typed loosely: they sit above this module); a durability capability says.
        return any(
            getattr(capability, 'in_durable_context', False) is True for capability in self.capabilities.values()
        )

    @property
    def capability_loaded(self) -> bool | None:
        """Deprecated: use `capability_active`."""
        warnings.warn(_CAPABILITY_LOADED_DEPRECATION, PydanticAIDeprecationWarning, stacklevel=2)
        return self.capability_active

    @capability_loaded.setter
    def capability_loaded(self, value: bool | None) -> None:
        warnings.warn(_CAPABILITY_LOADED_DEPRECATION, PydanticAIDeprecationWarning, stacklevel=2)
        self.capability_active = value

    @property
    def tools(self) -> dict[str, ToolDefinition]:
        """The definitions of the current step's function tools, by name (empty before they are listed)."""
        manager = self.tool_manager
        if manager is None or manager.tools is None:
            return {}
        return {name: tool.tool_def for name, tool in manager.tools.items()}

    def tool_name_for_kind(self, kind: ToolKindLike) -> str | None:
        """The name of the current step's tool of this kind (`ToolDefinition.tool_kind`), or `None` when no tool
        has it: what instructions and tool results use to name a tool a prefix or a rename may have changed.

        Reads `tools` (deferred tools included); with several of the kind, the first in their order. Before the
        step's tools are listed it answers from the previous step's, or `None` in the first.

        Args:
            kind: The `ToolKind`, or its id.
        """
        wanted = tool_kind_id(kind)
        return next((name for name, tool_def in self.tools.items() if tool_def.tool_kind == wanted), None)

    @property
    def available_tool_names(self) -> set[str]:
        """The names of the function tools the model can call at the current step: those always shown, those the
        history revealed and those of loaded deferred capabilities. Before the step's tools are listed (in
        `before_run`, say), the names the history revealed (`discovered_tool_names`)."""
        manager = self.tool_manager
        if manager is None or manager.tools is None:
            return set(self.discovered_tool_names)
        return {name for name, tool_def in self.tools.items() if self.is_tool_available(tool_def)}

    def is_tool_available(self, tool: str | ToolDefinition) -> bool:
        """Whether the model can call a function tool now.

        Args:
            tool: The tool's name, looked up in the step's tools (before they are listed: in
                `available_tool_names`; an unknown name is not available), or a definition (from a toolset's
                `get_tools`, say), judged by its own fields against what the history revealed.
        """
        if isinstance(tool, str):
            manager = self.tool_manager
            if manager is None or manager.tools is None:
                return tool in self.available_tool_names
            found = self.tools.get(tool)
            if found is None:
                return False
            tool = found
        if not tool.defer_loading and tool.with_native != TOOL_SEARCH_NATIVE_KIND:
            return True  # never deferred
        owner = tool.capability_id
        deferred_owner = owner is not None and getattr(self.capabilities.get(owner), 'defer_loading', False) is True
        if deferred_owner and owner in self.loaded_capability_ids:
            return True  # loading the capability revealed its tools
        if tool.name not in self.discovered_tool_names:
            return False
        return owner is None or owner in self.active_capability_ids

    @property
    def active_capability_ids(self) -> set[str]:
        """The ids of the capabilities in effect now (their instructions, tools, settings and hooks apply): every
        capability not loaded on demand, and the deferred ones loaded (`loaded_capability_ids`, which grows from the
        step after a load)."""
        always = {key for key, capability in self.capabilities.items() if not capability.defer_loading}
        return always | self.loaded_capability_ids

    @property
    def available_capability_ids(self) -> set[str]:
        """Deprecated: use `active_capability_ids`."""
        warnings.warn(
            '`available_capability_ids` is deprecated, use `active_capability_ids` instead: a capability in effect '
            'is "active"; "available" would name the deferred ones waiting to be loaded.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self.active_capability_ids

    @property
    def last_attempt(self) -> bool:
        """Whether this is the last attempt the retry budget allows (a failure now ends the run)."""
        return self.retry == self.max_retries

    @property
    def context_window_used(self) -> float | None:
        """How full the model's context window is as of the last response: its input tokens (cached ones included)
        and output tokens over the model's `context_window`, a hint for when to compact the history.

        `None` (never a misleading `0.0`) before the first response, when the window is unknown or the last response
        reports no tokens. It can pass `1.0` when the last response came from a model with a larger window; a
        `FallbackModel` counts against the smallest window of its models.
        """
        return context_window_fraction(self.messages, self.model.context_window)

    def enqueue(self, *content: EnqueueContent, priority: PendingMessagePriority = 'asap') -> str | None:
        """Queue content for the model: from a tool, a capability hook or any code holding the run context.

        Args:
            *content: The items to deliver (see `EnqueueContent`): user content, request parts, whole messages;
                together they must end with a request. No items: nothing is queued.
            priority: `'asap'`: with the next model request, or in one more request if the run would end
                first; `'when_idle'`: only when the run would end, after the `'asap'` content.

        Returns:
            The id of this `enqueue` call (the `enqueue_id` of the `EnqueuedMessagesEvent` of its delivery), or `None`
            when no items were given.

        Raises:
            UserError: this context belongs to no running agent, or the content does not end with a request.
        """
        queue = self.pending_messages
        if queue is None:
            raise UserError(
                '`enqueue` is only available during an agent run (from tools, capability hooks, or '
                '`AgentRun.enqueue`). This `RunContext` has no pending-message queue to drain.'
            )
        if (pending := PendingMessage.from_content(*content, priority=priority)) is None:
            return None
        queue.append(pending)
        return pending.enqueue_id

    def dequeue(self, enqueue_id: str) -> bool:
        """Take content queued with `enqueue` out of the queue before it is delivered (no `EnqueuedMessagesEvent`
        is given for it).

        Args:
            enqueue_id: What `enqueue` returned.

        Returns:
            `True` when the content was still queued and is now removed; `False` when it was delivered or dequeued
            already, or was never queued in this run.

        Raises:
            UserError: this context belongs to no running agent.
        """
        return remove_pending(self._queue_to_change('dequeue'), enqueue_id)

    def set_enqueue_priority(self, enqueue_id: str, priority: PendingMessagePriority) -> bool:
        """Change when content queued with `enqueue` is delivered; it keeps its place in the queue and its id.

        Args:
            enqueue_id: What `enqueue` returned.
            priority: The new priority, as in `enqueue`: `'asap'` (with the next model request) or `'when_idle'`
                (only when the run would end).

        Returns:
            `True` when the content was still queued; `False` when it was delivered or dequeued already, or was
            never queued in this run.

        Raises:
            UserError: this context belongs to no running agent.
        """
        return reprioritize_pending(self._queue_to_change('set_enqueue_priority'), enqueue_id, priority)

    def load_capability(self, capability: str | Any) -> bool:
        """Load a deferred capability (`defer_loading=True`) from code, as the model's `load_capability` tool would,
        with no call of that tool (the run need not offer it).

        Call it where a model request follows: from a tool function or a tool hook (`after_tool_execute`, say), or
        from `after_model_request` on a response with tool calls the run answers, for the next request; from a
        `before_model_request` hook, for the request being prepared (which gets the capability's tools and
        instructions; its settings, native tools and hooks apply from the next one); from `before_run`, for the
        run's first request. The load goes on that request: a `CapabilityLoadDeltaPart` naming the capability, then a
        `ToolAvailabilityDeltaPart` naming its tools (if it has some), with a `CapabilityLoadDeltaEvent` and a
        `ToolAvailabilityDeltaEvent` in the event stream. Its instructions are the block `capability:<id>`. Being in
        the history, the load holds in a later run given that history and in a stored run resumed. When a tool
        step ends the run instead (an output, a deferred call or one awaiting approval), the load is dropped.

        Args:
            capability: The capability's id in this run, or the capability itself.

        Returns:
            `True` when the load is queued; `False` when the capability is already active (always on, or loaded), or
            already being loaded (by an earlier call, or by the model's `load_capability` call in the response being
            handled).

        Raises:
            UserError: the capability is not one of the run's; or no model request follows where it is called
                (`after_run`, a hook of a final response, a context of no running agent), or it is an output tool's;
                or it runs inside a durable engine's step (a DBOS step), whose result recovery replays without it.
        """
        return load_capability(self, capability)

    def _queue_to_change(self, method: str) -> list[PendingMessage]:
        queue = self.pending_messages
        if queue is None:
            raise UserError(
                f'`{method}` is only available during an agent run (from tools, capability hooks, or '
                f'`AgentRun.{method}`). This `RunContext` has no pending-message queue to change.'
            )
        return queue

    def remaining_time(self) -> float | None:
        """Seconds left until `deadline` (negative once it has passed); `None` when the run has no deadline."""
        if self.deadline is None:
            return None
        return (self.deadline - datetime.now(tz=timezone.utc)).total_seconds()

    async def emit(self, event: _EventT, /) -> _EventT:
        """Put an application's `CustomEvent`, or a capability's `CapabilityEvent`, into the run's event stream
        (`run_stream_events`, an `event_stream_handler`, the node streams of `iter`): given before the next event of
        the node streaming, or first in the next node's stream. Not sent to the model.

        Inside a tool call, an event that names no tool call gets the call's `tool_call_id` and `tool_name`. A
        `CapabilityEvent` belongs to a capability: emitted by a capability's tool it gets the capability's id as
        `capability_id`; elsewhere it must name one of the run's capabilities itself. The capabilities' listeners
        (`on_event`) get an event as the stream passes it, or, for a `CapabilityEvent` class with
        `dispatch='immediate'`, here, before `emit` returns.

        Returns:
            The event, as given (with the ids stamped).

        Raises:
            UserError: this context belongs to no running agent, or a capability event names no capability of
                the run.
        """
        buffer = self._event_stream_buffer
        if buffer is None:
            raise UserError(
                '`emit` is only available during an agent run (from tools, capability hooks, or `AgentRun.emit`). '
                'This `RunContext` has no event stream to emit into.'
            )
        if isinstance(event, CapabilityEvent) and event.capability_id is None:
            owner = None
            if self.tool_name is not None and self.tool_manager is not None and self.tool_manager.tools:
                # the id a capability's tool carries (`ToolDefinition.capability_id`)
                owner = getattr(
                    getattr(self.tool_manager.tools.get(self.tool_name), 'tool_def', None), 'capability_id', None
                )
            if owner is None or owner not in self.capabilities:
                raise UserError(
                    "A capability event belongs to a capability: emit it from a capability's tool, or set its "
                    "`capability_id` to the id of one of the run's capabilities. Application code emits a "
                    '`CustomEvent`.'
                )
            event.capability_id = owner
        elif isinstance(event, CapabilityEvent) and event.capability_id not in self.capabilities:
            raise UserError(
                f'Capability event {event.kind!r} names capability {event.capability_id!r}, which is not one of '
                "the run's capabilities."
            )
        if self.tool_call_id is not None and event.tool_call_id is None:
            event.tool_call_id = self.tool_call_id
            event.tool_name = self.tool_name
        if isinstance(event, CapabilityEvent) and type(event).event_dispatch == 'immediate':
            # The listeners decide before `emit` returns; the stream then gives the event as they left it.
            for capability in self.capabilities.values():
                if capability.listens_to(event):
                    await capability.on_event(self, event=event)
        buffer.append(event)
        return event

    def cancel(self) -> None:
        """Cancel the run this context belongs to: from a tool, a capability hook, an event stream handler.

        It asks and returns: the code calling it goes on until its next `await` (a checkpoint), where the run's
        cancellation reaches it, and what it returns is dropped. The run then stops what it is doing (the model
        request in flight, the other tools running) and ends with `RunCancelled`, keeping what it had done in its
        messages. A tool running in a worker thread is not stopped: it runs to its end, unseen. Calling it again,
        or after the run has ended, does nothing.

        Raises:
            UserError: the context belongs to no running agent (e.g. one made by hand).
        """
        cancellation = self._cancellation
        if cancellation is None:
            raise UserError(
                '`cancel` is only available during an agent run (from tools, event stream handlers, or capability '
                'hooks) in the process running it. This `RunContext` has no run to cancel.'
            )
        cancellation.cancel()

    def replace_with(self, **changes: Any) -> RunContext[RunContextAgentDepsT]:
        """A copy with the given fields changed."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return (
            f'RunContext(deps={self.deps!r}, model={self.model!r}, usage={self.usage!r}, run_step={self.run_step}, '
            f'tool_name={self.tool_name!r}, retry={self.retry})'
        )


_dataclass_init = RunContext.__init__


@functools.wraps(_dataclass_init)
def _init_accepting_capability_loaded(
    self: RunContext[Any], *args: Any, capability_loaded: bool | None = None, **kwargs: Any
) -> None:
    # `capability_loaded=` (the field's name before `capability_active`) is taken, with a warning. Not an `InitVar`:
    # `dataclasses.replace` would pass it on (and warn) at each copy the run makes.
    if capability_loaded is not None:
        warnings.warn(_CAPABILITY_LOADED_DEPRECATION, PydanticAIDeprecationWarning, stacklevel=2)
        kwargs.setdefault('capability_active', capability_loaded)
    _dataclass_init(self, *args, **kwargs)


RunContext.__init__ = _init_accepting_capability_loaded  # type: ignore[method-assign]


class Model(ConfiguredModel):
    """A language model backend: turns a list of messages into a `ModelResponse`.

    Its settings, profile and provider, and what they decide, come from `ConfiguredModel`."""

    def _starts_request_deadline(self) -> bool:
        """Whether a request to this model gets the `request_timeout` deadline (a `FallbackModel`'s requests do not:
        it gives one to each model it tries)."""
        return True

    @abstractmethod
    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the messages to the model and return its response.

        Args:
            messages: The conversation so far, ending with the request to answer. Do not modify it.
            model_settings: The merged settings of the model, the agent and the run.
            model_request_parameters: The tools and output kind of the request.
        """
        raise NotImplementedError

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Stream the model's response: `async with model.request_stream(...) as response: async for event ...`.

        Leaving the block closes the stream (and its HTTP response), even in the middle of it.

        Args:
            messages: The conversation so far, ending with the request to answer. Do not modify it.
            model_settings: The merged settings of the model, the agent and the run.
            model_request_parameters: The tools and output kind of the request.
            run_context: The run's context, when the request is made by an agent run.

        Raises:
            NotImplementedError: this model does not stream.
        """
        raise NotImplementedError(f'Streamed requests are not supported by {type(self).__name__} yet.')
        yield  # pragma: no cover

    def continuation_delay(self, response: ModelResponse) -> float | None:
        """How long to wait (in seconds) before asking the model to continue `response`, a response it
        suspended (`state='suspended'`); `None` (the default) asks at once. A model whose provider runs the turn as
        a job to poll returns the interval between polls.
        """
        return None

    async def cancel_suspended_response(self, response: ModelResponse) -> None:
        """Stop the provider's work on `response`, a suspended response the run gives up on (after an error or a
        cancellation). Nothing by default: a model whose provider keeps such a job running overrides this.
        """
        return None

    def prepare_messages(
        self, messages: list[ModelMessage], model_request_parameters: ModelRequestParameters | None = None
    ) -> list[ModelMessage]:
        """The history as this model is sent it (agent runs call this before each request; call it yourself before
        a direct `Model.request` on a history holding such parts): spoken turns (`SpeechPart`s of a realtime
        session's history) become prompt and text parts (a user's as its kept audio when the profile has
        `supports_audio_input`, else as its transcript), and each `ToolAvailabilityDeltaPart` becomes a system
        prompt naming the tools it made available (`TOOL_AVAILABILITY_ANNOUNCEMENT`), after the request's tool
        results, unless the model takes such tools natively (`tool_addition_mode`: the part then stays where it is,
        after the tool results, for the request mapping to render). Each `InstructionDeltaPart` of the current
        instruction window (from the last `InstructionBaselinePart` or compaction) becomes a system prompt holding
        its `<pyai:context>` element (or diff);
        baselines, earlier changes, `CapabilityLoadDeltaPart`s and `ModelSettingsDeltaPart`s are dropped (no
        model here takes a settings change mid-conversation: the request's settings carry the current value); each
        `RetryFeedbackPart` becomes the system or user prompt its cause calls for. A user prompt, tool result or
        retry feedback whose text copies one of the framework's tags (`<system>`, `<pyai:context>`,
        `<pyai:retry_feedback>`, ...) is sent as written, with a system prompt next to it saying who wrote that text
        and that it has no authority (a lookalike note, in the application's voice). A request-scoped system prompt
        (`SystemPromptPart(scope='request')`) of an earlier request is left out and the current request's go to its
        end, unless the profile has `supports_request_scoped_system_prompts` (the API clears them itself: then only
        one no later user turn follows is left out). A system prompt registered with `on_change='append'` is sent in
        its `<pyai:context>` element (`SystemPromptPart.context_id`). When the profile sets
        `tool_call_id_length`, tool call ids that do not fit it are replaced by stable hashes that do (`UserError`
        when the length is below 1). `messages` itself when nothing changes.

        Args:
            messages: The history.
            model_request_parameters: The parameters of the request: only the deferred function tools it
                serves are announced (a name that is none of them, or a request left with no part, is dropped).
                Without them, every name is announced.
        """
        return prepare_history(
            messages, self.profile, model_request_parameters, keeps_tool_deltas=self.tool_addition_mode is not None
        )

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """Adapt the request parameters to the model (e.g. its JSON schema dialect); unchanged by default."""
        return parameters

    def prepare_request(
        self, model_settings: ModelSettings | None, model_request_parameters: ModelRequestParameters
    ) -> tuple[ModelSettings | None, ModelRequestParameters]:
        """The settings and parameters a request is sent with: the model's own settings under `model_settings`,
        and the parameters customized for the model, with the native tools it cannot run swapped for their local
        fallbacks (or left out when optional), how each function tool is sent in `params.tool_visibility` (see
        `ModelRequestParameters.visibility_of`) and the unified `thinking` setting moved to `params.thinking` as
        the profile allows (the returned settings no longer hold it).

        Raises:
            UserError: a native tool the model cannot run has no fallback, or `thinking` has an unknown value.
        """
        settings = merge_model_settings(self.settings, model_settings)
        params = self.customize_request_parameters(model_request_parameters)
        params = resolve_model_tools(
            params,
            lambda: self.supported_native_tools() & self.profile.get('supported_native_tools', SUPPORTED_NATIVE_TOOLS),
            self.tool_deferral_mode,
            self.tool_addition_mode,
        )
        if settings and 'thinking' in settings:
            params = resolve_thinking(settings, params, self.profile)
            rest = {key: value for key, value in settings.items() if key != 'thinking'}
            settings = ModelSettings(**rest) if rest else None  # type: ignore[typeddict-item]
        return settings, params

    @property
    def batch_max_requests(self) -> int | None:
        """The most requests the provider takes in one batch; `None` when the model has no batch API (a model that
        gives a number implements the other `batch_*` methods, which `BatchModelRequests` uses)."""
        return None

    @property
    def batch_max_bytes(self) -> int | None:
        """The most bytes the provider takes in one batch (the sum of its requests' `batch_request_size`); `None`
        when it limits only the number of requests."""
        return None

    def batch_request_size(self, request: EncodedBatchRequest) -> int:
        """The bytes `request` adds to a batch: by default the UTF-8 size of its `custom_id` and `body`."""
        return len(request.custom_id.encode()) + len(request.body.encode())

    def _no_batch_api_message(self) -> str:
        """The error of batching this model when `batch_max_requests` is `None`."""
        return f'`{type(self).__name__}` {self.model_name!r} has no batch API.'

    def _batch_unlisted_status(self, batch: Batch) -> BatchResultStatus | None:
        """How the provider ended the requests an ended `batch` lists no result for, when it says (`None`: they
        count as expired)."""
        return None

    async def batch_encode(self, request: BatchRequest) -> EncodedBatchRequest:
        """`request` in the provider's batch format.

        Raises:
            NotImplementedError: the model has no batch API.
        """
        raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')

    async def batch_create(self, requests: Sequence[EncodedBatchRequest]) -> Batch:
        """Submit `requests` (of one `group`) as one batch job."""
        raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')

    async def batch_status(self, batch: Batch) -> Batch:
        """The job's current state, without its results."""
        raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')

    async def batch_results(self, batch: Batch) -> list[BatchResult]:
        """The results of an ended job, one per request (matched by `custom_id`)."""
        raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')

    async def batch_cancel(self, batch: Batch) -> Batch:
        """Ask the provider to cancel the job; its updated state."""
        raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')

    def batch_decode(self, result: BatchResult, request: BatchRequest) -> ModelResponse:
        """The response `request` would have had on its own, from its batch `result` (raising its error)."""
        raise NotImplementedError(f'`{type(self).__name__}` does not support batch requests.')

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model_name={self.model_name!r})'
