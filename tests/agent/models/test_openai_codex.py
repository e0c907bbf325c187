"""`OpenAICodexModel` and `OpenAICodexProvider` against a real HTTP server on 127.0.0.1 playing both the Codex
backend (`/backend-api/codex/responses`, streamed) and OpenAI's token endpoint (`/oauth/token`, form-encoded):
the credentials' headers, the Codex dialect, refresh before an expired token and after a 401 (single-flight), the
credential source, the Codex CLI's `auth.json`, the sign-in flow, and secrets kept out of reprs and errors.

Expiry is set by construction: the access tokens are JWTs whose `exp` is in the past or far ahead."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, TextPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.openai_codex import OpenAICodexModel
from edgewise.agent.providers import infer_provider_class
from edgewise.agent.providers.openai_codex import (
    CredentialsPersistenceError,
    CredentialsRefreshError,
    OpenAICodexCredentials,
    OpenAICodexCredentialSource,
    OpenAICodexOAuthFlow,
    OpenAICodexProvider,
)

from ._openai_oauth_fake import FakeOpenAI, serve_fake_openai, unsigned_jwt

pytestmark = pytest.mark.anyio

CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann'
REFRESH_1 = 'rt-secret-one'
REFRESH_2 = 'rt-secret-two'


def jwt(exp: int | None, **claims: Any) -> str:
    """An unsigned JWT with `exp` (and `claims`) in its payload."""
    return unsigned_jwt(dict(claims) if exp is None else {'exp': exp, **claims})


EXPIRED = jwt(1)  # 1970
FRESH = jwt(4_000_000_000)  # 2096
FRESH_2 = jwt(4_000_000_001)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with serve_fake_openai(api_path='/backend-api/codex', token_path='/oauth/token') as server:
        yield server


def credentials(access: str = FRESH, refresh: str = REFRESH_1) -> OpenAICodexCredentials:
    return OpenAICodexCredentials(access_token=access, refresh_token=refresh, account_id='acct-1')


def provider_for(fake: FakeOpenAI, creds: OpenAICodexCredentials) -> OpenAICodexProvider:
    return OpenAICodexProvider(creds, base_url=fake.base_url, token_url=fake.token_url)


async def ask(model: OpenAICodexModel, conversation_id: str | None = None) -> str:
    request = ModelRequest.user_text_prompt('hi')
    request.conversation_id = conversation_id
    response = await model.request([request], None, ModelRequestParameters())
    [part] = response.parts
    assert isinstance(part, TextPart)
    return part.content


async def test_a_request_carries_the_credentials_the_session_and_the_codex_dialect(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, credentials())
    model = OpenAICodexModel('gpt-5.4', provider=provider)
    async with provider:
        request = ModelRequest.user_text_prompt('hi')
        request.conversation_id = 'conv-7'
        response = await model.request(
            [request], {'temperature': 0.3, 'max_tokens': 9, 'extra_headers': {'Thread-Id': 'mine'}},
            ModelRequestParameters(),
        )  # fmt: skip
    assert response.parts == [TextPart('Hello', id='msg_1', provider_name='openai-codex')]
    assert (response.provider_name, response.model_name) == ('openai-codex', 'gpt-5.4')
    [sent] = fake.received
    assert sent['path'] == '/backend-api/codex/responses'
    headers = sent['headers']
    assert {k: headers.get(k) for k in (
        'authorization', 'chatgpt-account-id', 'originator', 'session-id', 'thread-id', 'x-client-request-id', 'accept'
    )} == {
        'authorization': f'Bearer {FRESH}',
        'chatgpt-account-id': 'acct-1',
        'originator': 'pydantic-ai',
        'session-id': 'conv-7',
        'thread-id': 'mine',
        'x-client-request-id': 'conv-7',
        'accept': 'text/event-stream',
    }  # fmt: skip
    body = sent['body']
    assert (body['model'], body['stream'], body['store'], body['prompt_cache_key']) == (
        'gpt-5.4',
        True,
        False,
        'conv-7',
    )
    assert not {'temperature', 'max_output_tokens', 'top_p'} & body.keys()


async def test_an_expired_token_is_refreshed_before_the_request(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH, 'refresh_token': REFRESH_2}))
    provider = provider_for(fake, credentials(access=EXPIRED))
    async with provider:
        assert await ask(OpenAICodexModel('gpt-5.4', provider=provider)) == 'Hello'
    assert fake.paths() == ['/oauth/token', '/backend-api/codex/responses']
    token_request, api_request = fake.received
    assert token_request['body'] == {'grant_type': 'refresh_token', 'refresh_token': REFRESH_1, 'client_id': CLIENT_ID}
    assert 'authorization' not in token_request['headers']
    assert api_request['headers']['authorization'] == f'Bearer {FRESH}'
    assert provider.credentials == OpenAICodexCredentials(
        access_token=FRESH, refresh_token=REFRESH_2, account_id='acct-1'
    )


async def test_a_401_refreshes_once_and_sends_the_same_request_again(fake: FakeOpenAI) -> None:
    fake.revoked.add('opaque-1')  # no JWT: nothing tells it expired until the backend says so
    fake.token_replies.append(
        (200, {'access_token': 'opaque-2', 'refresh_token': REFRESH_2, 'id_token': jwt(None, chatgpt_account_id='a2')})
    )
    provider = provider_for(fake, credentials(access='opaque-1'))
    async with provider:
        assert await ask(OpenAICodexModel('gpt-5.4', provider=provider)) == 'Hello'
    assert fake.paths() == ['/backend-api/codex/responses', '/oauth/token', '/backend-api/codex/responses']
    first, _, replay = fake.received
    assert (first['headers']['authorization'], replay['headers']['authorization']) == (
        'Bearer opaque-1',
        'Bearer opaque-2',
    )
    assert replay['headers']['chatgpt-account-id'] == 'a2'
    assert replay['body'] == first['body']


async def test_concurrent_401s_share_one_refresh(fake: FakeOpenAI) -> None:
    fake.revoked.add('opaque-1')
    fake.token_replies.append((200, {'access_token': 'opaque-2', 'refresh_token': REFRESH_2}))
    provider = provider_for(fake, credentials(access='opaque-1'))
    model = OpenAICodexModel('gpt-5.4', provider=provider)
    answers: list[str] = []

    async def one() -> None:
        answers.append(await ask(model))

    async with provider, anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(one)
    assert answers == ['Hello'] * 4
    assert fake.paths().count('/oauth/token') == 1
    assert provider.credentials.access_token == 'opaque-2'


async def test_a_rejected_refresh_is_a_credentials_refresh_error_without_secrets(fake: FakeOpenAI) -> None:
    fake.revoked.add('opaque-1')
    fake.token_replies.append((400, {'error': 'invalid_grant', 'error_description': 'Refresh token already used.'}))
    provider = provider_for(fake, credentials(access='opaque-1'))
    async with provider:
        with pytest.raises(CredentialsRefreshError) as caught:
            await ask(OpenAICodexModel('gpt-5.4', provider=provider))
    error = caught.value
    assert str(error) == (
        f'Token request to {fake.token_url} failed with status 400: Refresh token already used.; the grant was '
        'rejected: sign in again'
    )
    assert error.model_name == 'openai-codex'
    for shown in (str(error), repr(error)):
        assert REFRESH_1 not in shown
        assert 'opaque-1' not in shown


@dataclass
class MemorySource(OpenAICodexCredentialSource):
    stored: OpenAICodexCredentials
    loads: int = 0
    saved: list[OpenAICodexCredentials] = field(default_factory=list)
    fail_save: bool = False
    later: list[OpenAICodexCredentials] = field(default_factory=list)

    async def load(self) -> OpenAICodexCredentials:
        self.loads += 1
        if self.loads > 1 and self.later:  # what another process sharing the store saved since the first load
            self.stored = self.later.pop(0)
        return self.stored

    async def save(self, credentials: OpenAICodexCredentials) -> None:
        if self.fail_save:
            raise OSError('disk full')
        self.saved.append(credentials)
        self.stored = credentials


async def test_a_credential_source_is_loaded_on_first_use_and_saved_after_a_refresh(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH_2, 'refresh_token': REFRESH_2, 'account_id': 'acct-9'}))
    source = MemorySource(credentials(access=EXPIRED))
    provider = OpenAICodexProvider(credential_source=source, base_url=fake.base_url, token_url=fake.token_url)
    with pytest.raises(UserError, match='not known yet'):
        provider.credentials  # noqa: B018
    async with provider:
        model = OpenAICodexModel('gpt-5.4', provider=provider)
        assert await ask(model) == 'Hello'
        assert await ask(model) == 'Hello'
    refreshed = OpenAICodexCredentials(access_token=FRESH_2, refresh_token=REFRESH_2, account_id='acct-9')
    assert (source.loads, source.saved, provider.credentials) == (2, [refreshed], refreshed)
    assert fake.paths().count('/oauth/token') == 1


async def test_a_newer_stored_set_is_adopted_instead_of_spending_the_refresh_token(fake: FakeOpenAI) -> None:
    fake.revoked.add('opaque-1')
    newer = credentials(access=FRESH_2, refresh=REFRESH_2)
    source = MemorySource(credentials(access='opaque-1'), later=[newer])  # another process refreshes in between
    provider = OpenAICodexProvider(credential_source=source, base_url=fake.base_url, token_url=fake.token_url)
    async with provider:
        assert await ask(OpenAICodexModel('gpt-5.4', provider=provider)) == 'Hello'
    assert fake.paths() == ['/backend-api/codex/responses', '/backend-api/codex/responses']
    assert fake.received[1]['headers']['authorization'] == f'Bearer {FRESH_2}'
    assert (source.loads, source.saved, provider.credentials) == (2, [], newer)


async def test_a_failed_save_is_a_persistence_error_and_the_refreshed_set_stays_in_use(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH_2, 'refresh_token': REFRESH_2}))
    source = MemorySource(credentials(access=EXPIRED), fail_save=True)
    provider = OpenAICodexProvider(credential_source=source, base_url=fake.base_url, token_url=fake.token_url)
    async with provider:
        with pytest.raises(CredentialsPersistenceError) as caught:
            await ask(OpenAICodexModel('gpt-5.4', provider=provider))
    assert isinstance(caught.value.__cause__, OSError)
    assert provider.credentials.access_token == FRESH_2


def test_without_credentials_the_codex_cli_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('CODEX_HOME', str(tmp_path))
    with pytest.raises(UserError) as caught:
        OpenAICodexProvider()
    assert str(caught.value) == (
        f'No Codex CLI credentials at `{tmp_path / "auth.json"}`: run `codex login`, or pass `credentials=` or '
        '`credential_source=` (`OpenAICodexOAuthFlow` signs in).'
    )
    (tmp_path / 'auth.json').write_text(json.dumps({'tokens': {'access_token': 'a', 'refresh_token': ''}}))
    with pytest.raises(UserError) as caught:
        OpenAICodexProvider()
    assert str(caught.value) == (
        'Malformed Codex CLI credentials: `tokens` lacks `refresh_token`, `account_id`. Run `codex login` to write '
        'them again.'
    )
    tokens = {'access_token': FRESH, 'refresh_token': REFRESH_1, 'account_id': 'acct-1', 'id_token': 'x'}
    (tmp_path / 'auth.json').write_text(json.dumps({'tokens': tokens}))
    assert OpenAICodexProvider().credentials == credentials()
    model = infer_model('openai-codex:gpt-5.4')
    assert isinstance(model, OpenAICodexModel)
    assert (model.system, model.base_url) == ('openai-codex', 'https://chatgpt.com/backend-api/codex')
    assert infer_provider_class('openai-codex') is OpenAICodexProvider


def test_secrets_stay_out_of_reprs() -> None:
    creds = credentials()
    provider = OpenAICodexProvider(creds)
    assert repr(creds) == "OpenAICodexCredentials(account_id='acct-1')"
    assert repr(provider) == 'OpenAICodexProvider(name=openai-codex, base_url=https://chatgpt.com/backend-api/codex)'
    flow = OpenAICodexOAuthFlow()
    assert flow.code_verifier not in repr(flow)


def test_the_provider_profile_and_options() -> None:
    profile = OpenAICodexProvider.model_profile('gpt-5.4') or {}
    assert profile['openai_unsupported_model_settings'] == ('max_tokens', 'temperature', 'top_p')  # type: ignore[typeddict-item]
    assert (profile['supports_cache'], profile['openai_supports_batch_api']) == (False, False)  # type: ignore[typeddict-item]
    # the dialect has a public profile function of its own, as in pydantic-ai 2.68; the provider lays it over
    # `OpenAIProvider`'s profile, and the family profile under it says nothing of the dialect
    from edgewise.agent.profiles.openai import openai_model_profile
    from edgewise.agent.profiles.openai_codex import openai_codex_model_profile

    dialect = openai_codex_model_profile('gpt-5.4')
    assert {key: profile[key] for key in dialect} == dialect  # type: ignore[literal-required]
    assert dialect['openai_responses_requires_streaming'] is True  # type: ignore[typeddict-item]
    assert dialect['openai_responses_requires_store_false'] is True  # type: ignore[typeddict-item]
    assert 'openai_responses_requires_streaming' not in openai_model_profile('gpt-5.4')
    assert OpenAICodexProvider(credentials()).canonical_system == 'openai'
    assert OpenAICodexModel('gpt-5.4', provider=OpenAICodexProvider(credentials())).batch_max_requests is None
    with pytest.raises(UserError, match='not both'):
        OpenAICodexProvider(credentials(), credential_source=MemorySource(credentials()))
    with pytest.raises(UserError, match='already has an auth'):
        OpenAICodexProvider(credentials(), http_client=httpx.AsyncClient(auth=('u', 'p')))


async def test_credentials_go_only_to_the_base_url(fake: FakeOpenAI) -> None:
    provider = provider_for(fake, credentials())
    async with provider:
        await provider.client.post(f'{fake.url}/backend-api/other', json={})  # same host, outside the base URL
    fake.token_replies.append((200, {}))
    async with httpx.AsyncClient() as plain:
        await plain.post(fake.token_url, data={})  # keeps the scripted queue honest
    assert [('authorization' in r['headers']) for r in fake.received] == [False, False]


def test_the_authorization_url() -> None:
    flow = OpenAICodexOAuthFlow(state='st-1')
    url = urlsplit(flow.authorization_url(extra_params={'prompt': 'login'}))
    assert (url.scheme, url.netloc, url.path) == ('https', 'auth.openai.com', '/oauth/authorize')
    assert {k: v[0] for k, v in parse_qs(url.query).items()} == {
        'response_type': 'code',
        'client_id': CLIENT_ID,
        'redirect_uri': 'http://localhost:1455/auth/callback',
        'scope': 'openid profile email offline_access',
        'state': 'st-1',
        'code_challenge': flow.code_challenge,
        'code_challenge_method': 'S256',
        'id_token_add_organizations': 'true',
        'codex_cli_simplified_flow': 'true',
        'prompt': 'login',
    }
    with pytest.raises(UserError, match='cannot replace client_id, state'):
        flow.authorization_url(extra_params={'state': 'x', 'client_id': 'y'})


async def test_exchanging_the_code(fake: FakeOpenAI) -> None:
    id_token = jwt(None, **{'https://api.openai.com/auth': {'chatgpt_account_id': 'acct-5'}})
    fake.token_replies.append((200, {'access_token': FRESH, 'refresh_token': REFRESH_1, 'id_token': id_token}))
    flow = OpenAICodexOAuthFlow(token_url=fake.token_url)
    creds = await flow.exchange_code('code-1')
    assert creds == OpenAICodexCredentials(access_token=FRESH, refresh_token=REFRESH_1, account_id='acct-5')
    assert fake.received[0]['body'] == {
        'grant_type': 'authorization_code',
        'code': 'code-1',
        'code_verifier': flow.code_verifier,
        'redirect_uri': 'http://localhost:1455/auth/callback',
        'client_id': CLIENT_ID,
    }
    fake.token_replies.append((200, {'access_token': FRESH, 'refresh_token': REFRESH_1}))
    with pytest.raises(CredentialsRefreshError, match='names no ChatGPT account id'):
        await flow.exchange_code('code-2')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


async def test_the_redirect_is_caught_on_this_machine_and_its_code_exchanged(fake: FakeOpenAI) -> None:
    fake.token_replies.append((200, {'access_token': FRESH, 'refresh_token': REFRESH_1, 'account_id': 'acct-3'}))
    redirect = f'http://127.0.0.1:{free_port()}/auth/callback'
    flow = OpenAICodexOAuthFlow(redirect_uri=redirect, state='st-9', token_url=fake.token_url)
    caught: list[OpenAICodexCredentials] = []

    async def catch() -> None:
        caught.append(await flow.exchange_code_from_callback())

    async with anyio.create_task_group() as tg, httpx.AsyncClient() as browser:
        tg.start_soon(catch)
        await anyio.wait_all_tasks_blocked()  # the catcher listens
        stray = await browser.get(f'{redirect}?state=other&code=forged')
        favicon = await browser.get(redirect.replace('/auth/callback', '/favicon.ico'))
        real = await browser.get(f'{redirect}?state=st-9&code=code-7')
    assert [r.status_code for r in (stray, favicon, real)] == [200, 200, 200]
    assert real.text == 'You can close this tab.'
    assert caught == [OpenAICodexCredentials(access_token=FRESH, refresh_token=REFRESH_1, account_id='acct-3')]
    assert [r['body']['code'] for r in fake.received] == ['code-7']
    assert fake.received[0]['body']['redirect_uri'] == redirect


async def test_a_refused_sign_in_is_a_user_error(fake: FakeOpenAI) -> None:
    redirect = f'http://127.0.0.1:{free_port()}/auth/callback'
    flow = OpenAICodexOAuthFlow(redirect_uri=redirect, state='st-9', token_url=fake.token_url)
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
