"""Several output tool calls in one response, processed in order as pydantic-ai 1.x processes them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, ModelRetry
from edgewise.agent.agent import EndStrategy
from edgewise.agent.messages import ToolCallPart

from ._helpers import scripted

pytestmark = pytest.mark.anyio


class Reading(BaseModel):
    value: int


def _final(value: Any, call_id: str) -> ToolCallPart:
    return ToolCallPart('final_result', {'value': value}, call_id)


async def _last_parts(strategy: EndStrategy, *calls: ToolCallPart) -> tuple[Reading, list[tuple[Any, Any]]]:
    agent = Agent(scripted(list(calls)), output_type=Reading, end_strategy=strategy)

    @agent.output_validator
    def no_sevens(output: Reading) -> Reading:
        if output.value == 7:
            raise ModelRetry('no sevens')
        return output

    result = await agent.run('x')
    return result.output, [
        (getattr(p, 'tool_call_id', None), getattr(p, 'content', None)) for p in result.all_messages()[-1].parts
    ]


async def test_exhaustive_processes_every_output_call_and_keeps_the_first_valid_one() -> None:
    assert await _last_parts('exhaustive', _final(1, 'a'), _final('bad', 'b'), _final(2, 'c'), _final(7, 'd')) == (
        Reading(value=1),
        [
            ('a', 'Final result processed.'),
            ('b', 'Output tool not used - output failed validation.'),
            ('c', 'Output tool processed, but its value will not be the final result of the agent run.'),
            ('d', 'no sevens'),
        ],
    )


async def test_early_skips_the_output_calls_after_the_first_valid_one() -> None:
    assert await _last_parts('early', _final(7, 'a'), _final('bad', 'b'), _final(2, 'c'), _final(3, 'd')) == (
        Reading(value=2),
        [
            ('a', 'no sevens'),
            ('b', [{'type': 'int_parsing', 'loc': ('value',), 'msg': 'Input should be a valid integer, unable to '
                    'parse string as an integer', 'input': 'bad'}]),
            ('c', 'Final result processed.'),
            ('d', 'Output tool not used - a final result was already processed.'),
        ],
    )  # fmt: skip
