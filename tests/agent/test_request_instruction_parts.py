"""`ModelRequestParameters.instruction_parts` (pydantic-ai 2.x): the instruction blocks of each request of a run, as a
model (here a `FunctionModel`'s function) sees them beside the joined text."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, InstructionPart, RunContext
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _recording(seen: list[ModelRequestParameters], *responses: ModelResponse) -> FunctionModel:
    answers = iter(responses)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_request_parameters)
        return next(answers)

    return FunctionModel(answer)


def _blocks(params: ModelRequestParameters) -> list[tuple[str, bool]] | None:
    parts = params.instruction_parts
    return None if parts is None else [(part.content, part.dynamic) for part in parts]


async def test_a_request_carries_its_literal_and_dynamic_blocks_whose_text_is_the_requests_instructions() -> None:
    seen: list[ModelRequestParameters] = []
    agent: Agent[int, str] = Agent(
        _recording(seen, ModelResponse(parts=[TextPart('done')])), deps_type=int, instructions='Be brief.'
    )

    @agent.instructions
    def numbered(ctx: RunContext[int]) -> str:
        return f'The number is {ctx.deps}.'

    result = await agent.run('hi', deps=7)

    assert _blocks(seen[0]) == [('Be brief.', False), ('The number is 7.', True)]
    request = result.all_messages()[0]
    assert isinstance(request, ModelRequest)
    assert request.instructions == InstructionPart.join(seen[0].instruction_parts or [])


async def test_a_run_without_instructions_has_none() -> None:
    seen: list[ModelRequestParameters] = []
    await Agent(_recording(seen, ModelResponse(parts=[TextPart('done')]))).run('hi')
    assert seen[0].instruction_parts is None


async def test_a_turn_continued_in_the_run_is_sent_with_the_blocks_it_began_with() -> None:
    seen: list[ModelRequestParameters] = []
    paused, done = ModelResponse(parts=[TextPart('paused')], state='suspended'), ModelResponse(parts=[TextPart('done')])
    agent: Agent[None, str] = Agent(_recording(seen, paused, done), instructions='Agent instructions.')
    calls: list[int] = []

    @agent.instructions
    def step(ctx: RunContext[Any]) -> str:
        calls.append(ctx.run_step)
        return f'Step {ctx.run_step}.'

    result = await agent.run('test')

    assert result.output.endswith('done')
    assert _blocks(seen[0]) == _blocks(seen[1]) == [('Agent instructions.', False), ('Step 1.', True)]
    assert calls == [1]  # the continuation does not ask the functions again


async def test_a_suspended_turn_resumed_by_a_later_run_gets_the_instructions_it_was_sent_with_as_one_block() -> None:
    seen: list[ModelRequestParameters] = []
    history: list[ModelMessage] = [
        ModelRequest.user_text_prompt('test', instructions='Agent instructions.\n\nStep 1.'),
        ModelResponse(parts=[TextPart('paused')], state='suspended'),
    ]
    agent: Agent[None, str] = Agent(_recording(seen, ModelResponse(parts=[TextPart('done')])), instructions='Other.')

    result = await agent.run(message_history=history)

    assert result.output.endswith('done')
    assert _blocks(seen[0]) == [('Agent instructions.\n\nStep 1.', False)]


async def test_a_model_request_made_outside_a_run_has_none() -> None:
    seen: list[ModelRequestParameters] = []
    model = _recording(seen, ModelResponse(parts=[TextPart('done')]))
    await model.request([ModelRequest.user_text_prompt('hi', instructions='Be brief.')], None, ModelRequestParameters())
    assert seen[0].instruction_parts is None
