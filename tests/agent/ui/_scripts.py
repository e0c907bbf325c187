"""Scripted agents of the UI tests: streamed model responses chosen by what the conversation holds."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from edgewise.agent import Agent, DeferredToolRequests
from edgewise.agent.messages import ModelMessage, ModelRequest, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel


def returned(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    """The tool returns of the last request."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return [p for p in last.parts if isinstance(p, ToolReturnPart)]


def call(name: str, args: dict[str, Any], call_id: str) -> DeltaToolCalls:
    """A streamed tool call, whole in one delta."""
    return {0: DeltaToolCall(name, json.dumps(args), tool_call_id=call_id)}


def refund_agent() -> Agent[None, str | DeferredToolRequests]:
    """An agent that asks for approval to refund the order the user names, then says what came of it.

    Turn by turn: a user prompt is answered with a text and a `refund` call (id `r<n>`, n counting the user
    prompts); a tool return with `done: <its content>`.
    """

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        returns = returned(messages)
        if returns:
            yield 'done: '
            yield ', '.join(str(r.content) for r in returns)
            return
        prompts = sum(
            1 for m in messages if isinstance(m, ModelRequest) for p in m.parts if p.part_kind == 'user-prompt'
        )
        yield 'Refunding.'
        yield call('refund', {'order': f'A{prompts}'}, f'r{prompts}')

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def refund(order: str) -> str:
        return f'{order} refunded'

    return agent


def streamed_agent(*responses: list[str | DeltaToolCalls]) -> Agent[None, str]:
    """An agent whose model streams these responses, one per request, in order."""
    remaining = list(responses)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for item in remaining.pop(0):
            yield item

    return Agent(FunctionModel(stream_function=stream))
