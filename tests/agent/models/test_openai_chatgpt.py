"""`OpenAIChatGPTProvider` and `OpenAIChatGPTOAuthFlow` against a real HTTP server on 127.0.0.1 playing both OpenAI's
Responses API (`/v1/responses`, streamed) and the Sign in with ChatGPT token endpoint (`/api/accounts/oauth/token`,
form-encoded): the sign-in URL, the code exchange with its registration and ID token checks, the loopback redirect,
refresh before an expired token and after a 401, spent refresh tokens, the credential source, an agent run in the plan
usage dialect, and secrets kept out of reprs and errors.

Expiry is set by construction: access and ID tokens are JWTs whose `exp` is in the past or far ahead."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.native_tools import WebSearchTool
from edgewise.agent.profiles.openai import OpenAIJsonSchemaTransformer
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.openai_chatgpt import (
    CredentialsPersistenceError,
    CredentialsRefreshError,
    OpenAIChatGPTCredentials,
    OpenAIChatGPTCredentialSource,
    OpenAIChatGPTOAuthFlow,
    OpenAIChatGPTProvider,
)

from ._openai_oauth_fake import FakeOpenAI, serve_fake_openai, unsigned_jwt

pytestmark = pytest.mark.anyio

ISSUED_CLIENT = 'app_issued_42'
PLAN_SCOPE = 'openid profile email offline_access resource.invoke chatgpt.tokens.use.direct'
REFRESH_1 = 'rt-secret-one'
REFRESH_2 = 'rt-secret-two'
FAR = 4_000_000_000  # 2096


def jwt(**claims: Any) -> str:
    """An unsigned JWT carrying `claims`."""
    return unsigned_jwt(claims)


EXPIRED = jwt(exp=1)
FRESH = jwt(exp=FAR, n=1)
FRESH_2 = jwt(exp=FAR, n=2)


def id_token(nonce: str, /, **overrides: Any) -> str:
    """An ID token passing the flow's checks for `nonce` unless `overrides` break one."""
    claims = {'iss': 'https://auth.openai.com', 'aud': ISSUED_CLIENT, 'sub': 'user-1', 'exp': FAR, 'nonce': nonce}
    return jwt(**{**claims, **overrides})


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with serve_fake_openai(api_path='/v1', token_path='/api/accounts/oauth/token') as server:
        yield server


def credentials(
    access: str = FRESH, refresh: str = REFRESH_1, scope: str = PLAN_SCOPE, id_tok: str | None = 'id-1'
) -> OpenAIChatGPTCredentials:
    return OpenAIChatGPTCredentials(
        client_id=ISSUED_CLIENT, access_token=access, refresh_token=refresh, id_token=id_tok, scope=scope
    )


def provider_for(fake: FakeOpenAI, creds: OpenAIChatGPTCredentials) -> OpenAIChatGPTProvider:
    return OpenAIChatGPTProvider(creds, base_url=fake.base_url, token_url=fake.token_url)


async def ask(provider: OpenAIChatGPTProvider) -> str:
    model = OpenAIResponsesModel('gpt-5.4', provider=provider)
    response = await model.request([ModelRequest.user_text_prompt('hi')], None, ModelRequestParameters())
    [part] = response.parts
    assert isinstance(part, TextPart)
    return part.content


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


# The sign-in.


def test_the_authorization_url_of_a_first_sign_in_asks_for_a_registration() -> None:
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', host_id='urn:uuid:1234', state='st-1')
    url = flow.authorization_url(extra_params={'login_hint': 'a@b.c'})
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ('https', 'auth.openai.com', '/api/accounts/authorize')
    assert query(url) == {
        'response_type': 'code',
        'client_id': 'dynamic_agent_client',
        'redirect_uri': 'http://127.0.0.1:1455/auth/callback',
        'scope': PLAN_SCOPE,
        'resource': 'https://api.openai.com/v1',
        'state': 'st-1',
        'nonce': flow.nonce,
        'code_challenge': flow.code_challenge,
        'code_challenge_method': 'S256',
        'agent_name_hint': 'My App',
        'ext_agent_host_id': 'urn:uuid:1234',
        'login_hint': 'a@b.c',
    }
    assert flow.nonce != OpenAIChatGPTOAuthFlow(app_name='My App').nonce  # one per sign-in
    with pytest.raises(UserError, match='cannot replace nonce, resource'):
        flow.authorization_url(extra_params={'resource': 'x', 'nonce': 'y'})


def test_a_later_sign_in_reuses_the_registration_and_hints_the_account() -> None:
    hint = jwt(sub='user-1')
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', client_id=ISSUED_CLIENT, id_token_hint=hint)
    params = query(flow.authorization_url(scope='openid offline_access chatgpt.tokens.use.direct'))
    assert (params['client_id'], params['id_token_hint'], params['scope']) == (
        ISSUED_CLIENT,
        hint,
        'openid offline_access chatgpt.tokens.use.direct',
    )
    assert not {'agent_name_hint', 'ext_agent_host_id'} & params.keys()


@pytest.mark.parametrize(
    ('kwargs', 'message'),
    [
        ({'redirect_uri': 'http://localhost:1455/auth/callback'}, '`redirect_uri` must be'),
        ({'redirect_uri': 'http://127.0.0.1:1455/other'}, '`redirect_uri` must be'),
        ({'host_id': 'my-laptop'}, '`host_id` must be'),
        ({'id_token_hint': 'not-a-jwt'}, '`id_token_hint` is not'),
    ],
)
def test_a_flow_refuses_malformed_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        OpenAIChatGPTOAuthFlow(app_name='My App', **kwargs)


async def test_the_redirect_of_a_first_sign_in_is_caught_and_exchanged_with_the_issued_client(
    fake: FakeOpenAI,
) -> None:
    redirect = f'http://127.0.0.1:{free_port()}/auth/callback'
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', redirect_uri=redirect, state='st-9', token_url=fake.token_url)
    issued = id_token(flow.nonce)
    fake.token_replies.append(
        (200, {'access_token': FRESH, 'refresh_token': REFRESH_1, 'id_token': issued, 'scope': PLAN_SCOPE})
    )
    caught: list[OpenAIChatGPTCredentials] = []

    async def catch() -> None:
        caught.append(await flow.exchange_code_from_callback())

    async with anyio.create_task_group() as tg, httpx.AsyncClient() as browser:
        tg.start_soon(catch)
        await anyio.wait_all_tasks_blocked()  # the catcher listens
        stray = await browser.get(f'{redirect}?state=other&code=forged&client_id=evil')
        real = await browser.get(f'{redirect}?state=st-9&code=code-7&client_id={ISSUED_CLIENT}')
    assert [r.status_code for r in (stray, real)] == [200, 200]
    assert caught == [
        OpenAIChatGPTCredentials(
            client_id=ISSUED_CLIENT, access_token=FRESH, refresh_token=REFRESH_1, id_token=issued, scope=PLAN_SCOPE
        )
    ]
    assert caught[0].plan_usage_granted
    assert flow.client_id == ISSUED_CLIENT
    [sent] = fake.received
    assert sent['body'] == {
        'grant_type': 'authorization_code',
        'code': 'code-7',
        'code_verifier': flow.code_verifier,
        'redirect_uri': redirect,
        'client_id': ISSUED_CLIENT,
        'resource': 'https://api.openai.com/v1',
    }


async def test_a_registration_needs_the_issued_client_id_and_a_reuse_keeps_its_own(fake: FakeOpenAI) -> None:
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', token_url=fake.token_url)
    with pytest.raises(UserError, match='registration is incomplete'):
        await flow.exchange_code('code-1')
    with pytest.raises(UserError, match='registration is incomplete'):
        await flow.exchange_code('code-1', client_id='dynamic_agent_client')
    reuse = OpenAIChatGPTOAuthFlow(app_name='My App', client_id=ISSUED_CLIENT, token_url=fake.token_url)
    with pytest.raises(UserError, match="carries client 'app_other' instead of 'app_issued_42'"):
        await reuse.exchange_code('code-1', client_id='app_other')
    assert fake.received == []  # no code was spent
    fake.token_replies.append(
        (200, {'access_token': FRESH, 'refresh_token': REFRESH_1, 'id_token': id_token(reuse.nonce)})
    )
    creds = await reuse.exchange_code('code-2')  # the redirect of a reuse may leave the client id out
    assert (creds.client_id, creds.scope, creds.plan_usage_granted) == (ISSUED_CLIENT, '', False)


@pytest.mark.parametrize(
    ('claims', 'error', 'message'),
    [
        ({'nonce': 'replayed'}, CredentialsRefreshError, "does not carry this sign-in's `nonce`"),
        ({'aud': 'app_someone_else'}, CredentialsRefreshError, "not issued for client 'app_issued_42'"),
        ({'aud': ['x', 'y']}, CredentialsRefreshError, "not issued for client 'app_issued_42'"),
        ({'iss': 'https://evil.example'}, CredentialsRefreshError, "issued by 'https://evil.example'"),
        ({'exp': 1}, CredentialsRefreshError, 'ID token has expired'),
        ({'sub': ''}, CredentialsRefreshError, 'names no account'),
        ({'sub': 'user-2'}, UserError, 'another ChatGPT account than `id_token_hint`'),
    ],
)
async def test_an_id_token_failing_a_check_is_refused(
    fake: FakeOpenAI, claims: dict[str, Any], error: type[Exception], message: str
) -> None:
    flow = OpenAIChatGPTOAuthFlow(
        app_name='My App', client_id=ISSUED_CLIENT, id_token_hint=jwt(sub='user-1'), token_url=fake.token_url
    )
    fake.token_replies.append(
        (200, {'access_token': FRESH, 'refresh_token': REFRESH_1, 'id_token': id_token(flow.nonce, **claims)})
    )
    with pytest.raises(error, match=message) as caught:
        await flow.exchange_code('code-1')
    for shown in (str(caught.value), repr(caught.value)):
        assert FRESH not in shown
        assert REFRESH_1 not in shown


async def test_a_token_answer_without_an_id_token_or_tokens_is_refused(fake: FakeOpenAI) -> None:
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', client_id=ISSUED_CLIENT, token_url=fake.token_url)
    fake.token_replies.append((200, {'access_token': FRESH, 'refresh_token': REFRESH_1}))
    with pytest.raises(CredentialsRefreshError, match='carries no ID token'):
        await flow.exchange_code('code-1')
    fake.token_replies.append((200, {'access_token': FRESH, 'id_token': id_token(flow.nonce)}))
    with pytest.raises(CredentialsRefreshError, match='without an `access_token` and a `refresh_token`'):
        await flow.exchange_code('code-2')


async def test_a_refused_sign_in_is_a_user_error(fake: FakeOpenAI) -> None:
    redirect = f'http://127.0.0.1:{free_port()}/auth/callback'
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', redirect_uri=redirect, state='st-9', token_url=fake.token_url)
    errors: list[UserError] = []

    async def catch() -> None:
        with pytest.raises(UserError) as caught:
            await flow.exchange_code_from_callback()
        errors.append(caught.value)

    async with anyio.create_task_group() as tg, httpx.AsyncClient() as browser:
        tg.start_soon(catch)
        await anyio.wait_all_tasks_blocked()
        await browser.get(f'{redirect}?state=st-9&error=access_denied')
    assert [str(e) for e in errors] == ['Authorization failed: access_denied']
    assert fake.received == []


# The provider.


async def test_an_agent_runs_on_the_plan_in_its_dialect(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, credentials())
    model = OpenAIResponsesModel('gpt-5.4', provider=provider)
    agent = Agent(model, system_prompt='Be brief.', model_settings={'temperature': 0.3, 'max_tokens': 9})
    async with provider:
        result = await agent.run('hi')
    assert result.output == 'Hello'
    [sent] = fake.received
    assert sent['path'] == '/v1/responses'
    assert sent['headers']['authorization'] == f'Bearer {FRESH}'
    body = sent['body']
    assert (body['model'], body['stream'], body['store']) == ('gpt-5.4', True, False)
    assert body['input'][0] == {'role': 'developer', 'content': 'Be brief.'}
    assert not {'temperature', 'max_output_tokens'} & body.keys()
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert last.provider_name == 'openai-chatgpt'


async def test_an_expired_token_is_refreshed_before_the_request(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH_2, 'refresh_token': REFRESH_2, 'id_token': 'id-2'}))
    provider = provider_for(fake, credentials(access=EXPIRED))
    async with provider:
        assert await ask(provider) == 'Hello'
    assert fake.paths() == ['/api/accounts/oauth/token', '/v1/responses']
    token_request, api_request = fake.received
    assert token_request['body'] == {
        'grant_type': 'refresh_token',
        'refresh_token': REFRESH_1,
        'client_id': ISSUED_CLIENT,
        'resource': 'https://api.openai.com/v1',
    }
    assert 'authorization' not in token_request['headers']
    assert api_request['headers']['authorization'] == f'Bearer {FRESH_2}'
    # A refresh that does not restate the scope keeps the granted one.
    assert provider.credentials == credentials(access=FRESH_2, refresh=REFRESH_2, id_tok='id-2')


async def test_a_401_refreshes_once_and_sends_the_same_request_again(fake: FakeOpenAI) -> None:
    fake.revoked.add('opaque-1')  # no JWT: nothing tells it expired until the API says so
    fake.token_replies.append((200, {'access_token': 'opaque-2', 'refresh_token': REFRESH_2, 'scope': PLAN_SCOPE}))
    provider = provider_for(fake, credentials(access='opaque-1'))
    async with provider:
        assert await ask(provider) == 'Hello'
    assert fake.paths() == ['/v1/responses', '/api/accounts/oauth/token', '/v1/responses']
    first, _, replay = fake.received
    assert (first['headers']['authorization'], replay['headers']['authorization']) == (
        'Bearer opaque-1',
        'Bearer opaque-2',
    )
    assert replay['body'] == first['body']
    assert provider.credentials.id_token == 'id-1'  # kept when a refresh brings none


@pytest.mark.parametrize(
    'code',
    [
        'invalid_grant',
        'invalid_refresh_token',
        'token_expired',
        'refresh_token_expired',
        'refresh_token_invalidated',
        'refresh_token_reused',
    ],
)
async def test_a_spent_refresh_token_says_to_sign_in_again_without_secrets(fake: FakeOpenAI, code: str) -> None:
    fake.revoked.add('opaque-1')
    fake.token_replies.append((400, {'error': code}))
    provider = provider_for(fake, credentials(access='opaque-1'))
    async with provider:
        with pytest.raises(CredentialsRefreshError) as caught:
            await ask(provider)
    error = caught.value
    assert str(error) == (
        f'Token request to {fake.token_url} failed with status 400: {code}; the grant was rejected: sign in again'
    )
    assert error.model_name == 'openai-chatgpt'
    for shown in (str(error), repr(error)):
        assert REFRESH_1 not in shown
        assert 'opaque-1' not in shown


async def test_another_refresh_failure_does_not_say_to_sign_in_again(fake: FakeOpenAI) -> None:
    fake.revoked.add('opaque-1')
    fake.token_replies.append((503, {'error': 'temporarily_unavailable'}))
    provider = provider_for(fake, credentials(access='opaque-1'))
    async with provider:
        with pytest.raises(CredentialsRefreshError) as caught:
            await ask(provider)
    assert str(caught.value) == f'Token request to {fake.token_url} failed with status 503: temporarily_unavailable'


@dataclass
class MemorySource(OpenAIChatGPTCredentialSource):
    stored: OpenAIChatGPTCredentials
    loads: int = 0
    saved: list[OpenAIChatGPTCredentials] = field(default_factory=list)
    fail_save: bool = False

    async def load(self) -> OpenAIChatGPTCredentials:
        self.loads += 1
        return self.stored

    async def save(self, credentials: OpenAIChatGPTCredentials) -> None:
        if self.fail_save:
            raise OSError('disk full')
        self.saved.append(credentials)
        self.stored = credentials


async def test_refreshed_credentials_are_saved_through_the_credential_source(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH_2, 'refresh_token': REFRESH_2, 'scope': PLAN_SCOPE}))
    source = MemorySource(credentials(access=EXPIRED))
    provider = OpenAIChatGPTProvider(credential_source=source, base_url=fake.base_url, token_url=fake.token_url)
    async with provider:
        assert await ask(provider) == 'Hello'
        assert await ask(provider) == 'Hello'
    refreshed = credentials(access=FRESH_2, refresh=REFRESH_2)
    assert (source.loads, source.saved, provider.credentials) == (2, [refreshed], refreshed)
    assert fake.paths().count('/api/accounts/oauth/token') == 1


async def test_a_failed_save_is_a_persistence_error_and_the_refreshed_set_stays_in_use(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH_2, 'refresh_token': REFRESH_2}))
    source = MemorySource(credentials(access=EXPIRED), fail_save=True)
    provider = OpenAIChatGPTProvider(credential_source=source, base_url=fake.base_url, token_url=fake.token_url)
    async with provider:
        with pytest.raises(CredentialsPersistenceError) as caught:
            await ask(provider)
    assert isinstance(caught.value.__cause__, OSError)
    assert caught.value.model_name == 'openai-chatgpt'
    assert provider.credentials.access_token == FRESH_2


async def test_credentials_without_plan_usage_are_refused_before_any_request(fake: FakeOpenAI) -> None:
    identity_only = credentials(scope='openid profile email offline_access')
    with pytest.raises(UserError, match=r"do not grant ChatGPT plan usage .*client_id='app_issued_42'"):
        provider_for(fake, identity_only)
    provider = OpenAIChatGPTProvider(
        credential_source=MemorySource(identity_only), base_url=fake.base_url, token_url=fake.token_url
    )
    async with provider:
        with pytest.raises(UserError, match='do not grant ChatGPT plan usage'):
            await ask(provider)
    # A refresh narrowing the grant is refused too, before its token is sent.
    fake.token_replies.append((200, {'access_token': FRESH_2, 'refresh_token': REFRESH_2, 'scope': 'openid'}))
    provider = provider_for(fake, credentials(access=EXPIRED))
    async with provider:
        with pytest.raises(UserError, match='do not grant ChatGPT plan usage'):
            await ask(provider)
    assert fake.paths() == ['/api/accounts/oauth/token']


def test_secrets_stay_out_of_reprs() -> None:
    creds = credentials()
    assert repr(creds) == (
        "OpenAIChatGPTCredentials(client_id='app_issued_42', scope='openid profile email offline_access "
        "resource.invoke chatgpt.tokens.use.direct')"
    )
    provider = OpenAIChatGPTProvider(creds)
    assert repr(provider) == 'OpenAIChatGPTProvider(name=openai-chatgpt, base_url=https://api.openai.com/v1)'
    flow = OpenAIChatGPTOAuthFlow(app_name='My App', id_token_hint=jwt(sub='user-1'))
    for secret in (flow.code_verifier, flow.nonce, flow.id_token_hint or ''):
        assert secret not in repr(flow)


def test_the_name_profile_and_options() -> None:
    assert infer_provider_class('openai-chatgpt') is OpenAIChatGPTProvider
    for make in (lambda: infer_provider('openai-chatgpt'), lambda: infer_model('openai-chatgpt:gpt-5.4')):
        with pytest.raises(UserError, match='needs `credentials` or a `credential_source`'):
            make()
    with pytest.raises(UserError, match='not both'):
        OpenAIChatGPTProvider(credentials(), credential_source=MemorySource(credentials()))
    with pytest.raises(UserError, match='already has an auth'):
        OpenAIChatGPTProvider(credentials(), http_client=httpx.AsyncClient(auth=('u', 'p')))
    provider = OpenAIChatGPTProvider(credentials())
    assert (provider.name, provider.canonical_system) == ('openai-chatgpt', 'openai-chatgpt')
    profile: dict[str, Any] = dict(OpenAIChatGPTProvider.model_profile('gpt-5.4') or {})
    assert {k: profile[k] for k in (
        'openai_unsupported_model_settings', 'openai_system_prompt_role', 'openai_responses_requires_streaming',
        'openai_responses_requires_store_false', 'openai_supports_batch_api', 'supports_cache',
        'supported_native_tools', 'tool_deferral_mode',
    )} == {
        'openai_unsupported_model_settings': ('max_tokens', 'service_tier', 'temperature', 'top_p'),
        'openai_system_prompt_role': 'developer',
        'openai_responses_requires_streaming': True,
        'openai_responses_requires_store_false': True,
        'openai_supports_batch_api': False,
        'supports_cache': False,
        'supported_native_tools': frozenset({WebSearchTool}),
        'tool_deferral_mode': None,
    }  # fmt: skip
    assert profile['json_schema_transformer'] is OpenAIJsonSchemaTransformer
