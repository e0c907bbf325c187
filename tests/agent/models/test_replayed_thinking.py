"""pydantic-ai 2.68's `mimics_assistant_message_formatting`: reasoning that cannot go back natively is sent in a user
turn ahead of its reply, framed as `<assistant_thinking>`, instead of in the reply between thinking tags. Checked on
what a real local HTTP server receives from each adapter that reads the key, and on the bodies the mappers build."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.messages import (
    CachePoint,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._bedrock_mapping import bedrock_request_body
from edgewise.agent.models._mapping import replayed_thinking
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.profiles import DEFAULT_PROFILE, ModelProfile
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.profiles.openai import OpenAIModelProfile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.bedrock import BedrockProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._batch_fakes import responses_body
from ._chat import completion
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

MIMICS: ModelProfile = {'mimics_assistant_message_formatting': True}
CARRIED = '<assistant_thinking>\npondered\n</assistant_thinking>'


def _history(*thoughts: ThinkingPart) -> list[ModelMessage]:
    """A first exchange whose reply carries reasoning from elsewhere (no provider, or another one)."""
    return [
        ModelRequest([UserPromptPart('hi')]),
        ModelResponse([*thoughts, TextPart('hello')], provider_name='other'),
    ]


HISTORY = _history(ThinkingPart('pondered'))


def _anthropic_answer() -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': 'done'}],
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 3, 'output_tokens': 1},
    }


def test_the_key_is_off_by_default_and_on_for_claude() -> None:
    assert DEFAULT_PROFILE['mimics_assistant_message_formatting'] is False
    claude = anthropic_model_profile('claude-sonnet-4-5')
    assert claude is not None
    assert claude.get('mimics_assistant_message_formatting') is True
    bedrock_claude = BedrockProvider.model_profile('us.anthropic.claude-sonnet-4-5-20250929-v1:0') or {}
    assert bedrock_claude.get('mimics_assistant_message_formatting') is True
    openai = OpenAIProvider(api_key='k').model_profile('gpt-4o') or {}
    assert openai.get('mimics_assistant_message_formatting') is None


def test_replayed_thinking_picks_the_frame_and_the_turn_from_the_profile() -> None:
    part = ThinkingPart('a <thinking>b</thinking>')
    assert replayed_thinking(part, {}) == ('<think>\na <thinking>b</thinking>\n</think>', False)
    assert replayed_thinking(part, {'thinking_tags': ('<t>', '</t>')}) == ('<t>\na <thinking>b</thinking>\n</t>', False)
    # The body goes in as written, and the frame is the same whatever the model's own thinking tags.
    assert replayed_thinking(part, {**MIMICS, 'thinking_tags': ('<t>', '</t>')}) == (
        '<assistant_thinking>\na <thinking>b</thinking>\n</assistant_thinking>',
        True,
    )


async def test_anthropic_sends_foreign_reasoning_in_a_user_turn_before_the_reply(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_anthropic_answer()))
    provider = AnthropicProvider(api_key='k', base_url=local_server.url)
    async with AnthropicModel('claude-sonnet-4-5', provider=provider) as model:
        result = await Agent(model).run('more', message_history=HISTORY)
    assert local_server.received[0]['body']['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]},
        {'role': 'user', 'content': [{'type': 'text', 'text': CARRIED}]},
        {'role': 'assistant', 'content': [{'type': 'text', 'text': 'hello'}]},
        {'role': 'user', 'content': [{'type': 'text', 'text': 'more'}]},
    ]
    # Only the copy sent changes: the run's history keeps the reasoning where it was.
    assert result.all_messages()[1] == HISTORY[1]


async def test_anthropic_keeps_reasoning_in_the_reply_when_the_profile_says_so(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_anthropic_answer()))
    provider = AnthropicProvider(api_key='k', base_url=local_server.url)
    profile: ModelProfile = {'mimics_assistant_message_formatting': False}
    async with AnthropicModel('claude-sonnet-4-5', provider=provider, profile=profile) as model:
        await Agent(model).run('more', message_history=HISTORY)
    assert local_server.received[0]['body']['messages'][1] == {
        'role': 'assistant',
        'content': [{'type': 'text', 'text': '<thinking>\npondered\n</thinking>'}, {'type': 'text', 'text': 'hello'}],
    }


async def test_anthropic_sends_signed_reasoning_of_its_own_natively(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_anthropic_answer()))
    provider = AnthropicProvider(api_key='k', base_url=local_server.url)
    own = ThinkingPart('mine', signature='sig', provider_name='anthropic')
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi')]),
        ModelResponse([own, TextPart('hello')], provider_name='anthropic'),
    ]
    async with AnthropicModel('claude-sonnet-4-5', provider=provider) as model:
        await Agent(model).run('more', message_history=history)
    messages = local_server.received[0]['body']['messages']
    assert [m['role'] for m in messages] == ['user', 'assistant', 'user']
    assert messages[1]['content'][0] == {'type': 'thinking', 'thinking': 'mine', 'signature': 'sig'}


@pytest.mark.parametrize('mimics', [False, True])
async def test_openai_chat_moves_tagged_reasoning_only_with_the_key(local_server: LocalServer, mimics: bool) -> None:
    local_server.script(Reply(body=completion()))
    provider = OpenAIProvider(api_key='k', base_url=local_server.url)
    profile: ModelProfile = {'mimics_assistant_message_formatting': mimics}
    history = _history(ThinkingPart('pondered'), ThinkingPart(''), ThinkingPart('again'))
    async with OpenAIChatModel('gpt-4o', provider=provider, profile=profile) as model:
        await Agent(model).run('more', message_history=history)
    messages = local_server.received[0]['body']['messages']
    if mimics:
        # One user message for all of a reply's reasoning; an empty thought has nothing to carry.
        carried = f'{CARRIED}\n\n<assistant_thinking>\nagain\n</assistant_thinking>'
        assert messages[1:3] == [
            {'role': 'user', 'content': carried},
            {'role': 'assistant', 'content': '<think>\n\n</think>\n\nhello'},
        ]
    else:
        assert messages[1] == {
            'role': 'assistant',
            'content': '<think>\npondered\n</think>\n\n<think>\n\n</think>\n\n<think>\nagain\n</think>\n\nhello',
        }


async def test_openai_chat_leaves_reasoning_sent_in_a_field_where_it_is(local_server: LocalServer) -> None:
    local_server.script(Reply(body=completion()))
    provider = OpenAIProvider(api_key='k', base_url=local_server.url)
    profile: OpenAIModelProfile = {
        'mimics_assistant_message_formatting': True,
        'openai_chat_send_back_thinking_parts': 'field',
        'openai_chat_thinking_field': 'reasoning_content',
    }
    async with OpenAIChatModel('gpt-4o', provider=provider, profile=profile) as model:
        await Agent(model).run('more', message_history=HISTORY)
    assert local_server.received[0]['body']['messages'][1] == {
        'role': 'assistant',
        'reasoning_content': 'pondered',
        'content': 'hello',
    }


async def test_a_reply_of_only_carried_reasoning_leaves_just_the_user_message(local_server: LocalServer) -> None:
    local_server.script(Reply(body=completion()))
    provider = OpenAIProvider(api_key='k', base_url=local_server.url)
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')]), ModelResponse([ThinkingPart('pondered')])]
    async with OpenAIChatModel('gpt-4o', provider=provider, profile=MIMICS) as model:
        await Agent(model).run('more', message_history=history)
    assert local_server.received[0]['body']['messages'] == [
        {'role': 'user', 'content': 'hi'},
        {'role': 'user', 'content': CARRIED},
        {'role': 'user', 'content': 'more'},
    ]


@pytest.mark.parametrize('mimics', [False, True])
async def test_openai_responses_moves_reasoning_without_an_item_only_with_the_key(
    local_server: LocalServer, mimics: bool
) -> None:
    local_server.script(Reply(body=responses_body('x')))
    provider = OpenAIProvider(api_key='k', base_url=local_server.url)
    profile: ModelProfile = {'mimics_assistant_message_formatting': mimics}
    history = _history(ThinkingPart('pondered'), ThinkingPart('again'))
    async with OpenAIResponsesModel('gpt-4o', provider=provider, profile=profile) as model:
        await Agent(model).run('more', message_history=history)
    items = local_server.received[0]['body']['input']
    assert items[0]['role'] == 'user'
    assert items[-1]['role'] == 'user'
    middle = items[1:-1]
    if mimics:
        carried = f'{CARRIED}\n\n<assistant_thinking>\nagain\n</assistant_thinking>'
        assert middle[0] == {'role': 'user', 'content': carried}
        assert [item.get('role') for item in middle[1:]] == ['assistant']
    else:
        assert [item.get('content') for item in middle[:2]] == [
            '<think>\npondered\n</think>',
            '<think>\nagain\n</think>',
        ]
        assert all(item.get('role') == 'assistant' for item in middle)


def test_bedrock_carries_reasoning_into_the_user_turn_and_keeps_its_cache_point_last() -> None:
    claude = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
    profile = BedrockProvider.model_profile(claude) or {}
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart(['hi', CachePoint()])]),
        ModelResponse([ThinkingPart('pondered'), TextPart('hello')]),
        ModelResponse([ThinkingPart('again')]),
    ]
    body = bedrock_request_body(claude, history, {}, ModelRequestParameters(), profile, provider_name='bedrock')
    messages = body['messages']
    assert messages[0]['content'][0] == {'text': 'hi'}
    assert messages[0]['content'][1] == {'text': CARRIED}
    assert 'cachePoint' in messages[0]['content'][2]
    # A reply after a reply gets a user turn of its own for its reasoning (and nothing in its own turn).
    assert messages[1:] == [
        {'role': 'assistant', 'content': [{'text': 'hello'}]},
        {'role': 'user', 'content': [{'text': '<assistant_thinking>\nagain\n</assistant_thinking>'}]},
    ]


async def test_a_function_model_gets_the_history_as_it_is() -> None:
    seen: list[list[ModelMessage]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse([TextPart('done')])

    await Agent(FunctionModel(answer, profile=MIMICS)).run('more', message_history=HISTORY)
    # The key is read by the provider adapters when they build a request; the messages themselves never change.
    assert seen[0][:2] == HISTORY
