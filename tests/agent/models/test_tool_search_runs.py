"""Agent runs with deferred tools pick the provider's own tool search when the model has one (Anthropic's on recent
Claude models, OpenAI Responses' on gpt-5.4 and later) and the agent's `search_tools` otherwise, over a real local
HTTP server; `ToolSearch(strategy=...)` forces one or the other."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, Tool, UserError
from edgewise.agent.capabilities import ToolSearch
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.ollama import OllamaProvider
from edgewise.agent.providers.openai import OpenAIProvider

from ._helpers import validate_responses_body
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio


def get_weather(city: str) -> str:
    """Get the weather in a city."""
    return f'sunny in {city}'


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


TOOLS = [Tool(add), Tool(get_weather, defer_loading=True)]


def _claude(server: LocalServer, name: str = 'claude-sonnet-4-5') -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel(name, provider=provider)


def _gpt(server: LocalServer, name: str = 'gpt-5.4') -> OpenAIResponsesModel:
    return OpenAIResponsesModel(name, provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _claude_answer(*content: dict[str, Any], stop_reason: str = 'end_turn') -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': list(content),
        'stop_reason': stop_reason,
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def _gpt_answer(*output: dict[str, Any]) -> dict[str, Any]:
    return {'id': 'r', 'object': 'response', 'model': 'gpt-5.4', 'status': 'completed', 'output': list(output)}


GPT_TEXT = {
    'type': 'message',
    'id': 'm',
    'role': 'assistant',
    'status': 'completed',
    'content': [{'type': 'output_text', 'text': 'Sunny.', 'annotations': []}],
}
CLAUDE_SEARCH = [
    {'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': 'tool_search_tool_bm25', 'input': {'query': 'weather'}},
    {
        'type': 'tool_search_tool_result',
        'tool_use_id': 'srvtoolu_1',
        'content': {
            'type': 'tool_search_tool_search_result',
            'tool_references': [{'type': 'tool_reference', 'tool_name': 'get_weather'}],
        },
    },
    {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'city': 'Paris'}},
]


def _claude_tools(body: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(t['name'], t.get('type') or t.get('defer_loading')) for t in body['tools']]


def _gpt_tools(body: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(t.get('name', t['type']), t.get('defer_loading')) for t in body['tools']]


async def test_a_claude_model_with_tool_search_gets_anthropics_search_and_the_deferred_tools(
    local_server: LocalServer,
) -> None:
    local_server.script(
        Reply(body=_claude_answer(*CLAUDE_SEARCH, stop_reason='tool_use')),
        Reply(body=_claude_answer({'type': 'text', 'text': 'Sunny.'})),
    )
    async with _claude(local_server) as model:
        result = await Agent(model, tools=TOOLS).run('Weather in Paris?')

    assert result.output == 'Sunny.'
    # (the SDK's types of a tool's `input_schema` drop `additionalProperties`: the mapping tests validate the bodies)
    bodies = [r['body'] for r in local_server.received]
    expected = [('add', None), ('get_weather', True), ('tool_search_tool_bm25', 'tool_search_tool_bm25_20251119')]
    # found, the tool stays the search's: Anthropic keeps its schema shown from the history's reference
    assert [_claude_tools(body) for body in bodies] == [expected, expected]
    assert [b['type'] for b in bodies[1]['messages'][1]['content']] == [
        'server_tool_use',
        'tool_search_tool_result',
        'tool_use',
    ]
    assert bodies[1]['messages'][2]['content'][0]['content'] == [{'type': 'text', 'text': 'sunny in Paris'}]


async def test_an_older_claude_model_gets_search_tools(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_claude_answer({'type': 'text', 'text': 'ok'})))
    async with _claude(local_server, 'claude-sonnet-4-0') as model:
        await Agent(model, tools=TOOLS).run('Weather in Paris?')

    assert _claude_tools(local_server.received[0]['body']) == [('add', None), ('search_tools', None)]


@pytest.mark.parametrize('strategy', ['bm25', 'regex'])
async def test_a_named_strategy_asks_for_anthropics_search(local_server: LocalServer, strategy: Any) -> None:
    local_server.script(Reply(body=_claude_answer({'type': 'text', 'text': 'ok'})))
    async with _claude(local_server) as model:
        await Agent(model, tools=TOOLS, capabilities=[ToolSearch(strategy=strategy)]).run('Weather in Paris?')

    tools = _claude_tools(local_server.received[0]['body'])
    assert tools == [('add', None), ('get_weather', True), (f'tool_search_tool_{strategy}', tools[2][1])]


async def test_a_gpt_model_with_tool_search_gets_openais_search_and_the_deferred_tools(
    local_server: LocalServer,
) -> None:
    search_call = {'type': 'tool_search_call', 'id': 'tsc', 'call_id': 'cs', 'execution': 'server',
                   'status': 'completed', 'arguments': {'paths': ['get_weather']}}  # fmt: skip
    weather = {'type': 'function', 'name': 'get_weather', 'parameters': {}, 'defer_loading': True}
    search_output = {'type': 'tool_search_output', 'id': 'tso', 'call_id': 'cs', 'execution': 'server',
                     'status': 'completed', 'tools': [weather]}  # fmt: skip
    call = {'type': 'function_call', 'id': 'fc', 'call_id': 'cw', 'name': 'get_weather', 'namespace': 'get_weather',
            'arguments': '{"city": "Paris"}', 'status': 'completed'}  # fmt: skip
    local_server.script(
        Reply(body=_gpt_answer(search_call, search_output, call)),
        Reply(body=_gpt_answer(GPT_TEXT)),
    )
    async with _gpt(local_server) as model:
        result = await Agent(model, tools=TOOLS, capabilities=[ToolSearch()]).run('Weather in Paris?')

    assert result.output == 'Sunny.'
    bodies = [r['body'] for r in local_server.received]
    for body in bodies:
        validate_responses_body(body)
    expected = [('add', None), ('get_weather', True), ('tool_search', None)]
    assert [_gpt_tools(body) for body in bodies] == [expected, expected]
    assert [(i['type'], i.get('namespace')) for i in bodies[1]['input'][1:]] == [
        ('tool_search_call', None),
        ('tool_search_output', None),
        ('function_call', 'get_weather'),
        ('function_call_output', None),
    ]


@pytest.mark.parametrize('name', ['gpt-4.1', 'gpt-5.4-nano'])
async def test_a_gpt_model_without_tool_search_gets_search_tools(local_server: LocalServer, name: str) -> None:
    local_server.script(Reply(body=_gpt_answer(GPT_TEXT)))
    async with _gpt(local_server, name) as model:
        await Agent(model, tools=TOOLS).run('Weather in Paris?')

    assert _gpt_tools(local_server.received[0]['body']) == [('add', None), ('search_tools', None)]


async def test_an_openai_compatible_server_gets_search_tools(local_server: LocalServer) -> None:
    # the family's profile has the search, but only OpenAI's own API takes a deferred tool next to it
    model = OpenAIResponsesModel('gpt-5.4', provider=OllamaProvider(base_url=local_server.url))
    assert model.tool_deferral_mode is None
    local_server.script(Reply(body=_gpt_answer(GPT_TEXT)))
    async with model:
        await Agent(model, tools=TOOLS).run('Weather in Paris?')
    assert _gpt_tools(local_server.received[0]['body']) == [('add', None), ('search_tools', None)]


@pytest.mark.parametrize('strategy', ['keywords', 'function'])
async def test_a_search_run_by_the_agent_is_kept_with_any_model(local_server: LocalServer, strategy: str) -> None:
    def mine(ctx: Any, queries: Any, tools: Any) -> list[str]:
        return []

    local_server.script(Reply(body=_gpt_answer(GPT_TEXT)))
    capability = ToolSearch[None](strategy='keywords' if strategy == 'keywords' else mine)
    async with _gpt(local_server) as model:
        await Agent(model, tools=TOOLS, capabilities=[capability]).run('Weather in Paris?')

    assert _gpt_tools(local_server.received[0]['body']) == [('add', None), ('search_tools', None)]


async def test_a_named_strategy_is_a_user_error_with_openai(local_server: LocalServer) -> None:
    async with _gpt(local_server) as model:
        agent = Agent(model, tools=TOOLS, capabilities=[ToolSearch(strategy='bm25')])
        with pytest.raises(UserError, match='Anthropic-native strategy'):
            await agent.run('Weather in Paris?')
    assert local_server.received == []


async def test_tools_a_provider_search_found_are_shown_to_a_model_without_one(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=_claude_answer(*CLAUDE_SEARCH, stop_reason='tool_use')),
        Reply(body=_claude_answer({'type': 'text', 'text': 'Sunny.'})),
    )
    async with _claude(local_server) as model:
        first = await Agent(model, tools=TOOLS).run('Weather in Paris?')

    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart('ok')])

    await Agent(FunctionModel(answer), tools=TOOLS).run('And in Rome?', message_history=first.all_messages())
    assert [(t.name, t.defer_loading) for t in seen[0].function_tools] == [
        ('add', False),
        ('get_weather', False),
        ('search_tools', False),
    ]
    assert seen[0].model_request_parameters.native_tools == []
