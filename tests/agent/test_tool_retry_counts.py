"""A tool's retry count (pydantic-ai 2.x): it grows while the tool keeps failing, also across steps that call
other tools only, and a call of the tool that does not fail resets it."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, ModelRetry, RunContext, UnexpectedModelBehavior
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def steps(messages: list[ModelMessage]) -> int:
    return sum(isinstance(m, ModelResponse) for m in messages)


async def test_a_failing_tools_count_survives_steps_that_call_other_tools() -> None:
    seen: list[int] = []

    def alternate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([ToolCallPart('flaky' if steps(messages) % 2 == 0 else 'steady', {})])

    agent = Agent(FunctionModel(alternate), retries=2)

    @agent.tool
    def flaky(ctx: RunContext[None]) -> str:
        seen.append(ctx.retry)
        raise ModelRetry('always fails')

    @agent.tool_plain
    def steady() -> str:
        return 'ok'

    with pytest.raises(UnexpectedModelBehavior, match=r"^Tool 'flaky' exceeded max retries count of 2$"):
        await agent.run('go')
    assert seen == [0, 1, 2]


async def test_a_call_that_does_not_fail_resets_the_count() -> None:
    seen: list[int] = []

    def call_four_times(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if steps(messages) < 4:
            return ModelResponse([ToolCallPart('sometimes', {})])
        return ModelResponse([TextPart('done')])

    agent = Agent(FunctionModel(call_four_times), retries=1)

    @agent.tool
    def sometimes(ctx: RunContext[None]) -> str:
        seen.append(ctx.retry)
        if len(seen) % 2 == 1:
            raise ModelRetry('odd call')
        return 'ok'

    assert (await agent.run('go')).output == 'done'
    assert seen == [0, 1, 0, 1]
