"""Each output tool has its own retry count and budget (`ToolOutput(max_retries=...)`, else the agent's output
retries), counted in a row as for function tools, as in pydantic-ai 1.107."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, ModelRetry, RunContext, ToolOutput, UnexpectedModelBehavior
from edgewise.agent.messages import ModelMessage, ModelResponse, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


async def test_a_tool_outputs_own_budget_beats_the_agents() -> None:
    seen: list[tuple[int, int]] = []

    def weather(ctx: RunContext[None], city: str) -> str:
        seen.append((ctx.retry, ctx.max_retries))
        if ctx.retry < 4:
            raise ModelRetry('again')
        return f'sunny in {city}'

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'city': 'Paris'})])

    agent = Agent(FunctionModel(model), output_type=ToolOutput(weather, max_retries=4), retries={'output': 1})
    assert (await agent.run('go')).output == 'sunny in Paris'
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]


async def test_each_output_tool_counts_its_own_retries() -> None:
    seen: dict[str, list[int]] = {'a': [], 'b': []}

    def output_a(ctx: RunContext[None], value: str) -> str:
        seen['a'].append(ctx.retry)
        if ctx.retry < 2:
            raise ModelRetry('a again')
        return f'A {value}'

    def output_b(ctx: RunContext[None], value: str) -> str:
        seen['b'].append(ctx.retry)
        raise ModelRetry('b again')

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        names = {t.name for t in info.output_tools}
        name = next(n for n in names if ('output_b' if len(messages) == 1 else 'output_a') in n)
        return ModelResponse(parts=[ToolCallPart(name, {'value': 'x'})])

    agent = Agent(
        FunctionModel(model),
        output_type=[ToolOutput(output_a, max_retries=2), ToolOutput(output_b, max_retries=1)],
        retries={'output': 0},
    )
    assert (await agent.run('go')).output == 'A x'
    assert seen == {'a': [0, 1, 2], 'b': [0]}


async def test_an_output_tool_out_of_retries_fails_the_run() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'response': 'not a number'})])

    agent = Agent(FunctionModel(model), output_type=ToolOutput(int, max_retries=2), retries={'output': 5})
    with pytest.raises(UnexpectedModelBehavior, match=r'Exceeded maximum output retries \(2\)'):
        await agent.run('go')


async def test_ctx_retries_counts_the_output_tools_failures_in_a_row() -> None:
    seen: list[tuple[int, int]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'response': 1})])

    agent = Agent(FunctionModel(model), output_type=int, retries={'output': 3})

    @agent.output_validator
    def validate(ctx: RunContext[None], output: int) -> int:
        seen.append((ctx.retry, ctx.retries.get('final_result', 0)))
        if ctx.retry < 2:
            raise ModelRetry('again')
        return output

    assert (await agent.run('go')).output == 1
    assert seen == [(0, 0), (1, 1), (2, 2)]


async def test_output_validators_see_the_runs_output_retry_count_and_budget() -> None:
    seen: list[tuple[int, int]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'response': 1})])

    agent = Agent(FunctionModel(model), output_type=ToolOutput(int, max_retries=5), retries={'output': 2})

    @agent.output_validator
    def validate(ctx: RunContext[None], output: int) -> int:
        seen.append((ctx.retry, ctx.max_retries))
        if ctx.retry < 2:
            raise ModelRetry('again')
        return output

    assert (await agent.run('go')).output == 1
    assert seen == [(0, 2), (1, 2), (2, 2)]
