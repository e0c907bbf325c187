"""`CombinedCapability`: several capabilities acting as one, each hook applied in order."""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic import ValidationError

from .._run.options import AgentInstructions, AgentModelSettings
from .._run.result import AgentRunResult
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from .._tools.definition import ToolDefinition
from ..exceptions import ModelRetry
from ..messages import AgentStreamEvent, ModelResponse, ToolCallPart
from ..models import ModelRequestContext
from ..output import OutputContext
from ..settings import ModelSettings, merge_model_settings
from ..tools import AgentDepsT, AgentNativeTool, RunContext
from ..toolsets import AbstractToolset, CombinedToolset
from ..toolsets._dynamic import as_toolset
from ._ordering import sort_capabilities
from .abstract import (
    AbstractCapability,
    AgentNode,
    NodeResult,
    RawOutput,
    RawToolArgs,
    ValidatedToolArgs,
    WrapModelRequestHandler,
    WrapNodeRunHandler,
    WrapOutputProcessHandler,
    WrapOutputValidateHandler,
    WrapRunHandler,
    WrapToolExecuteHandler,
    WrapToolValidateHandler,
)

__all__ = ('CombinedCapability', 'combined_or_none')


@dataclass
class CombinedCapability(AbstractCapability[AgentDepsT]):
    """The capabilities in order (nested `CombinedCapability`s flattened, then sorted by their `get_ordering`
    constraints): the first one's `prepare_*` and `before_*` hooks run first, its `wrap_*` hooks are the
    outermost, and its `after_*` and `on_*_error` hooks run last. An agent's capabilities act through one of
    these.

    An `on_*_error` hook that raises hands its exception to the next one; the first that returns a value ends the
    error. Only the capabilities that implement a hook take part in it."""

    capabilities: Sequence[AbstractCapability[AgentDepsT]] = field(default_factory=list)
    """The capabilities, in order."""
    _by_hook: dict[str, list[AbstractCapability[AgentDepsT]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        flat: list[AbstractCapability[AgentDepsT]] = []
        for capability in self.capabilities:
            if isinstance(capability, CombinedCapability):
                flat.extend(capability.capabilities)
            else:
                flat.append(capability)
        self.capabilities = sort_capabilities(flat)

    def _with(self, hook: str) -> list[AbstractCapability[AgentDepsT]]:
        """The capabilities that implement `hook`, in order (looked up once per hook)."""
        found = self._by_hook.get(hook)
        if found is None:
            found = self._by_hook[hook] = [c for c in self.capabilities if c.overrides(hook)]
        return found

    def overrides(self, hook: str) -> bool:
        """Whether any of the capabilities implements `hook`."""
        return bool(self._with(hook))

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractCapability[AgentDepsT]:
        """The capabilities' `for_run` results as one (this one when each stays itself)."""
        found = [await c.for_run(ctx) if c.overrides('for_run') else c for c in self.capabilities]
        if all(a is b for a, b in zip(found, self.capabilities, strict=True)):
            return self
        return CombinedCapability(found)

    def apply(self, visitor: Callable[[AbstractCapability[AgentDepsT]], None]) -> None:
        """Call `visitor` with each of the capabilities, in order."""
        for capability in self.capabilities:
            capability.apply(visitor)

    def has_request_hook(self) -> bool:
        """Whether any of the capabilities has a `before_model_request` hook."""
        return any(capability.has_request_hook() for capability in self.capabilities)

    # -- what capabilities give ------------------------------------------------------------------------------

    def get_instructions(self) -> AgentInstructions:
        """Every capability's instructions, in order."""
        items: list[Any] = []
        for capability in self.capabilities:
            found = capability.get_instructions()
            if found is not None:
                items += [found] if isinstance(found, str) or callable(found) else list(found)
        return items or None

    def get_model_settings(self) -> AgentModelSettings | None:
        """Every capability's model settings merged, later capabilities winning; a function of the run context
        if one of them gives a function; `None` if none gives settings."""
        layers = [s for c in self.capabilities if (s := c.get_model_settings()) is not None]
        if not any(callable(layer) for layer in layers):
            merged: ModelSettings | None = None
            for layer in layers:
                merged = merge_model_settings(merged, layer)  # type: ignore[arg-type]
            return merged

        def resolve(ctx: RunContext[AgentDepsT]) -> ModelSettings | None:
            merged: ModelSettings | None = None
            for layer in layers:
                merged = merge_model_settings(merged, layer(ctx) if callable(layer) else layer)
            return merged

        return resolve

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """Every capability's toolset, as one; `None` if none has one."""
        toolsets = [as_toolset(t) for c in self.capabilities if (t := c.get_toolset()) is not None]
        if not toolsets:
            return None
        return toolsets[0] if len(toolsets) == 1 else CombinedToolset(toolsets)

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """Every capability's native tools, in order."""
        return [tool for capability in self.capabilities for tool in capability.get_native_tools()]

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        """The toolset in each capability's wrapper, the first capability's outermost; `None` if none wraps it."""
        wrapped: AbstractToolset[AgentDepsT] | None = None
        for capability in reversed(self.capabilities):
            found = capability.get_wrapper_toolset(toolset if wrapped is None else wrapped)
            if found is not None:
                wrapped = found
        return wrapped

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """The definitions through each capability's `prepare_tools`, in order."""
        for capability in self._with('prepare_tools'):
            tool_defs = await capability.prepare_tools(ctx, tool_defs)
        return tool_defs

    async def prepare_output_tools(
        self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        """The definitions through each capability's `prepare_output_tools`, in order."""
        for capability in self._with('prepare_output_tools'):
            tool_defs = await capability.prepare_output_tools(ctx, tool_defs)
        return tool_defs

    # -- the run ---------------------------------------------------------------------------------------------

    async def before_run(self, ctx: RunContext[AgentDepsT]) -> None:
        """Each capability's `before_run`, in order."""
        for capability in self._with('before_run'):
            await capability.before_run(ctx)

    async def after_run(self, ctx: RunContext[AgentDepsT], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        """The result through each capability's `after_run`, in reverse order."""
        for capability in reversed(self._with('after_run')):
            result = await capability.after_run(ctx, result=result)
        return result

    async def wrap_run(self, ctx: RunContext[AgentDepsT], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        """The run inside each capability's `wrap_run`, the first one outermost."""
        for capability in reversed(self._with('wrap_run')):
            handler = partial(_call_wrap_run, capability, ctx, handler)
        return await handler()

    async def on_run_error(self, ctx: RunContext[AgentDepsT], *, error: BaseException) -> AgentRunResult[Any]:
        """Each capability's `on_run_error` in reverse order, until one returns a result."""
        for capability in reversed(self._with('on_run_error')):
            try:
                return await capability.on_run_error(ctx, error=error)
            except BaseException as exc:
                error = exc
        raise error

    # -- each node -------------------------------------------------------------------------------------------

    async def before_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT]
    ) -> AgentNode[AgentDepsT]:
        """The node through each capability's `before_node_run`, in order."""
        for capability in self._with('before_node_run'):
            node = await capability.before_node_run(ctx, node=node)
        return node

    async def after_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], result: NodeResult[AgentDepsT]
    ) -> NodeResult[AgentDepsT]:
        """The next node through each capability's `after_node_run`, in reverse order."""
        for capability in reversed(self._with('after_node_run')):
            result = await capability.after_node_run(ctx, node=node, result=result)
        return result

    async def wrap_node_run(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], handler: WrapNodeRunHandler[AgentDepsT]
    ) -> NodeResult[AgentDepsT]:
        """The node inside each capability's `wrap_node_run`, the first one outermost."""
        for capability in reversed(self._with('wrap_node_run')):
            handler = partial(_call_wrap_node_run, capability, ctx, handler)
        return await handler(node)

    async def on_node_run_error(
        self, ctx: RunContext[AgentDepsT], *, node: AgentNode[AgentDepsT], error: Exception
    ) -> NodeResult[AgentDepsT]:
        """Each capability's `on_node_run_error` in reverse order, until one returns a next node."""
        for capability in reversed(self._with('on_node_run_error')):
            try:
                return await capability.on_node_run_error(ctx, node=node, error=error)
            except Exception as exc:
                error = exc
        raise error

    async def wrap_run_event_stream(
        self, ctx: RunContext[AgentDepsT], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """The events through each capability's `wrap_run_event_stream`, the first one outermost."""
        for capability in reversed(self._with('wrap_run_event_stream')):
            stream = capability.wrap_run_event_stream(ctx, stream=stream)
        async for event in stream:
            yield event

    # -- each model request ----------------------------------------------------------------------------------

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The request context through each capability's `before_model_request`, in order."""
        for capability in self._with('before_model_request'):
            request_context = await capability.before_model_request(ctx, request_context)
        return request_context

    async def after_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """The response through each capability's `after_model_request`, in reverse order."""
        for capability in reversed(self._with('after_model_request')):
            response = await capability.after_model_request(ctx, request_context=request_context, response=response)
        return response

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """The request inside each capability's `wrap_model_request`, the first one outermost."""
        for capability in reversed(self._with('wrap_model_request')):
            handler = partial(_call_wrap_model_request, capability, ctx, handler)
        return await handler(request_context)

    async def on_model_request_error(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        """Each capability's `on_model_request_error` in reverse order, until one returns a response."""
        for capability in reversed(self._with('on_model_request_error')):
            try:
                return await capability.on_model_request_error(ctx, request_context=request_context, error=error)
            except Exception as exc:
                error = exc
        raise error

    # -- each tool call --------------------------------------------------------------------------------------

    async def before_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: RawToolArgs
    ) -> RawToolArgs:
        """The raw arguments through each capability's `before_tool_validate`, in order."""
        for capability in self._with('before_tool_validate'):
            args = await capability.before_tool_validate(ctx, call=call, tool_def=tool_def, args=args)
        return args

    async def after_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        """The validated arguments through each capability's `after_tool_validate`, in reverse order."""
        for capability in reversed(self._with('after_tool_validate')):
            args = await capability.after_tool_validate(ctx, call=call, tool_def=tool_def, args=args)
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
        """The validation inside each capability's `wrap_tool_validate`, the first one outermost."""
        for capability in reversed(self._with('wrap_tool_validate')):
            handler = partial(_call_wrap_tool_validate, capability, ctx, call, tool_def, handler)
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
        """Each capability's `on_tool_validate_error` in reverse order, until one returns arguments."""
        for capability in reversed(self._with('on_tool_validate_error')):
            try:
                return await capability.on_tool_validate_error(
                    ctx, call=call, tool_def=tool_def, args=args, error=error
                )
            except (ValidationError, ModelRetry) as exc:
                error = exc
        raise error

    async def before_tool_execute(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        """The arguments through each capability's `before_tool_execute`, in order."""
        for capability in self._with('before_tool_execute'):
            args = await capability.before_tool_execute(ctx, call=call, tool_def=tool_def, args=args)
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
        """The tool's result through each capability's `after_tool_execute`, in reverse order."""
        for capability in reversed(self._with('after_tool_execute')):
            result = await capability.after_tool_execute(ctx, call=call, tool_def=tool_def, args=args, result=result)
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
        """The tool's run inside each capability's `wrap_tool_execute`, the first one outermost."""
        for capability in reversed(self._with('wrap_tool_execute')):
            handler = partial(_call_wrap_tool_execute, capability, ctx, call, tool_def, handler)
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
        """Each capability's `on_tool_execute_error` in reverse order, until one returns a result."""
        for capability in reversed(self._with('on_tool_execute_error')):
            try:
                return await capability.on_tool_execute_error(ctx, call=call, tool_def=tool_def, args=args, error=error)
            except Exception as exc:
                error = exc
        raise error

    # -- the output ------------------------------------------------------------------------------------------

    async def before_output_validate(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: RawOutput
    ) -> RawOutput:
        """The raw output through each capability's `before_output_validate`, in order."""
        for capability in self._with('before_output_validate'):
            output = await capability.before_output_validate(ctx, output_context=output_context, output=output)
        return output

    async def after_output_validate(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """The validated value through each capability's `after_output_validate`, in reverse order."""
        for capability in reversed(self._with('after_output_validate')):
            output = await capability.after_output_validate(ctx, output_context=output_context, output=output)
        return output

    async def wrap_output_validate(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: RawOutput,
        handler: WrapOutputValidateHandler,
    ) -> Any:
        """The validation inside each capability's `wrap_output_validate`, the first one outermost."""
        for capability in reversed(self._with('wrap_output_validate')):
            handler = partial(_call_wrap_output_validate, capability, ctx, output_context, handler)
        return await handler(output)

    async def on_output_validate_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: RawOutput,
        error: ValidationError | ModelRetry,
    ) -> Any:
        """Each capability's `on_output_validate_error` in reverse order, until one returns a value."""
        for capability in reversed(self._with('on_output_validate_error')):
            try:
                return await capability.on_output_validate_error(
                    ctx, output_context=output_context, output=output, error=error
                )
            except (ValidationError, ModelRetry) as exc:
                error = exc
        raise error

    async def before_output_process(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """The validated value through each capability's `before_output_process`, in order."""
        for capability in self._with('before_output_process'):
            output = await capability.before_output_process(ctx, output_context=output_context, output=output)
        return output

    async def after_output_process(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any
    ) -> Any:
        """The output through each capability's `after_output_process`, in reverse order."""
        for capability in reversed(self._with('after_output_process')):
            output = await capability.after_output_process(ctx, output_context=output_context, output=output)
        return output

    async def wrap_output_process(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        output_context: OutputContext,
        output: Any,
        handler: WrapOutputProcessHandler,
    ) -> Any:
        """The processing inside each capability's `wrap_output_process`, the first one outermost."""
        for capability in reversed(self._with('wrap_output_process')):
            handler = partial(_call_wrap_output_process, capability, ctx, output_context, handler)
        return await handler(output)

    async def on_output_process_error(
        self, ctx: RunContext[AgentDepsT], *, output_context: OutputContext, output: Any, error: Exception
    ) -> Any:
        """Each capability's `on_output_process_error` in reverse order, until one returns an output."""
        for capability in reversed(self._with('on_output_process_error')):
            try:
                return await capability.on_output_process_error(
                    ctx, output_context=output_context, output=output, error=error
                )
            except Exception as exc:
                error = exc
        raise error

    # -- deferred tool calls ---------------------------------------------------------------------------------

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Each capability in order answers what the ones before it left open; the answers merged."""
        merged: DeferredToolResults | None = None
        remaining: DeferredToolRequests | None = requests
        for capability in self._with('handle_deferred_tool_calls'):
            if remaining is None:
                break
            results = await capability.handle_deferred_tool_calls(ctx, requests=remaining)
            if results is None or not (results.approvals or results.calls):
                continue
            if merged is None:
                merged = DeferredToolResults()
            merged.update(results)
            remaining = remaining.remaining(results)
        return merged


async def _call_wrap_run(
    capability: AbstractCapability[Any], ctx: RunContext[Any], handler: WrapRunHandler
) -> AgentRunResult[Any]:
    return await capability.wrap_run(ctx, handler=handler)


async def _call_wrap_node_run(
    capability: AbstractCapability[Any], ctx: RunContext[Any], handler: WrapNodeRunHandler[Any], node: AgentNode[Any]
) -> NodeResult[Any]:
    return await capability.wrap_node_run(ctx, node=node, handler=handler)


async def _call_wrap_model_request(
    capability: AbstractCapability[Any],
    ctx: RunContext[Any],
    handler: WrapModelRequestHandler,
    request_context: ModelRequestContext,
) -> ModelResponse:
    return await capability.wrap_model_request(ctx, request_context=request_context, handler=handler)


async def _call_wrap_tool_validate(
    capability: AbstractCapability[Any],
    ctx: RunContext[Any],
    call: ToolCallPart,
    tool_def: ToolDefinition,
    handler: WrapToolValidateHandler,
    args: RawToolArgs,
) -> ValidatedToolArgs:
    return await capability.wrap_tool_validate(ctx, call=call, tool_def=tool_def, args=args, handler=handler)


async def _call_wrap_tool_execute(
    capability: AbstractCapability[Any],
    ctx: RunContext[Any],
    call: ToolCallPart,
    tool_def: ToolDefinition,
    handler: WrapToolExecuteHandler,
    args: ValidatedToolArgs,
) -> Any:
    return await capability.wrap_tool_execute(ctx, call=call, tool_def=tool_def, args=args, handler=handler)


async def _call_wrap_output_validate(
    capability: AbstractCapability[Any],
    ctx: RunContext[Any],
    output_context: OutputContext,
    handler: WrapOutputValidateHandler,
    output: RawOutput,
) -> Any:
    return await capability.wrap_output_validate(ctx, output_context=output_context, output=output, handler=handler)


async def _call_wrap_output_process(
    capability: AbstractCapability[Any],
    ctx: RunContext[Any],
    output_context: OutputContext,
    handler: WrapOutputProcessHandler,
    output: Any,
) -> Any:
    return await capability.wrap_output_process(ctx, output_context=output_context, output=output, handler=handler)


def combined_or_none(capabilities: Sequence[Any]) -> CombinedCapability[Any] | None:
    """The capabilities among `capabilities` as one, or `None` when there are none (a run then skips every hook)."""
    found = [c for c in capabilities if isinstance(c, AbstractCapability)]
    return CombinedCapability(found) if found else None
