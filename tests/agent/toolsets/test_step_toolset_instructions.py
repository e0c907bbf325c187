"""The instructions of each request come from the toolsets of the step that sends it: toolsets made per step
(`DynamicToolset`, `@agent.toolset` functions) give theirs from the first request on, a resumed run prepares the
next step's toolsets once, and a run with nothing to send is refused."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, FunctionToolset, RunContext
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.toolsets._dynamic import DynamicToolset

pytestmark = pytest.mark.anyio


def stepped(steps: list[int], *, with_tool: bool = False) -> DynamicToolset[Any]:
    """A toolset made anew at each step, whose instructions name the step; `steps` records the steps it is made
    for."""

    def make(ctx: RunContext[Any]) -> FunctionToolset[Any]:
        steps.append(ctx.run_step)
        toolset: FunctionToolset[Any] = FunctionToolset(instructions=f'Step {ctx.run_step}.')
        if with_tool:

            @toolset.tool_plain
            def greet(name: str) -> str:
                return f'Hello {name}!'

        return toolset

    return DynamicToolset(make)


def instructions_of(messages: list[Any]) -> list[str | None]:
    return [m.instructions for m in messages if isinstance(m, ModelRequest)]


async def test_dynamic_toolset_instructions_are_on_the_first_request() -> None:
    steps: list[int] = []
    agent = Agent(TestModel(custom_output_text='done'), toolsets=[stepped(steps)])

    result = await agent.run('Hello')

    assert (instructions_of(result.all_messages()), steps) == (['Step 1.'], [1])


async def test_agent_toolset_function_instructions_are_on_the_first_request() -> None:
    agent = Agent(TestModel(custom_output_text='done'))

    @agent.toolset
    def per_step(ctx: RunContext[object]) -> FunctionToolset[object]:
        return FunctionToolset(instructions=f'Made at step {ctx.run_step}.')

    result = await agent.run('Hello')

    assert instructions_of(result.all_messages()) == ['Made at step 1.']


async def test_each_request_carries_the_instructions_of_its_own_step() -> None:
    steps: list[int] = []
    agent = Agent(TestModel(custom_output_text='done'), toolsets=[stepped(steps, with_tool=True)])

    result = await agent.run('Hello')

    assert (instructions_of(result.all_messages()), steps) == (['Step 1.', 'Step 2.'], [1, 2])


async def test_resuming_a_plain_response_prepares_the_next_step_once() -> None:
    steps: list[int] = []
    agent = Agent(TestModel(custom_output_text='done'), toolsets=[stepped(steps)])

    result = await agent.run(message_history=[ModelResponse([TextPart('previous')])])

    assert (instructions_of(result.all_messages()), steps) == (['Step 1.'], [1])


async def test_resuming_tool_calls_prepares_the_next_step_first() -> None:
    steps: list[int] = []
    agent = Agent(TestModel(custom_output_text='done'), toolsets=[stepped(steps, with_tool=True)])

    result = await agent.run(message_history=[ModelResponse([ToolCallPart('greet', {'name': 'Ann'}, 'c1')])])

    assert (instructions_of(result.all_messages()), steps) == (['Step 1.'], [1])
    assert result.output == 'done'


async def test_resuming_a_plain_response_without_instructions_sends_nothing() -> None:
    steps: list[int] = []

    def bare(ctx: RunContext[Any]) -> FunctionToolset[Any]:
        steps.append(ctx.run_step)
        return FunctionToolset()

    agent = Agent(TestModel(), toolsets=[DynamicToolset(bare)])
    history = [ModelResponse([TextPart('previous')])]

    result = await agent.run(message_history=history)

    assert (result.output, result.all_messages(), steps) == ('previous', history, [1])


async def test_a_run_with_no_prompt_history_or_instructions_is_refused() -> None:
    agent = Agent(TestModel())

    with pytest.raises(UserError, match=r'^No message history, user prompt, or instructions provided$'):
        await agent.run()


async def test_toolset_instructions_alone_are_enough_to_run() -> None:
    agent = Agent(TestModel(custom_output_text='done'), toolsets=[FunctionToolset(instructions='Be brief.')])

    result = await agent.run()

    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert (result.output, first.parts, first.instructions) == ('done', [], 'Be brief.')
