"""`CombinedCapability`: several capabilities acting as one, each hook applied in order."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .._deferred_tools import DeferredToolRequests, DeferredToolResults
from .._run_options import AgentInstructions
from .._run_result import AgentRunResult
from .._tool_definition import ToolDefinition
from ..messages import ModelResponse
from ..models import ModelRequestContext
from ..tools import AgentDepsT, AgentNativeTool, RunContext
from ..toolsets import AbstractToolset
from .abstract import AbstractCapability, WrapModelRequestHandler, WrapRunHandler

__all__ = ('CombinedCapability',)


@dataclass
class CombinedCapability(AbstractCapability[AgentDepsT]):
    """The capabilities in order: the first one's `prepare_*` and `before_*` hooks run first, and its `wrap_*`
    hooks are the outermost. An agent's capabilities act through one of these."""

    capabilities: Sequence[AbstractCapability[AgentDepsT]] = field(default_factory=list)
    """The capabilities, in order."""

    def get_instructions(self) -> AgentInstructions:
        """Every capability's instructions, in order."""
        items: list[Any] = []
        for capability in self.capabilities:
            found = capability.get_instructions()
            if found is not None:
                items += [found] if isinstance(found, str) or callable(found) else list(found)
        return items or None

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

    def overrides(self, hook: str) -> bool:
        """Whether any of the capabilities implements `hook`."""
        return any(capability.overrides(hook) for capability in self.capabilities)

    def has_request_hook(self) -> bool:
        """Whether any of the capabilities has a `before_model_request` hook."""
        return any(capability.has_request_hook() for capability in self.capabilities)

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """The definitions through each capability's `prepare_tools`, in order."""
        for capability in self.capabilities:
            tool_defs = await capability.prepare_tools(ctx, tool_defs)
        return tool_defs

    async def prepare_output_tools(
        self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        """The definitions through each capability's `prepare_output_tools`, in order."""
        for capability in self.capabilities:
            tool_defs = await capability.prepare_output_tools(ctx, tool_defs)
        return tool_defs

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The request context through each capability's `before_model_request`, in order."""
        for capability in self.capabilities:
            request_context = await capability.before_model_request(ctx, request_context)
        return request_context

    async def wrap_run(self, ctx: RunContext[AgentDepsT], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        """The run inside each capability's `wrap_run`, the first one outermost."""
        for capability in reversed(self.capabilities):
            if capability.overrides('wrap_run'):
                handler = partial(_call_wrap_run, capability, ctx, handler)
        return await handler()

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """The request inside each capability's `wrap_model_request`, the first one outermost."""
        for capability in reversed(self.capabilities):
            if capability.overrides('wrap_model_request'):
                handler = partial(_call_wrap_model_request, capability, ctx, handler)
        return await handler(request_context)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Each capability in order answers what the ones before it left open; the answers merged."""
        merged: DeferredToolResults | None = None
        remaining: DeferredToolRequests | None = requests
        for capability in self.capabilities:
            if remaining is None:
                break
            if not capability.overrides('handle_deferred_tool_calls'):
                continue
            results = await capability.handle_deferred_tool_calls(ctx, requests=remaining)
            if results is None:
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


async def _call_wrap_model_request(
    capability: AbstractCapability[Any],
    ctx: RunContext[Any],
    handler: WrapModelRequestHandler,
    request_context: ModelRequestContext,
) -> ModelResponse:
    return await capability.wrap_model_request(ctx, request_context=request_context, handler=handler)
