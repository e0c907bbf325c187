"""Structured output: the agent answers with a validated pydantic model instead of text.

The model is a script (`FunctionModel`) that calls the `final_result` output tool, as an LLM would.
Run it with `python -m examples.agent.structured_output`.
"""

from __future__ import annotations

from pydantic import BaseModel

from edgewise.agent import Agent
from edgewise.agent.messages import ModelMessage, ModelResponse, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel


class CityInfo(BaseModel):
    """Facts about a city."""

    city: str
    country: str
    population_millions: float


def scripted_llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answer by calling the output tool the agent offers (its schema is `info.output_tools[0]`)."""
    tool = info.output_tools[0]
    args = {'city': 'Lisbon', 'country': 'Portugal', 'population_millions': 0.55}
    return ModelResponse(parts=[ToolCallPart(tool.name, args)])


agent = Agent(FunctionModel(scripted_llm), output_type=CityInfo, instructions='Answer with facts about the city.')


def main() -> None:
    """Ask for a city and print the typed answer and the output tool the model was offered."""
    result = agent.run_sync('Tell me about the capital of Portugal.')
    print(f'output: {result.output!r}')
    call = result.all_messages()[1].parts[0]
    assert isinstance(call, ToolCallPart)
    print(f'the model called: {call.tool_name}({call.args})')
    print(f'and was told: {result.all_messages()[-1].parts[0].content!r}')  # type: ignore[union-attr]
    print(f'usage: {result.usage}')


if __name__ == '__main__':
    main()
