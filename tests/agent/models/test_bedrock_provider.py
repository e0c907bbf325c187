"""`BedrockProvider`'s credentials, region and endpoint (arguments, environment, shared files), its family profiles,
and `'bedrock:'` model names."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.models import infer_model
from edgewise.agent.models.bedrock import BedrockConverseModel
from edgewise.agent.providers import infer_provider
from edgewise.agent.providers.bedrock import (
    BedrockJsonSchemaTransformer,
    BedrockProvider,
    remove_bedrock_geo_prefix,
    split_bedrock_model_id,
)

from ._aws import ACCESS_KEY, SECRET_KEY, SESSION_TOKEN

_AWS_VARIABLES = (
    'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION',
    'AWS_BEARER_TOKEN_BEDROCK', 'AWS_PROFILE', 'AWS_READ_TIMEOUT', 'AWS_CONNECT_TIMEOUT',
)  # fmt: skip


@pytest.fixture(autouse=True)
def clean_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # No shared files unless a test writes them.
    monkeypatch.setenv('AWS_SHARED_CREDENTIALS_FILE', str(tmp_path / 'credentials'))
    monkeypatch.setenv('AWS_CONFIG_FILE', str(tmp_path / 'config'))


def test_the_environment_gives_keys_token_and_region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', ACCESS_KEY)
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', SECRET_KEY)
    monkeypatch.setenv('AWS_SESSION_TOKEN', SESSION_TOKEN)
    monkeypatch.setenv('AWS_DEFAULT_REGION', 'eu-central-1')
    provider = infer_provider('bedrock')
    assert isinstance(provider, BedrockProvider)
    assert (provider.name, provider.region_name) == ('bedrock', 'eu-central-1')
    assert provider.base_url == 'https://bedrock-runtime.eu-central-1.amazonaws.com'
    assert provider.request_headers() == {'x-amz-security-token': SESSION_TOKEN}
    assert SECRET_KEY not in repr(provider)
    assert SESSION_TOKEN not in repr(provider)


def test_aws_region_wins_over_the_default_region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AWS_REGION', 'us-west-2')
    monkeypatch.setenv('AWS_DEFAULT_REGION', 'eu-central-1')
    provider = BedrockProvider(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)
    assert provider.region_name == 'us-west-2'


def test_the_bearer_token_variable_is_used_when_no_key_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AWS_BEARER_TOKEN_BEDROCK', 'token-from-env')
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', ACCESS_KEY)
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', SECRET_KEY)
    provider = BedrockProvider(region_name='us-east-1')
    assert provider.request_headers() == {'authorization': 'Bearer token-from-env'}
    request = httpx.Request('POST', 'https://example.com/x', content=b'{}')
    provider.sign_request(request)
    assert 'x-amz-date' not in request.headers  # a bearer request is not signed
    # Keys given as arguments win over the environment's token.
    keyed = BedrockProvider(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name='us-east-1')
    assert keyed.request_headers() == {}


def test_a_shared_credentials_profile_gives_keys_and_its_config_the_region(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / 'credentials').write_text(
        f'[default]\naws_access_key_id = OTHER\naws_secret_access_key = other\n\n'
        f'[work]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n'
        f'aws_session_token = {SESSION_TOKEN}\n'
    )
    (tmp_path / 'config').write_text('[default]\nregion = us-east-1\n\n[profile work]\nregion = ap-south-1\n')
    provider = BedrockProvider(profile_name='work')
    assert provider.region_name == 'ap-south-1'
    assert provider.request_headers() == {'x-amz-security-token': SESSION_TOKEN}
    monkeypatch.setenv('AWS_PROFILE', 'work')
    assert BedrockProvider().region_name == 'ap-south-1'
    monkeypatch.delenv('AWS_PROFILE')
    assert BedrockProvider().region_name == 'us-east-1'
    # A profile named for its region alone, with keys from arguments.
    keyed = BedrockProvider(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, profile_name='work')
    assert keyed.region_name == 'ap-south-1'


def test_missing_credentials_region_or_half_a_key_pair_are_clear_errors() -> None:
    with pytest.raises(UserError, match='Set the `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`'):
        BedrockProvider(region_name='us-east-1')
    with pytest.raises(UserError, match='You must provide a `region_name`'):
        BedrockProvider(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)
    with pytest.raises(UserError, match='You must provide a `region_name`'):
        BedrockProvider(api_key='key')
    with pytest.raises(UserError, match=r'`aws_secret_access_key` .* is missing'):
        BedrockProvider(aws_access_key_id=ACCESS_KEY, region_name='us-east-1')
    with pytest.raises(UserError, match=r'`aws_access_key_id` .* is missing'):
        BedrockProvider(aws_secret_access_key=SECRET_KEY, region_name='us-east-1')
    with pytest.raises(UserError, match='not through a boto3 client'):
        BedrockProvider(bedrock_client=object())
    # A bearer token with its own endpoint needs no region.
    assert BedrockProvider(api_key='key', base_url='http://127.0.0.1:1/').base_url == 'http://127.0.0.1:1'


def test_an_unreadable_credentials_file_names_no_credentials(tmp_path: Path) -> None:
    (tmp_path / 'credentials').write_text('this is [not an ini file')
    with pytest.raises(UserError, match='Set the `AWS_ACCESS_KEY_ID`'):
        BedrockProvider(region_name='us-east-1')


@pytest.mark.anyio
async def test_the_own_client_has_the_aws_timeouts_and_a_given_client_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv('AWS_READ_TIMEOUT', '120')
    provider = BedrockProvider(api_key='key', region_name='us-east-1', aws_connect_timeout=7)
    async with provider:
        assert provider.client.timeout == httpx.Timeout(120, connect=7)
        assert provider.client is provider.client
    given = httpx.AsyncClient(timeout=3)
    async with given:
        assert BedrockProvider(
            api_key='key', region_name='us-east-1', http_client=given
        ).client.timeout == httpx.Timeout(3)


def test_bedrock_model_names_resolve_to_the_converse_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AWS_BEARER_TOKEN_BEDROCK', 'key')
    monkeypatch.setenv('AWS_REGION', 'us-east-1')
    model = infer_model('bedrock:amazon.nova-pro-v1:0')
    assert isinstance(model, BedrockConverseModel)
    assert (model.system, model.model_name) == ('bedrock', 'amazon.nova-pro-v1:0')
    assert model.base_url == 'https://bedrock-runtime.us-east-1.amazonaws.com'
    assert BedrockConverseModel.supported_native_tools() == frozenset()


def test_a_model_the_converse_api_does_not_serve_is_refused() -> None:
    provider = BedrockProvider(api_key='key', region_name='us-east-1')
    with pytest.raises(UserError, match='not served by the Bedrock Converse API'):
        BedrockConverseModel('openai.gpt-5-v1:0', provider=provider)


@pytest.mark.parametrize(
    ('model_id', 'expected'),
    [
        ('us.anthropic.claude-haiku-4-5-20251001-v1:0', ('anthropic', 'claude-haiku-4-5-20251001')),
        ('anthropic.claude-3-5-sonnet-20240620-v1:0', ('anthropic', 'claude-3-5-sonnet-20240620')),
        (
            'arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.amazon.nova-lite-v1:0',
            ('amazon', 'nova-lite'),
        ),
        ('global.cohere.command-r-plus-v1', ('cohere', 'command-r-plus')),
        ('claude-haiku-4-5', (None, 'claude-haiku-4-5')),
    ],
)
def test_model_ids_split_into_family_and_name(model_id: str, expected: tuple[str | None, str]) -> None:
    assert split_bedrock_model_id(model_id) == expected


def test_the_geo_prefix_is_removed_only_when_there_is_one() -> None:
    assert remove_bedrock_geo_prefix('us-gov.meta.llama3-8b-instruct-v1:0') == 'meta.llama3-8b-instruct-v1:0'
    assert remove_bedrock_geo_prefix('meta.llama3-8b-instruct-v1:0') == 'meta.llama3-8b-instruct-v1:0'


def test_family_profiles_say_what_converse_takes_from_each() -> None:
    profile = BedrockProvider.model_profile
    claude = profile('us.anthropic.claude-sonnet-4-5-20250929-v1:0') or {}
    assert claude.get('bedrock_supports_tool_choice')
    assert claude.get('bedrock_send_back_thinking_parts')
    assert claude.get('bedrock_thinking_variant') == 'anthropic'
    assert claude.get('supported_native_tools') == frozenset()
    assert claude.get('supports_video_input') is False
    nova = profile('amazon.nova-pro-v1:0') or {}
    assert (nova.get('bedrock_top_k_variant'), nova.get('bedrock_supports_prompt_caching')) == ('nova', True)
    assert 'bedrock_top_k_variant' not in (profile('amazon.titan-text-express-v1') or {})
    assert (profile('meta.llama3-70b-instruct-v1:0') or {}).get(
        'bedrock_tool_result_colocatable_content'
    ) == frozenset()
    assert (profile('mistral.mistral-large-2407-v1:0') or {}).get('bedrock_tool_result_format') == 'json'
    assert (profile('deepseek.r1-v1:0') or {}).get('bedrock_send_back_thinking_parts') is True
    assert (profile('deepseek.v3.2') or {}).get('bedrock_thinking_variant') == 'deepseek'
    assert (profile('deepseek.v3-v1:0') or {}).get('bedrock_thinking_variant') is None
    assert (profile('qwen.qwen3-32b-v1:0') or {}).get('bedrock_thinking_variant') == 'qwen'
    assert (profile('google.gemma-3-27b-it') or {}).get('supports_json_schema_output') is True
    assert (profile('zai.glm-5.3') or {}).get('bedrock_thinking_variant') == 'zai_effort'
    assert (profile('zai.glm-4.7') or {}).get('bedrock_thinking_variant') == 'zai'
    assert (profile('openai.gpt-oss-120b-1:0') or {}).get('bedrock_thinking_variant') == 'openai'
    assert (profile('openai.gpt-5.6-sol') or {}).get('bedrock_disallows_sampling_settings') is True
    assert (profile('writer.palmyra-x5-v1:0') or {}).get('bedrock_supports_tool_result_status') is False
    assert (profile('moonshotai.kimi-k2.5') or {}).get('supported_native_tools') == frozenset()
    assert (profile('cohere.command-r-v1:0') or {}).get('supported_native_tools') == frozenset()
    assert profile('unknown.model-v1:0') is None


def test_the_schema_transformer_is_strict_only_when_asked_and_moves_refused_limits_into_descriptions() -> None:
    schema = {
        'title': 'Args',
        'type': 'object',
        'properties': {
            'n': {'type': 'integer', 'minimum': 1, 'description': 'A count'},
            'xs': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 2, 'maxItems': 5},
            'one': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1},
        },
    }
    loose = BedrockJsonSchemaTransformer(schema)
    assert loose.walk() == {k: v for k, v in schema.items() if k != 'title'}
    assert loose.is_strict_compatible is False
    strict = BedrockJsonSchemaTransformer(schema, strict=True)
    assert strict.walk() == {
        'type': 'object',
        'additionalProperties': False,
        'properties': {
            'n': {'type': 'integer', 'description': 'A count (minimum=1)'},
            'xs': {'type': 'array', 'items': {'type': 'string'}, 'description': 'maxItems=5, minItems=2'},
            'one': {'type': 'array', 'items': {'type': 'string'}, 'minItems': 1},
        },
    }
    assert strict.is_strict_compatible is True
