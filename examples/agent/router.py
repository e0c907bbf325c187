"""A router agent: a commander sends each question to one of two specialist agents and returns a typed match.

The commander has the specialists as tools (`Agent.as_tool`); its output is a `MatchResult`. Every model
is a script, so the example runs offline. Run it with `python -m examples.agent.router`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from edgewise.agent import Agent
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel


class MatchResult(BaseModel):
    """Which specialist answered, and its answer."""

    specialist: Literal['games', 'tickets']
    answer: str


def _prompt(messages: list[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ''


def games_llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The games specialist knows one fact."""
    return ModelResponse(parts=[TextPart('Chess openings: start with e4 or d4.')])


def tickets_llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The tickets specialist opens a ticket."""
    return ModelResponse(parts=[TextPart(f'Ticket T-42 opened for: {_prompt(messages)}')])


def commander_llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Route by keyword, then wrap the specialist's reply in the `MatchResult` output tool."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returns:
        reply = returns[0]
        result = {'specialist': reply.tool_name, 'answer': reply.content}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, result)])
    question = _prompt(messages)
    specialist = 'games' if 'chess' in question.lower() else 'tickets'
    return ModelResponse(parts=[ToolCallPart(specialist, {'input': question})])


games = Agent(FunctionModel(games_llm), name='games', instructions='You answer questions about games.')
tickets = Agent(FunctionModel(tickets_llm), name='tickets', instructions='You handle support tickets.')
commander = Agent(
    FunctionModel(commander_llm),
    output_type=MatchResult,
    tools=[games.as_tool(description='Questions about games.'), tickets.as_tool(description='Support tickets.')],
    instructions='Send each question to the right specialist.',
)


def main() -> None:
    """Route two questions and print the typed results; usage includes the specialists' requests."""
    for question in ('How should I open a chess game?', 'My login does not work.'):
        result = commander.run_sync(question)
        print(f'{question!r} -> {result.output!r}')
        print(f'  requests (commander and specialist): {result.usage.requests}')


if __name__ == '__main__':
    main()
