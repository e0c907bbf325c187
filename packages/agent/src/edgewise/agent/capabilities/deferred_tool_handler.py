"""`HandleDeferredToolCalls`: answer a run's deferred tool calls with a function, inside the run."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability

__all__ = ('HandleDeferredToolCalls',)

DeferredToolHandler = Callable[
    [RunContext[AgentDepsT], DeferredToolRequests],
    'DeferredToolResults | Awaitable[DeferredToolResults | None] | None',
]


@dataclass
class HandleDeferredToolCalls(AbstractCapability[AgentDepsT]):
    """Calls `handler` with the calls that need approval or an outside result, and goes on with its answers
    instead of ending the run on them (pydantic-ai 1.107's capability of the same name).

    The handler (sync or async) gets the run context and the `DeferredToolRequests`; it returns a
    `DeferredToolResults` for some or all of them (`requests.build_results(approve_all=True)` approves every
    call), or `None` to pass. What no capability answers ends the run with `DeferredToolRequests` as its output,
    which then has to be among the agent's output types.
    """

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: it takes a function, so it cannot come from a spec."""
        return None

    handler: DeferredToolHandler[AgentDepsT]
    """Gives the answers, or `None`."""

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """The handler's answers."""
        answer = self.handler(ctx, requests)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer
