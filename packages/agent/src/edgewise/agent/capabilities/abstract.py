"""`AbstractCapability`: a piece of agent behaviour given with `Agent(capabilities=[...])`, with the hooks the run
calls, and the handler types of its `wrap_*` hooks."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias

from .._deferred_tools import DeferredToolRequests, DeferredToolResults
from .._run_options import AgentInstructions, AgentModelSettings
from .._run_result import AgentRunResult
from .._tool_definition import ToolDefinition
from ..messages import ModelResponse
from ..models import ModelRequestContext
from ..tools import AgentDepsT, AgentNativeTool, RunContext
from ..toolsets import AbstractToolset

__all__ = (
    'AbstractCapability',
    'ModelRequestContext',
    'AgentCapability',
    'CapabilityFunc',
    'WrapModelRequestHandler',
    'WrapRunHandler',
)

WrapRunHandler: TypeAlias = Callable[[], Awaitable[AgentRunResult[Any]]]
"""What `wrap_run` is given: runs the agent and returns its result."""

WrapModelRequestHandler: TypeAlias = Callable[[ModelRequestContext], Awaitable[ModelResponse]]
"""What `wrap_model_request` is given: sends the request described by its argument and returns the response."""


@dataclass
class AbstractCapability(Generic[AgentDepsT]):
    """Base of capabilities: override the hooks you need; the defaults change nothing."""

    def get_instructions(self) -> AgentInstructions:
        """Instructions this capability adds to every request (texts or functions of the run context)."""
        return None

    def get_model_settings(self) -> AgentModelSettings | None:
        """Model settings this capability adds (under the agent's and the run's)."""
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

    async def wrap_run(self, ctx: RunContext[AgentDepsT], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        """Around a whole run: `await handler()` runs it. Return another result, catch its error and return a
        result instead, or skip the run by not calling `handler`."""
        return await handler()

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """Native tools (run by the model's provider) this capability adds to every request."""
        return ()

    def get_wrapper_toolset(self, toolset: AbstractToolset[AgentDepsT]) -> AbstractToolset[AgentDepsT] | None:
        """The run's toolset (every function tool of the run, not the output tools) wrapped in another toolset, or
        `None` to leave it as it is; asked once per run. The `prepare_tools` hooks see what the wrapper lists."""
        return None

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Called before each model request with what is about to be sent; return it, changed or not."""
        return request_context

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """Around each (not streamed) model request: `await handler(request_context)` sends it. Return another
        response, or one of your own without calling `handler`."""
        return await handler(request_context)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Answer deferred tool calls (approvals, external calls) inside the run instead of ending it with them:
        return results for some or all of `requests`, or `None` to leave them to the next capability. Calls left
        unanswered end the run with `DeferredToolRequests` as its output."""
        return None

    def has_request_hook(self) -> bool:
        """Whether this capability overrides `before_model_request` (so runs without one skip building a context)."""
        return _overrides(self, 'before_model_request')

    def overrides(self, hook: str) -> bool:
        """Whether this capability implements `hook` (the name of one of the hook methods), so that a run whose
        capabilities do not can skip it."""
        return _overrides(self, hook)


def _overrides(capability: AbstractCapability[Any], hook: str) -> bool:
    return getattr(type(capability), hook) is not getattr(AbstractCapability, hook)


CapabilityFunc: TypeAlias = Callable[[RunContext[Any]], 'AbstractCapability[Any] | None']
"""A function of the run context returning a capability (or `None`) for that run."""

AgentCapability: TypeAlias = 'AbstractCapability[AgentDepsT] | CapabilityFunc'
"""What `Agent(capabilities=[...])` takes: capabilities, or functions returning one per run."""
