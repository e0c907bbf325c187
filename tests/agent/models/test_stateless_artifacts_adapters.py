"""`Model.accepts_stateless_artifacts` in the Gemini and Chat Completions adapters: thought signatures, the
signatures Gemini puts in a Chat Completions tool call's `extra_content`, and OpenRouter's and Snowflake's
`reasoning_details` go back as they came only to the API that verifies them (the response's recorded
`canonical_system`, else its provider's name); elsewhere they are dropped or sent as text. Over a real local HTTP
server."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import Model, ModelRequestParameters
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.openrouter import OpenRouterModel
from edgewise.agent.models.snowflake import SnowflakeModel
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.providers.openrouter import OpenRouterProvider
from edgewise.agent.providers.snowflake import SnowflakeProvider

from ._chat import completion, delta, sse
from ._helpers import validate_google_body
from .conftest import LocalServer, Reply, validate_chat_body

pytestmark = pytest.mark.anyio

QUESTION = ModelRequest(parts=[UserPromptPart('hi')])
CALL = {'name': 'weather', 'args': {'city': 'Oslo'}, 'id': 'call_1'}
SKIP = base64.b64encode(b'skip_thought_signature_validator').decode()


def _gemini_turn(provider_name: str, canonical_system: str | None) -> list[ModelMessage]:
    """A Gemini turn that thought (signed), ran code and called a tool (signed), then its tool's return."""
    response = ModelResponse(
        parts=[
            ThinkingPart('thought', signature='U0lHLVRISU5L', provider_name=provider_name),
            NativeToolCallPart('code_execution', {'language': 'PYTHON', 'code': '1+1'}, provider_name=provider_name),
            ToolCallPart(
                'weather',
                {'city': 'Oslo'},
                'call_1',
                provider_name=provider_name,
                provider_details={'thought_signature': 'U0lHLUNBTEw='},
            ),
        ],
        provider_name=provider_name,
        canonical_system=canonical_system,
    )
    return [QUESTION, response, ModelRequest(parts=[ToolReturnPart('weather', 'sunny', 'call_1')])]


async def _gemini_model_turn(server: LocalServer, history: list[ModelMessage]) -> list[dict[str, Any]]:
    answer = {'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'ok'}]}, 'finishReason': 'STOP'}]}
    server.script(Reply(body=answer))
    provider = GoogleProvider(api_key='k', base_url=server.url.removesuffix('/v1'), max_retries=0)
    async with GoogleModel('gemini-2.5-flash', provider=provider) as model:
        await model.request(history, None, ModelRequestParameters())
    body = server.received[-1]['body']
    validate_google_body(body)
    return list(body['contents'][1]['parts'])


@pytest.mark.parametrize(
    ('provider_name', 'canonical_system'), [('google', 'google'), ('proxy', 'google'), ('google', None)]
)
async def test_gemini_sends_back_the_signatures_and_code_steps_the_gemini_api_verifies(
    local_server: LocalServer, provider_name: str, canonical_system: str | None
) -> None:
    parts = await _gemini_model_turn(local_server, _gemini_turn(provider_name, canonical_system))
    assert parts == [
        {'text': 'thought', 'thought': True},
        {'executableCode': {'language': 'PYTHON', 'code': '1+1'}, 'thoughtSignature': 'U0lHLVRISU5L'},
        {'functionCall': CALL, 'thoughtSignature': 'U0lHLUNBTEw='},
    ]


@pytest.mark.parametrize(('provider_name', 'canonical_system'), [('google', 'google-cloud'), ('proxy', 'openai')])
async def test_gemini_drops_what_another_api_signed_and_skips_the_first_calls_check(
    local_server: LocalServer, provider_name: str, canonical_system: str
) -> None:
    parts = await _gemini_model_turn(local_server, _gemini_turn(provider_name, canonical_system))
    assert parts == [
        {'text': 'thought', 'thought': True},
        {'functionCall': CALL, 'thoughtSignature': SKIP},
    ]


EXTRA = {'google': {'thought_signature': 'U0lH'}}
"""What Gemini's Chat Completions API puts in a tool call's `extra_content`."""
SIGNED_CALL = {
    'id': 'call_1', 'type': 'function', 'function': {'name': 'weather', 'arguments': '{"city":"Oslo"}'},
    'extra_content': EXTRA,
}  # fmt: skip


def _chat_model(server: LocalServer) -> OpenAIChatModel:
    provider = OpenAIProvider(api_key='k', base_url=server.url, max_retries=0)
    return OpenAIChatModel('gemini-3-pro-preview', provider=provider)


async def _sent_messages(server: LocalServer, model: Model, history: list[ModelMessage]) -> list[dict[str, Any]]:
    server.script(Reply(body=completion('ok')))
    async with model:
        await model.request(history, None, ModelRequestParameters())
    body = server.received[-1]['body']
    validate_chat_body(body)
    return list(body['messages'])


def _answered(response: ModelResponse) -> list[ModelMessage]:
    return [QUESTION, response, ModelRequest(parts=[ToolReturnPart('weather', 'sunny', 'call_1')])]


@pytest.mark.parametrize('stream', [False, True])
async def test_a_chat_tool_calls_extra_content_is_read_and_goes_back_only_where_it_is_verified(
    local_server: LocalServer, stream: bool
) -> None:
    model = _chat_model(local_server)
    async with model:
        if stream:
            chunk = delta(role='assistant', tool_calls=[{'index': 0, **SIGNED_CALL}])
            local_server.script(
                Reply(chunks=[sse(chunk, delta('tool_calls'))], headers={'content-type': 'text/event-stream'})
            )
            async with model.request_stream([QUESTION], None, ModelRequestParameters()) as streamed:
                async for _ in streamed:
                    pass
            response = streamed.get()
        else:
            local_server.script(Reply(body=completion(None, tool_calls=[SIGNED_CALL], finish_reason='tool_calls')))
            response = await model.request([QUESTION], None, ModelRequestParameters())
    assert response.parts == [
        ToolCallPart(
            'weather', '{"city":"Oslo"}', 'call_1', provider_name='openai', provider_details={'extra_content': EXTRA}
        )
    ]
    sent = await _sent_messages(local_server, _chat_model(local_server), _answered(response))
    assert sent[1]['tool_calls'] == [SIGNED_CALL]
    # The same call recorded as another API's (Azure behind the `openai` name) goes back without it.
    elsewhere = replace(response, canonical_system='azure')
    sent = await _sent_messages(local_server, _chat_model(local_server), _answered(elsewhere))
    assert sent[1]['tool_calls'] == [{key: value for key, value in SIGNED_CALL.items() if key != 'extra_content'}]


DETAIL = {'type': 'reasoning.encrypted', 'data': 'ENC', 'id': 'r1', 'format': 'anthropic-claude-v1', 'index': 0}


def _reasoned(provider_name: str, canonical_system: str | None) -> list[ModelMessage]:
    thinking = ThinkingPart(
        '', id='r1', signature='ENC', provider_name=provider_name,
        provider_details={'format': 'anthropic-claude-v1', 'index': 0, 'type': 'reasoning.encrypted'},
    )  # fmt: skip
    response = ModelResponse(
        parts=[thinking, TextPart('hello')], provider_name=provider_name, canonical_system=canonical_system
    )
    return [QUESTION, response, ModelRequest(parts=[UserPromptPart('again')])]


def _openrouter(server: LocalServer) -> Model:
    return OpenRouterModel('anthropic/claude-sonnet-4.5', provider=OpenRouterProvider(api_key='k', base_url=server.url))


def _snowflake(server: LocalServer) -> Model:
    provider = SnowflakeProvider(token='t', base_url=server.url, max_retries=0)
    return SnowflakeModel('claude-sonnet-4-6', provider=provider)


@pytest.mark.parametrize(('make', 'system'), [(_openrouter, 'openrouter'), (_snowflake, 'snowflake')])
async def test_reasoning_details_go_back_as_they_came_only_to_the_api_that_verifies_them(
    local_server: LocalServer, make: Callable[[LocalServer], Model], system: str
) -> None:
    # A proxy's record of this API's reasoning: sent back as it came.
    sent = await _sent_messages(local_server, make(local_server), _reasoned('proxy', system))
    assert sent[1] == {'role': 'assistant', 'reasoning_details': [DETAIL], 'content': 'hello'}
    # This provider's name, but another API's reasoning (recorded): not as a detail, and nothing encrypted.
    sent = await _sent_messages(local_server, make(local_server), _reasoned(system, 'somebody-else'))
    assert 'reasoning_details' not in sent[1]
    assert 'ENC' not in json.dumps(sent)
