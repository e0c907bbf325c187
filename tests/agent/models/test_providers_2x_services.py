"""The OpenAI-compatible services pydantic-ai 2.x has providers for (Alibaba, Crusoe, Nebius, OVHcloud, SambaNova,
Z.AI, vLLM, Meta) and `OpenAICompatibleProvider` for a service of your own naming: keys, URLs, profiles, and a
request through a real server on 127.0.0.1."""

from __future__ import annotations

from typing import cast

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.native_tools import WebSearchTool
from edgewise.agent.profiles import InlineDefsJsonSchemaTransformer, ModelProfile
from edgewise.agent.profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile
from edgewise.agent.providers import infer_provider, infer_provider_class
from edgewise.agent.providers.alibaba import AlibabaProvider
from edgewise.agent.providers.crusoe import CrusoeProvider
from edgewise.agent.providers.meta import MetaProvider
from edgewise.agent.providers.nebius import NebiusProvider
from edgewise.agent.providers.openai_compatible import OpenAICompatibleProvider
from edgewise.agent.providers.ovhcloud import OVHcloudProvider
from edgewise.agent.providers.sambanova import SambaNovaProvider
from edgewise.agent.providers.vllm import VLLMProvider
from edgewise.agent.providers.zai import ZaiProvider

from ._chat import completion
from ._provider_specs import RESPONSES
from .conftest import LocalServer, Reply

SERVICES = [
    ('alibaba', AlibabaProvider, 'ALIBABA_API_KEY', 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1'),
    ('crusoe', CrusoeProvider, 'CRUSOE_API_KEY', 'https://api.inference.crusoecloud.com/v1'),
    ('nebius', NebiusProvider, 'NEBIUS_API_KEY', 'https://api.studio.nebius.com/v1'),
    ('ovhcloud', OVHcloudProvider, 'OVHCLOUD_API_KEY', 'https://oai.endpoints.kepler.ai.cloud.ovh.net/v1'),
    ('sambanova', SambaNovaProvider, 'SAMBANOVA_API_KEY', 'https://api.sambanova.ai/v1'),
    ('zai', ZaiProvider, 'ZAI_API_KEY', 'https://api.z.ai/api/paas/v4'),
    ('meta', MetaProvider, 'META_API_KEY', 'https://api.meta.ai/v1'),
]
ENV = [env for *_, env, _ in SERVICES] + [
    'DASHSCOPE_API_KEY',
    'SAMBANOVA_BASE_URL',
    'VLLM_BASE_URL',
    'VLLM_API_KEY',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(('name', 'cls', 'env', 'base_url'), SERVICES)
def test_each_service_reads_its_key_and_knows_its_url(
    name: str, cls: type[object], env: str, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UserError, match=f'`{env}`'):
        infer_provider(name)
    monkeypatch.setenv(env, 'secret-key-1')
    provider = infer_provider(name)
    assert type(provider) is cls
    assert infer_provider_class(name) is cls
    assert (provider.name, provider.base_url) == (name, base_url)
    assert provider.request_headers()['authorization'] == 'Bearer secret-key-1'
    assert 'secret-key-1' not in repr(provider)


def test_alibaba_takes_the_dashscope_variable_and_sambanova_its_url_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('DASHSCOPE_API_KEY', 'ds')
    assert AlibabaProvider().request_headers()['authorization'] == 'Bearer ds'
    monkeypatch.setenv('SAMBANOVA_API_KEY', 'sn')
    monkeypatch.setenv('SAMBANOVA_BASE_URL', 'https://sambanova.internal/v1/')
    assert SambaNovaProvider().base_url == 'https://sambanova.internal/v1'


def test_vllm_needs_a_base_url_and_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match='`VLLM_BASE_URL`'):
        VLLMProvider()
    monkeypatch.setenv('VLLM_BASE_URL', 'http://127.0.0.1:8000/v1')
    provider = VLLMProvider()
    assert provider.base_url == 'http://127.0.0.1:8000/v1'
    assert 'authorization' not in provider.request_headers()
    monkeypatch.setenv('VLLM_API_KEY', 'vk')
    assert VLLMProvider().request_headers()['authorization'] == 'Bearer vk'


def _openai(profile: ModelProfile | None) -> OpenAIModelProfile:
    assert profile is not None
    return cast(OpenAIModelProfile, profile)


def test_vllm_profiles_by_family_thinking_and_what_vllm_serves() -> None:
    qwen = _openai(VLLMProvider.model_profile('Qwen/Qwen3-8B'))
    assert qwen['json_schema_transformer'] is InlineDefsJsonSchemaTransformer  # the family, found by the id's tail
    assert (qwen['supports_thinking'], qwen['thinking_always_enabled']) == (True, False)
    assert _openai(VLLMProvider.model_profile('Qwen/Qwen3-235B-A22B-Thinking-2507'))['thinking_always_enabled'] is True
    assert 'supports_thinking' not in _openai(VLLMProvider.model_profile('Qwen/Qwen3-8B-Instruct'))
    assert _openai(VLLMProvider.model_profile('google/gemma-4-27b'))['supports_thinking'] is True
    coder = _openai(VLLMProvider.model_profile('Qwen/Qwen3-Coder-480B-A35B-Instruct'))
    assert 'supports_thinking' not in coder
    # The Qwen family refuses forced tool choice and strict schemas for the coder; vLLM takes both.
    assert (coder['supports_forced_tool_choice'], coder['openai_supports_strict_tool_definition']) == (
        True,
        True,
    )
    plain = _openai(VLLMProvider.model_profile('some-local-model'))
    assert plain['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    for profile in (qwen, plain):
        assert profile['native_output_requires_schema_in_instructions'] is True
        assert profile['openai_chat_supports_multiple_system_messages'] is False
        assert profile['openai_chat_supports_document_input'] is False
        assert (profile['supports_json_schema_output'], profile['supports_tool_return_schema']) == (True, False)


def test_service_profiles() -> None:
    omni = _openai(AlibabaProvider.model_profile('qwen3-omni-flash'))
    assert omni['openai_chat_audio_input_encoding'] == 'uri'
    assert omni['openai_chat_supports_document_input'] is False
    assert 'openai_chat_audio_input_encoding' not in _openai(AlibabaProvider.model_profile('qwen-max'))
    crusoe = _openai(CrusoeProvider.model_profile('meta-llama/Llama-3.3-70B-Instruct'))
    assert crusoe['json_schema_transformer'] is InlineDefsJsonSchemaTransformer
    assert crusoe['supports_json_schema_output'] is True
    assert _openai(NebiusProvider.model_profile('meta-llama/Llama-3.3-70B'))['json_schema_transformer'] is (
        InlineDefsJsonSchemaTransformer
    )
    assert _openai(OVHcloudProvider.model_profile('Meta-Llama-3_3-70B'))['json_schema_transformer'] is (
        InlineDefsJsonSchemaTransformer
    )
    assert _openai(SambaNovaProvider.model_profile('Meta-Llama-3.3-70B'))['json_schema_transformer'] is (
        InlineDefsJsonSchemaTransformer
    )
    zai = _openai(ZaiProvider.model_profile('glm-4.6'))
    assert (zai['openai_chat_thinking_field'], zai['openai_chat_send_back_thinking_parts']) == (
        'reasoning_content',
        'field',
    )
    muse = _openai(MetaProvider.model_profile('muse-spark-1.3'))
    assert (muse['supports_thinking'], muse['thinking_always_enabled'], muse['openai_supports_phase']) == (True,) * 3
    assert muse['supported_native_tools'] == frozenset({WebSearchTool})
    assert muse['supports_forced_tool_choice'] is False
    assert 'supports_thinking' not in _openai(MetaProvider.model_profile('llama-4'))


def test_model_names_of_the_services(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, _, env, _ in SERVICES:
        monkeypatch.setenv(env, 'k')
    monkeypatch.setenv('VLLM_BASE_URL', 'http://127.0.0.1:8000/v1')
    for name in ('alibaba', 'crusoe', 'nebius', 'ovhcloud', 'sambanova', 'zai', 'vllm'):
        model = infer_model(f'{name}:some-model')
        assert isinstance(model, OpenAIChatModel)
        assert (model.model_name, model.provider.name) == ('some-model', name)
    meta = infer_model('meta:muse-spark-1.3')  # Muse's reasoning and phases survive turns only on Responses
    assert isinstance(meta, OpenAIResponsesModel)
    assert meta.provider.name == 'meta'
    with pytest.raises(UserError, match=r'is not available in edgewise\.agent yet'):
        infer_model('typesafe:claude-sonnet-4-5')
    with pytest.raises(UserError, match='needs `credentials` or a `credential_source`'):  # a ChatGPT plan signs in
        infer_model('openai-chatgpt:gpt-5')


def test_an_openai_compatible_service_needs_a_name_and_a_url_and_never_an_openai_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv('OPENAI_API_KEY', 'sk-openai-must-not-leak')
    monkeypatch.setenv('OPENAI_BASE_URL', 'https://api.openai.example/v1')
    with pytest.raises(UserError, match='needs a `name`'):
        OpenAICompatibleProvider('', base_url='https://gateway.example.com/v1')
    with pytest.raises(UserError, match='needs a `base_url`'):
        OpenAICompatibleProvider('my-gateway')
    provider = OpenAICompatibleProvider('my-gateway', base_url='https://gateway.example.com/v1/')
    assert (provider.name, provider.base_url) == ('my-gateway', 'https://gateway.example.com/v1')
    assert provider.request_headers() == {}
    keyed = OpenAICompatibleProvider('my-gateway', base_url='https://gateway.example.com/v1', api_key='gw-secret')
    assert keyed.request_headers() == {'authorization': 'Bearer gw-secret'}
    assert 'gw-secret' not in repr(keyed)


def test_an_openai_compatible_services_profiles() -> None:
    provider = OpenAICompatibleProvider('gw', base_url='https://gw.example/v1')
    llama = _openai(provider.model_profile('meta-llama/llama-3.3-70b'))
    assert llama['json_schema_transformer'] is InlineDefsJsonSchemaTransformer
    plain = _openai(provider.model_profile('my-model'))
    assert plain['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    unknown_vendor = _openai(provider.model_profile('acme/model-1'))
    assert unknown_vendor == {'json_schema_transformer': OpenAIJsonSchemaTransformer}
    mistral = _openai(provider.model_profile('mistralai/mistral-large'))
    assert mistral['json_schema_transformer'] is OpenAIJsonSchemaTransformer  # OpenAI's, under Mistral's own keys
    # A dict is merged over the default of each model; a function replaces the default.
    merged = OpenAICompatibleProvider(
        'gw', base_url='https://gw.example/v1', profile=OpenAIModelProfile(openai_supports_strict_tool_definition=False)
    )
    merged_llama = _openai(merged.model_profile('meta-llama/llama-3.3-70b'))
    assert merged_llama['json_schema_transformer'] is InlineDefsJsonSchemaTransformer
    assert merged_llama['openai_supports_strict_tool_definition'] is False
    replaced = OpenAICompatibleProvider(
        'gw', base_url='https://gw.example/v1', profile=lambda name: ModelProfile(supports_tools=name != 'no-tools')
    )
    assert replaced.model_profile('no-tools') == {'supports_tools': False}
    assert OpenAIChatModel('no-tools', provider=replaced).profile['supports_tools'] is False


@pytest.mark.anyio
async def test_an_agent_talks_to_a_named_service(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('from the gateway')))
    provider = OpenAICompatibleProvider('my-gateway', base_url=local_server.url, api_key='gw-secret')
    async with Agent(OpenAIChatModel('qwen/qwen3-coder', provider=provider)) as agent:
        result = await agent.run('hi')
    assert result.output == 'from the gateway'
    assert result.all_messages()[-1].provider_name == 'my-gateway'  # type: ignore[union-attr]
    (request,) = local_server.received
    assert request['path'] == '/v1/chat/completions'
    assert request['headers']['authorization'] == 'Bearer gw-secret'
    assert request['body']['model'] == 'qwen/qwen3-coder'


@pytest.mark.anyio
async def test_an_agent_talks_to_vllm_and_meta(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('from vllm')), Reply(200, RESPONSES.reply))
    vllm = OpenAIChatModel('Qwen/Qwen3-8B', provider=VLLMProvider(base_url=local_server.url))
    meta = OpenAIResponsesModel(
        'muse-spark-1.3', provider=MetaProvider(api_key='meta-secret', base_url=local_server.url)
    )
    async with Agent(vllm) as agent:
        assert (await agent.run('hi')).output == 'from vllm'
    async with Agent(meta) as agent:
        result = await agent.run('hi')
    assert result.output == 'hello'
    assert result.all_messages()[-1].provider_name == 'meta'  # type: ignore[union-attr]
    chat, responses = local_server.received
    assert chat['path'] == '/v1/chat/completions'
    assert 'authorization' not in {k.lower() for k in chat['headers']}
    assert responses['path'] == '/v1/responses'
    assert responses['headers']['authorization'] == 'Bearer meta-secret'
