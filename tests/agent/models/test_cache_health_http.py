"""Prompt-cache health from a provider's own usage, over a real local HTTP server: Anthropic's Messages API reports
cache reads and writes, which the `chat` spans of instrumented runs judge."""

from __future__ import annotations

from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.providers.anthropic import AnthropicProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio


def _answer(input_tokens: int, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': 'ok'}],
        'stop_reason': 'end_turn',
        'usage': {
            'input_tokens': input_tokens - read - write,
            'output_tokens': 2,
            'cache_read_input_tokens': read,
            'cache_creation_input_tokens': write,
        },
    }


def _agent(server: LocalServer) -> Agent[None, str]:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return Agent(AnthropicModel('claude-sonnet-4-5', provider=provider))


def _cache_attributes(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    return [
        {
            k.removeprefix('pydantic_ai.cache.'): v
            for k, v in s['attributes'].items()
            if k.startswith('pydantic_ai.cache')
        }
        for s in spans
        if s['name'].startswith('chat ')
    ]


async def test_an_anthropic_prefix_that_is_not_read_back_within_five_minutes_is_an_unexpected_collapse(
    local_server: LocalServer, capfire: CaptureLogfire
) -> None:
    local_server.script(Reply(body=_answer(10_000, write=10_000)), Reply(body=_answer(10_500, write=10_500)))
    agent = _agent(local_server)
    settings: Any = {'cache': True}
    async with agent:
        result = await agent.run('one', model_settings=settings)
        await agent.run('two', message_history=result.all_messages(), model_settings=settings)
    assert local_server.received[0]['body']['cache_control'] == {'type': 'ephemeral', 'ttl': '5m'}
    assert _cache_attributes(capfire) == [
        {'hit_ratio': 0.0, 'established_tokens': 10_000},
        {
            'hit_ratio': 0.0,
            'established_tokens': 10_500,
            'collapsed': True,
            'missed_tokens': 10_000,
            'collapse_reason': 'unexpected',
        },
    ]
    spans = capfire.exporter.exported_spans_as_dict()
    (event,) = [e for s in spans for e in s.get('events', []) if e['name'] == 'pydantic_ai.cache.collapse']
    assert event['attributes'] == {
        'established_tokens': 10_000,
        'cache_read_tokens': 0,
        'missed_tokens': 10_000,
        'provider_name': 'anthropic',
        'model_name': 'claude-sonnet-4-5',
    }


async def test_a_long_anthropic_request_without_cache_settings_reports_caching_not_enabled(
    local_server: LocalServer, capfire: CaptureLogfire
) -> None:
    local_server.script(Reply(body=_answer(6_000)))
    async with _agent(local_server) as agent:
        await agent.run('one')
    assert _cache_attributes(capfire) == [{'hit_ratio': 0.0, 'established_tokens': 0, 'not_enabled': True}]
