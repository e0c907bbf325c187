"""The four provider models pointed at the aimock simulator, and fixture entries for its scenarios."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    UserPromptPart,
)
from edgewise.agent.models import Model, ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tools import ToolDefinition

KEY = 'sk-simulated-secret'


@dataclass(frozen=True)
class Wire:
    """One API as the simulator speaks it: how to build its model, and the path its requests take."""

    name: str
    path: str
    """A piece of the request path that names this API in the simulator's journal."""
    build: Callable[[str, int, httpx.AsyncClient | None], Model]
    """`build(simulator_url, max_retries, http_client)`."""

    def model(self, url: str, *, max_retries: int = 2, http_client: httpx.AsyncClient | None = None) -> Model:
        return self.build(url, max_retries, http_client)


WIRES = [
    Wire(
        'chat',
        '/v1/chat/completions',
        lambda url, retries, client: OpenAIChatModel(
            'gpt-4o',
            provider=OpenAIProvider(base_url=f'{url}/v1', api_key=KEY, max_retries=retries, http_client=client),
        ),
    ),
    Wire(
        'responses',
        '/v1/responses',
        lambda url, retries, client: OpenAIResponsesModel(
            'gpt-4o',
            provider=OpenAIProvider(base_url=f'{url}/v1', api_key=KEY, max_retries=retries, http_client=client),
        ),
    ),
    Wire(
        'anthropic',
        '/v1/messages',
        lambda url, retries, client: AnthropicModel(
            'claude-sonnet-4-5',
            provider=AnthropicProvider(base_url=url, api_key=KEY, max_retries=retries, http_client=client),
        ),
    ),
    Wire(
        'gemini',
        '/v1beta/models/gemini-2.5-flash',
        lambda url, retries, client: GoogleModel(
            'gemini-2.5-flash',
            provider=GoogleProvider(base_url=url, api_key=KEY, max_retries=retries, http_client=client),
        ),
    ),
]
EACH_WIRE = pytest.mark.parametrize('wire', WIRES, ids=[w.name for w in WIRES])

WEATHER = ToolDefinition(
    name='get_weather',
    description='The weather in a city.',
    parameters_json_schema={'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']},
)
PARAMS = ModelRequestParameters(function_tools=[WEATHER], allow_text_output=True)
LONG_TEXT = 'The simulator streams this sentence in pieces of twenty characters, one event each.'


def ask(marker: str) -> list[ModelMessage]:
    """A conversation of one user prompt carrying the scenario's marker."""
    return [ModelRequest(parts=[UserPromptPart(f'{marker}: what now?')])]


def text_reply(marker: str, text: str, **options: Any) -> dict[str, Any]:
    """A fixture answering the marker's prompt with text (`options`: sequenceIndex, chaos, latency, ...)."""
    sequence = options.pop('sequenceIndex', None)
    match: dict[str, Any] = {'userMessage': marker}
    if sequence is not None:
        match['sequenceIndex'] = sequence
    return {'match': match, 'response': {'content': text}, **options}


def error_reply(marker: str, status: int, *, sequence: int, retry_after: int | None = None) -> dict[str, Any]:
    """A fixture answering the marker's prompt, the `sequence`-th time, with an error status."""
    response: dict[str, Any] = {'error': {'message': f'simulated {status}', 'type': 'server_error'}, 'status': status}
    if retry_after is not None:
        response['retryAfter'] = retry_after
    return {'match': {'userMessage': marker, 'sequenceIndex': sequence}, 'response': response}


async def respond(
    model: Model, messages: list[ModelMessage], settings: ModelSettings | None = None, *, streamed: bool
) -> ModelResponse:
    """The model's response, from `request`, or from `request_stream` read to its end."""
    if not streamed:
        return await model.request(messages, settings, PARAMS)
    async with model.request_stream(messages, settings, PARAMS) as stream:
        async for _ in stream:
            pass
    return stream.get()
