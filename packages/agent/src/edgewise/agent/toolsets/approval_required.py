"""`ApprovalRequiredToolset`: calls of the wrapped toolset's tools wait for approval when a function says so."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._tools.definition import ToolDefinition
from ..exceptions import ApprovalRequired
from ..models._model import AgentDepsT, RunContext
from .abstract import ToolsetTool, register_wrapper
from .wrapper import WrapperToolset

__all__ = ('ApprovalRequiredToolset',)


@dataclass
class ApprovalRequiredToolset(WrapperToolset[AgentDepsT]):
    """Raises `ApprovalRequired` for a call not yet approved when `approval_required_func(ctx, tool_def, args)`
    is true; the run then ends with the call in `DeferredToolRequests.approvals`."""

    approval_required_func: Callable[[RunContext[AgentDepsT], ToolDefinition, dict[str, Any]], bool] = (
        lambda ctx, tool_def, tool_args: True
    )
    """Whether a call needs approval (every call by default)."""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Ask for approval, or call the tool through the wrapped toolset once approved."""
        if not ctx.tool_call_approved and self.approval_required_func(ctx, tool.tool_def, tool_args):
            raise ApprovalRequired
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)


register_wrapper('approval_required', ApprovalRequiredToolset)
