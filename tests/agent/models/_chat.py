"""Helpers of the Chat Completions tests: response bodies, SSE bodies, and models over a mock transport."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from edgewise.agent.messages import ModelMessage, ModelRequest
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import validate_chat_body


def completion(
    content: str | None = 'hello', *, tool_calls: list[dict[str, Any]] | None = None, finish_reason: str = 'stop',
    usage: dict[str, Any] | None = None, **message: Any,
) -> dict[str, Any]:  # fmt: skip
    """A Chat Completions response body."""
    return {
        'id': 'chatcmpl-1',
        'object': 'chat.completion',
        'created': 1700000000,
        'model': 'gpt-4o-2024-08-06',
        'choices': [
            {
                'index': 0,
                'finish_reason': finish_reason,
                'message': {'role': 'assistant', 'content': content, 'tool_calls': tool_calls, **message},
            }
        ],
        'usage': usage or {'prompt_tokens': 10, 'completion_tokens': 2, 'total_tokens': 12},
    }


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    """An SSE body of chunk objects (each completed with an id, a model and a timestamp)."""
    lines = [
        f'data: {json.dumps({"id": "chatcmpl-2", "model": "gpt-4o-mini", "created": 1700000000, **c})}\n\n'
        for c in chunks
    ]
    return (''.join(lines) + ('data: [DONE]\n\n' if done else '')).encode()


def delta(finish_reason: str | None = None, **fields: Any) -> dict[str, Any]:
    """A chunk with one choice whose delta holds `fields`."""
    return {'choices': [{'index': 0, 'delta': fields, 'finish_reason': finish_reason}]}


def rechunked(data: bytes, seed: int) -> AsyncIterator[bytes]:
    """`data` as an async body cut at random byte boundaries."""
    rng = random.Random(seed)

    async def chunks() -> AsyncIterator[bytes]:
        i = 0
        while i < len(data):
            n = rng.randint(1, 48)
            yield data[i : i + n]
            i += n

    return chunks()


class Recorder:
    """A mock transport answering with `respond(request_body)`; it validates and keeps every request."""

    def __init__(self, respond: Callable[[dict[str, Any]], httpx.Response]) -> None:
        self.respond = respond
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        validate_chat_body(body)
        self.requests.append(request)
        self.bodies.append(body)
        return self.respond(body)


def json_reply(body: dict[str, Any], status: int = 200) -> Callable[[dict[str, Any]], httpx.Response]:
    return lambda _: httpx.Response(status, json=body)


def sse_reply(data: bytes, seed: int = 0) -> Callable[[dict[str, Any]], httpx.Response]:
    return lambda _: httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=rechunked(data, seed))


def mock_model(
    respond: Callable[[dict[str, Any]], httpx.Response], model_name: str = 'gpt-4o', **model_kwargs: Any
) -> tuple[OpenAIChatModel, Recorder]:
    """An `OpenAIChatModel` whose HTTP client answers through `respond`."""
    recorder = Recorder(respond)
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = OpenAIProvider(api_key='sk-test-key', http_client=client)
    return OpenAIChatModel(model_name, provider=provider, **model_kwargs), recorder


def user(text: str, instructions: str | None = None) -> list[ModelMessage]:
    return [ModelRequest.user_text_prompt(text, instructions=instructions)]


PARAMS = ModelRequestParameters()


async def drain(
    model: OpenAIChatModel, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters
) -> Any:
    """Stream a response to its end; the `StreamedResponse`."""
    async with model.request_stream(messages, settings, params) as stream:
        async for _ in stream:
            pass
    return stream
