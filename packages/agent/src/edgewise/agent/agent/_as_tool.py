"""`Agent.as_tool`: an agent as a tool of another agent."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._run.result import AgentRunResult
from ..tools import RunContext, Tool

__all__ = ('agent_as_tool',)


def agent_as_tool(
    agent: Any, name: str, description: str | None, custom_output_extractor: Callable[[AgentRunResult[Any]], Any] | None
) -> Tool[Any]:
    """A tool named `name` running `agent` on the calling model's `input`, with the caller's deps; the sub-run's
    usage counts towards the caller's, and the caller gets its output (or what `custom_output_extractor` picks)."""

    async def delegate(ctx: RunContext[Any], input: str) -> Any:
        """Run the agent.

        Args:
            input: The request for the agent, with everything it needs to know.
        """
        result = await agent.run(input, deps=ctx.deps, usage=ctx.usage, infer_name=False)
        if custom_output_extractor is None:
            return result.output
        extracted = custom_output_extractor(result)
        if inspect.isawaitable(extracted):
            extracted = await extracted
        return extracted

    text = description or f'Ask the {name} agent. Pass it the full request as `input`.'
    return Tool(delegate, takes_ctx=True, name=name, description=text)
