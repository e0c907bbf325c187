"""`GoogleCloudProvider` (Gemini on Vertex AI) in Express Mode: its key, its URLs, `'google-cloud:'` names, and the
requests `GoogleModel` sends through it to a real server on 127.0.0.1 (credentials are
`test_providers_google_cloud_credentials.py`'s)."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.google_cloud import GoogleCloudProvider

from ._provider_specs import GOOGLE
from .conftest import LocalServer, Reply

KEY = 'vertex-express-secret-1'
ENV = ('GOOGLE_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS')


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_the_key_comes_from_the_argument_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GEMINI_API_KEY', 'older-key')
    assert GoogleCloudProvider().request_headers() == {'x-goog-api-key': 'older-key'}
    monkeypatch.setenv('GOOGLE_API_KEY', KEY)
    provider = infer_provider('google-cloud')
    assert isinstance(provider, GoogleCloudProvider)
    assert (provider.name, provider.base_url) == ('google-cloud', 'https://aiplatform.googleapis.com')
    assert provider.request_headers() == {'x-goog-api-key': KEY}
    assert KEY not in repr(provider)
    assert infer_provider_class('google-cloud') is GoogleCloudProvider


def test_a_given_key_wins_over_credentials_named_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GOOGLE_APPLICATION_CREDENTIALS', '/path/to/absent-service-account.json')
    monkeypatch.setenv('GOOGLE_API_KEY', KEY)
    provider = GoogleCloudProvider(api_key='given')
    assert provider.request_headers() == {'x-goog-api-key': 'given'}
    assert (provider.project, provider.location, provider.credentials) == (None, None, None)
    with pytest.raises(UserError, match=r'`GoogleCloudProvider\(api_key=\.\.\.\)` with a Vertex AI Express Mode key'):
        GoogleProvider(api_key=KEY, vertexai=True)


def test_gemini_api_paths_become_vertex_resources() -> None:
    provider = GoogleCloudProvider(api_key=KEY, base_url='https://vertex.example/')
    base = 'https://vertex.example/v1beta1'
    assert provider.endpoint_url('/v1beta/models/gemini-2.5-flash:generateContent', 'gemini-2.5-flash') == (
        f'{base}/publishers/google/models/gemini-2.5-flash:generateContent'
    )
    assert provider.endpoint_url('/v1beta/models/acme/model-1:streamGenerateContent?alt=sse', 'acme/model-1') == (
        f'{base}/publishers/acme/models/model-1:streamGenerateContent?alt=sse'
    )
    full = 'projects/p/locations/us-central1/endpoints/123'
    assert provider.endpoint_url(f'/v1beta/models/{full}:generateContent', full) == f'{base}/{full}:generateContent'
    assert provider.endpoint_url('/v1beta/cachedContents', 'm') == 'https://vertex.example/v1beta/cachedContents'


def test_google_cloud_model_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GOOGLE_API_KEY', KEY)
    model = infer_model('google-cloud:gemini-2.5-flash')
    assert type(model) is GoogleModel
    assert (model.model_name, model.provider.name) == ('gemini-2.5-flash', 'google-cloud')
    assert model.profile == GoogleModel('gemini-2.5-flash', provider=GoogleProvider(api_key='k')).profile
    with pytest.warns(DeprecationWarning, match="use 'google-cloud:'"):
        older = infer_model('vertexai:gemini-2.5-pro')
    assert type(older.provider) is GoogleCloudProvider


@pytest.mark.anyio
async def test_gemini_through_google_cloud(local_server: LocalServer) -> None:
    local_server.script(
        Reply(200, GOOGLE.reply), Reply(200, chunks=[GOOGLE.stream], headers={'content-type': 'text/event-stream'})
    )
    provider = GoogleCloudProvider(api_key=KEY, base_url=local_server.url)
    async with Agent(GoogleModel('gemini-2.5-flash', provider=provider)) as agent:
        result = await agent.run('hi')
        async with agent.run_stream('hi again') as streamed:
            text = await streamed.get_output()
    assert (result.output, text) == ('hello', 'Hello')
    assert result.all_messages()[-1].provider_name == 'google-cloud'  # type: ignore[union-attr]
    plain, stream = local_server.received
    assert plain['path'] == '/v1/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent'
    assert stream['path'] == '/v1/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
    for request in (plain, stream):
        assert request['headers']['x-goog-api-key'] == KEY
    assert plain['body']['contents'] == [{'role': 'user', 'parts': [{'text': 'hi'}]}]
