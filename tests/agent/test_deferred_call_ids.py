"""Deferred calls are answered by call id, so two calls of one id are refused (pydantic-ai 2.x): when a response
defers them, and when a run resumes a history holding them."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, DeferredToolRequests, DeferredToolResults, UnexpectedModelBehavior, UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio

OUTPUTS: Any = [str, DeferredToolRequests]
TWO_CALLS_OF_ONE_ID = [
    ToolCallPart('first', {}, tool_call_id='same'),
    ToolCallPart('second', {}, tool_call_id='same'),
]


def agent_of(parts: list[Any]) -> Agent[None, Any]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts)

    agent: Agent[None, Any] = Agent(FunctionModel(answer), output_type=OUTPUTS)

    @agent.tool_plain(requires_approval=True)
    def first() -> str:  # pragma: no cover - never approved
        return 'one'

    @agent.tool_plain(requires_approval=True)
    def second() -> str:  # pragma: no cover - never approved
        return 'two'

    return agent


async def test_deferred_calls_of_one_id_in_a_response_are_refused() -> None:
    with pytest.raises(UnexpectedModelBehavior) as info:
        await agent_of(TWO_CALLS_OF_ONE_ID).run('go')
    assert info.value.message == "Deferred tool calls must have unique tool_call_id values; duplicate ids: ['same']"


async def test_deferred_calls_of_distinct_ids_are_the_output() -> None:
    calls = [ToolCallPart('first', {}, tool_call_id='a'), ToolCallPart('second', {}, tool_call_id='b')]
    result = await agent_of(calls).run('go')
    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_call_id for c in result.output.approvals] == ['a', 'b']


async def test_resuming_a_history_with_open_calls_of_one_id_is_refused() -> None:
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('go')]), ModelResponse(TWO_CALLS_OF_ONE_ID)]
    with pytest.raises(UserError) as info:
        await agent_of([TextPart('done')]).run(
            message_history=history, deferred_tool_results=DeferredToolResults(approvals={'same': True})
        )
    assert str(info.value) == (
        'Tool call results cannot be matched unambiguously because the message history contains duplicate '
        "tool_call_id values: ['same']"
    )
