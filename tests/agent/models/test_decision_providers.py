"""The providers of pydantic-ai 2.68's decision models (TypeSafe, System One) and their profiles.

These tests pin configuration from arguments and the environment, the credentials a request carries, the profiles,
and the clear error of naming a TypeSafe model (its SDK is not used); `SystemOneModel` is tested in
test_system_one.py.
"""

from __future__ import annotations

import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.profiles.decision import DecisionModelProfile, decision_model_profile
from edgewise.agent.profiles.typesafe import typesafe_model_profile
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.system_one import SystemOneProvider
from edgewise.agent.providers.typesafe import TypeSafeProvider

from .conftest import LocalServer, Reply

SECRET = 'sk-decision-secret-4821'

_DECISION_PROFILE = {
    'supports_tools': True,
    'supports_text_output': False,
    'supports_inline_system_prompts': True,
    'supports_tool_return_schema': False,
    'supports_json_schema_output': False,
    'supports_json_object_output': False,
    'supports_image_output': False,
    'supports_audio_input': False,
    'default_structured_output_mode': 'tool',
}


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('TYPESAFE_API_KEY', 'TYPESAFE_BASE_URL', 'SYSTEM_ONE_BASE_URL', 'SYSTEM_ONE_API_KEY'):
        monkeypatch.delenv(name, raising=False)


def test_the_profiles_of_decision_models() -> None:
    assert decision_model_profile('clm-latest') == _DECISION_PROFILE
    jev = typesafe_model_profile('jev-1.13.0')
    assert jev == {**_DECISION_PROFILE, 'decision_max_choice_options': 255, 'decision_max_score_levels': 10}
    assert typesafe_model_profile('jev-latest') == jev
    assert DecisionModelProfile(decision_requires_instructions=True) == {'decision_requires_instructions': True}


def test_typesafe_provider_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        UserError,
        match=r'Set the `TYPESAFE_API_KEY` environment variable or pass it via `TypeSafeProvider\(api_key=\.\.\.\)`',
    ):
        TypeSafeProvider()
    provider = TypeSafeProvider(api_key=SECRET)
    assert (provider.name, provider.base_url) == ('typesafe', 'https://api.typesafe.ai')
    assert provider.model_profile('jev-latest') == typesafe_model_profile('jev-latest')
    assert SECRET not in repr(provider)
    monkeypatch.setenv('TYPESAFE_API_KEY', SECRET)
    monkeypatch.setenv('TYPESAFE_BASE_URL', 'https://typesafe.example/')
    from_env = infer_provider('typesafe')
    assert isinstance(from_env, TypeSafeProvider)
    assert from_env.base_url == 'https://typesafe.example'
    assert from_env.request_headers() == {'authorization': f'Bearer {SECRET}'}
    assert TypeSafeProvider(base_url='http://127.0.0.1:9').base_url == 'http://127.0.0.1:9'  # the argument wins
    assert infer_provider_class('typesafe') is TypeSafeProvider


def test_system_one_provider_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        UserError,
        match=r'Set the `SYSTEM_ONE_BASE_URL` environment variable or pass it via `SystemOneProvider\(base_url=',
    ):
        SystemOneProvider(api_key=SECRET)
    keyless = SystemOneProvider(base_url='http://localhost:11434/')
    assert (keyless.name, keyless.base_url, keyless.api_key) == ('system-one', 'http://localhost:11434', None)
    assert keyless.request_headers() == {}
    assert keyless.max_retries == 0  # one attempt, as pydantic-ai's client makes
    assert keyless.model_profile('clm-latest') == _DECISION_PROFILE
    monkeypatch.setenv('SYSTEM_ONE_BASE_URL', 'https://decisions.example/v1')
    monkeypatch.setenv('SYSTEM_ONE_API_KEY', SECRET)
    from_env = infer_provider('system-one')
    assert isinstance(from_env, SystemOneProvider)
    assert (from_env.base_url, from_env.api_key) == ('https://decisions.example/v1', SECRET)
    assert from_env.request_headers() == {'authorization': f'Bearer {SECRET}'}
    assert SECRET not in repr(from_env)
    assert infer_provider_class('system-one') is SystemOneProvider


@pytest.mark.anyio
async def test_the_providers_clients_carry_their_credentials(local_server: LocalServer) -> None:
    local_server.script(Reply(200, {'ok': 1}), Reply(200, {'ok': 2}), Reply(200, {'ok': 3}))
    typesafe = TypeSafeProvider(api_key=SECRET, base_url=local_server.url)
    keyed = SystemOneProvider(base_url=local_server.url, api_key=SECRET)
    async with httpx.AsyncClient() as given:
        keyless = SystemOneProvider(base_url=local_server.url, http_client=given)
        assert keyless.client is given
        sent = []
        for provider in (typesafe, keyed, keyless):
            async with provider:
                response = await provider.client.post(
                    provider.endpoint_url('/systemone', 'm'), json={}, headers=provider.request_headers()
                )
                sent.append(response.json())
        assert not given.is_closed  # a client passed in stays its owner's
    assert sent == [{'ok': 1}, {'ok': 2}, {'ok': 3}]
    first, second, third = local_server.received
    assert [r['path'] for r in local_server.received] == ['/v1/systemone'] * 3
    assert first['headers']['authorization'] == f'Bearer {SECRET}'
    assert second['headers']['authorization'] == f'Bearer {SECRET}'
    assert 'authorization' not in third['headers']


@pytest.mark.anyio
async def test_naming_a_typesafe_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('TYPESAFE_API_KEY', SECRET)
    with pytest.raises(UserError, match=r'is not available in edgewise\.agent yet: it serves decision models') as e:
        infer_model('typesafe:jev-latest')
    assert "infer_provider('typesafe')" in str(e.value)
    with pytest.raises(UserError, match=r"Model provider 'typesafe' .* is not available in edgewise\.agent yet"):
        await Agent('typesafe:jev-latest').run('x')
