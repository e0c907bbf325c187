"""A run resumed from a history ending with a request (no user prompt) leaves that request out of `new_messages()`,
also when a history processor rebuilt it (a new object with other content), found by its position."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent
from edgewise.agent._loop.history import first_new_index, resumed_index_after_hooks
from edgewise.agent.capabilities import ProcessHistory
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart('answer')])


def _rebuild_requests(messages: list[ModelMessage]) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart('rebuilt')], timestamp=m.timestamp, run_id=m.run_id)
        if isinstance(m, ModelRequest)
        else m
        for m in messages
    ]


async def test_a_rebuilt_resumed_request_is_not_a_new_message() -> None:
    agent = Agent(FunctionModel(_answer), capabilities=[ProcessHistory(_rebuild_requests)])
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('old')]),
        ModelResponse(parts=[TextPart('old answer')]),
        ModelRequest(parts=[UserPromptPart('resumed')]),
    ]
    result = await agent.run(message_history=history)
    messages = result.all_messages()
    assert [type(m).__name__ for m in messages] == ['ModelRequest', 'ModelResponse', 'ModelRequest', 'ModelResponse']
    assert result.new_messages() == messages[-1:]


def test_the_resumed_request_is_pinned_at_the_end_on_its_first_request() -> None:
    assert resumed_index_after_hooks(-1, 3, 4) == 3


def test_the_resumed_request_moves_with_messages_added_or_taken_out_ahead_of_it() -> None:
    assert (resumed_index_after_hooks(2, 5, 7), resumed_index_after_hooks(2, 5, 4)) == (4, 1)


def test_the_resumed_request_is_lost_when_the_hooks_took_out_more_than_was_ahead_of_it() -> None:
    assert (resumed_index_after_hooks(1, 5, 2), resumed_index_after_hooks(None, 5, 5)) == (None, None)


def test_without_the_resumed_request_or_its_position_the_run_starts_at_its_first_message() -> None:
    resumed = ModelRequest(parts=[UserPromptPart('resumed')])
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('old')], run_id='before'),
        ModelRequest(parts=[UserPromptPart('rebuilt')], run_id='run'),
    ]
    assert (first_new_index(messages, 'run', resumed, None), first_new_index(messages, 'run', resumed, 5)) == (1, 1)
    assert first_new_index(messages, 'run', resumed, 0) == 1
    assert first_new_index(messages, 'run', resumed, 1) == 2
