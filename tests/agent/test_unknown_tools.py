"""Calls of unknown tools, handled as pydantic-ai 1.x handles them."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, UsageLimitExceeded, UsageLimits
from edgewise.agent.messages import ModelRequest, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart

from ._helpers import CONVERSATION_ID, NOW, RUN_ID, scripted

pytestmark = pytest.mark.anyio


class Answer(BaseModel):
    value: int


async def test_an_unknown_call_beside_the_final_result_still_gets_its_retry_prompt() -> None:
    agent = Agent(scripted([ToolCallPart('nope', {}, 'n1'), ToolCallPart('final_result', {'value': 1}, 'f1')]),
                  output_type=Answer)  # fmt: skip

    result = await agent.run('x')

    assert result.output == Answer(value=1)
    # The answers in the order of the calls (pydantic-ai 2.x's 'graceful' end strategy).
    assert result.all_messages()[-1] == ModelRequest(
        [
            RetryPromptPart(
                "Unknown tool name: 'nope'. Available tools: 'final_result'", tool_name='nope', tool_call_id='n1',
                timestamp=NOW,
            ),
            ToolReturnPart('final_result', 'Final result processed.', 'f1', timestamp=NOW),
        ],
        timestamp=NOW,
        run_id=RUN_ID, conversation_id=CONVERSATION_ID,
    )  # fmt: skip


async def test_unknown_calls_do_not_spend_the_output_retries() -> None:
    agent = Agent(scripted(*[[ToolCallPart('nope', {}, f'n{i}')] for i in range(3)], [TextPart('fine')]),
                  retries={'tools': 3, 'output': 0})  # fmt: skip

    assert (await agent.run('x')).output == 'fine'


async def test_unknown_calls_count_towards_the_tool_calls_limit() -> None:
    agent = Agent(scripted([ToolCallPart('nope', {}, 'n1'), ToolCallPart('known', {}, 'k1')], [TextPart('ok')]))

    @agent.tool_plain
    def known() -> int:
        return 1  # pragma: no cover - the limit stops the run first

    with pytest.raises(UsageLimitExceeded) as caught:
        await agent.run('x', usage_limits=UsageLimits(tool_calls_limit=1))

    assert str(caught.value) == 'The next tool call(s) would exceed the tool_calls_limit of 1 (tool_calls=2).'
