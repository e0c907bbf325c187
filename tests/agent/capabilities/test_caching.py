"""`Caching` (pydantic-ai 2.68) and the unified `cache` setting: the settings it gives, how a retention is snapped to
a provider's tiers, and what Anthropic's Messages API and OpenAI's Chat Completions API are sent for it (real local
HTTP servers on 127.0.0.1)."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import CAPABILITY_TYPES, Caching
from edgewise.agent.exceptions import UserError
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import anthropic_request_body
from edgewise.agent.models._prompt_cache import snap_cache_retention, snap_cache_setting, split_cache_setting
from edgewise.agent.models.anthropic import AnthropicModel, AnthropicModelSettings
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import CacheConfig, ModelSettings

from ..models.conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

EPHEMERAL_5M = {'type': 'ephemeral', 'ttl': '5m'}
EPHEMERAL_1H = {'type': 'ephemeral', 'ttl': '1h'}


def test_the_capability_gives_the_cache_setting() -> None:
    assert Caching().get_model_settings() == {'cache': True}
    assert Caching('1h').get_model_settings() == {'cache': '1h'}
    assert Caching(False, messages=False).get_model_settings() == {'cache': False}
    assert Caching(messages=False).get_model_settings() == {'cache': {'messages': False}}
    assert Caching('12h', messages=False).get_model_settings() == {'cache': {'retention': '12h', 'messages': False}}
    assert Caching().id == 'caching'


def test_specs_name_it() -> None:
    assert CAPABILITY_TYPES['Caching'] is Caching
    agent = Agent.from_spec({'model': 'test', 'capabilities': [{'Caching': {'retention': '1h', 'messages': False}}]})
    [capability] = [c for c in agent.root_capability.capabilities if isinstance(c, Caching)]
    assert (capability.retention, capability.messages) == ('1h', False)


def test_a_retention_snaps_to_the_nearest_shorter_tier_the_provider_has() -> None:
    assert snap_cache_retention(True, ('5m', '1h')) is True
    assert snap_cache_retention('1h', ('5m', '1h')) == '1h'
    assert snap_cache_retention('30m', ('5m', '1h')) == '5m'
    assert snap_cache_retention('12h', ('5m', '1h')) == '1h'
    assert snap_cache_retention('5m', ('30m', '12h')) == '30m'  # none shorter: the shortest
    assert snap_cache_retention('1h', ()) is True  # no tiers to ask for: the provider's default
    with pytest.raises(UserError, match=r"Unknown `cache` retention '2d'. Use `True`, `False`, or one of '5m'"):
        snap_cache_retention('2d', ('5m',))  # type: ignore[arg-type]


def test_a_cache_config_is_checked_and_reduced() -> None:
    assert snap_cache_setting(CacheConfig(retention='30m'), ('5m', '1h')) == '5m'
    assert snap_cache_setting(CacheConfig(), ()) is True
    assert snap_cache_setting(CacheConfig(messages=False), ()) == {'messages': False}
    assert snap_cache_setting(CacheConfig(retention='1h', messages=False), ('5m', '1h')) == {
        'retention': '1h',
        'messages': False,
    }
    with pytest.raises(UserError, match=r"Unknown `cache` option\(s\) 'ttl'. Use 'messages' and 'retention'"):
        snap_cache_setting({'ttl': '5m'}, ())  # type: ignore[arg-type]
    assert split_cache_setting(CacheConfig(retention='1h', messages=False)) == ('1h', False)
    assert split_cache_setting(CacheConfig(messages=False)) == (True, False)
    assert split_cache_setting('5m') == ('5m', True)


def _anthropic_answer(text: str) -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': text}],
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2, 'cache_read_input_tokens': 8},
    }


async def anthropic_body(
    server: LocalServer, *capabilities: Any, settings: ModelSettings | None = None, profile: ModelProfile | None = None
) -> Any:
    """The body Anthropic's API is sent for one run of an agent with instructions, a tool and `capabilities`."""
    server.script(Reply(200, _anthropic_answer('hello')))
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    async with provider:
        agent = Agent(
            AnthropicModel('claude-sonnet-4-5', provider=provider, profile=profile),
            instructions='Be brief.',
            capabilities=list(capabilities),
            model_settings=settings,
        )

        @agent.tool_plain
        def lookup() -> str:
            return 'found'  # pragma: no cover - the model never calls it

        assert (await agent.run('hi')).output == 'hello'
    return server.received[-1]['body']


async def test_anthropic_caches_instructions_tools_and_conversation(local_server: LocalServer) -> None:
    body = await anthropic_body(local_server, Caching())
    assert body['system'] == [{'type': 'text', 'text': 'Be brief.', 'cache_control': EPHEMERAL_5M}]
    assert body['tools'][-1]['cache_control'] == EPHEMERAL_5M
    # The Messages API places (and moves) the conversation's breakpoint itself: `supports_auto_cache`.
    assert body['cache_control'] == EPHEMERAL_5M
    assert body['messages'][-1]['content'][-1] == {'type': 'text', 'text': 'hi'}
    assert 'cache' not in body


async def test_anthropic_marks_the_last_block_without_auto_cache(local_server: LocalServer) -> None:
    body = await anthropic_body(local_server, Caching('1h'), profile=ModelProfile(supports_auto_cache=False))
    assert body['messages'][-1]['content'][-1] == {'type': 'text', 'text': 'hi', 'cache_control': EPHEMERAL_1H}
    assert 'cache_control' not in body


async def test_anthropic_cache_caches_the_conversation_the_way_the_profile_allows(local_server: LocalServer) -> None:
    body = await anthropic_body(local_server, settings=AnthropicModelSettings(anthropic_cache=True))
    assert body['cache_control'] == EPHEMERAL_5M
    assert body['system'] == 'Be brief.'  # nothing else is cached
    body = await anthropic_body(
        local_server,
        Caching(),  # ignored: an `anthropic_cache*` setting is given
        settings=AnthropicModelSettings(anthropic_cache='1h'),
        profile=ModelProfile(supports_auto_cache=False),
    )
    assert 'cache_control' not in body
    assert body['messages'][-1]['content'][-1]['cache_control'] == EPHEMERAL_1H
    assert body['system'] == 'Be brief.'


def test_anthropic_cache_marks_nothing_in_a_request_without_messages() -> None:
    body = anthropic_request_body(
        'claude-sonnet-4-5', [], AnthropicModelSettings(anthropic_cache=True), ModelRequestParameters(), ModelProfile()
    )
    assert body == {'model': 'claude-sonnet-4-5', 'max_tokens': 4096, 'messages': []}


async def test_anthropic_cache_and_a_marked_last_block_exclude_each_other(local_server: LocalServer) -> None:
    both = AnthropicModelSettings(anthropic_cache=True, anthropic_cache_messages=True)
    provider = AnthropicProvider(api_key='sk-test', base_url=local_server.url.removesuffix('/v1'), max_retries=0)
    async with provider:
        agent = Agent(AnthropicModel('claude-sonnet-4-5', provider=provider), model_settings=both)
        with pytest.raises(UserError, match='`anthropic_cache` and `anthropic_cache_messages` cannot both be enabled'):
            await agent.run('hi')
    assert local_server.received == []


async def test_anthropic_ignores_the_setting_where_the_profile_has_no_configurable_cache(
    local_server: LocalServer,
) -> None:
    body = await anthropic_body(local_server, Caching(), profile=ModelProfile(supports_cache=False))
    assert body['system'] == 'Be brief.'
    assert 'cache_control' not in body['tools'][-1]
    assert 'cache_control' not in body


async def test_anthropic_snaps_the_retention_and_can_leave_the_conversation_out(local_server: LocalServer) -> None:
    body = await anthropic_body(local_server, Caching('12h', messages=False))
    assert body['system'][0]['cache_control'] == EPHEMERAL_1H
    assert body['tools'][-1]['cache_control'] == EPHEMERAL_1H
    assert 'cache_control' not in body['messages'][-1]['content'][-1]
    assert 'cache_control' not in body
    body = await anthropic_body(local_server, Caching('30m'))
    assert body['cache_control'] == EPHEMERAL_5M
    # A profile's tiers are what the retention snaps to.
    body = await anthropic_body(local_server, Caching('12h'), profile=ModelProfile(supported_cache_retentions=('5m',)))
    assert body['cache_control'] == EPHEMERAL_5M


async def test_anthropic_sends_no_cache_points_when_caching_is_off_or_its_own_setting_is_given(
    local_server: LocalServer,
) -> None:
    body = await anthropic_body(local_server, Caching(False))
    assert body['system'] == 'Be brief.'
    assert 'cache_control' not in body['tools'][-1]
    own = AnthropicModelSettings(anthropic_cache_instructions=False)
    body = await anthropic_body(local_server, Caching(), settings=own)
    assert body['system'] == 'Be brief.'
    assert 'cache_control' not in body['tools'][-1]
    assert 'cache_control' not in body['messages'][-1]['content'][-1]


async def test_openai_caches_by_itself_so_the_setting_sends_nothing(local_server: LocalServer) -> None:
    answer = {
        'id': 'chatcmpl-1',
        'object': 'chat.completion',
        'created': 1,
        'model': 'gpt-4o',
        'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'hello'}, 'finish_reason': 'stop'}],
        'usage': {'prompt_tokens': 5, 'completion_tokens': 1, 'total_tokens': 6},
    }
    local_server.script(Reply(200, answer))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-x', max_retries=0)
    async with provider:
        agent = Agent(OpenAIChatModel('gpt-4o', provider=provider), capabilities=[Caching('1h')])
        assert (await agent.run('hi')).output == 'hello'
    body = local_server.received[0]['body']
    assert not any('cache' in key for key in body)
