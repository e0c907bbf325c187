"""`Model.accepts_stateless_artifacts` in the Gemini and Chat Completions adapters: thought signatures, the
signatures Gemini puts in a Chat Completions tool call's `extra_content`, and OpenRouter's and Snowflake's
`reasoning_details` go back as they came only to the API that verifies them (the response's recorded
`canonical_system`, else its provider's name); elsewhere they are dropped or sent as text. Over a real local HTTP
server."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.providers.google import GoogleProvider

from ._helpers import validate_google_body
from .conftest import LocalServer, Reply

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
