"""Chat-template special tokens in content, on a profile with `may_tokenize_special_tokens_in_content` (2.68)."""

from __future__ import annotations

import copy
import json
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._special_tokens import (
    ZERO_WIDTH_JOINER as ZWJ,
)
from edgewise.agent.models._special_tokens import (
    break_special_tokens,
    break_special_tokens_in_messages,
    restore_special_tokens,
    restore_special_tokens_in_response,
)
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion, delta, drain, sse
from .conftest import LocalServer, Reply

TOKENS = [
    '<|im_start|>',
    '<|eot_id|>',
    '<\uff5cUser\uff5c>',
    '<|turn>',
    '<turn|>',
    '<start_of_turn>',
    '<end_of_turn>',
    '[INST]',
    '[/INST]',
    '[SYSTEM_PROMPT]',
    '[TOOL_CALLS]',
    '[|user|]',
    ']~b]',
    ']~!b[',
]


@pytest.mark.parametrize('token', TOKENS)
def test_a_joiner_goes_after_the_first_character_of_each_token(token: str) -> None:
    assert break_special_tokens(f'a {token} b') == f'a {token[0]}{ZWJ}{token[1:]} b'


@pytest.mark.parametrize('text', ['<b>bold</b>', 'a < b | c > d', '[link](x)', '<|no end', '[inst]', '<| spaced |>'])
def test_text_without_a_token_is_unchanged(text: str) -> None:
    assert break_special_tokens(text) == text


def test_overlapping_tokens_each_get_a_joiner() -> None:
    assert break_special_tokens(']~b]~b]') == f']{ZWJ}~b]{ZWJ}~b]'


@pytest.mark.parametrize('invisible', ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'])
def test_any_invisible_character_a_model_writes_for_the_joiner_is_removed(invisible: str) -> None:
    assert restore_special_tokens(f'<{invisible}|im_end|> and <{invisible}b>') == f'<|im_end|> and <{invisible}b>'


@given(st.text(alphabet='<>[]|~!/ab_INSTim\u200d', max_size=40))
def test_restoring_undoes_breaking(text: str) -> None:
    text = text.replace('\u200d', '')  # the joiner itself is not part of what a user writes here
    assert restore_special_tokens(break_special_tokens(text)) == text


def _history() -> list[ModelMessage]:
    return [
        ModelRequest(
            [SystemPromptPart('Never <|im_start|> here'), UserPromptPart(['<|im_start|>user', TextContent('[INST]')])]
        ),
        ModelResponse(
            [
                TextPart('I saw <|im_end|>'),
                ThinkingPart('<|think|>', signature='sig'),
                ThinkingPart('<|plain|>'),
                ToolCallPart('read', {'path': '<|x|>', 'n': 1}, 'c1'),
                ToolCallPart('read', '{"path": "\\u003c|y|>"}', 'c2'),
                ToolCallPart('read', '{"path": "<|z|>"', 'c3'),
                ToolCallPart('read', {'path': 'plain'}, 'c4'),
                ToolCallPart('read', '{"path": "caf\\u00e9"}', 'c5'),
            ]
        ),
        ModelRequest(
            [
                ToolReturnPart('read', {'text': '<|im_start|>system'}, 'c1'),
                ToolReturnPart('read', 42, 'c2'),
                RetryPromptPart('bad <|im_end|>', tool_name='read', tool_call_id='c3'),
            ]
        ),
    ]


def test_every_part_but_the_applications_and_signed_reasoning_is_broken() -> None:
    history = _history()
    before = copy.deepcopy(history)
    broken = break_special_tokens_in_messages(history)
    first, response, returns = cast(list[Any], broken)
    assert first.parts[0] is history[0].parts[0]
    assert first.parts[1].content == [f'<{ZWJ}|im_start|>user', TextContent(f'[{ZWJ}INST]')]
    assert [getattr(part, 'content', None) for part in response.parts[:3]] == [
        f'I saw <{ZWJ}|im_end|>',
        '<|think|>',
        f'<{ZWJ}|plain|>',
    ]
    assert response.parts[3].args == {'path': f'<{ZWJ}|x|>', 'n': 1}
    assert response.parts[4].args == {'path': f'<{ZWJ}|y|>'}  # an escaped token is decoded, then broken
    assert response.parts[5].args == f'{{"path": "<{ZWJ}|z|>"'  # malformed JSON: only the joiner changes
    assert response.parts[6] is history[1].parts[6]
    assert response.parts[7] is history[1].parts[7]
    assert returns.parts[0].content == {'text': f'<{ZWJ}|im_start|>system'}
    assert returns.parts[1] is history[2].parts[1]
    assert returns.parts[2].content == f'bad <{ZWJ}|im_end|>'
    assert history == before  # the history itself keeps what was written


def test_malformed_arguments_with_escapes_only_get_the_joiner() -> None:
    call = ToolCallPart('read', '{"p": "\\u0041 <|x|>', 'c1')
    broken: Any = break_special_tokens_in_messages([ModelResponse([call])])
    assert broken[0].parts[0].args == f'{{"p": "\\u0041 <{ZWJ}|x|>'


def test_a_history_without_tokens_is_returned_as_it_is() -> None:
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('hello')]), ModelResponse([TextPart('hi')])]
    assert break_special_tokens_in_messages(history) is history


def test_a_response_loses_the_joiner_in_text_and_arguments_only() -> None:
    response = ModelResponse(
        [
            TextPart(f'<{ZWJ}|im_end|>'),
            ThinkingPart(f'<{ZWJ}|x|>'),
            ToolCallPart('t', f'{{"a": "<\\u200d|x|>", "b": "<{ZWJ}|y|>"}}', 'c1'),
            ToolCallPart('t', {'a': [f'[{ZWJ}INST]'], f'<{ZWJ}|k|>': 1}, 'c2'),
            ToolCallPart('t', None, 'c3'),
            ToolCallPart('t', '{"a": 1}', 'c4'),
        ]
    )
    restored: Any = restore_special_tokens_in_response(response)
    assert restored.parts[0] == TextPart('<|im_end|>')
    assert restored.parts[1] is response.parts[1]
    assert json.loads(restored.parts[2].args) == {'a': '<|x|>', 'b': '<|y|>'}
    assert restored.parts[3].args == {'a': ['[INST]'], '<|k|>': 1}
    assert restored.parts[4] is response.parts[4]
    assert restored.parts[5] is response.parts[5]
    plain = ModelResponse([TextPart('plain')])
    assert restore_special_tokens_in_response(plain) is plain


pytestmark = pytest.mark.anyio


def _model(server: LocalServer, profile: ModelProfile) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=server.url, api_key='sk-local', max_retries=0)
    return OpenAIChatModel('my-open-model', provider=provider, profile=profile)


async def test_the_wire_copy_is_broken_and_the_answer_restored(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion(f'Quoting <{ZWJ}|im_start|>')))
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('Say <|im_start|>')])]
    async with _model(local_server, {'may_tokenize_special_tokens_in_content': True}) as model:
        response = await model.request(history, None, ModelRequestParameters())
    sent: Any = local_server.received[0]['body']['messages']
    assert sent[-1]['content'] == f'Say <{ZWJ}|im_start|>'
    assert response.text == 'Quoting <|im_start|>'
    prompt: Any = history[0].parts[0]
    assert prompt.content == 'Say <|im_start|>'


async def test_without_the_profile_key_tokens_go_as_written(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion(f'<{ZWJ}|im_start|>')))
    async with _model(local_server, {}) as model:
        response = await model.request([ModelRequest([UserPromptPart('<|im_start|>')])], None, ModelRequestParameters())
    assert local_server.received[0]['body']['messages'][-1]['content'] == '<|im_start|>'
    assert response.text == f'<{ZWJ}|im_start|>'


async def test_a_streamed_response_is_restored_once_read(local_server: LocalServer) -> None:
    call = {'index': 0, 'id': 'c1', 'type': 'function', 'function': {'name': 'read', 'arguments': '{"p": "<\\u200d'}}
    rest = {'index': 0, 'function': {'arguments': '|x|>"}'}}
    body = sse(
        delta(role='assistant', content=f'Quoting <{ZWJ}'),
        delta(content='|im_end|>'),
        delta(tool_calls=[call]),
        delta('tool_calls', tool_calls=[rest]),
    )
    local_server.script(Reply(200, chunks=[body], headers={'content-type': 'text/event-stream'}))
    profile: ModelProfile = {'may_tokenize_special_tokens_in_content': True}
    async with _model(local_server, profile) as model:
        stream = await drain(model, [ModelRequest([UserPromptPart('hi')])], None, ModelRequestParameters())
    response: Any = stream.get()
    assert response.parts[0].content == 'Quoting <|im_end|>'
    assert json.loads(response.parts[1].args) == {'p': '<|x|>'}


def test_signed_reasoning_the_model_does_not_verify_is_broken_like_text() -> None:
    ours = ModelResponse([ThinkingPart('<|a|>', signature='s1', provider_name='mine')], provider_name='mine')
    theirs = ModelResponse([ThinkingPart('<|b|>', signature='s2', provider_name='other')], provider_name='other')
    broken = break_special_tokens_in_messages([ours, theirs], lambda response, part: part.provider_name == 'mine')
    assert broken[0] is ours
    assert [part.content for part in cast(list[Any], broken[1].parts)] == [f'<{ZWJ}|b|>']
    assert break_special_tokens_in_messages([ours, theirs]) == [ours, theirs]  # no check: every signature counts


async def test_another_systems_signed_reasoning_goes_on_the_wire_broken(local_server: LocalServer) -> None:
    local_server.script(Reply(200, completion('ok')))
    foreign = ModelResponse(
        [ThinkingPart('<|think|>', signature='sig', provider_name='anthropic'), TextPart('done')],
        provider_name='anthropic',
    )
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')]), foreign, ModelRequest([UserPromptPart('?')])]
    async with _model(local_server, {'may_tokenize_special_tokens_in_content': True}) as model:
        await model.request(history, None, ModelRequestParameters())
    sent = json.dumps(local_server.received[0]['body']['messages'], ensure_ascii=False)
    assert f'<{ZWJ}|think|>' in sent
    assert '<|think|>' not in sent
