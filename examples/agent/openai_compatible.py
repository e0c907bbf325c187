"""An agent with a tool, against any server that speaks OpenAI's Chat Completions API.

Point it at Ollama, vLLM, llama.cpp, LM Studio, a proxy, or OpenAI itself, by base URL:

    python -m examples.agent.openai_compatible --base-url http://localhost:11434/v1 --model llama3.2

The base URL, model and key can also come from `OPENAI_COMPATIBLE_BASE_URL`, `OPENAI_COMPATIBLE_MODEL` and
`OPENAI_COMPATIBLE_API_KEY` (most local servers need no key). The agent has one tool, a unit converter, and
prints its answer, the tool calls the model made, and the tokens used.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

import anyio

from edgewise.agent import Agent, AgentRunResult
from edgewise.agent.messages import ToolCallPart
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider

DEFAULT_PROMPT = 'How many kilometres is a marathon of 26.2 miles? Use the converter.'
_FACTORS = {('mi', 'km'): 1.609344, ('km', 'mi'): 1 / 1.609344, ('kg', 'lb'): 2.2046226, ('lb', 'kg'): 1 / 2.2046226}


def convert(value: float, from_unit: str, to_unit: str) -> str:
    """Convert a quantity between units (mi, km, kg, lb).

    Args:
        value: The quantity to convert.
        from_unit: The unit it is in: `mi`, `km`, `kg` or `lb`.
        to_unit: The unit wanted: `mi`, `km`, `kg` or `lb`.
    """
    factor = _FACTORS.get((from_unit, to_unit))
    if factor is None:
        return f'cannot convert {from_unit} to {to_unit}; known pairs: {sorted(_FACTORS)}'
    return f'{value} {from_unit} = {value * factor:.2f} {to_unit}'


def build_agent(base_url: str, model_name: str, api_key: str | None = None) -> Agent[None, str]:
    """An agent on the server at `base_url`, with the `convert` tool."""
    provider = OpenAIProvider(base_url=base_url, api_key=api_key)
    model = OpenAIChatModel(model_name, provider=provider)
    return Agent(model, instructions='Answer briefly. Use the tools for arithmetic.', tools=[convert])


async def ask(agent: Agent[None, str], prompt: str) -> AgentRunResult[str]:
    """One run; leaving `async with agent` closes the HTTP client of the agent's provider."""
    async with agent:
        return await agent.run(prompt)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the agent once on the prompt and print what happened."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--base-url', default=os.getenv('OPENAI_COMPATIBLE_BASE_URL'), help='e.g. http://host/v1')
    parser.add_argument('--model', default=os.getenv('OPENAI_COMPATIBLE_MODEL', 'llama3.2'))
    parser.add_argument('--api-key', default=os.getenv('OPENAI_COMPATIBLE_API_KEY'))
    parser.add_argument('prompt', nargs='?', default=DEFAULT_PROMPT)
    args = parser.parse_args(argv)
    if not args.base_url:
        parser.error('give the server with --base-url or OPENAI_COMPATIBLE_BASE_URL')
    agent = build_agent(args.base_url, args.model, args.api_key)
    result = anyio.run(ask, agent, args.prompt)
    print(result.output)
    for message in result.all_messages():
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f'  tool call: {part.tool_name}({part.args_as_dict()})')
    usage = result.usage
    print(f'  requests: {usage.requests}, input tokens: {usage.input_tokens}, output tokens: {usage.output_tokens}')


if __name__ == '__main__':
    main()
