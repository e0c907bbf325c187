"""Tools revealed mid-run on the wire (pydantic-ai 2.68's `tool_addition_mode`), over a real local HTTP server: a
tool's `ToolReturn(tools=[...])` reveals a `defer_loading=True` tool, and the next request carries OpenAI's
`additional_tools` item or Anthropic's `tool_addition` blocks where the reveal stands; models without the mode keep
the system prompt announcement."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dirty_equals import IsStr

from edgewise.agent import Agent
from edgewise.agent.capabilities import Capability
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturn,
    ToolSearchReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import Model, ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tools import ToolDefinition

from ._helpers import validate_anthropic_body, validate_responses_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

ANNOUNCED = 'The following tool(s) are now available: `take_key`'
BETA = 'mid-conversation-tool-changes-2026-07-01'
EMPTY: dict[str, Any] = {'additionalProperties': False, 'properties': {}, 'type': 'object'}
TAKE_KEY_PARAM: dict[str, Any] = {
    'type': 'function',
    'name': 'take_key',
    'parameters': EMPTY,
    'strict': False,
    'description': 'Take the key from the drawer.',
}
SSE = {'content-type': 'text/event-stream'}


def drawer_agent(model: Model, reveal: list[str]) -> Agent[None, str]:
    """An agent whose `open_drawer` reveals the tools of `reveal`; `take_key` is hidden until then."""
    agent = Agent(model)

    @agent.tool_plain
    def open_drawer() -> ToolReturn:
        """Open the drawer."""
        return ToolReturn(return_value='opened', tools=reveal)

    @agent.tool_plain(defer_loading=True)
    def take_key() -> str:
        """Take the key from the drawer."""
        return 'key taken'

    return agent


# OpenAI Responses: `additional_tools` items.


def responses_model(server: LocalServer, name: str = 'gpt-4o') -> OpenAIResponsesModel:
    return OpenAIResponsesModel(name, provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def response(*output: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': 'resp_1',
        'object': 'response',
        'created_at': 0,
        'model': 'gpt-4o',
        'status': 'completed',
        'output': list(output),
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def function_call(name: str, call_id: str) -> dict[str, Any]:
    return {'type': 'function_call', 'id': f'fc_{call_id}', 'call_id': call_id, 'name': name, 'arguments': '{}'}


TEXT = {'type': 'message', 'id': 'msg_1', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': 'done'}]}


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [t.get('name') or t['type'] for t in tools]


async def test_a_revealed_tool_goes_in_an_additional_tools_item_where_it_was_revealed(
    local_server: LocalServer,
) -> None:
    local_server.script(
        Reply(body=response(function_call('open_drawer', 'c1'))),
        Reply(body=response(function_call('take_key', 'c2'))),
        Reply(body=response(TEXT)),
    )
    async with responses_model(local_server) as model:
        result = await drawer_agent(model, ['take_key']).run('Open the drawer')
    assert result.output == 'done'
    first, second, third = (r['body'] for r in local_server.received)
    assert names(first['tools']) == ['open_drawer', 'search_tools']
    # not among the tools: its definition travels in the input, right after the result that revealed it
    assert names(second['tools']) == ['open_drawer', 'search_tools']
    assert second['tool_choice'] == 'auto'
    assert second['input'][1:] == [
        {'type': 'function_call', 'name': 'open_drawer', 'arguments': '{}', 'call_id': 'c1'},
        {'type': 'function_call_output', 'call_id': 'c1', 'output': 'opened'},
        {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]},
    ]
    assert not any(item.get('role') == 'system' for item in second['input'])  # no announcement besides
    # the model called it: the item stays where it was, once
    assert names(third['tools']) == ['open_drawer', 'search_tools']
    assert [item.get('type') for item in third['input']].count('additional_tools') == 1
    for body in (first, second, third):
        validate_responses_body(body)


async def test_a_tool_revealed_twice_is_declared_once(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=response(function_call('open_drawer', 'c1'))),
        Reply(body=response(function_call('open_drawer', 'c2'))),
        Reply(body=response(TEXT)),
    )
    async with responses_model(local_server) as model:
        await drawer_agent(model, ['take_key', 'take_key']).run('Open the drawer twice')
    last = local_server.received[-1]['body']
    # the first reveal's item, after the first result; the second reveal adds nothing
    assert [item.get('type') or item.get('role') for item in last['input']] == [
        'user',
        'function_call',
        'function_call_output',
        'additional_tools',
        'function_call',
        'function_call_output',
    ]
    assert last['input'][3] == {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]}


async def test_a_model_searching_natively_gets_the_definition_of_a_held_back_tool(local_server: LocalServer) -> None:
    local_server.script(Reply(body=response(function_call('open_drawer', 'c1'))), Reply(body=response(TEXT)))
    async with responses_model(local_server, 'gpt-5.4') as model:
        await drawer_agent(model, ['take_key']).run('Open the drawer')
    second = local_server.received[1]['body']
    # declared with its schema held back next to OpenAI's tool search; the item gives the schema where it was revealed
    assert [(t.get('name') or t['type'], t.get('defer_loading')) for t in second['tools']] == [
        ('open_drawer', None),
        ('take_key', True),
        ('tool_search', None),
    ]
    assert second['input'][-1] == {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]}
    validate_responses_body(second)


def responses_events(*events: dict[str, Any]) -> list[bytes]:
    return [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]


def streamed_call(name: str, call_id: str) -> list[bytes]:
    item = function_call(name, call_id)
    return responses_events(
        {'type': 'response.created', 'response': response()},
        {'type': 'response.output_item.added', 'output_index': 0, 'item': item},
        {'type': 'response.output_item.done', 'output_index': 0, 'item': item},
        {'type': 'response.completed', 'response': response(item)},
    )


def streamed_text(text: str) -> list[bytes]:
    return responses_events(
        {'type': 'response.created', 'response': response()},
        {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'output_index': 0, 'delta': text},
        {'type': 'response.completed', 'response': response(TEXT)},
    )


async def test_a_streamed_run_sends_the_item_too(local_server: LocalServer) -> None:
    local_server.script(
        Reply(headers=SSE, chunks=streamed_call('open_drawer', 'c1')), Reply(headers=SSE, chunks=streamed_text('ok'))
    )
    async with (
        responses_model(local_server) as model,
        drawer_agent(model, ['take_key']).run_stream('Open the drawer') as streamed,
    ):
        assert await streamed.get_output() == 'ok'
    second = local_server.received[1]['body']
    assert second['stream'] is True
    assert names(second['tools']) == ['open_drawer', 'search_tools']
    assert second['input'][-1] == {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]}


REVEALED: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart('Take the key'), ToolAvailabilityDeltaPart(tools_added=['take_key'])])
]
OPEN = ToolDefinition(name='open_drawer', parameters_json_schema=EMPTY)
TAKE_KEY = ToolDefinition(
    name='take_key', parameters_json_schema=EMPTY, description='Take the key from the drawer.', defer_loading=True
)


def revealed_params() -> ModelRequestParameters:
    return ModelRequestParameters(function_tools=[OPEN, TAKE_KEY], revealed_tool_names={'take_key'})


@pytest.mark.parametrize(
    ('name', 'declared', 'item'),
    [
        ('gpt-4o', ['open_drawer', 'take_key'], False),  # a choice of an item's tool is refused: declared instead
        ('gpt-5.6', ['open_drawer'], True),  # taken
    ],
)
async def test_a_tool_choice_naming_a_revealed_tool(
    local_server: LocalServer, name: str, declared: list[str], item: bool
) -> None:
    local_server.script(Reply(body=response(TEXT)))
    settings = ModelSettings(tool_choice=['take_key'])
    async with responses_model(local_server, name) as model:
        await model.request(REVEALED, settings, revealed_params())
    body = local_server.received[0]['body']
    assert names(body['tools']) == declared
    assert any(i.get('type') == 'additional_tools' for i in body['input']) is item
    validate_responses_body(body)


async def test_a_revealed_tool_the_input_holds_no_reveal_of_is_declared(local_server: LocalServer) -> None:
    local_server.script(Reply(body=response(TEXT)), Reply(body=response(TEXT)))
    announced: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('Take the key')])]
    async with responses_model(local_server) as model:
        await model.request(announced, None, revealed_params())
        # under a stored response, the reveal is in the input the API keeps
        stored = ModelSettings(openai_previous_response_id='resp_0')  # type: ignore[typeddict-unknown-key]
        await model.request(announced, stored, revealed_params())
    fresh, continued = (r['body'] for r in local_server.received)
    assert [(t['name'], t.get('defer_loading')) for t in fresh['tools']] == [('open_drawer', None), ('take_key', None)]
    assert names(continued['tools']) == ['open_drawer']


async def test_chat_completions_keeps_the_announcement(local_server: LocalServer) -> None:
    chat_call = {
        'id': 'chat_1',
        'object': 'chat.completion',
        'created': 0,
        'model': 'gpt-4o',
        'choices': [
            {
                'index': 0,
                'finish_reason': 'tool_calls',
                'message': {
                    'role': 'assistant',
                    'content': None,
                    'tool_calls': [
                        {'id': 'c1', 'type': 'function', 'function': {'name': 'open_drawer', 'arguments': '{}'}}
                    ],
                },
            }
        ],
    }
    chat_text = {
        **chat_call,
        'choices': [{'index': 0, 'finish_reason': 'stop', 'message': {'role': 'assistant', 'content': 'done'}}],
    }
    local_server.script(Reply(body=chat_call), Reply(body=chat_text))
    provider = OpenAIProvider(api_key='sk-test', base_url=local_server.url, max_retries=0)
    model = OpenAIChatModel('gpt-4o', provider=provider)
    assert model.profile.get('tool_addition_mode') == 'with_definitions'  # the provider's, not taken by this API
    assert model.tool_addition_mode is None
    async with model:
        await drawer_agent(model, ['take_key']).run('Open the drawer')
    second = local_server.received[1]['body']
    assert 'take_key' in [t['function']['name'] for t in second['tools']]
    assert second['messages'][-1] == {'role': 'system', 'content': ANNOUNCED}


# Anthropic: `tool_addition` blocks.


def anthropic_model(server: LocalServer, name: str = 'claude-opus-4-8') -> AnthropicModel:
    base_url = server.url.removesuffix('/v1')
    return AnthropicModel(name, provider=AnthropicProvider(api_key='sk-test', base_url=base_url, max_retries=0))


def message(*content: dict[str, Any], stop_reason: str = 'end_turn') -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-opus-4-8',
        'content': list(content),
        'stop_reason': stop_reason,
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def tool_use(name: str, call_id: str) -> dict[str, Any]:
    return {'type': 'tool_use', 'id': call_id, 'name': name, 'input': {}}


ADDITION = {'type': 'tool_addition', 'tool': {'type': 'tool_reference', 'name': 'take_key'}}


def betas(request: dict[str, Any]) -> list[str]:
    given = {k.lower(): v for k, v in request['headers'].items()}.get('anthropic-beta', '')
    return [b for b in given.split(',') if b]


async def test_a_revealed_tool_is_named_by_a_tool_addition_block(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=message(tool_use('open_drawer', 'c1'), stop_reason='tool_use')),
        Reply(body=message(tool_use('take_key', 'c2'), stop_reason='tool_use')),
        Reply(body=message({'type': 'text', 'text': 'done'})),
    )
    async with anthropic_model(local_server) as model:
        result = await drawer_agent(model, ['take_key']).run('Open the drawer')
    assert result.output == 'done'
    first, second, third = local_server.received
    # declared from the first request with its schema held back
    assert [(t['name'], t.get('defer_loading')) for t in first['body']['tools'] if 'name' in t][:2] == [
        ('open_drawer', None),
        ('take_key', True),
    ]
    assert BETA not in betas(first)
    assert second['body']['tools'] == first['body']['tools']  # the tools section stays as it was
    assert second['body']['messages'][1:] == [
        {'role': 'assistant', 'content': [tool_use('open_drawer', 'c1')]},
        {
            'role': 'user',
            'content': [
                {
                    'type': 'tool_result',
                    'tool_use_id': 'c1',
                    'content': [{'type': 'text', 'text': 'opened'}],
                    'is_error': False,
                }
            ],
        },
        {'role': 'system', 'content': [ADDITION]},
    ]
    assert ANNOUNCED not in json.dumps(second['body'])
    assert BETA in betas(second)
    assert BETA in betas(third)  # the block stays in the history
    validate_anthropic_messages(second['body'])


def validate_anthropic_messages(body: dict[str, Any]) -> None:
    """Fail unless the messages of `body` (its `system` entries and `tool_addition` blocks) are valid, as the
    `anthropic` SDK's beta types them (the tools are left out: the SDK's input schema type drops
    `additionalProperties`)."""
    validate_anthropic_body({key: value for key, value in body.items() if key != 'tools'})


async def test_an_anthropic_tool_revealed_twice_is_named_once(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=message(tool_use('open_drawer', 'c1'), stop_reason='tool_use')),
        Reply(body=message(tool_use('open_drawer', 'c2'), stop_reason='tool_use')),
        Reply(body=message({'type': 'text', 'text': 'done'})),
    )
    async with anthropic_model(local_server) as model:
        await drawer_agent(model, ['take_key', 'take_key']).run('Open the drawer twice')
    last = local_server.received[-1]['body']['messages']
    system_entries = [m for m in last if m['role'] == 'system']
    assert system_entries == [{'role': 'system', 'content': [ADDITION]}]
    assert last.index(system_entries[0]) == 3  # after the first result


async def test_a_block_naming_a_tool_the_request_does_not_declare_is_left_out(local_server: LocalServer) -> None:
    local_server.script(Reply(body=message({'type': 'text', 'text': 'done'})))
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Take it'), ToolAvailabilityDeltaPart(tools_added=['gone', 'open_drawer'])])
    ]
    async with anthropic_model(local_server) as model:
        await model.request(history, None, ModelRequestParameters(function_tools=[OPEN, TAKE_KEY]))
    sent = local_server.received[0]
    # `gone` is not declared, `open_drawer` is declared in full: nothing to reveal
    assert [m['role'] for m in sent['body']['messages']] == ['user']
    assert BETA not in betas(sent)


async def test_a_streamed_anthropic_run_sends_the_block_too(local_server: LocalServer) -> None:
    def stream(*blocks: dict[str, Any], stop_reason: str) -> list[bytes]:
        events: list[dict[str, Any]] = [{'type': 'message_start', 'message': message(stop_reason=stop_reason)}]
        for index, block in enumerate(blocks):
            events += [
                {'type': 'content_block_start', 'index': index, 'content_block': block},
                {'type': 'content_block_stop', 'index': index},
            ]
        events += [
            {'type': 'message_delta', 'delta': {'stop_reason': stop_reason}, 'usage': {'output_tokens': 3}},
            {'type': 'message_stop'},
        ]
        return [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]

    local_server.script(
        Reply(headers=SSE, chunks=stream(tool_use('open_drawer', 'c1'), stop_reason='tool_use')),
        Reply(headers=SSE, chunks=stream({'type': 'text', 'text': 'ok'}, stop_reason='end_turn')),
    )
    async with (
        anthropic_model(local_server) as model,
        drawer_agent(model, ['take_key']).run_stream('Open the drawer') as streamed,
    ):
        assert await streamed.get_output() == 'ok'
    second = local_server.received[1]
    assert second['body']['stream'] is True
    assert second['body']['messages'][-1] == {'role': 'system', 'content': [ADDITION]}
    assert BETA in betas(second)


async def test_an_earlier_claude_model_keeps_the_announcement(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=message(tool_use('open_drawer', 'c1'), stop_reason='tool_use')),
        Reply(body=message({'type': 'text', 'text': 'done'})),
    )
    async with anthropic_model(local_server, 'claude-sonnet-4-5') as model:
        assert model.tool_addition_mode is None
        await drawer_agent(model, ['take_key']).run('Open the drawer')
    second = local_server.received[1]
    assert ANNOUNCED in json.dumps(second['body'])
    assert 'tool_addition' not in json.dumps(second['body'])
    assert BETA not in betas(second)


# The agent's own tool search, and a fallback of models that take reveals differently.

FOUND: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart('Take the key')]),
    ModelResponse(parts=[ToolCallPart('search_tools', {'queries': ['key']}, 's1')]),
    ModelRequest(parts=[ToolSearchReturnPart(content={'discovered_tools': [{'name': 'take_key'}]}, tool_call_id='s1')]),
]
SEARCHED = ToolDefinition(
    name='take_key',
    parameters_json_schema=EMPTY,
    description='Take the key from the drawer.',
    defer_loading=True,
    with_native='tool_search',
)


def found_params() -> ModelRequestParameters:
    return ModelRequestParameters(function_tools=[OPEN, SEARCHED], revealed_tool_names={'take_key'})


async def test_a_tool_the_agents_search_found_goes_in_an_item_after_the_result(local_server: LocalServer) -> None:
    local_server.script(Reply(body=response(TEXT)))
    async with responses_model(local_server) as model:
        await model.request(FOUND, None, found_params())
    body = local_server.received[0]['body']
    assert names(body['tools']) == ['open_drawer']
    assert body['input'][-2:] == [
        {'type': 'function_call_output', 'call_id': 's1', 'output': IsStr()},
        {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]},
    ]
    validate_responses_body(body)


async def test_a_tool_the_agents_search_found_is_referenced_by_its_result(local_server: LocalServer) -> None:
    local_server.script(Reply(body=message({'type': 'text', 'text': 'done'})))
    async with anthropic_model(local_server) as model:
        await model.request(FOUND, None, found_params())
    body = local_server.received[0]['body']
    assert [(t['name'], t.get('defer_loading')) for t in body['tools']] == [('open_drawer', None), ('take_key', True)]
    assert body['messages'][-1] == {
        'role': 'user',
        'content': [
            {
                'type': 'tool_result',
                'tool_use_id': 's1',
                'content': [{'type': 'tool_reference', 'tool_name': 'take_key'}],
                'is_error': False,
            }
        ],
    }
    validate_anthropic_messages(body)


async def test_a_fallback_model_sends_each_model_the_reveal_as_it_takes_it(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=response(function_call('open_drawer', 'c1'))),
        Reply(status=500, body={'error': {'message': 'down', 'type': 'server_error'}}),
        Reply(body={
            'id': 'chat_1', 'object': 'chat.completion', 'created': 0, 'model': 'gpt-4o',
            'choices': [{'index': 0, 'finish_reason': 'stop', 'message': {'role': 'assistant', 'content': 'done'}}],
        }),
    )  # fmt: skip
    provider = OpenAIProvider(api_key='sk-test', base_url=local_server.url, max_retries=0)
    model = FallbackModel(
        OpenAIResponsesModel('gpt-4o', provider=provider), OpenAIChatModel('gpt-4o', provider=provider)
    )
    async with model:
        result = await drawer_agent(model, ['take_key']).run('Open the drawer')
    assert result.output == 'done'
    _, responses_body, chat_body = (r['body'] for r in local_server.received)
    assert responses_body['input'][-1] == {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]}
    assert chat_body['messages'][-1] == {'role': 'system', 'content': ANNOUNCED}
    assert 'take_key' in [t['function']['name'] for t in chat_body['tools']]


async def test_a_fallback_inside_a_fallback_still_sends_the_reveal_natively(local_server: LocalServer) -> None:
    """The outer fallback keeps the reveal as a part when a model at any depth takes it natively."""
    local_server.script(Reply(body=response(function_call('open_drawer', 'c1'))), Reply(body=response(TEXT)))
    provider = OpenAIProvider(api_key='sk-test', base_url=local_server.url, max_retries=0)
    inner = FallbackModel(
        OpenAIResponsesModel('gpt-4o', provider=provider), OpenAIChatModel('gpt-4o', provider=provider)
    )
    model = FallbackModel(inner, OpenAIChatModel('gpt-4o', provider=provider))
    async with model:
        result = await drawer_agent(model, ['take_key']).run('Open the drawer')
    assert result.output == 'done'
    second = local_server.received[1]['body']
    assert second['input'][-1] == {'type': 'additional_tools', 'role': 'developer', 'tools': [TAKE_KEY_PARAM]}


def audits() -> Capability[None]:
    """A deferred capability whose tool, `audit_log`, is hidden until the model loads the capability."""
    capability = Capability[None](id='audits', description='Audit tools.', defer_loading=True)

    @capability.tool_plain
    def audit_log(account: str) -> str:
        """The audit log of an account."""
        return f'{account}: clean'

    return capability


async def test_a_loaded_capabilitys_tool_is_declared_held_back_and_revealed_by_reference(
    local_server: LocalServer,
) -> None:
    load = {'type': 'tool_use', 'id': 'l1', 'name': 'load_capability', 'input': {'id': 'audits'}}
    local_server.script(
        Reply(body=message(load, stop_reason='tool_use')), Reply(body=message({'type': 'text', 'text': 'done'}))
    )
    async with anthropic_model(local_server) as model:
        await Agent(model, capabilities=[audits()]).run('Audit a-1')
    first, second = (r['body'] for r in local_server.received)
    # declared from the first request (as 2.68), so the tools section stays the same
    assert [(t['name'], t.get('defer_loading')) for t in first['tools']] == [
        ('load_capability', None),
        ('audit_log', True),
    ]
    assert second['tools'] == first['tools']
    assert {
        'role': 'system',
        'content': [{'type': 'tool_addition', 'tool': {'type': 'tool_reference', 'name': 'audit_log'}}],
    } in second['messages']


async def test_a_loaded_capabilitys_tool_goes_in_an_item_on_openai(local_server: LocalServer) -> None:
    load = {**function_call('load_capability', 'l1'), 'arguments': '{"id": "audits"}'}
    local_server.script(Reply(body=response(load)), Reply(body=response(TEXT)))
    async with responses_model(local_server) as model:
        await Agent(model, capabilities=[audits()]).run('Audit a-1')
    first, second = (r['body'] for r in local_server.received)
    assert names(first['tools']) == names(second['tools']) == ['load_capability']
    items = [item for item in second['input'] if item.get('type') == 'additional_tools']
    assert [[t['name'] for t in item['tools']] for item in items] == [['audit_log']]
    validate_responses_body(second)


async def test_the_tools_cache_point_goes_on_the_last_tool_not_held_back(local_server: LocalServer) -> None:
    local_server.script(Reply(body=message({'type': 'text', 'text': 'done'})))
    settings = ModelSettings(anthropic_cache_tool_definitions=True)  # type: ignore[typeddict-unknown-key]
    async with anthropic_model(local_server) as model:
        await model.request(REVEALED, settings, revealed_params())
    tools = local_server.received[0]['body']['tools']
    assert [(t['name'], t.get('defer_loading'), 'cache_control' in t) for t in tools] == [
        ('open_drawer', None, True),
        ('take_key', True, False),
    ]
