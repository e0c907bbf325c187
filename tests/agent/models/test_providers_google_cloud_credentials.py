"""`GoogleCloudProvider` with Google Cloud credentials: a service account's JWT grant sent to a token endpoint on
127.0.0.1, the bearer token on requests to a fake Vertex AI endpoint on 127.0.0.1, refreshes (on expiry, after a
401, once for concurrent requests), the project and location in the URL, and the errors."""

from __future__ import annotations

import base64
import json
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import anyio
import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from google.oauth2 import service_account

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelAPIError, UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.providers import google_cloud
from edgewise.agent.providers.google_cloud import GoogleCloudProvider

from ._provider_specs import GOOGLE
from .conftest import LocalServer, Reply, serve_http

ENV = (
    'GOOGLE_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'GOOGLE_CLOUD_PROJECT',
    'GCLOUD_PROJECT',
    'GOOGLE_CLOUD_LOCATION',
)
EMAIL = 'agent@edgewise-test.iam.gserviceaccount.com'
SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
MODEL_PATH = '/v1/v1beta1/projects/{project}/locations/{location}/publishers/google/models/gemini-2.5-flash'


@dataclass
class TokenServer:
    """A token endpoint on 127.0.0.1: answers each grant with the next scripted (status, body), recording the
    forms."""

    url: str = ''
    answers: deque[tuple[int, dict[str, Any]]] = field(default_factory=deque)
    grants: list[dict[str, str]] = field(default_factory=list)

    def issue(self, *tokens: tuple[str, int]) -> None:
        self.answers.extend((200, {'access_token': t, 'expires_in': s, 'token_type': 'Bearer'}) for t, s in tokens)


@pytest.fixture
def token_server() -> Iterator[TokenServer]:
    server = TokenServer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('content-length') or 0))
            server.grants.append(dict(parse_qsl(raw.decode())))
            status, body = server.answers.popleft()
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serve_http(Handler) as port:
        server.url = f'http://127.0.0.1:{port}/token'
        yield server


@pytest.fixture(scope='module')
def private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def account(private_key: rsa.RSAPrivateKey, token_server: TokenServer) -> dict[str, str]:
    """A service account key file's contents, its token endpoint the local one."""
    pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        'type': 'service_account',
        'project_id': 'file-project',
        'private_key_id': 'key-1',
        'private_key': pem.decode(),
        'client_email': EMAIL,
        'client_id': '1234',
        'token_uri': token_server.url,
    }


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def key_file(account: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The service account's key file, named by `GOOGLE_APPLICATION_CREDENTIALS`."""
    path = tmp_path / 'service-account.json'
    path.write_text(json.dumps(account))
    monkeypatch.setenv('GOOGLE_APPLICATION_CREDENTIALS', str(path))
    return path


def _segment(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + '=' * (-len(segment) % 4))


def _verified_claims(assertion: str, private_key: rsa.RSAPrivateKey) -> dict[str, Any]:
    """The claims of a JWT, once its RS256 signature is checked against the account's public key."""
    header, payload, signature = assertion.split('.')
    assert json.loads(_segment(header))['alg'] == 'RS256'
    private_key.public_key().verify(
        _segment(signature), f'{header}.{payload}'.encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    claims: dict[str, Any] = json.loads(_segment(payload))
    return claims


def _bearer(request: dict[str, Any]) -> str:
    return str(request['headers']['authorization'])


@pytest.mark.anyio
async def test_a_service_account_file_signs_a_jwt_grant_and_requests_carry_its_token(
    key_file: Path,
    token_server: TokenServer,
    local_server: LocalServer,
    private_key: rsa.RSAPrivateKey,
) -> None:
    token_server.issue(('vertex-token-1', 3600))
    local_server.script(
        Reply(200, GOOGLE.reply), Reply(200, chunks=[GOOGLE.stream], headers={'content-type': 'text/event-stream'})
    )
    # A key given with a location is ignored (as in pydantic-ai): the location asks for credentials.
    provider = GoogleCloudProvider(base_url=local_server.url, location='europe-west4', api_key='ignored-key')
    assert (provider.project, provider.location) == ('file-project', 'europe-west4')
    async with Agent(GoogleModel('gemini-2.5-flash', provider=provider)) as agent:
        result = await agent.run('hi')
        async with agent.run_stream('hi again') as streamed:
            text = await streamed.get_output()
    assert (result.output, text) == ('hello', 'Hello')

    (grant,) = token_server.grants
    assert grant['grant_type'] == 'urn:ietf:params:oauth:grant-type:jwt-bearer'
    claims = _verified_claims(grant['assertion'], private_key)
    # The grant went to the file's `token_uri`; google-auth signs it for Google's token audience whatever the URI.
    assert (claims['iss'], claims['aud'], claims['scope']) == (EMAIL, 'https://oauth2.googleapis.com/token', SCOPE)

    plain, stream = local_server.received
    base = MODEL_PATH.format(project='file-project', location='europe-west4')
    assert plain['path'] == f'{base}:generateContent'
    assert stream['path'] == f'{base}:streamGenerateContent?alt=sse'
    for request in (plain, stream):
        assert _bearer(request) == 'Bearer vertex-token-1'
        assert 'x-goog-api-key' not in request['headers']
    assert 'vertex-token-1' not in repr(provider)
    assert 'PRIVATE KEY' not in repr(provider)


@pytest.mark.anyio
async def test_an_expired_token_is_refreshed_before_the_next_request(
    key_file: Path, token_server: TokenServer, local_server: LocalServer
) -> None:
    # google-auth counts a token as expired minutes before its end: one lasting a minute is stale at once.
    token_server.issue(('short-lived', 60), ('fresh', 3600))
    local_server.script(Reply(200, GOOGLE.reply), Reply(200, GOOGLE.reply), Reply(200, GOOGLE.reply))
    model = GoogleModel('gemini-2.5-flash', provider=GoogleCloudProvider(base_url=local_server.url))
    async with Agent(model) as agent:
        for _ in range(3):
            await agent.run('hi')
    assert [_bearer(r) for r in local_server.received] == ['Bearer short-lived', 'Bearer fresh', 'Bearer fresh']
    assert len(token_server.grants) == 2


@pytest.mark.anyio
async def test_a_401_refreshes_the_token_once_and_sends_the_request_again(
    key_file: Path, token_server: TokenServer, local_server: LocalServer
) -> None:
    token_server.issue(('revoked', 3600), ('renewed', 3600))
    unauthorized = {'error': {'code': 401, 'message': 'Request had invalid authentication credentials.'}}
    local_server.script(Reply(401, unauthorized), Reply(200, GOOGLE.reply))
    model = GoogleModel('gemini-2.5-flash', provider=GoogleCloudProvider(base_url=local_server.url))
    async with Agent(model) as agent:
        result = await agent.run('hi')
    assert result.output == 'hello'
    assert [_bearer(r) for r in local_server.received] == ['Bearer revoked', 'Bearer renewed']
    first, replay = local_server.received
    assert first['body'] == replay['body']
    assert len(token_server.grants) == 2


@pytest.mark.anyio
async def test_concurrent_requests_share_one_refresh(
    key_file: Path, token_server: TokenServer, local_server: LocalServer
) -> None:
    token_server.issue(('shared', 3600))
    local_server.script(*(Reply(200, GOOGLE.reply) for _ in range(4)))
    agent = Agent(GoogleModel('gemini-2.5-flash', provider=GoogleCloudProvider(base_url=local_server.url)))
    async with agent, anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(agent.run, 'hi')
    assert len(token_server.grants) == 1
    assert {_bearer(r) for r in local_server.received} == {'Bearer shared'}


@pytest.mark.anyio
async def test_explicit_credentials_are_scoped_and_used(
    account: dict[str, str], token_server: TokenServer, local_server: LocalServer, private_key: rsa.RSAPrivateKey
) -> None:
    credentials = service_account.Credentials.from_service_account_info(account)  # type: ignore[no-untyped-call]
    token_server.issue(('explicit-token', 3600))
    local_server.script(Reply(200, GOOGLE.reply))
    provider = GoogleCloudProvider(credentials=credentials, project='given-project', base_url=local_server.url)
    assert (provider.project, provider.location) == ('given-project', 'us-central1')
    async with Agent(GoogleModel('gemini-2.5-flash', provider=provider)) as agent:
        await agent.run('hi')
    (request,) = local_server.received
    assert request['path'] == MODEL_PATH.format(project='given-project', location='us-central1') + ':generateContent'
    assert _bearer(request) == 'Bearer explicit-token'
    assert _verified_claims(token_server.grants[0]['assertion'], private_key)['scope'] == SCOPE
    assert GoogleCloudProvider(credentials=credentials).project == 'file-project'  # the account's own


@pytest.mark.anyio
async def test_a_given_http_client_gets_the_credentials(
    key_file: Path, token_server: TokenServer, local_server: LocalServer
) -> None:
    token_server.issue(('client-token', 3600))
    local_server.script(Reply(200, GOOGLE.reply))
    async with httpx.AsyncClient() as client:
        provider = GoogleCloudProvider(http_client=client, base_url=local_server.url)
        assert provider.client is client
        await Agent(GoogleModel('gemini-2.5-flash', provider=provider)).run('hi')
        with pytest.raises(UserError, match='already has an auth of its own'):
            GoogleCloudProvider(http_client=client)
    assert [_bearer(r) for r in local_server.received] == ['Bearer client-token']


@pytest.mark.anyio
async def test_a_refused_grant_is_an_error_quoting_neither_key_nor_token(
    key_file: Path, token_server: TokenServer, local_server: LocalServer, account: dict[str, str]
) -> None:
    token_server.answers.append((400, {'error': 'invalid_grant', 'error_description': 'Invalid JWT Signature.'}))
    model = GoogleModel('gemini-2.5-flash', provider=GoogleCloudProvider(base_url=local_server.url))
    with pytest.raises(ModelAPIError, match='Refreshing the Google Cloud access token failed: invalid_grant') as e:
        await Agent(model).run('hi')
    assert account['private_key'].splitlines()[1] not in str(e.value)
    assert (local_server.received, len(token_server.grants)) == ([], 1)


def test_project_and_location_defaults(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = GoogleCloudProvider()
    assert (provider.project, provider.location) == ('file-project', 'us-central1')
    assert provider.base_url == 'https://us-central1-aiplatform.googleapis.com'
    assert provider.endpoint_url('/v1beta/models/gemini-2.5-flash:generateContent', 'gemini-2.5-flash') == (
        'https://us-central1-aiplatform.googleapis.com/v1beta1/projects/file-project/locations/us-central1/'
        'publishers/google/models/gemini-2.5-flash:generateContent'
    )
    full = 'projects/other/locations/us-east5/endpoints/7'
    assert provider.endpoint_url(f'/v1beta/models/{full}:generateContent', full).endswith(
        f'/v1beta1/{full}:generateContent'
    )
    assert GoogleCloudProvider(location='global').base_url == 'https://aiplatform.googleapis.com'
    assert GoogleCloudProvider(location='eu').base_url == 'https://aiplatform.eu.rep.googleapis.com'
    monkeypatch.setenv('GOOGLE_CLOUD_PROJECT', 'env-project')
    monkeypatch.setenv('GOOGLE_CLOUD_LOCATION', 'asia-northeast1')
    provider = GoogleCloudProvider()
    assert (provider.project, provider.location) == ('env-project', 'asia-northeast1')
    assert (GoogleCloudProvider(project='arg').project, GoogleCloudProvider(location='global').location) == (
        'arg',
        'global',
    )


def test_credentials_from_the_environment_win_over_a_key_from_it(
    key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('GOOGLE_API_KEY', 'env-key')
    model = infer_model('google-cloud:gemini-2.5-flash')
    provider = model.provider
    assert isinstance(provider, GoogleCloudProvider)
    assert (provider.project, provider.base_url) == ('file-project', 'https://us-central1-aiplatform.googleapis.com')
    assert provider.request_headers() == {}  # no token yet, and never the key
    assert GoogleCloudProvider(api_key='given').request_headers() == {'x-goog-api-key': 'given'}


def test_no_project_says_how_to_set_one(
    account: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / 'no-project.json'
    path.write_text(json.dumps({k: v for k, v in account.items() if k != 'project_id'}))
    monkeypatch.setenv('GOOGLE_APPLICATION_CREDENTIALS', str(path))
    with pytest.raises(UserError, match=r'No Google Cloud project .*project=\.\.\..*`GOOGLE_CLOUD_PROJECT`'):
        GoogleCloudProvider()


def test_a_missing_key_file_and_wrong_credentials_are_user_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('GOOGLE_APPLICATION_CREDENTIALS', str(tmp_path / 'absent.json'))
    with pytest.raises(UserError, match=r'No Google Cloud credentials found .*absent\.json'):
        GoogleCloudProvider()
    with pytest.raises(UserError, match=r'`credentials` must be `google\.auth\.credentials\.Credentials`'):
        GoogleCloudProvider(credentials=object(), project='p')


def test_without_google_auth_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'google.auth', None)
    monkeypatch.delitem(sys.modules, 'edgewise.agent.providers._google_auth', raising=False)
    monkeypatch.delattr('edgewise.agent.providers._google_auth', raising=False)
    with pytest.raises(
        ImportError,
        match=r"need `google-auth`: install the `google-cloud` extra \(`pip install 'edgewise-agent\[google-cloud\]'`",
    ):
        GoogleCloudProvider(project='p')
    with pytest.raises(UserError, match=r'Set the `GOOGLE_API_KEY` .*edgewise-agent\[google-cloud\]'):
        GoogleCloudProvider()
    assert GoogleCloudProvider(api_key='still-works').request_headers() == {'x-goog-api-key': 'still-works'}
    assert google_cloud.GoogleCloudProvider is GoogleCloudProvider
