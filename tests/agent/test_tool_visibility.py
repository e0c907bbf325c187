"""How a request sends each function tool (`ToolVisibility`, pydantic-ai 2.68): `None` on parameters as authored,
one entry per function tool once a model resolves them, `visibility_of` falling back on the definitions, a deferred
tool `'deferred'` where the model can hold its schema back and `'withheld'` where it cannot, and the providers'
requests (over a real local HTTP server) sending each tool as resolved."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from edgewise.agent import Agent, Tool
from edgewise.agent.messages import (
    CapabilityInstructionSource,
    InstructionId,
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import InstructionVisibility, ModelRequestParameters, ToolVisibility
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIResponsesModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.native_tools._tool_search import ToolSearchTool
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from .models._helpers import validate_anthropic_body, validate_responses_body
from .models.conftest import LocalServer, Reply
from .models.conftest import local_server as local_server

SCHEMA: dict[str, Any] = {'type': 'object', 'properties': {'city': {'type': 'string'}}}
TIME = ToolDefinition(name='get_time', parameters_json_schema=SCHEMA, description='The time in a city.')
HIDDEN = ToolDefinition(
    name='get_weather',
    parameters_json_schema=SCHEMA,
    description='The weather in a city.',
    defer_loading=True,
    with_native='tool_search',
)
"""A tool of the tool search that no search has found yet."""
FOUND = ToolDefinition(
    name='get_forecast', parameters_json_schema=SCHEMA, description='The forecast.', with_native='tool_search'
)
"""A tool of the tool search that a search has found."""
FINAL = ToolDefinition(name='final_result', parameters_json_schema=SCHEMA, kind='output')
QUESTION: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('Weather in Paris?')])]


def _searched_params() -> ModelRequestParameters:
    return ModelRequestParameters(
        function_tools=[TIME, HIDDEN, FOUND], output_tools=[FINAL], native_tools=[ToolSearchTool(optional=True)]
    )


def test_the_literals_are_pydantic_ais() -> None:
    assert get_args(ToolVisibility) == ('visible', 'deferred', 'withheld', 'via_history')
    assert get_args(InstructionVisibility) == ('prefix', 'via_history')


def test_authored_parameters_have_no_table_and_print_as_authored() -> None:
    params = ModelRequestParameters(function_tools=[TIME, HIDDEN])
    assert params.tool_visibility is None
    assert params.instruction_visibility is None
    assert 'tool_visibility' not in repr(params)


def test_visibility_of_falls_back_on_the_definitions_until_resolved() -> None:
    params = ModelRequestParameters(function_tools=[TIME, HIDDEN], output_tools=[FINAL])
    assert [params.visibility_of(name) for name in ('get_time', 'get_weather', 'final_result', 'unknown')] == [
        'visible',
        'withheld',
        'visible',
        'visible',
    ]
    assert params.declared_function_tools == [TIME]
    assert list(params.declared_tool_defs) == ['get_time', 'final_result']


def test_an_entry_of_the_table_wins_over_the_definitions() -> None:
    params = ModelRequestParameters(
        function_tools=[TIME, HIDDEN], tool_visibility={'get_time': 'via_history', 'get_weather': 'deferred'}
    )
    assert params.visibility_of('get_time') == 'via_history'
    assert params.visibility_of('get_weather') == 'deferred'
    assert params.declared_function_tools == [HIDDEN]


def test_prepare_request_gives_every_function_tool_an_entry_and_output_tools_none() -> None:
    plain = ModelRequestParameters(function_tools=[TIME, FOUND], output_tools=[FINAL])
    _, resolved = TestModel().prepare_request(None, plain)
    assert resolved.tool_visibility == {'get_time': 'visible', 'get_forecast': 'visible'}
    assert resolved.visibility_of('final_result') == 'visible'
    assert repr(resolved).endswith(", tool_visibility={'get_time': 'visible', 'get_forecast': 'visible'})")
    assert plain.tool_visibility is None  # the authored parameters are left as they are


def test_without_function_tools_the_resolved_table_is_empty() -> None:
    _, resolved = TestModel().prepare_request(None, ModelRequestParameters(output_tools=[FINAL]))
    assert resolved.tool_visibility == {}


@pytest.mark.parametrize(
    ('mode', 'expected'),
    [
        ('with_tool_search', {'get_time': 'visible', 'get_weather': 'deferred', 'get_forecast': 'deferred'}),
        ('standalone', {'get_time': 'visible', 'get_weather': 'deferred', 'get_forecast': 'deferred'}),
        (None, {'get_time': 'visible', 'get_forecast': 'visible', 'get_weather': 'withheld'}),
    ],
)
def test_a_deferred_tool_is_deferred_where_the_model_can_hold_its_schema_back(
    mode: Any, expected: dict[str, ToolVisibility]
) -> None:
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[]), profile=ModelProfile(tool_deferral_mode=mode))
    _, resolved = model.prepare_request(None, _searched_params())
    assert resolved.tool_visibility == expected
    assert resolved.visibility_of('get_weather') == expected['get_weather']
    # a model that cannot hold a schema back leaves the hidden tool out, and still says so
    assert [t.name for t in resolved.declared_function_tools] == [
        name for name, visibility in expected.items() if visibility != 'withheld'
    ]


def test_a_wrapper_model_resolves_the_tools_as_the_model_it_wraps() -> None:
    # The wrapper's class maps no native tools itself: the wrapped Anthropic model keeps the tool search, so the
    # hidden tool is deferred through the wrapper as without it (not withheld, its search dropped).
    anthropic = AnthropicModel('claude-sonnet-4-5', provider=AnthropicProvider(api_key='test-key'))
    _, direct = anthropic.prepare_request(None, _searched_params())
    _, wrapped = WrapperModel(anthropic).prepare_request(None, _searched_params())
    assert wrapped.tool_visibility == direct.tool_visibility
    assert wrapped.visibility_of('get_weather') == 'deferred'
    assert [type(tool) for tool in wrapped.native_tools] == [ToolSearchTool]


def test_resolving_again_keeps_the_withheld_entries() -> None:
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[]))
    _, once = model.prepare_request(None, _searched_params())
    _, twice = model.prepare_request(None, once)
    expected: dict[str, ToolVisibility] = {'get_time': 'visible', 'get_forecast': 'visible', 'get_weather': 'withheld'}
    assert once.tool_visibility == expected
    assert twice.tool_visibility == expected


def test_a_local_fallback_left_out_for_its_native_tool_gets_no_entry() -> None:
    native = ToolSearchTool(strategy='bm25')
    fallback = ToolDefinition(name='search_locally', parameters_json_schema=SCHEMA, unless_native=native.unique_id)
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[]))
    params = ModelRequestParameters(function_tools=[TIME, fallback], native_tools=[native])
    _, resolved = model.prepare_request(None, params)
    assert resolved.tool_visibility == {'get_time': 'visible'}


def test_instruction_visibility_of_is_prefix_without_an_entry() -> None:
    loaded = InstructionPart('Refunds.', id=InstructionId(CapabilityInstructionSource('refunds')))
    plain = InstructionPart('Be brief.')
    params = ModelRequestParameters(instruction_parts=[plain, loaded])
    assert [params.instruction_visibility_of(part) for part in (plain, loaded)] == ['prefix', 'prefix']
    params.instruction_visibility = {'capability:refunds': 'via_history'}
    assert [params.instruction_visibility_of(part) for part in (plain, loaded)] == ['prefix', 'via_history']


def _weather(city: str) -> str:
    """The weather in a city."""
    return f'Sunny in {city}.'


def _time(city: str) -> str:
    """The time in a city."""
    return f'Noon in {city}.'


@pytest.mark.anyio
@pytest.mark.parametrize(
    ('mode', 'expected'),
    [
        ('with_tool_search', {'_time': 'visible', '_weather': 'deferred'}),
        (None, {'_time': 'visible', 'search_tools': 'visible', '_weather': 'withheld'}),
    ],
)
async def test_an_agent_run_shows_the_model_how_each_tool_is_sent(
    mode: Any, expected: dict[str, ToolVisibility]
) -> None:
    seen: list[dict[str, ToolVisibility] | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_request_parameters.tool_visibility)
        return ModelResponse(parts=[TextPart('Done.')])

    model = FunctionModel(answer, profile=ModelProfile(tool_deferral_mode=mode))
    agent = Agent(model, tools=[Tool(_weather, defer_loading=True), _time])
    result = await agent.run('Weather in Paris?')
    assert result.output == 'Done.'
    assert seen == [expected]


def _openai(server: LocalServer, name: str) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(name, provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _openai_answer() -> dict[str, Any]:
    text = {'type': 'output_text', 'text': 'Sunny.', 'annotations': []}
    message = {'type': 'message', 'id': 'm', 'role': 'assistant', 'status': 'completed', 'content': [text]}
    return {
        'id': 'resp_1',
        'object': 'response',
        'created_at': 0,
        'model': 'gpt-5.4',
        'status': 'completed',
        'output': [message],
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ('name', 'expected'),
    [
        ('gpt-5.4', {'get_time': 'visible', 'get_weather': 'deferred', 'get_forecast': 'deferred'}),
        ('gpt-4o', {'get_time': 'visible', 'get_forecast': 'visible', 'get_weather': 'withheld'}),
    ],
)
async def test_openai_responses_sends_each_tool_as_resolved(
    local_server: LocalServer, name: str, expected: dict[str, ToolVisibility]
) -> None:
    local_server.script(Reply(body=_openai_answer()))
    async with _openai(local_server, name) as model:
        _, resolved = model.prepare_request(None, _searched_params())
        await model.request(QUESTION, None, _searched_params())
    assert resolved.tool_visibility == expected
    body = local_server.received[0]['body']
    validate_responses_body(body)
    sent = [(t.get('name', t['type']), t.get('defer_loading', False)) for t in body['tools']]
    declared = [(n, v == 'deferred') for n, v in expected.items() if v != 'withheld']
    search = [('tool_search', False)] if 'deferred' in expected.values() else []
    assert sent == [*declared, ('final_result', False), *search]


def _anthropic(server: LocalServer, name: str) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel(name, provider=provider)


def _anthropic_answer() -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': 'Sunny.'}],
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ('name', 'expected'),
    [
        ('claude-sonnet-4-5', {'get_time': 'visible', 'get_weather': 'deferred', 'get_forecast': 'deferred'}),
        ('claude-sonnet-4-0', {'get_time': 'visible', 'get_forecast': 'visible', 'get_weather': 'withheld'}),
    ],
)
async def test_anthropic_sends_each_tool_as_resolved(
    local_server: LocalServer, name: str, expected: dict[str, ToolVisibility]
) -> None:
    local_server.script(Reply(body=_anthropic_answer()))
    async with _anthropic(local_server, name) as model:
        _, resolved = model.prepare_request(None, _searched_params())
        await model.request(QUESTION, None, _searched_params())
    assert resolved.tool_visibility == expected
    body = local_server.received[0]['body']
    validate_anthropic_body(body)
    sent = [(t['name'], t.get('defer_loading', False)) for t in body['tools']]
    declared = [(n, v == 'deferred') for n, v in expected.items() if v != 'withheld']
    search = [('tool_search_tool_bm25', False)] if 'deferred' in expected.values() else []
    assert sent == [*declared, ('final_result', False), *search]


def test_the_request_mappings_read_the_table_not_the_definitions() -> None:
    # A table that says otherwise than `defer_loading` (as a resolution for another model might): the mappings follow
    # it, so that what is sent is decided in one place.
    from edgewise.agent.models._anthropic_mapping import anthropic_request_body
    from edgewise.agent.models._openai_responses_mapping import responses_request_body
    from edgewise.agent.profiles.anthropic import anthropic_model_profile
    from edgewise.agent.profiles.openai import openai_model_profile

    params = ModelRequestParameters(
        function_tools=[TIME, HIDDEN, FOUND],
        tool_visibility={'get_time': 'deferred', 'get_weather': 'visible', 'get_forecast': 'via_history'},
    )
    openai = responses_request_body('gpt-5.4', QUESTION, None, params, openai_model_profile('gpt-5.4') or {})
    anthropic = anthropic_request_body(
        'claude-sonnet-4-5', QUESTION, None, params, anthropic_model_profile('claude-sonnet-4-5') or {}
    )
    for body in (openai, anthropic):
        assert [(t['name'], t.get('defer_loading', False)) for t in body['tools']] == [
            ('get_time', True),
            ('get_weather', False),
        ]
