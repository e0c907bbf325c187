"""Mid-conversation system prompts as `<system>` blocks on models without a system role there (pydantic-ai 2.68)."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.messages import (
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._system_frames import (
    frame_system_prompts,
    framing_announcement,
    standing_prompt_count,
    wire_messages,
)
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion
from .conftest import LocalServer, Reply

PARAMS = ModelRequestParameters()
NO_ROLE: ModelProfile = {'supports_inline_system_prompts': False}
SEALED: ModelProfile = {'supports_inline_system_prompts': False, 'needs_sealed_system_blocks': True}


def _history() -> list[ModelMessage]:
    return [
        ModelRequest([SystemPromptPart('Be brief.'), UserPromptPart('Weather?')]),
        ModelResponse([ToolCallPart('weather', {'city': 'Paris'}, 'c1')]),
        ModelRequest([SystemPromptPart('Answer in French now.'), ToolReturnPart('weather', 'sunny', 'c1')]),
    ]


def test_only_system_prompts_after_the_standing_one_become_system_blocks() -> None:
    history = _history()
    kept: Any = history[2].parts[0]
    framed, changed = frame_system_prompts(history, NO_ROLE)
    assert changed
    assert framed[0] is history[0]
    assert framed[1] is history[1]
    last = framed[2]
    assert isinstance(last, ModelRequest)
    assert [type(part) for part in last.parts] == [ToolReturnPart, UserPromptPart]  # tool results stay first
    assert last.parts[1] == UserPromptPart('<system>Answer in French now.</system>', timestamp=kept.timestamp)
    assert kept == SystemPromptPart('Answer in French now.', timestamp=kept.timestamp)


def test_a_system_prompt_after_the_users_words_in_the_first_request_is_not_standing() -> None:
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('hi'), SystemPromptPart('late')])]
    framed, _ = frame_system_prompts(history, NO_ROLE)
    assert [getattr(part, 'content', None) for part in framed[0].parts] == ['hi', '<system>late</system>']


def test_a_first_request_of_system_prompts_only_is_all_standing() -> None:
    history: list[ModelMessage] = [ModelRequest([SystemPromptPart('a'), SystemPromptPart('b')])]
    assert standing_prompt_count(history) == 2
    assert frame_system_prompts(history, NO_ROLE) == (history, False)


def test_nothing_changes_with_a_system_role_or_without_a_mid_conversation_prompt() -> None:
    history = _history()
    assert frame_system_prompts(history, {'supports_inline_system_prompts': True}) == (history, False)
    standing_only = history[:2]
    assert frame_system_prompts(standing_only, NO_ROLE) == (standing_only, False)
    assert frame_system_prompts([], NO_ROLE) == ([], False)


def test_sealed_blocks_are_marked_and_go_after_the_users_words() -> None:
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi')]),
        ModelResponse([TextPart('hello')]),
        ModelRequest([SystemPromptPart('Switch to French.'), UserPromptPart('And now?'), UserPromptPart('More')]),
        ModelResponse([ToolCallPart('t', {}, 'c2')]),
        ModelRequest([SystemPromptPart('Stop soon.'), ToolReturnPart('t', 'x', 'c2')]),
    ]
    framed, _ = frame_system_prompts(history, SEALED)
    assert [getattr(part, 'content', None) for part in framed[2].parts] == [
        'And now?',
        'More',
        '<system verified>Switch to French.</system>',
    ]
    assert [getattr(part, 'content', None) for part in framed[4].parts] == ['x', '<system verified>Stop soon.</system>']


@pytest.mark.parametrize(
    ('profile', 'setting', 'needed', 'expected'),
    [
        (NO_ROLE, None, False, None),
        (NO_ROLE, None, True, 'plain'),
        ({**NO_ROLE, 'default_framing_announcement': 'always'}, None, False, 'plain'),
        ({**NO_ROLE, 'default_framing_announcement': 'always'}, 'never', True, None),
        (NO_ROLE, 'always', False, 'plain'),
        (SEALED, None, True, 'sealed'),
        ({'supports_inline_system_prompts': True}, 'always', True, None),
    ],
)
def test_when_the_announcement_is_made(profile: ModelProfile, setting: Any, needed: bool, expected: str | None) -> None:
    text = framing_announcement(profile, needed=needed, setting=setting)
    if expected is None:
        assert text is None
    else:
        assert text is not None
        assert '<system' in text
        assert ('<system verified>' in text) is (expected == 'sealed')


def test_a_history_without_a_request_gets_no_announcement() -> None:
    always: ModelProfile = {**NO_ROLE, 'default_framing_announcement': 'always'}
    assert wire_messages([], always, PARAMS) == []


def test_the_announcement_needs_a_system_prompt_or_instructions_to_join() -> None:
    bare: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi')]),
        ModelResponse([TextPart('hello')]),
        ModelRequest([SystemPromptPart('Now in French.')]),
    ]
    sent = wire_messages(bare, NO_ROLE, PARAMS)
    assert isinstance(sent[0], ModelRequest)
    assert [type(p) for p in sent[0].parts] == [UserPromptPart]
    with_instructions = [*bare[:2], ModelRequest([SystemPromptPart('Now in French.')], instructions='Be kind.')]
    sent = wire_messages(with_instructions, NO_ROLE, PARAMS)
    announcement = sent[0].parts[0]
    assert isinstance(announcement, SystemPromptPart)
    assert '<system>' in announcement.content


pytestmark = pytest.mark.anyio


def _anthropic(server: LocalServer) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _answer(text: str) -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': text}],
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


async def test_anthropic_sends_a_mid_conversation_system_prompt_in_its_user_turn(local_server: LocalServer) -> None:
    local_server.script(Reply(200, _answer('Ensoleillé.')))
    async with _anthropic(local_server) as model:
        response = await model.request(_history(), None, PARAMS)
    assert response.text == 'Ensoleillé.'
    body = local_server.received[0]['body']
    system = body['system'] if isinstance(body['system'], str) else ''.join(b['text'] for b in body['system'])
    assert system.endswith('Be brief.')
    assert system.startswith('This conversation has no separate channel for system messages')
    assert body['messages'][-1]['role'] == 'user'
    assert [block['type'] for block in body['messages'][-1]['content']] == ['tool_result', 'text']
    assert body['messages'][-1]['content'][1]['text'] == '<system>Answer in French now.</system>'


async def test_the_framing_announcement_setting_turns_it_off(local_server: LocalServer) -> None:
    local_server.script(Reply(200, _answer('ok')))
    async with _anthropic(local_server) as model:
        await model.request(_history(), {'framing_announcement': 'never'}, PARAMS)
    body = local_server.received[0]['body']
    system = body['system'] if isinstance(body['system'], str) else ''.join(b['text'] for b in body['system'])
    assert system == 'Be brief.'
    assert 'framing_announcement' not in body


async def test_a_model_with_a_system_role_keeps_system_messages(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('ok')))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-local', max_retries=0)
    async with OpenAIChatModel('gpt-4o', provider=provider) as model:
        await model.request(_history(), None, PARAMS)
    messages = local_server.received[0]['body']['messages']
    assert {'role': 'system', 'content': 'Answer in French now.'} in messages
    assert not any('<system>' in str(message.get('content')) for message in messages)


async def test_an_agents_instruction_change_reaches_anthropic_as_a_system_block(local_server: LocalServer) -> None:
    state = {'budget': 'Budget: 10'}
    local_server.script(Reply(200, _answer('one')), Reply(200, _answer('two')))
    async with _anthropic(local_server) as model:
        agent = Agent(model, instructions='Be brief.')

        @agent.instructions
        def budget() -> InstructionPart:
            return InstructionPart(state['budget'], name='budget', on_change='append')

        first = await agent.run('one')
        state['budget'] = 'Budget: 7'
        second = await agent.run('two', message_history=first.all_messages())
    body = local_server.received[1]['body']
    last_turn = body['messages'][-1]
    assert last_turn['role'] == 'user'
    texts = [block['text'] for block in last_turn['content']]
    assert '<system><pyai:context id="agent:budget">\nBudget: 7\n</pyai:context></system>' in texts
    assert 'two' in texts
    system = body['system'] if isinstance(body['system'], str) else ''.join(b['text'] for b in body['system'])
    assert system.startswith('Be brief.')  # the instructions, then the announcement
    assert 'no separate channel for system messages' in system
    stored = second.all_messages()
    assert not any('<system>' in str(getattr(part, 'content', '')) for m in stored for part in m.parts)
