"""`Agent.as_tool`: an agent as a tool of another, with the request as `input` and the usage shared."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, AgentRunResult
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.usage import RequestUsage

pytestmark = pytest.mark.anyio


def caller_of(tool_name: str, request: str) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            assert [t.name for t in info.function_tools] == [tool_name]
            assert list(info.function_tools[0].parameters_json_schema['properties']) == ['input']
            return ModelResponse([ToolCallPart(tool_name, {'input': request}, 'c1')],
                                 usage=RequestUsage(input_tokens=10, output_tokens=1))  # fmt: skip
        returned = messages[-1].parts[0]
        assert isinstance(returned, ToolReturnPart)
        return ModelResponse([TextPart(f'got {returned.content!r}')], usage=RequestUsage(input_tokens=20))

    return FunctionModel(answer)


def specialist() -> Agent[str, str]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([TextPart('forty-two')], usage=RequestUsage(input_tokens=5, output_tokens=3))

    return Agent(FunctionModel(answer), name='specialist', deps_type=str)


async def test_the_sub_agent_gets_the_input_and_its_usage_counts_towards_the_callers() -> None:
    sub = specialist()
    seen: list[tuple[str, Any]] = []

    @sub.instructions
    def note(ctx: Any) -> str:
        seen.append((ctx.prompt, ctx.deps))
        return 'Be exact.'

    boss = Agent(caller_of('specialist', 'what is six times seven?'), deps_type=str,
                 tools=[sub.as_tool(description='Answers questions.')])  # fmt: skip
    result = await boss.run('ask', deps='shared')

    assert result.output == "got 'forty-two'"
    assert seen == [('what is six times seven?', 'shared')]
    usage = result.usage
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (3, 35, 4)
    assert usage.tool_calls == 1


async def test_a_custom_output_extractor_picks_what_the_caller_gets() -> None:
    def messages_count(result: AgentRunResult[str]) -> str:
        return f'{result.output} after {len(result.all_messages())} messages'

    async def upper(result: AgentRunResult[str]) -> str:
        return result.output.upper()

    for extractor, expected in ((messages_count, "got 'forty-two after 2 messages'"), (upper, "got 'FORTY-TWO'")):
        tool = specialist().as_tool(name='ask_expert', custom_output_extractor=extractor)
        boss = Agent(caller_of('ask_expert', 'q'), deps_type=str, tools=[tool])
        assert (await boss.run('ask', deps='d')).output == expected


def test_the_tool_is_named_and_described_by_default() -> None:
    tool = specialist().as_tool()
    assert (tool.name, tool.description) == (
        'specialist',
        'Ask the specialist agent. Pass it the full request as `input`.',
    )
    assert tool.tool_def.parameters_json_schema['properties']['input'] == {
        'type': 'string',
        'description': 'The request for the agent, with everything it needs to know.',
    }
