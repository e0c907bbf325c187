"""The agents whose runs the stored fixtures hold: the fixture maker and the tests use these same definitions.

Everything here is deterministic (scripted `FunctionModel`s, fixed tool results), so a run resumed from a fixture
ends the same way whichever Edgewise version wrote the fixture.
"""

from __future__ import annotations

from typing import Any

from edgewise.agent import Agent, DeferredToolRequests
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

__all__ = ('RUN_IDS', 'ProcessKilled', 'crash_points', 'held', 'refund_agent', 'seat_agent')

RUN_IDS = {
    'finished': 'seats-finished',
    'waiting': 'refund-waiting',
    'interrupted': 'seats-interrupted',
}
"""The run id of each fixture run, by what state it was stored in."""


class ProcessKilled(BaseException):
    """Raised inside a tool to leave its step unfinished, as a killed process would."""


crash_points: set[str] = set()
"""Seats whose `hold_seat` call raises `ProcessKilled` (the fixture maker sets it; tests leave it empty)."""

held: list[str] = []
"""Every seat `hold_seat` held, in order (tests clear it)."""


def _seat_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('hold_seat', {'seat': seat}, f'seat-{seat}') for seat in ('1A', '1B')])
    return ModelResponse([TextPart('seats held')])


seat_agent = Agent(FunctionModel(_seat_model), name='seat_agent')


@seat_agent.tool_plain(sequential=True)
def hold_seat(seat: str) -> str:
    """Hold a seat."""
    if seat in crash_points:
        crash_points.discard(seat)
        raise ProcessKilled
    held.append(seat)
    return f'{seat} held'


def _refund_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('refund', {'order': 'A-1001', 'cents': 4200}, 'r1')])
    return ModelResponse([TextPart('refund done')])


refund_agent: Agent[None, Any] = Agent(
    FunctionModel(_refund_model), output_type=[str, DeferredToolRequests], name='refund_agent'
)


@refund_agent.tool_plain(requires_approval=True)
def refund(order: str, cents: int) -> str:
    """Refund an order."""
    return f'refunded {cents} on {order}'
