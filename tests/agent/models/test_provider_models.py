"""AnthropicModel, GoogleModel and OpenAIResponsesModel over HTTP: what they send, what they read, retries,
errors and streams, through a mock transport and a real local socket."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelHTTPError, UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import PARAMS, rechunked, user
from ._helpers import weather_tool
from ._provider_specs import ANTHROPIC, GOOGLE, SECRET, SPECS, Spec
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

FAST = {'retry-after-ms': '1'}
BY_NAME = pytest.mark.parametrize('spec', SPECS, ids=[s.name for s in SPECS])


class Recorder:
    """A mock transport answering from a list of responses; it validates and keeps every request."""

    def __init__(self, spec: Spec, *responses: httpx.Response) -> None:
        self.spec = spec
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.spec.validate(self.spec.body_of(request))
        self.requests.append(request)
        return self.responses.pop(0)


def _mock(spec: Spec, *responses: httpx.Response) -> tuple[Any, Recorder]:
    recorder = Recorder(spec, *responses)
    return spec.make(http_client=httpx.AsyncClient(transport=httpx.MockTransport(recorder))), recorder


def _server_model(spec: Spec, server: LocalServer, max_retries: int = 2) -> Any:
    return spec.make(base_url=server.url.removesuffix('/v1') + spec.base_suffix, max_retries=max_retries)


def _stream_reply(spec: Spec, seed: int = 0) -> httpx.Response:
    return httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=rechunked(spec.stream, seed))


@BY_NAME
async def test_a_request_sends_the_apis_url_headers_and_body(spec: Spec) -> None:
    model, recorder = _mock(spec, httpx.Response(200, json=spec.reply))
    params = model.customize_request_parameters(PARAMS.__class__(function_tools=[weather_tool()]))
    response = await model.request(user('Weather in Paris?', instructions='Be brief.'), {'temperature': 0.2}, params)
    (request,) = recorder.requests
    assert request.method == 'POST'
    assert request.url.raw_path.decode() == spec.path
    assert str(request.url).startswith(model.base_url)
    assert request.headers[spec.auth[0]] == spec.auth[1]
    assert request.headers['content-type'] == 'application/json'
    if spec is ANTHROPIC:
        assert request.headers['anthropic-version'] == '2023-06-01'
    body = spec.body_of(request)
    assert 'stream' not in body
    assert 'Weather in Paris?' in json.dumps(body)
    assert 'Be brief.' in json.dumps(body)
    assert 'weather' in json.dumps(body)
    assert response.text == 'hello'
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 2)
    assert response.finish_reason == 'stop'
    assert response.provider_name == model.provider.name
    assert response.provider_url == model.base_url.rstrip('/')  # the API's base URL, as pydantic-ai 1.107 records it


@BY_NAME
@pytest.mark.parametrize('seed', [0, 1, 2])
async def test_a_streamed_request(spec: Spec, seed: int) -> None:
    model, recorder = _mock(spec, _stream_reply(spec, seed))
    async with model.request_stream(user('hi'), None, PARAMS) as stream:
        kinds = [event.event_kind async for event in stream]
    (request,) = recorder.requests
    assert request.url.raw_path.decode() == spec.stream_path
    assert request.headers['accept'] == 'text/event-stream'
    assert spec.body_of(request).get('stream') is (None if spec is GOOGLE else True)
    response = stream.get()
    assert response.text == 'Hello'
    assert kinds[0] == 'part_start'
    assert (response.usage.input_tokens, response.usage.output_tokens) == (5, 2)
    assert response.finish_reason == 'stop'
    assert response.provider_response_id is not None


@BY_NAME
async def test_a_429_is_retried_over_a_socket(spec: Spec, local_server: LocalServer) -> None:
    local_server.script(Reply(429, spec.error, headers=FAST), Reply(200, spec.reply))
    async with _server_model(spec, local_server) as model:
        response = await model.request(user('hi'), None, PARAMS)
    assert response.text == 'hello'
    assert [r['path'] for r in local_server.received] == [spec.path] * 2
    assert local_server.received[0]['body'] == local_server.received[1]['body']
    assert local_server.received[0]['headers'][spec.auth[0]] == spec.auth[1]


@BY_NAME
async def test_an_error_status_is_a_model_http_error_without_the_key(spec: Spec, local_server: LocalServer) -> None:
    local_server.script(Reply(503, spec.error, headers=FAST), Reply(503, spec.error, headers=FAST))
    with pytest.raises(ModelHTTPError) as exc_info:
        async with _server_model(spec, local_server, max_retries=1) as model:
            await model.request(user('hi'), None, PARAMS)
    error = exc_info.value
    assert error.status_code == 503
    assert error.model_name == model.model_name
    # OpenAI's SDK unwraps `error`; Anthropic's and Google's keep the whole body (as pydantic-ai reports them).
    assert error.body == (spec.error['error'] if spec.name == 'responses' else spec.error)
    assert len(local_server.received) == 2
    texts = [str(error), repr(error), repr(model), repr(model.provider), local_server.received[0]['path']]
    assert all(SECRET not in text for text in texts)


@BY_NAME
async def test_leaving_a_stream_early_closes_the_connection(spec: Spec, local_server: LocalServer) -> None:
    first_event = spec.stream.split(b'\n\n')
    # Enough events for a first part to start, then the server holds the stream open.
    head = b'\n\n'.join(first_event[:4]) + b'\n\n'
    local_server.script(Reply(200, chunks=[head], keep_open=True, headers={'content-type': 'text/event-stream'}))
    async with _server_model(spec, local_server) as model:
        async with model.request_stream(user('hi'), None, PARAMS) as stream:
            async for event in stream:
                assert event.event_kind == 'part_start'
                break
        for _ in range(2000):  # the server records the client's EOF once it reads it: wait boundedly
            if local_server.disconnects:
                break
            await anyio.sleep(0.005)
        assert local_server.disconnects == [True]


@BY_NAME
async def test_an_agent_runs_on_each_model(spec: Spec) -> None:
    model, recorder = _mock(spec, httpx.Response(200, json=spec.reply), _stream_reply(spec))
    agent = Agent(model)
    assert (await agent.run('hi')).output == 'hello'
    async with agent.run_stream('hi') as result:
        assert await result.get_output() == 'Hello'
    assert len(recorder.requests) == 2


def test_providers_read_their_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'GOOGLE_API_KEY', 'GEMINI_API_KEY'):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UserError, match=r'Set the `ANTHROPIC_API_KEY` environment variable'):
        AnthropicProvider()
    with pytest.raises(UserError, match=r'Set the `GOOGLE_API_KEY` environment variable'):
        GoogleProvider()
    monkeypatch.setenv('ANTHROPIC_API_KEY', 'a-key')
    monkeypatch.setenv('GEMINI_API_KEY', 'gemini-key')
    assert AnthropicProvider().request_headers() == {'x-api-key': 'a-key', 'anthropic-version': '2023-06-01'}
    assert GoogleProvider().request_headers() == {'x-goog-api-key': 'gemini-key'}
    monkeypatch.setenv('GOOGLE_API_KEY', 'google-key')
    assert GoogleProvider().request_headers() == {'x-goog-api-key': 'google-key'}
    assert AnthropicProvider().base_url == 'https://api.anthropic.com'
    assert GoogleProvider().base_url == 'https://generativelanguage.googleapis.com'
    assert 'a-key' not in repr(AnthropicProvider())
    assert 'google-key' not in repr(GoogleProvider())


def test_vertex_ai_is_a_clear_error() -> None:
    for kwargs in ({'vertexai': True}, {'project': 'p'}, {'location': 'us-central1'}):
        with pytest.raises(UserError, match=r'Vertex AI\) is not supported'):
            GoogleProvider(api_key='k', **kwargs)


def test_model_names_resolve_to_the_new_models(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('ANTHROPIC_API_KEY', 'GOOGLE_API_KEY', 'OPENAI_API_KEY'):
        monkeypatch.setenv(name, 'k')
    anthropic = infer_model('anthropic:claude-sonnet-4-5')
    assert isinstance(anthropic, AnthropicModel)
    assert isinstance(anthropic.provider, AnthropicProvider)
    google = infer_model('google:gemini-2.5-flash')
    assert isinstance(google, GoogleModel)
    assert google.system == 'google'
    responses = infer_model('openai-responses:gpt-5')
    assert isinstance(responses, OpenAIResponsesModel)
    assert isinstance(responses.provider, OpenAIProvider)
    assert responses.model_name == 'gpt-5'
    with pytest.warns(
        DeprecationWarning, match=r"The 'google-gla:' model name prefix is deprecated; use 'google:' instead"
    ):
        gla = infer_model('google-gla:gemini-2.5-pro')
    assert isinstance(gla, GoogleModel)
    assert gla.model_name == 'gemini-2.5-pro'
    with pytest.raises(UserError, match=r"Unknown model provider 'gemini'"):
        infer_model('gemini:gemini-2.5-pro')
    assert isinstance(infer_provider('anthropic'), AnthropicProvider)
    assert infer_provider_class('google') is GoogleProvider
    assert AnthropicModel('claude-sonnet-4-5').profile.get('supports_tools', True)


def test_gemini_keeps_the_key_out_of_the_url() -> None:
    model = GoogleModel('gemini-2.5-flash', provider=GoogleProvider(api_key=SECRET))
    for stream in (False, True):
        call = model._call(user('hi'), None, PARAMS, stream=stream)
        assert SECRET not in call.url
        assert call.headers['x-goog-api-key'] == SECRET


@BY_NAME
async def test_each_request_has_a_genai_span_without_the_key(spec: Spec, capfire: Any) -> None:
    model, _ = _mock(spec, httpx.Response(200, json=spec.reply), _stream_reply(spec))
    await model.request(user('hi'), None, PARAMS)
    async with model.request_stream(user('hi'), None, PARAMS) as stream:
        async for _ in stream:
            pass
    spans = capfire.exporter.exported_spans_as_dict()
    assert len(spans) == 2
    for span, usage in zip(spans, [(10, 2), (5, 2)], strict=True):
        attributes = span['attributes']
        assert attributes['gen_ai.system'] == model.provider.name
        assert attributes['gen_ai.request.model'] == model.model_name
        assert (attributes['gen_ai.usage.input_tokens'], attributes['gen_ai.usage.output_tokens']) == usage
        assert attributes['gen_ai.response.finish_reasons'] == '["stop"]'
    assert SECRET not in str(spans)
