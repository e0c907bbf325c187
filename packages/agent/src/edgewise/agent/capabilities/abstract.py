"""`AbstractCapability`: a piece of agent behaviour given with `Agent(capabilities=[...])`, with the hooks the run
calls, and the handler types of its `wrap_*` hooks.

Every stage of a run (the run, each node, each model request, each tool call's validation and execution, the
output's validation and processing) has four hooks: `before_*` (change the input), `wrap_*` (around the stage:
`await handler(...)` runs it), `on_*_error` (the stage failed: return a replacement or raise) and `after_*`
(change the result). Across several capabilities, `before_*` hooks run in the order the capabilities are given,
`wrap_*` hooks nest with the first capability outermost, and `after_*` and `on_*_error` hooks run in reverse order.
"""

from __future__ import annotations as _annotations

import sys
import warnings
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Generic, Literal, TypeAlias

from pydantic import ValidationError

from edgewise.graph import BaseNode, End

from .._run.deps import GraphAgentDeps
from .._run.options import AgentInstructions, AgentModelSettings
from .._run.result import AgentRunResult, FinalResult
from .._run.state import GraphAgentState
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from .._tools.definition import ToolDefinition
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import ModelRetry
from ..messages import AgentStreamEvent, CapabilityEvent, ModelResponse, ToolCallPart
from ..models import KnownModelName, Model, ModelRequestContext, ModelResolutionContext, ModelSelectionContext
from ..output import OutputContext
from ..tools import AgentDepsT, AgentNativeTool, RunContext
from ..toolsets import AbstractToolset, ToolsetFunc
from ..workspaces import WorkspaceBackend, WorkspaceRef
from ._hook_table import EVENT_STREAM_HOOK, LIFECYCLE_HOOKS
from ._on_event import collect_on_event_methods, marked_listens_to

__all__ = (
    'AbstractCapability',
    'AgentCapability',
    'AgentModel',
    'AgentNode',
    'CapabilityFunc',
    'CapabilityOrdering',
    'CapabilityPosition',
    'CapabilityRef',
    'ModelRequestContext',
    'ModelSelection',
    'ModelSelector',
    'NodeResult',
    'RawOutput',
    'RawToolArgs',
    'ValidatedToolArgs',
    'WrapModelRequestHandler',
    'WrapNodeRunHandler',
    'WrapOutputProcessHandler',
    'WrapOutputValidateHandler',
    'WrapRunHandler',
    'WrapToolExecuteHandler',
    'WrapToolValidateHandler',
    'LIFECYCLE_HOOKS',
)

AgentNode: TypeAlias = BaseNode[GraphAgentState, GraphAgentDeps[AgentDepsT, Any], FinalResult[Any]]
"""A node of an agent run (`UserPromptNode`, `ModelRequestNode`, `CallToolsNode`)."""

NodeResult: TypeAlias = (
    BaseNode[GraphAgentState, GraphAgentDeps[AgentDepsT, Any], FinalResult[Any]] | End[FinalResult[Any]]
)
"""What running a node of an agent run gives: the next node, or the `End` of the run."""

WrapRunHandler: TypeAlias = Callable[[], Awaitable[AgentRunResult[Any]]]
"""What `wrap_run` is given: runs the agent and returns its result."""

WrapNodeRunHandler: TypeAlias = Callable[[AgentNode[AgentDepsT]], Awaitable[NodeResult[AgentDepsT]]]
"""What `wrap_node_run` is given: runs the node it is passed and returns the next node (or the `End`)."""

WrapModelRequestHandler: TypeAlias = Callable[[ModelRequestContext], Awaitable[ModelResponse]]
"""What `wrap_model_request` is given: sends the request described by its argument and returns the response."""

RawToolArgs: TypeAlias = str | dict[str, Any]
"""A tool call's arguments as the model gave them (JSON text or a dict), before validation."""

ValidatedToolArgs: TypeAlias = dict[str, Any]
"""A tool call's arguments once validated against the tool's schema."""

WrapToolValidateHandler: TypeAlias = Callable[[RawToolArgs], Awaitable[ValidatedToolArgs]]
"""What `wrap_tool_validate` is given: validates the arguments it is passed."""

WrapToolExecuteHandler: TypeAlias = Callable[[ValidatedToolArgs], Awaitable[Any]]
"""What `wrap_tool_execute` is given: runs the tool with the arguments it is passed and returns its result."""

RawOutput: TypeAlias = str | dict[str, Any]
"""A structured output as the model gave it (text, or an output tool's arguments), before validation."""

WrapOutputValidateHandler: TypeAlias = Callable[[RawOutput], Awaitable[Any]]
"""What `wrap_output_validate` is given: validates the raw output it is passed into the output value."""

WrapOutputProcessHandler: TypeAlias = Callable[[Any], Awaitable[Any]]
"""What `wrap_output_process` is given: turns the validated value into the run's output (output function)."""

ModelSelection: TypeAlias = 'Model | KnownModelName | str'
"""A model, or a model id to resolve (through the capabilities' `resolve_model_id`, then `infer_model`)."""

ModelSelector: TypeAlias = 'Callable[[ModelSelectionContext[AgentDepsT]], ModelSelection | Awaitable[ModelSelection]]'
"""A function (sync or async) picking the model of each request step from a `ModelSelectionContext`."""

AgentModel: TypeAlias = 'ModelSelection | ModelSelector[AgentDepsT]'
"""What `AbstractCapability.get_model` returns: a model chosen once per run, or a selector asked at each step."""

CapabilityPosition: TypeAlias = Literal['outermost', 'innermost']
"""Where a capability goes among the others, whatever the order they are given in."""

CapabilityRef: TypeAlias = 'type[AbstractCapability[Any]] | AbstractCapability[Any]'
"""A capability class (any capability of that class) or one capability (that very object)."""


@dataclass
class CapabilityOrdering:
    """Where a capability goes in its `CombinedCapability`, whatever the order the capabilities are given in
    (`get_ordering`). The first capability is the outermost: its `before_*` hooks run first and its `wrap_*`
    hooks wrap the others'."""

    position: CapabilityPosition | None = None
    """`'outermost'` or `'innermost'` (ties keep the given order), or `None` to stay where given."""
    wraps: Sequence[CapabilityRef] = ()
    """Capabilities (classes or objects) this one goes outside of."""
    wrapped_by: Sequence[CapabilityRef] = ()
    """Capabilities (classes or objects) this one goes inside of."""
    requires: Sequence[type[AbstractCapability[Any]]] = ()
    """Capability classes that must be among the capabilities too."""


@dataclass
class AbstractCapability(Generic[AgentDepsT]):
    """Base of capabilities: override the hooks you need; the defaults change nothing."""

    _: KW_ONLY
    id: str | None = None
    """The capability's id in the run (`ctx.capabilities`), unique among the run's capabilities. Required with
    `defer_loading=True` (the history names the capability by it); without one, the run lists the capability
    under an id made from its class name."""
    description: str | None = None
    """What the capability is, shown in the catalog of deferred capabilities (see `get_description`)."""
    defer_loading: bool = False
    """Load the capability only when the model asks for it: until then its instructions, tools, native tools and
    model settings stay out of the requests and its hooks do not fire; the model sees its id (and description)
    in a catalog and loads it with the `load_capability` tool, whose return carries its instructions. Needs
    `id`."""

    def __init__(self, *, id: str | None = None, description: str | None = None, defer_loading: bool = False) -> None:
        """Set the fields given; a field not given that a plain subclass sets as a class attribute (`id = 'docs'`
        in the class body) keeps the class's value. Dataclass subclasses get their own `__init__`."""
        for name, value, default in (('id', id, None), ('description', description, None)):
            if value is not default or getattr(type(self), name, default) is default:
                setattr(self, name, value)
        if defer_loading or getattr(type(self), 'defer_loading', False) is False:
            self.defer_loading = defer_loading

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """The name of this capability in agent specs (by default the class name); `None`: it cannot be built
        from a spec (it takes functions, say)."""
        return cls.__name__

    @classmethod
    def from_spec(cls, *args: Any, **kwargs: Any) -> AbstractCapability[Any]:
        """The capability built from a spec's arguments; by default `cls(*args, **kwargs)`. Override it when the
        constructor takes values that YAML or JSON cannot hold."""
        return cls(*args, **kwargs)

    def get_ordering(self) -> CapabilityOrdering | None:
        """Where this capability goes among the others (see `CapabilityOrdering`); `None`: where it is given."""
        return None

    def for_agent(self, agent: Any) -> AbstractCapability[AgentDepsT]:
        """The capability to use with `agent`, asked once the agent is configured (for the agent's capabilities) or
        once per run (for a run's own capabilities, and a capability a `DynamicCapability`'s function makes): by
        default this very one; return a copy bound to the agent to read its configuration."""
        return self

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """The capability for the run starting with `ctx`, asked once as each run starts, before its instructions,
        settings, tools and hooks are read: by default this very one (shared by every run); return a new one to
        keep state per run."""
        return self

    def apply(self, visitor: Callable[[AbstractCapability[AgentDepsT]], None]) -> None:
        """Call `visitor` with each capability this one is made of (itself, for all but `CombinedCapability`)."""
        visitor(self)

    def prefix_tools(self, prefix: str) -> AbstractCapability[AgentDepsT]:
        """This capability with its tools named `<prefix>_<name>`: `PrefixTools(self, prefix=prefix)`."""
        # `PrefixTools` is built on this class: read it from its module at call time (this package's `__init__`
        # loads it), as `models._model` reads `ALLOW_MODEL_REQUESTS`, rather than import a module above this one.
        prefixed: AbstractCapability[AgentDepsT] = sys.modules[f'{__package__}.prefix_tools'].PrefixTools(
            wrapped=self, prefix=prefix
        )
        return prefixed

    def get_instructions(self) -> AgentInstructions:
        """Instructions this capability adds to every request (texts or functions of the run context)."""
        return None

    def get_description(self) -> Any:
        """What this capability is, for the catalog of deferred capabilities: a text, or a function (sync or async,
        of the run context or of nothing) giving one, called each time the catalog is written; `None` for none.
        By default the `description` field."""
        return self.description

    def get_model_settings(self) -> AgentModelSettings[Any] | None:
        """Model settings this capability adds (under the agent's and the run's)."""
        return None

    def get_model(self) -> AgentModel[AgentDepsT] | None:
        """The model this capability picks for the run, or `None` to pick none: a model or model id (resolved once
        per run), or a selector (a function, sync or async, of a `ModelSelectionContext`) asked before each
        request step. A model given to the run (`run(model=...)`, a run spec's or `agent.override(model=...)`)
        wins over it; it wins over the agent's own model. Among capabilities, the last that picks one wins."""
        return None

    async def resolve_model_id(
        self, ctx: ModelResolutionContext[AgentDepsT], *, model_id: KnownModelName | str
    ) -> Model | None:
        """The model a model id (the agent's, the run's or a capability's pick) stands for, or `None` to leave it
        to the next capability and at last to `infer_model`. Capabilities are asked in order; the first model
        returned wins. `ctx` carries the agent and the run's dependencies."""
        return None

    @property
    def has_resolve_model_id(self) -> bool:
        """Whether this capability (or one it wraps or combines) implements `resolve_model_id`."""
        return self.overrides('resolve_model_id')

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT] | None:
        """A toolset whose tools this capability adds to the agent's (or a function of the run context building
        one at each step, as `@agent.toolset` takes)."""
        return None

    def get_workspace(self, ctx: RunContext[AgentDepsT], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        """The run's workspace backend (`RunContext.workspace`), asked as the run starts, before `for_run`; `None` to
        leave it to the next capability. The first capability to supply one wins (a deferred capability is not
        asked: the workspace is chosen before the model could load it).

        Args:
            ctx: The run's context (its `workspace` not chosen yet).
            ref: The environment to continue in, or `None` for a fresh one; a capability that cannot reach the
                environment `ref` names returns `None`. Return a `Workspace` wrapper (`ReadOnlyWorkspace`,
                `AuthorityWorkspace`) around the backend to apply a policy.
        """
        return None

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """Native tools (run by the model's provider) this capability adds to every request."""
        return ()

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        """The run's toolset (every function tool of the run, not the output tools) wrapped in another toolset, or
        `None` to leave it as it is; asked once per run. The `prepare_tools` hooks see what the wrapper lists."""
        return None

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """The function tools of this step: drop or change definitions (not add or rename tools). A tool dropped
        here is neither shown to the model nor run. `ctx.retry`/`max_retries` are the tool retry budget's."""
        return tool_defs

    async def prepare_output_tools(
        self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        """The output tools of this step, as `prepare_tools` for function tools; `ctx.retry`/`max_retries` are the
        output retry budget's."""
        return tool_defs

    # -- the run ---------------------------------------------------------------------------------------------

    async def before_run(self, ctx: RunContext[AgentDepsT]) -> None:
        """Called as the run starts (inside `wrap_run`), to observe it; change it with `wrap_run`."""

    async def after_run(self, ctx: RunContext[AgentDepsT], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        """Called with the run's result once it has ended (or once `on_run_error` recovered); return it, or
        another result, which becomes the run's."""
        return result

    async def wrap_run(self, ctx: RunContext[AgentDepsT], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        """Around a whole run: `await handler()` runs it. Return another result, catch its error and return a
        result instead, or skip the run by not calling `handler`."""
        return await handler()

    async def on_run_error(self, ctx: RunContext[AgentDepsT], *, error: BaseException) -> AgentRunResult[Any]:
        """Called when the run failed and no `wrap_run` recovered: raise (`error` or another exception), or return
        a result for the run instead (which then goes through `after_run`)."""
        raise error

    # -- each node of the run --------------------------------------------------------------------------------

    async def before_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT]
    ) -> AgentNode[AgentDepsT]:
        """Called before each node of the run (`UserPromptNode`, `ModelRequestNode`, `CallToolsNode`) runs; return
        it, or another node to run in its place."""
        return node

    async def after_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], result: NodeResult[AgentDepsT]
    ) -> NodeResult[AgentDepsT]:
        """Called after a node ran with what comes next (a node, or the `End`); return it or another."""
        return result

    async def wrap_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], handler: WrapNodeRunHandler[AgentDepsT]
    ) -> NodeResult[AgentDepsT]:
        """Around each node: `await handler(node)` runs it and gives the next node (or the `End`). Run another node,
        run it again, or return another next node.

        Node hooks fire however the run is driven: `agent.run`, `run_sync`, `run_stream`, `run_stream_events`,
        `AgentRun.next` and a bare `async for node in agent_run`."""
        return await handler(node)

    async def on_node_run_error(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], error: Exception
    ) -> NodeResult[AgentDepsT]:
        """Called when a node failed: raise (`error` or another exception), or return the node (or `End`) the run
        goes on with."""
        raise error

    async def wrap_run_event_stream(
        self, ctx: RunContext[AgentDepsT], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """Around the events of each streamed node: yield them, changed, dropped or with others. A run whose
        capabilities implement this streams its nodes even without an `event_stream_handler`.

        By default, a capability with event listeners (`on_event`) hands each event it listens to to `on_event`
        before passing it on (a `dispatch='immediate'` capability event was handed over when it was emitted);
        an override that should keep them calls this one."""
        if not self.has_on_event:
            async for event in stream:
                yield event
            return
        async for event in stream:
            immediate = isinstance(event, CapabilityEvent) and type(event).event_dispatch == 'immediate'
            if not immediate and self.listens_to(event):
                await self.on_event(ctx, event=event)
            yield event

    async def on_event(self, ctx: RunContext[AgentDepsT], *, event: AgentStreamEvent) -> None:
        """Called with each event of the run this capability listens to (`listens_to`): by default, hands it to
        the methods marked with `on_event` that take it, in definition order. Override it to handle events
        yourself (call `super().on_event(...)` to keep the marked methods). A capability gets the events it emits
        itself."""
        for method in collect_on_event_methods(type(self)):
            if method.accepts(event):
                await method.func(self, ctx, event)

    @property
    def has_on_event(self) -> bool:
        """Whether this capability listens to events: it overrides `on_event`, or has methods marked with it."""
        return type(self).on_event is not AbstractCapability.on_event or bool(collect_on_event_methods(type(self)))

    def listens_to(self, event: AgentStreamEvent) -> bool:
        """Whether `on_event` would reach a listener for `event` (every event, when `on_event` is overridden)."""
        return type(self).on_event is not AbstractCapability.on_event or marked_listens_to(type(self), event)

    # -- each model request ----------------------------------------------------------------------------------

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Called before each model request with what is about to be sent; return it, changed or not."""
        return request_context

    async def after_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """Called with each model response; return it or another. Raise `ModelRetry` to have the model answer
        again (the response stays in the history; it counts against the output retries)."""
        return response

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """Around each model request: `await handler(request_context)` sends it. Return another response, or one
        of your own without calling `handler`. `ModelRetry` asks the model again (past `on_model_request_error`)."""
        return await handler(request_context)

    async def on_model_request_error(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        """Called when a model request failed: raise (`error` or another exception), return a response to use
        instead, or raise `ModelRetry` to ask the model again. Not called for `ModelRetry` or
        `SkipModelRequest`."""
        raise error

    # -- each function tool call: validation -----------------------------------------------------------------

    async def before_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: RawToolArgs
    ) -> RawToolArgs:
        """Called with a tool call's raw arguments before they are validated; return them, changed or not. Raise
        `ModelRetry` to have the model make the call again."""
        return args

    async def after_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        """Called with a tool call's validated arguments; return them, changed or not. Raise `ModelRetry` to
        reject them."""
        return args

    async def wrap_tool_validate(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: RawToolArgs,
        handler: WrapToolValidateHandler,
    ) -> ValidatedToolArgs:
        """Around the validation of a tool call's arguments: `await handler(args)` validates them."""
        return await handler(args)

    async def on_tool_validate_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: RawToolArgs,
        error: ValidationError | ModelRetry,
    ) -> ValidatedToolArgs:
        """Called when a tool call's arguments did not validate (a `ValidationError`, or `ModelRetry` from the
        tool's `args_validator`): raise to have the model retry, or return arguments to use instead."""
        raise error

    # -- each function tool call: execution ------------------------------------------------------------------

    async def before_tool_execute(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        """Called with the validated arguments before the tool runs; return them, changed or not. Raise
        `ModelRetry` to have the model make the call again instead."""
        return args

    async def after_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        result: Any,
    ) -> Any:
        """Called with what the tool returned; return it or another result. Raise `ModelRetry` to reject it."""
        return result

    async def wrap_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Around a tool's run: `await handler(args)` runs it and returns its result."""
        return await handler(args)

    async def on_tool_execute_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        error: Exception,
    ) -> Any:
        """Called when a tool raised: raise (`error` or another exception), return a result to use instead, or
        raise `ModelRetry` to have the model retry. Not called for the tool's own `ModelRetry`, `CallDeferred`,
        `ApprovalRequired` or `SkipToolExecution`."""
        raise error

    # -- the output: validation ------------------------------------------------------------------------------

    async def before_output_validate(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: RawOutput
    ) -> RawOutput:
        """Called with a structured output (an output tool's arguments, or native/prompted JSON text) before it is
        validated; return it, changed or not (repair it, say). Not called for plain text output. Raise
        `ModelRetry` to have the model answer again. While streaming, also called on partial outputs
        (`ctx.partial_output`)."""
        return output

    async def after_output_validate(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """Called with the validated value (an instance of the output type, or the output function's argument);
        return it or another. Raise `ModelRetry` to reject it."""
        return output

    async def wrap_output_validate(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: RawOutput,
        handler: WrapOutputValidateHandler,
    ) -> Any:
        """Around the validation of a structured output: `await handler(output)` validates it."""
        return await handler(output)

    async def on_output_validate_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: RawOutput,
        error: ValidationError | ModelRetry,
    ) -> Any:
        """Called when a structured output did not validate: raise to have the model retry, or return the value
        to use instead."""
        raise error

    # -- the output: processing ------------------------------------------------------------------------------

    async def before_output_process(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """Called with the validated value before it becomes the output (through the output function, if any);
        return it, changed or not. Raise `ModelRetry` to have the model answer again."""
        return output

    async def after_output_process(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """Called with the output; return it or another. Raise `ModelRetry` to reject it."""
        return output

    async def wrap_output_process(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: Any,
        handler: WrapOutputProcessHandler,
    ) -> Any:
        """Around the processing of the output: `await handler(output)` calls the output function (if any)."""
        return await handler(output)

    async def on_output_process_error(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any, error: Exception
    ) -> Any:
        """Called when processing the output raised (not `ModelRetry`): raise, or return the output to use."""
        raise error

    # -- deferred tool calls ---------------------------------------------------------------------------------

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Answer deferred tool calls (approvals, external calls) inside the run instead of ending it with them:
        return results for some or all of `requests`, or `None` to leave them to the next capability. Calls left
        unanswered end the run with `DeferredToolRequests` as its output."""
        return None

    # -- what the run looks up once --------------------------------------------------------------------------

    @property
    def has_wrap_node_run(self) -> bool:
        """Whether this capability implements `wrap_node_run` (deprecated: every way of driving a run fires it, so
        nothing needs to check; `overrides('wrap_node_run')` still tells)."""
        warnings.warn(
            '`has_wrap_node_run` is deprecated: `wrap_node_run` now runs however a run is driven (`agent.run()`, '
            '`agent_run.next(node)`, `async for node in agent_run`), so nothing needs to check for it.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self.overrides('wrap_node_run')

    @property
    def has_wrap_run_event_stream(self) -> bool:
        """Whether this capability implements `wrap_run_event_stream`."""
        return self.overrides('wrap_run_event_stream')

    def has_request_hook(self) -> bool:
        """Whether this capability overrides `before_model_request` (so runs without one skip building a context)."""
        return self.overrides('before_model_request')

    def overrides(self, hook: str) -> bool:
        """Whether this capability implements `hook` (the name of one of the hook methods), so that a run whose
        capabilities do not can skip it."""
        return _overrides(self, hook) or (hook == EVENT_STREAM_HOOK and self.has_on_event)


def _overrides(capability: AbstractCapability[Any], hook: str) -> bool:
    return getattr(type(capability), hook) is not getattr(AbstractCapability, hook)


CapabilityFunc: TypeAlias = Callable[
    [RunContext[Any]], 'AbstractCapability[Any] | Awaitable[AbstractCapability[Any] | None] | None'
]
"""A function of the run context returning a capability (or `None`) for that run, sync or async."""

AgentCapability: TypeAlias = 'AbstractCapability[AgentDepsT] | CapabilityFunc'
"""What `Agent(capabilities=[...])` takes: capabilities, or functions returning one per run."""
