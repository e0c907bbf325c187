"""Tools with dependencies: a tool reads a database handed to the run as `deps`.

Run it with `python -m examples.agent.tools_with_deps`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel


@dataclass
class WeatherDb:
    """The run's dependencies: a tiny weather database."""

    temperatures: dict[str, float] = field(default_factory=lambda: {'Oslo': -3.0, 'Rome': 14.5})
    """Current temperature in Celsius, by city."""


def scripted_llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """First ask the tool about each city in the prompt, then answer with what the tools returned."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if not returns:
        return ModelResponse(parts=[ToolCallPart('temperature', {'city': city}) for city in ('Oslo', 'Rome')])
    answer = ', '.join(f'{p.content}' for p in returns)
    return ModelResponse(parts=[TextPart(f'Right now: {answer}.')])


agent = Agent(FunctionModel(scripted_llm), deps_type=WeatherDb)


@agent.tool
def temperature(ctx: RunContext[WeatherDb], city: str) -> str:
    """Look up the current temperature of a city.

    Args:
        city: The city's name, e.g. `Oslo`.
    """
    return f'{city} {ctx.deps.temperatures[city]:+.1f} °C'


def main() -> None:
    """Ask about two cities; both tool calls of the response run concurrently, returned in call order."""
    result = agent.run_sync('How warm is it in Oslo and Rome?', deps=WeatherDb())
    print(result.output)
    for message in result.all_messages():
        for part in message.parts:
            print(f'  {type(part).__name__:<15} {getattr(part, "content", None) or getattr(part, "args", "")}')


if __name__ == '__main__':
    main()
