"""pydantic-ai 2.68's request-scoped system prompts (`SystemPromptPart(scope='request')`): sent with their own request
only. A model whose API cannot clear them is sent the current request's at its end and none of the earlier ones
(`Model.prepare_messages`); Anthropic's Messages API on the models that take it
(`supports_request_scoped_system_prompts`) gets every one, each in a `system` entry with
`clear_at: 'next_user_message'`. Checked on what a `FunctionModel` is
given and on what a real local HTTP server receives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, capture_run_messages
from edgewise.agent.capabilities import AbstractCapability, ModelRequestContext, WrapModelRequestHandler
from edgewise.agent.exceptions import ModelRetry
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models._anthropic_system_entries import place_system_entries
from edgewise.agent.models.anthropic import AnthropicModel, AnthropicModelSettings
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.profiles import DEFAULT_PROFILE
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

BETA = 'mid-conversation-system-clear-at-2026-08-21'


class Budget(AbstractCapability[object]):
    """Tells the model, with each request only, how many requests are left: a request-scoped prompt added to the
    request being prepared by a `before_model_request` hook."""

    def __init__(self) -> None:
        self.left = 3

    async def before_model_request(
        self, ctx: RunContext[object], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        last = request_context.messages[-1]
        assert isinstance(last, ModelRequest)
        last.parts = [*last.parts, SystemPromptPart(f'{self.left} requests left', scope='request')]
        self.left -= 1
        return request_context


def _with_tool(agent: Agent[None, str]) -> None:
    @agent.tool_plain
    def lookup() -> str:
        """Look something up."""
        return 'found'


def _system_texts(messages: list[ModelMessage]) -> list[str]:
    return [
        p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, SystemPromptPart)
    ]


async def test_a_function_model_sees_each_request_scoped_prompt_on_its_own_request_only() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        if len(seen) == 1:
            return ModelResponse([ToolCallPart('lookup', {}, 'c1')])
        return ModelResponse([TextPart('done')])

    agent = Agent(FunctionModel(model), system_prompt='Be brief.', capabilities=[Budget()])
    _with_tool(agent)
    result = await agent.run('go')

    assert [_system_texts(messages) for messages in seen] == [
        ['Be brief.', '3 requests left'],
        ['Be brief.', '2 requests left'],
    ]
    # The current one ends the last request, after the tool's result.
    last = seen[1][-1]
    assert isinstance(last, ModelRequest)
    assert [type(part) for part in last.parts] == [ToolReturnPart, SystemPromptPart]
    # The history keeps every one, where it was added.
    assert _system_texts(result.all_messages()) == ['Be brief.', '3 requests left', '2 requests left']
    scopes = [p.scope for m in result.all_messages() for p in m.parts if isinstance(p, SystemPromptPart)]
    assert scopes == ['conversation', 'request', 'request']


async def test_a_request_scoped_prompt_of_a_given_history_is_not_sent_again() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse([TextPart('ok')])

    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi'), SystemPromptPart('it is noon', scope='request')]),
        ModelResponse([TextPart('hello')]),
    ]
    await Agent(FunctionModel(model)).run('again', message_history=history)
    assert [[type(p).__name__ for p in m.parts] for m in seen[0]] == [
        ['UserPromptPart'],
        ['TextPart'],
        ['UserPromptPart'],
    ]


def test_prepare_messages_keeps_what_an_api_clearing_the_prompts_can_clear() -> None:
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi'), SystemPromptPart('first', scope='request')]),
        ModelResponse([ToolCallPart('lookup', {}, 'c1')]),
        ModelRequest([ToolReturnPart('lookup', 'found', 'c1'), SystemPromptPart('second', scope='request')]),
        ModelResponse([TextPart('no')]),
        # Only system prompts follow `second`: no user turn ever clears it, so it is left out.
        ModelRequest([SystemPromptPart('try again'), SystemPromptPart('third', scope='request')]),
    ]
    clearing = FunctionModel(lambda m, i: ModelResponse([]), profile={'supports_request_scoped_system_prompts': True})
    assert _system_texts(clearing.prepare_messages(history)) == ['first', 'try again', 'third']
    plain = FunctionModel(lambda m, i: ModelResponse([]))
    assert _system_texts(plain.prepare_messages(history)) == ['try again', 'third']
    assert DEFAULT_PROFILE['supports_request_scoped_system_prompts'] is False


def test_a_history_without_request_scoped_prompts_is_prepared_unchanged() -> None:
    history: list[ModelMessage] = [ModelRequest([SystemPromptPart('sys'), UserPromptPart('hi')])]
    assert FunctionModel(lambda m, i: ModelResponse([])).prepare_messages(history) is history


def _chat_messages(body: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(message['role'], message.get('content')) for message in body['messages']]


async def test_openai_chat_sends_the_prompt_as_a_system_message_of_its_request_only(local_server: LocalServer) -> None:
    call = {'id': 'c1', 'type': 'function', 'function': {'name': 'lookup', 'arguments': '{}'}}
    local_server.script(
        Reply(body=completion(None, tool_calls=[call], finish_reason='tool_calls')), Reply(body=completion('done'))
    )
    provider = OpenAIProvider(api_key='k', base_url=local_server.url)
    async with OpenAIChatModel('gpt-4o', provider=provider) as model:
        agent = Agent(model, capabilities=[Budget()])
        _with_tool(agent)
        await agent.run('go')
    first, second = (request['body'] for request in local_server.received)
    assert _chat_messages(first) == [('user', 'go'), ('system', '3 requests left')]
    assert _chat_messages(second) == [
        ('user', 'go'),
        ('assistant', None),
        ('tool', 'found'),
        ('system', '2 requests left'),
    ]


def _anthropic_answer(*content: dict[str, Any], stop_reason: str = 'end_turn') -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-opus-5',
        'content': list(content),
        'stop_reason': stop_reason,
        'usage': {'input_tokens': 3, 'output_tokens': 1},
    }


TOOL_USE = {'type': 'tool_use', 'id': 'c1', 'name': 'lookup', 'input': {}}
TOOL_RESULT = {
    'type': 'tool_result',
    'tool_use_id': 'c1',
    'content': [{'type': 'text', 'text': 'found'}],
    'is_error': False,
}


def _entry(text: str) -> dict[str, Any]:
    return {
        'role': 'system',
        'content': [{'type': 'text', 'text': f'<system>{text}</system>'}],
        'clear_at': 'next_user_message',
    }


async def _anthropic_run(
    local_server: LocalServer, model_name: str, settings: AnthropicModelSettings | None = None
) -> list[dict[str, Any]]:
    local_server.script(
        Reply(body=_anthropic_answer(TOOL_USE, stop_reason='tool_use')),
        Reply(body=_anthropic_answer({'type': 'text', 'text': 'done'})),
    )
    provider = AnthropicProvider(api_key='k', base_url=local_server.url)
    async with AnthropicModel(model_name, provider=provider, settings=settings) as model:
        agent = Agent(model, system_prompt='Be brief.', capabilities=[Budget()])
        _with_tool(agent)
        await agent.run('go')
    return local_server.received


async def test_anthropic_sends_every_request_scoped_prompt_as_a_self_clearing_entry(local_server: LocalServer) -> None:
    first, second = await _anthropic_run(local_server, 'claude-opus-5', {'anthropic_cache_messages': True})
    cached_go = {'type': 'text', 'text': 'go', 'cache_control': {'type': 'ephemeral'}}
    assert first['body']['messages'] == [
        {'role': 'user', 'content': [cached_go]},
        _entry('3 requests left'),
    ]
    # The first entry is sent again unchanged (the API no longer shows it), and the breakpoint stays off the entries.
    assert second['body']['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}]},
        _entry('3 requests left'),
        {'role': 'assistant', 'content': [TOOL_USE]},
        {'role': 'user', 'content': [{**TOOL_RESULT, 'cache_control': {'type': 'ephemeral'}}]},
        _entry('2 requests left'),
    ]
    assert [request['headers'].get('anthropic-beta') for request in (first, second)] == [BETA, BETA]
    # The standing prompt stays in `system`, with the announcement of what `<system>` blocks are ahead of it.
    assert second['body']['system'].endswith('\n\nBe brief.')


def _text_block(text: str) -> dict[str, Any]:
    return {'type': 'text', 'text': text}


async def test_anthropic_without_the_entry_sends_the_prompt_in_its_user_turn_once(local_server: LocalServer) -> None:
    first, second = await _anthropic_run(local_server, 'claude-sonnet-4-5')
    assert first['body']['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}, _text_block('<system>3 requests left</system>')]},
    ]
    assert second['body']['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}]},
        {'role': 'assistant', 'content': [TOOL_USE]},
        {'role': 'user', 'content': [TOOL_RESULT, _text_block('<system>2 requests left</system>')]},
    ]
    assert [request['headers'].get('anthropic-beta') for request in (first, second)] == [None, None]


def test_the_profile_key_is_set_for_the_models_taking_the_entry() -> None:
    assert (AnthropicProvider.model_profile('claude-opus-5') or {}).get('supports_request_scoped_system_prompts')
    assert 'supports_request_scoped_system_prompts' not in (AnthropicProvider.model_profile('claude-sonnet-4-5') or {})


def test_system_entries_move_before_the_assistant_turn_and_get_a_user_turn_to_follow() -> None:
    user = {'role': 'user', 'content': [{'type': 'text', 'text': 'u'}]}
    assistant = {'role': 'assistant', 'content': [{'type': 'text', 'text': 'a'}]}
    entry = {'role': 'system', 'content': [], 'clear_at': 'next_user_message'}
    anchor = {'role': 'user', 'content': [{'type': 'text', 'text': '.'}]}
    assert place_system_entries([user, entry, user, assistant]) == [user, user, entry, assistant]
    assert place_system_entries([entry, assistant]) == [anchor, entry, assistant]
    assert place_system_entries([user, assistant, entry]) == [user, assistant, anchor, entry]
    assert place_system_entries([user, entry, entry]) == [user, entry, entry]
    plain = [user, assistant]
    assert place_system_entries(plain) is plain


def test_a_retry_prompt_counts_as_a_user_turn_that_clears() -> None:
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi'), SystemPromptPart('first', scope='request')]),
        ModelResponse([TextPart('bad')]),
        ModelRequest([RetryPromptPart('try again')]),
    ]
    clearing = FunctionModel(lambda m, i: ModelResponse([]), profile={'supports_request_scoped_system_prompts': True})
    assert _system_texts(clearing.prepare_messages(history)) == ['first']


class RetryFirst(AbstractCapability[object]):
    """Asks for a retry of the first model request without sending it (so it gets no response)."""

    def __init__(self) -> None:
        self.calls = 0

    async def wrap_model_request(
        self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        self.calls += 1
        if self.calls == 1:
            raise ModelRetry('not yet')
        return await handler(request_context)


async def test_a_step_retried_without_a_response_drops_its_request_scoped_prompts() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse([TextPart('done')])

    result = await Agent(FunctionModel(model), capabilities=[Budget(), RetryFirst()]).run('go')
    # The retried step's prompt is gone: only the one written for the request that was sent is there.
    assert [_system_texts(messages) for messages in seen] == [['2 requests left']]
    assert _system_texts(result.all_messages()) == ['2 requests left']


async def test_a_failed_request_leaves_no_request_scoped_prompt_behind() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError('down')

    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='down'):
        await Agent(FunctionModel(model), capabilities=[Budget()]).run('go')
    assert [[type(part).__name__ for part in message.parts] for message in messages] == [['UserPromptPart']]


async def test_a_failed_stream_leaves_no_request_scoped_prompt_behind() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise RuntimeError('down')
        yield 'never'

    agent = Agent(FunctionModel(stream_function=stream), capabilities=[Budget()])
    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='down'):
        async with agent.run_stream('go') as result:
            await result.get_output()
    assert [[type(part).__name__ for part in message.parts] for message in messages] == [['UserPromptPart']]


async def test_a_request_retried_without_a_response_is_sent_with_the_retry_as_one() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse([TextPart('done')])

    await Agent(FunctionModel(model), capabilities=[RetryFirst()]).run('go')
    assert [[type(part).__name__ for part in message.parts] for message in seen[0]] == [
        ['RetryPromptPart', 'UserPromptPart']
    ]
