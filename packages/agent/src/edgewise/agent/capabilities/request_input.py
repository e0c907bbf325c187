"""`RequestInput`: a capability that asks for the answers to a run's deferred tool calls and goes on with them, in
the same run (as pydantic-ai 2.68's)."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from datetime import timedelta

from pydantic import JsonValue, TypeAdapter

from .._threads import call_sync_or_async
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults
from ..exceptions import ToolFailed, UserError
from ..external_events import ExternalEventError, check_timeout, wait_for_external_event
from ..tools import AgentDepsT, RunContext, ToolDenied
from .abstract import AbstractCapability, CapabilityOrdering

__all__ = ('RequestInput',)

_RESULTS = TypeAdapter(DeferredToolResults)


@dataclass
class RequestInput(AbstractCapability[AgentDepsT]):
    """Asks for the answers to the calls that wait for approval or an outside result, and goes on with them in the
    same run instead of ending it with `DeferredToolRequests`.

    `ask` gets the run context, the pending calls and a resume token. It answers at once with `DeferredToolResults`
    (a terminal prompt, a bot, a policy), or hands the token to whoever will answer (a chat message, an email, a
    database row) and returns `None`: the run then waits until code elsewhere in the process calls
    `edgewise.agent.external_events.resolve_external_event(token, results)` with the results (or their JSON form).
    Either way the approved calls run, the denied ones are reported to the model and the outside results are used.
    """

    ask: Callable[
        [RunContext[AgentDepsT], DeferredToolRequests, str],
        Awaitable[DeferredToolResults | None] | DeferredToolResults | None,
    ]
    """Answers the pending calls (sync, run in a worker thread, or async), or returns `None` to wait for the token
    to be resolved; called once per wait."""

    _: KW_ONLY

    timeout: timedelta | None = None
    """How long to wait for the answer (`ask` included), or `None` for no limit. When it passes, or the token is
    failed (`fail_external_event`), every pending approval is denied and every pending outside call fails, with a
    message to the model saying why."""

    name: str = 'deferred_tool_calls'
    """The wait's name (for a durable engine's history)."""

    def __post_init__(self) -> None:
        check_timeout(self.timeout)

    def get_ordering(self) -> CapabilityOrdering:
        """Innermost: the handlers that answer without waiting go first."""
        return CapabilityOrdering(position='innermost')

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: it takes a function, so agent specs cannot name it."""
        return None

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults:
        """The answers: `ask`'s, or the payload the token was resolved with.

        Raises:
            UserError: the answer is not `DeferredToolResults` (or its JSON form), or names calls that are not
                pending.
        """

        async def ask(token: str) -> JsonValue:
            results = await call_sync_or_async(self.ask, ctx, requests, token)
            return None if results is None else _RESULTS.dump_python(results, mode='json')

        try:
            payload = await wait_for_external_event(self.name, ask=ask, timeout=self.timeout)
        except ExternalEventError as error:
            message = f'No decision on this tool call arrived: {error}'
            return requests.build_results(
                approvals={call.tool_call_id: ToolDenied(message) for call in requests.approvals},
                calls={call.tool_call_id: ToolFailed(message) for call in requests.calls},
            )
        try:
            decision = _RESULTS.validate_python(payload)
            pending = {call.tool_call_id for call in (*requests.approvals, *requests.calls)}
            if extra := set(decision.metadata) - pending:
                raise ValueError(f'`metadata` contains tool call IDs that are not pending: {sorted(extra)}')
            return requests.build_results(
                approvals=decision.approvals, calls=decision.calls, metadata=decision.metadata
            )
        except ValueError as error:  # not `DeferredToolResults` (a `ValidationError`), or calls not pending
            raise UserError(f'The decision sent for the pending deferred tool calls is not valid: {error}') from error
