"""`BedrockMantleProvider` and the Mantle models against a real HTTP server on 127.0.0.1: the endpoint family of
each model, bearer and SigV4 authentication (the signature recomputed by the server), the profiles."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, TextPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.bedrock_mantle import BedrockMantleChatModel, BedrockMantleResponsesModel
from edgewise.agent.native_tools import WebSearchTool
from edgewise.agent.providers import infer_provider
from edgewise.agent.providers.bedrock_mantle import BedrockMantleProvider, bedrock_mantle_model_profile

from ._aws import ACCESS_KEY, SECRET_KEY, verify_sigv4
from ._chat import completion
from .conftest import serve_http

pytestmark = pytest.mark.anyio

BEARER = 'mantle-bedrock-api-key-9753'
PARAMS = ModelRequestParameters()
RESPONSE = {
    'id': 'resp_1',
    'object': 'response',
    'model': 'openai.gpt-5.6-luna',
    'status': 'completed',
    'output': [
        {
            'type': 'message',
            'id': 'msg_1',
            'role': 'assistant',
            'status': 'completed',
            'content': [{'type': 'output_text', 'text': 'Hello from Mantle.', 'annotations': []}],
        }
    ],
    'usage': {'input_tokens': 3, 'output_tokens': 4, 'total_tokens': 7},
}


@dataclass
class Mantle:
    """A local Mantle: it answers each POST with the next body, recording path, headers and raw body."""

    url: str = ''
    answers: list[Any] = field(default_factory=list)
    received: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(mantle: Mantle) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('content-length') or 0))
            with mantle.lock:
                mantle.received.append((self.path, dict(self.headers.items()), raw))
                data = json.dumps(mantle.answers.pop(0)).encode()
            self.send_response(200)
            self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def mantle() -> Iterator[Mantle]:
    server = Mantle()
    with serve_http(_handler(server)) as port:
        server.url = f'http://127.0.0.1:{port}'
        yield server


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ('AWS_BEARER_TOKEN_BEDROCK', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN',
                 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE'):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('AWS_SHARED_CREDENTIALS_FILE', str(tmp_path / 'credentials'))
    monkeypatch.setenv('AWS_CONFIG_FILE', str(tmp_path / 'config'))


def user() -> list[Any]:
    return [ModelRequest.user_text_prompt('Hi')]


def test_profiles_pick_the_endpoint_family() -> None:
    interfaces = {
        name: bedrock_mantle_model_profile(name).get('bedrock_mantle_interface')
        for name in ('openai.gpt-oss-safeguard-20b', 'openai.gpt-oss-120b', 'openai.gpt-5.6-luna')
    }
    assert interfaces == {
        'openai.gpt-oss-safeguard-20b': 'chat',
        'openai.gpt-oss-120b': 'responses',
        'openai.gpt-5.6-luna': 'openai-responses',
    }
    oss = bedrock_mantle_model_profile('openai.gpt-oss-120b')
    assert (oss['supports_forced_tool_choice'], oss['supports_image_output'], oss['supported_native_tools']) == (
        False, False, frozenset()
    )  # fmt: skip
    with pytest.raises(
        UserError, match=r"Model 'anthropic.claude-sonnet-4-5' is not an OpenAI model on Bedrock Mantle"
    ):
        bedrock_mantle_model_profile('anthropic.claude-sonnet-4-5')


def test_names_resolve_by_endpoint_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AWS_BEARER_TOKEN_BEDROCK', BEARER)
    monkeypatch.setenv('AWS_REGION', 'us-west-2')
    chat = infer_model('bedrock-mantle:openai.gpt-oss-safeguard-20b')
    assert type(chat) is BedrockMantleChatModel
    assert chat.base_url == 'https://bedrock-mantle.us-west-2.api.aws/openai/v1'
    assert type(infer_model('bedrock-mantle:openai.gpt-oss-120b')) is BedrockMantleResponsesModel
    luna = infer_model('bedrock-mantle:openai.gpt-5.6-luna')
    assert type(luna) is BedrockMantleResponsesModel
    assert (luna.system, luna.model_name) == ('bedrock-mantle', 'openai.gpt-5.6-luna')
    assert BEARER not in repr(luna)
    assert type(infer_provider('bedrock-mantle')) is BedrockMantleProvider


def test_the_wrong_class_and_a_missing_region_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = BedrockMantleProvider(api_key=BEARER, base_url='https://mantle.example/v1')
    with pytest.raises(UserError, match=r'Chat Completions API; construct it with `BedrockMantleChatModel`'):
        BedrockMantleResponsesModel('openai.gpt-oss-safeguard-20b', provider=provider)
    with pytest.raises(UserError, match=r'Responses API; construct it with `BedrockMantleResponsesModel`'):
        BedrockMantleChatModel('openai.gpt-5.6-luna', provider=provider)
    with pytest.raises(UserError, match=r'Set the `AWS_DEFAULT_REGION` or `AWS_REGION` environment variable'):
        BedrockMantleProvider(api_key=BEARER)


@pytest.mark.parametrize(
    ('model_name', 'path'),
    [('openai.gpt-5.6-luna', '/openai/v1/responses'), ('openai.gpt-oss-120b', '/v1/responses')],
)
async def test_responses_models_reach_their_family_with_the_bearer_key(
    mantle: Mantle, model_name: str, path: str
) -> None:
    mantle.answers.append(RESPONSE)
    async with httpx.AsyncClient() as client:
        # Any Mantle URL names the origin: both families are found from it.
        provider = BedrockMantleProvider(api_key=BEARER, base_url=f'{mantle.url}/v1', http_client=client)
        response = await BedrockMantleResponsesModel(model_name, provider=provider).request(user(), None, PARAMS)
    received_path, headers, raw = mantle.received[0]
    assert received_path == path
    assert headers['authorization'] == f'Bearer {BEARER}'
    assert json.loads(raw)['model'] == model_name
    assert response.parts == [TextPart('Hello from Mantle.', id='msg_1', provider_name='bedrock-mantle')]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 4)


async def test_the_chat_model_is_signed_with_sigv4_for_bedrock_mantle(mantle: Mantle) -> None:
    mantle.answers.append(completion('Safe.'))
    async with httpx.AsyncClient() as client:
        provider = BedrockMantleProvider(
            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name='eu-west-1',
            base_url=f'{mantle.url}/openai/v1', http_client=client,
        )  # fmt: skip
        model = BedrockMantleChatModel('openai.gpt-oss-safeguard-20b', provider=provider)
        response = await model.request(user(), {'temperature': 0.0}, PARAMS)
    path, headers, raw = mantle.received[0]
    assert path == '/v1/chat/completions'
    assert verify_sigv4('POST', path, headers, raw, {ACCESS_KEY: SECRET_KEY}) == (True, 'eu-west-1/bedrock-mantle')
    body = json.loads(raw)
    assert (body['model'], body['temperature']) == ('openai.gpt-oss-safeguard-20b', 0.0)
    assert response.parts == [TextPart('Safe.')]
    assert SECRET_KEY not in repr(provider)


async def test_native_tools_are_refused_before_a_request(mantle: Mantle) -> None:
    provider = BedrockMantleProvider(api_key=BEARER, base_url=mantle.url)
    model = BedrockMantleResponsesModel('openai.gpt-5.6-luna', provider=provider)
    with pytest.raises(UserError, match='WebSearchTool'):
        await model.request(user(), None, ModelRequestParameters(native_tools=[WebSearchTool()]))
    assert mantle.received == []
