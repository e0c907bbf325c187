"""Helpers of the streaming tests: scripted stream functions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from edgewise.agent.messages import ModelMessage
from edgewise.agent.models.function import AgentInfo, DeltaThinkingCalls, DeltaToolCalls, FunctionModel

StreamItem = str | DeltaToolCalls | DeltaThinkingCalls


def streamed(*responses: Sequence[StreamItem], log: list[str] | None = None) -> FunctionModel:
    """A `FunctionModel` streaming these items, one response per request, in order.

    When `log` is given, `'closed <n>'` is appended to it when the stream function of response n ends or is
    closed early.
    """
    remaining = list(responses)
    count = [0]

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[StreamItem]:
        count[0] += 1
        number = count[0]
        items = remaining.pop(0)
        try:
            for item in items:
                yield item
        finally:
            if log is not None:
                log.append(f'closed {number}')

    return FunctionModel(stream_function=stream)


def kinds(events: Sequence[Any]) -> list[str]:
    """The `event_kind` of each event."""
    return [e.event_kind for e in events]
