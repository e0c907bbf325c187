"""Tools (Tool objects, per-tool retries, prepare, schemas), ModelRetry, unknown tools, retry budgets, usage limits."""

from __future__ import annotations

import json
from typing import Any

from edgewise.agent import Agent, ModelRetry, RunContext, Tool, UsageLimitExceeded, UsageLimits
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import ToolDefinition
from tests.compat._show import show_error, show_messages, usage_line


def convert(ctx: RunContext[float], amount: float, currency: str = 'EUR') -> str:
    """Convert an amount of money.

    Args:
        amount: How much to convert.
        currency: The currency to convert to.
    """
    return f'{amount * ctx.deps:.2f} {currency}'


def weekday(day_number: int) -> str:
    """Name a weekday, 0 being Monday."""
    days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
    if not 0 <= day_number < 7:
        raise ModelRetry(f'day_number must be between 0 and 6, not {day_number}')
    return days[day_number]


async def only_when_asked(ctx: RunContext[float], tool_def: ToolDefinition) -> ToolDefinition | None:
    return tool_def if ctx.deps > 1 else None


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    for tool in info.function_tools:
        print('  tool', tool.name, repr(tool.description), json.dumps(tool.parameters_json_schema, sort_keys=True))
    turn = sum(isinstance(m, ModelResponse) for m in messages)
    if turn == 0:
        return ModelResponse(
            parts=[
                ToolCallPart('convert', {'amount': 10}, 'c1'),
                ToolCallPart('weekday', '{"day_number": 9}', 'c2'),
                ToolCallPart('missing_tool', {}, 'c3'),
                ToolCallPart('convert', {'amount': 'lots'}, 'c4'),
            ]
        )
    if turn == 1:
        return ModelResponse(parts=[ToolCallPart('weekday', {'day_number': 2}, 'c5')])
    returns = [p.content for m in messages for p in getattr(m, 'parts', []) if isinstance(p, ToolReturnPart)]
    return ModelResponse(parts=[TextPart(f'done: {returns}')])


agent = Agent(
    FunctionModel(script),
    deps_type=float,
    tools=[Tool(convert, takes_ctx=True, max_retries=2), Tool(weekday, name='weekday', max_retries=3)],
    retries=2,
)


@agent.tool(prepare=only_when_asked, retries=1)
def secret(ctx: RunContext[float]) -> str:
    """Only offered when the rate is above one."""
    return 'secret'  # pragma: no cover - never called by the script


print('== tool calls, retries and an unknown tool')
result = agent.run_sync('go', deps=1.5)
print(repr(result.output))
show_messages(result.all_messages())
print(usage_line(result.usage))

print('== prepare hides a tool')
print(repr(agent.run_sync('go', deps=0.5).output))

print('== a tool past its retry budget')


def always_bad(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart('weekday', {'day_number': 99}, f'w{len(messages)}')])


try:
    Agent(FunctionModel(always_bad), tools=[weekday], retries=1).run_sync('x')
except Exception as error:
    show_error(error)

print('== unknown tool past the budget')


def unknown(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart('nope', {}, f'n{len(messages)}')])


try:
    Agent(FunctionModel(unknown), tools=[weekday]).run_sync('x')
except Exception as error:
    show_error(error)

print('== usage limits')


def chatter(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart('weekday', {'day_number': 1}, f'u{len(messages)}')])


looping = Agent(FunctionModel(chatter), tools=[weekday])
limits: list[Any] = [
    UsageLimits(request_limit=3),
    UsageLimits(tool_calls_limit=2),
    UsageLimits(input_tokens_limit=60),
    UsageLimits(output_tokens_limit=5),
    UsageLimits(total_tokens_limit=70),
]
for limit in limits:
    try:
        looping.run_sync('x', usage_limits=limit)
    except UsageLimitExceeded as error:
        show_error(error)
print(UsageLimits())
print(UsageLimits(request_limit=5).has_token_limits(), UsageLimits(total_tokens_limit=5).has_token_limits())
