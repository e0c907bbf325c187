"""Dynamic system prompts over a message history, end strategies, output functions that retry, tools returning
models, shared usage across runs, and user errors."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from edgewise.agent import Agent, ModelRetry, RunContext, RunUsage, Tool, UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from tests.compat._show import show_error, show_messages, usage_line


@dataclass
class Clock:
    hour: int


clock_agent = Agent(TestModel(), deps_type=Clock, system_prompt='Static prompt.')


@clock_agent.system_prompt(dynamic=True)
def current_hour(ctx: RunContext[Clock]) -> str:
    return f'It is {ctx.deps.hour} o clock.'


@clock_agent.system_prompt
def fixed(ctx: RunContext[Clock]) -> str:
    return f'Fixed at first run: {ctx.deps.hour}.'


print('== dynamic system prompts')
morning = clock_agent.run_sync('first', deps=Clock(hour=9))
evening = clock_agent.run_sync('second', deps=Clock(hour=21), message_history=morning.all_messages())
show_messages(evening.all_messages())


class Weather(BaseModel):
    city: str
    degrees: int


def both(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(
        parts=[
            ToolCallPart('final_result', {'city': 'Oslo', 'degrees': 3}, 'o1'),
            ToolCallPart('log', {'text': 'a'}, 'l1'),
            ToolCallPart('final_result', {'city': 'Rome', 'degrees': 20}, 'o2'),
            ToolCallPart('log', {'text': 'b'}, 'l2'),
        ]
    )


logged: list[str] = []


def log(text: str) -> Weather:
    logged.append(text)
    return Weather(city=text, degrees=len(logged))


for strategy in ('early', 'exhaustive'):
    print(f'== end_strategy={strategy}')
    logged.clear()
    agent = Agent(
        FunctionModel(both),
        output_type=Weather,
        end_strategy=strategy,
        tools=[Tool(log, sequential=True)],
    )
    result = agent.run_sync('x')
    print(repr(result.output), logged)
    show_messages(result.all_messages()[-1:])


print('== output function raising ModelRetry')


def to_celsius(ctx: RunContext[None], fahrenheit: float) -> float:
    """Convert to Celsius."""
    if fahrenheit < -459.67:
        raise ModelRetry('below absolute zero')
    return round((fahrenheit - 32) / 1.8, 1)


def guesses(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    value = -1000 if len(messages) == 1 else 212
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'fahrenheit': value}, f'g{len(messages)}')])


celsius = Agent(FunctionModel(guesses), output_type=to_celsius).run_sync('x')
print(repr(celsius.output))
show_messages(celsius.all_messages())

print('== usage shared across runs')
shared = RunUsage()
text_agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('ok')])))
text_agent.run_sync('one', usage=shared)
text_agent.run_sync('two', usage=shared)
print(usage_line(shared))

print('== user errors')
conflict = Agent(TestModel())


@conflict.tool_plain
def twin() -> str:
    return 'a'  # pragma: no cover


try:

    @conflict.tool_plain(name='twin')
    def other() -> str:
        return 'b'  # pragma: no cover

    conflict.run_sync('x')
except UserError:
    print('UserError on a duplicate tool name')
except Exception as error:
    show_error(error)

try:
    Agent(None).run_sync('x')
except UserError as error:
    show_error(error)

try:
    Agent(TestModel(), output_type=Weather).run_sync('x', output_type=int, model=TestModel())
    print('output_type per run: ok')
except Exception as error:
    show_error(error)
