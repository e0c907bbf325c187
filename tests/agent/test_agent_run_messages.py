"""Whole message lists of agent runs, checked against what pydantic-ai 1.107 produces for the same script."""

from __future__ import annotations

from typing import Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from edgewise.agent import Agent, ModelRetry, RunUsage
from edgewise.agent.messages import (
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.usage import RequestUsage

from ._helpers import CALL_ID, CONVERSATION_ID, NOW, RUN_ID, scripted

pytestmark = pytest.mark.anyio


class Out(BaseModel):
    a: int
    b: str


async def test_bad_arguments_unknown_tool_text_and_invalid_output_are_retried_then_the_output_ends_the_run() -> None:
    model = scripted(
        [
            ToolCallPart('get', {'x': 'notint'}, 'c1'),
            ToolCallPart('nope', {}, 'c2'),
            ToolCallPart('get', '{"x": 3}', 'c3'),
        ],
        [TextPart('hello')],
        [ToolCallPart('final_result', {'a': 1}, 'c4')],
        [ToolCallPart('final_result', {'a': 1, 'b': 'x'}, 'c5'), ToolCallPart('get', {'x': 1}, 'c6'),
         ToolCallPart('final_result', {'a': 2, 'b': 'y'}, 'c7')],
    )  # fmt: skip
    agent = Agent(model, output_type=Out, instructions='be nice', system_prompt='sys', retries=3, end_strategy='early')

    @agent.tool_plain
    def get(x: int) -> str:
        """Get a thing.

        Args:
            x: the x value
        """
        if x == 3:
            raise ModelRetry('x is three')
        return f'got {x}'  # pragma: no cover - never reached: the output ends the run first

    result = await agent.run('hi')
    assert result.output == Out(a=1, b='x')
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[SystemPromptPart('sys', timestamp=NOW), UserPromptPart('hi', timestamp=NOW)],
                timestamp=NOW,
                instructions='be nice',
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[
                    ToolCallPart('get', {'x': 'notint'}, 'c1'),
                    ToolCallPart('nope', {}, 'c2'),
                    ToolCallPart('get', '{"x": 3}', 'c3'),
                ],
                usage=RequestUsage(input_tokens=52, output_tokens=11),
                model_name='function:script:',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelRequest(
                parts=[
                    RetryPromptPart(
                        [
                            {
                                'type': 'int_parsing',
                                'loc': ('x',),
                                'msg': 'Input should be a valid integer, unable to parse string as an integer',
                                'input': 'notint',
                            }
                        ],
                        tool_name='get',
                        tool_call_id='c1',
                        timestamp=NOW,
                    ),
                    RetryPromptPart('x is three', tool_name='get', tool_call_id='c3', timestamp=NOW),
                    RetryPromptPart(
                        "Unknown tool name: 'nope'. Available tools: 'final_result', 'get'",
                        tool_name='nope',
                        tool_call_id='c2',
                        timestamp=NOW,
                    ),
                ],
                timestamp=NOW,
                instructions='be nice',
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[TextPart('hello')],
                usage=RequestUsage(input_tokens=115, output_tokens=12),
                model_name='function:script:',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelRequest(
                parts=[
                    RetryPromptPart(
                        [
                            {
                                'type': 'json_invalid',
                                'loc': (),
                                'msg': 'Invalid JSON: expected value at line 1 column 1',
                                'input': 'hello',
                            }
                        ],
                        tool_call_id=CALL_ID,
                        timestamp=NOW,
                    )
                ],
                timestamp=NOW,
                instructions='be nice',
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[ToolCallPart('final_result', {'a': 1}, 'c4')],
                usage=RequestUsage(input_tokens=145, output_tokens=16),
                model_name='function:script:',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelRequest(
                parts=[
                    RetryPromptPart(
                        [{'type': 'missing', 'loc': ('b',), 'msg': 'Field required', 'input': {'a': 1}}],
                        tool_name='final_result',
                        tool_call_id='c4',
                        timestamp=NOW,
                    )
                ],
                timestamp=NOW,
                instructions='be nice',
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[
                    ToolCallPart('final_result', {'a': 1, 'b': 'x'}, 'c5'),
                    ToolCallPart('get', {'x': 1}, 'c6'),
                    ToolCallPart('final_result', {'a': 2, 'b': 'y'}, 'c7'),
                ],
                usage=RequestUsage(input_tokens=175, output_tokens=34),
                model_name='function:script:',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart('final_result', 'Final result processed.', 'c5', timestamp=NOW),
                    ToolReturnPart(
                        'final_result',
                        'Output tool not used - a final result was already processed.',
                        'c7',
                        timestamp=NOW,
                    ),
                    ToolReturnPart(
                        'get', 'Tool not executed - a final result was already processed.', 'c6', timestamp=NOW
                    ),
                ],
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
        ]
    )
    assert result.usage == RunUsage(input_tokens=487, output_tokens=73, requests=4)


async def test_exhaustive_end_strategy_runs_the_other_tools_after_the_output() -> None:
    model = scripted([ToolCallPart('final_result', {'a': 1, 'b': 'x'}, 'c1'), ToolCallPart('t', {}, 'c2')])
    agent = Agent(model, output_type=Out, end_strategy='exhaustive')
    ran: list[str] = []

    @agent.tool_plain
    async def t() -> int:
        ran.append('t')
        return 1

    result = await agent.run('x')
    assert ran == ['t']
    assert result.new_messages()[-1] == ModelRequest(
        parts=[
            ToolReturnPart('final_result', 'Final result processed.', 'c1', timestamp=NOW),
            ToolReturnPart('t', 1, 'c2', timestamp=NOW),
        ],
        timestamp=NOW,
        run_id=RUN_ID,
        conversation_id=CONVERSATION_ID,
    )


async def test_text_output_with_a_failing_validator_is_retried_without_a_tool_name() -> None:
    agent = Agent(scripted([TextPart('ans1')], [TextPart('ans2')]))

    @agent.output_validator
    def shout(output: str) -> str:
        if output == 'ans1':
            raise ModelRetry('bad answer')
        return output.upper()

    result = await agent.run('x')
    assert result.output == 'ANS2'
    assert result.all_messages() == [
        ModelRequest(
            parts=[UserPromptPart('x', timestamp=NOW)], timestamp=NOW, run_id=RUN_ID, conversation_id=CONVERSATION_ID
        ),
        ModelResponse(
            parts=[TextPart('ans1')],
            usage=RequestUsage(input_tokens=51, output_tokens=1),
            model_name='function:script:',
            timestamp=NOW,
            run_id=RUN_ID,
            conversation_id=CONVERSATION_ID,
        ),
        ModelRequest(
            parts=[RetryPromptPart('bad answer', tool_call_id=CALL_ID, timestamp=NOW)],
            timestamp=NOW,
            run_id=RUN_ID,
            conversation_id=CONVERSATION_ID,
        ),
        ModelResponse(
            parts=[TextPart('ans2')],
            usage=RequestUsage(input_tokens=62, output_tokens=2),
            model_name='function:script:',
            timestamp=NOW,
            run_id=RUN_ID,
            conversation_id=CONVERSATION_ID,
        ),
    ]


async def test_output_validator_retry_of_an_output_tool_names_the_tool() -> None:
    first = [ToolCallPart('final_result', {'a': 1, 'b': 'x'}, 'c1')]
    agent = Agent(scripted(first, [ToolCallPart('final_result', {'a': 2, 'b': 'x'}, 'c2')]), output_type=Out)

    @agent.output_validator
    def not_one(output: Out) -> Out:
        if output.a == 1:
            raise ModelRetry('a must not be 1')
        return output

    result = await agent.run('x')
    assert result.output == Out(a=2, b='x')
    assert result.all_messages()[2] == ModelRequest(
        parts=[RetryPromptPart('a must not be 1', tool_name='final_result', tool_call_id='c1', timestamp=NOW)],
        timestamp=NOW,
        run_id=RUN_ID,
        conversation_id=CONVERSATION_ID,
    )


async def test_empty_text_and_an_empty_response_each_get_a_retry_prompt_asking_for_text() -> None:
    agent = Agent(scripted([TextPart('')], [], [TextPart('ok')]), retries=2)
    result = await agent.run('x')
    assert result.output == 'ok'
    assert [m.parts for m in result.all_messages()] == [
        [UserPromptPart('x', timestamp=NOW)],
        [TextPart('')],
        [RetryPromptPart('Please return text.', tool_call_id=CALL_ID, timestamp=NOW)],
        [],
        [RetryPromptPart('Please return text.', tool_call_id=CALL_ID, timestamp=NOW)],
        [TextPart('ok')],
    ]


async def test_text_before_tool_calls_does_not_end_a_text_output_run() -> None:
    agent = Agent(scripted([TextPart('thinking'), ToolCallPart('t', {}, 'c1')], [TextPart('done')]))

    @agent.tool_plain
    def t() -> int:
        return 1

    result = await agent.run('x')
    assert result.output == 'done'
    assert [m.parts for m in result.new_messages()] == [
        [UserPromptPart('x', timestamp=NOW)],
        [TextPart('thinking'), ToolCallPart('t', {}, 'c1')],
        [ToolReturnPart('t', 1, 'c1', timestamp=NOW)],
        [TextPart('done')],
    ]


async def test_json_text_is_accepted_as_structured_output_when_it_validates() -> None:
    # As pydantic-ai 1.107 with a plain output type (its reference run of tests/compat prints the same): text is
    # read as the output tool's arguments. (pydantic-ai answers 'Please include your response in a tool call.'
    # only where the output is given as `ToolOutput` and no text processor exists; see docs/compatibility.md.)
    result = await Agent(scripted([TextPart('{"a": 5, "b": "q"}')]), output_type=Out).run('x')
    assert result.output == Out(a=5, b='q')
    assert len(result.all_messages()) == 2


async def test_an_empty_text_answer_is_told_every_way_it_can_answer() -> None:
    model = scripted([TextPart('')], [TextPart('fine')])
    output_type: Any = [str, Out]
    agent = Agent(model, output_type=output_type)
    result = await agent.run('x')
    assert result.output == 'fine'
    assert result.all_messages()[2].parts == [
        RetryPromptPart(
            'Please return text or include your response in a tool call.', tool_call_id=CALL_ID, timestamp=NOW
        )
    ]
    plain = Agent(scripted([TextPart('')], [TextPart('fine')]))

    @plain.tool_plain
    def ping() -> str:  # pragma: no cover - never called
        return 'pong'

    result = await plain.run('x')
    assert result.all_messages()[2].parts == [
        RetryPromptPart('Please return text or call a tool.', tool_call_id=CALL_ID, timestamp=NOW)
    ]


async def test_unknown_tool_without_any_tools_says_so() -> None:
    result = await Agent(scripted([ToolCallPart('zz', {}, 'c1')], [TextPart('ok')])).run('x')
    assert result.all_messages()[2].parts == [
        RetryPromptPart(
            "Unknown tool name: 'zz'. No tools available.", tool_name='zz', tool_call_id='c1', timestamp=NOW
        )
    ]
