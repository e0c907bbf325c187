"""`UsageLimits(per_request_input_tokens_limit=...)` (pydantic-ai 2.x): a bound on each request's input tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from edgewise.agent import Agent, RequestUsage, RunUsage, UsageLimitExceeded, UsageLimits
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _tool() -> str:
    return 'ok'


def _model(input_tokens: list[int]) -> FunctionModel:
    """Calls `tool` until the last request, each response reporting the next of `input_tokens`."""
    sizes = iter(input_tokens)

    def llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=next(sizes), output_tokens=1)
        if len(messages) < 2 * len(input_tokens) - 1:
            return ModelResponse([ToolCallPart('tool', {})], usage=usage)
        return ModelResponse([TextPart('done')], usage=usage)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'do'
        yield 'ne'

    return FunctionModel(llm, stream_function=stream)


async def test_each_request_is_checked_on_its_own_not_the_runs_sum() -> None:
    agent = Agent(_model([60, 70, 80]))
    agent.tool_plain(name='tool')(_tool)
    result = await agent.run('go', usage_limits=UsageLimits(per_request_input_tokens_limit=100))
    assert result.output == 'done'
    assert result.usage.input_tokens == 210


async def test_a_request_past_the_limit_ends_the_run() -> None:
    agent = Agent(_model([60, 120, 80]))
    agent.tool_plain(name='tool')(_tool)
    with pytest.raises(UsageLimitExceeded) as caught:
        await agent.run('go', usage_limits=UsageLimits(per_request_input_tokens_limit=100))
    assert str(caught.value) == 'Exceeded the per_request_input_tokens_limit of 100 (request_input_tokens=120)'
    assert len(caught.value.messages) == 4  # the history up to the response that went past it


async def test_a_streamed_request_past_the_limit_ends_the_run() -> None:
    # The stream function's response is counted by its text: the prompt is the input.
    agent = Agent(_model([1]))
    with pytest.raises(UsageLimitExceeded, match='per_request_input_tokens_limit of 5'):
        async with agent.run_stream(
            'a prompt of several words', usage_limits=UsageLimits(per_request_input_tokens_limit=5)
        ) as run:
            await run.get_output()


def test_the_cumulative_limits_are_checked_first() -> None:
    limits = UsageLimits(input_tokens_limit=10, per_request_input_tokens_limit=5)
    with pytest.raises(UsageLimitExceeded, match='input_tokens_limit of 10'):
        limits.check_tokens(RunUsage(input_tokens=20), request=RequestUsage(input_tokens=20))
    limits.check_tokens(RunUsage(input_tokens=5), request=RequestUsage(input_tokens=5))
    limits.check_per_request_input_tokens(5)
    with pytest.raises(UsageLimitExceeded, match=r'\(request_input_tokens=6\)'):
        limits.check_per_request_input_tokens(6)


def test_it_is_a_token_limit_and_shows_in_the_repr() -> None:
    limits = UsageLimits(per_request_input_tokens_limit=5)
    assert limits.has_token_limits()
    assert repr(limits) == 'UsageLimits(per_request_input_tokens_limit=5)'
    assert not UsageLimits().has_token_limits()
