"""The unified `thinking` and `service_tier` settings: resolved against each model's profile, and what each API
is sent for them (request bodies validated by the SDKs' request types)."""

from __future__ import annotations

import json
from typing import Any, cast

import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelRequest, TextPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._provider_model import ProviderModel
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.cerebras import CerebrasProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tools import ToolDefinition

from ._chat import completion
from ._helpers import validate_anthropic_body, validate_google_body, validate_responses_body
from ._provider_specs import ANTHROPIC, GOOGLE, RESPONSES
from .conftest import validate_chat_body

pytestmark = pytest.mark.anyio

_APIS: dict[str, tuple[type[ProviderModel], Any, Any, dict[str, Any]]] = {
    'chat': (OpenAIChatModel, OpenAIProvider, validate_chat_body, completion()),
    'responses': (OpenAIResponsesModel, OpenAIProvider, validate_responses_body, RESPONSES.reply),
    'anthropic': (AnthropicModel, AnthropicProvider, validate_anthropic_body, ANTHROPIC.reply),
    'google': (GoogleModel, GoogleProvider, validate_google_body, GOOGLE.reply),
}

TOOL = ToolDefinition(name='lookup', parameters_json_schema={'type': 'object', 'properties': {}})
OUTPUT = ToolDefinition(name='final_result', parameters_json_schema={'type': 'object', 'properties': {}}, kind='output')


class Sent:
    """The bodies a model sent, each validated against its API's request types."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []


def model_for(
    api: str,
    model_name: str,
    settings: ModelSettings | None = None,
    *,
    provider_class: Any = None,
    stream: bytes | None = None,
) -> tuple[ProviderModel, Sent]:
    """A model of `api` whose HTTP client validates and records each body, and answers `hello` (or `stream`)."""
    model_class, default_provider_class, validate, reply = _APIS[api]
    sent = Sent()

    def respond(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        validate(body)
        sent.bodies.append(body)
        if stream is not None:
            return httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=stream)
        return httpx.Response(200, json=reply)

    client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    provider = (provider_class or default_provider_class)(api_key='test-key', http_client=client)
    return model_class(model_name, provider=provider, settings=settings), sent


async def send(
    api: str,
    model_name: str,
    settings: dict[str, Any],
    params: ModelRequestParameters | None = None,
    *,
    provider_class: Any = None,
) -> dict[str, Any]:
    """The body `api`'s model `model_name` sends for one request with `settings`."""
    model, sent = model_for(api, model_name, provider_class=provider_class)
    await model.request([_prompt()], cast(ModelSettings, settings), params or ModelRequestParameters())
    return sent.bodies[0]


def _prompt() -> ModelRequest:
    return ModelRequest.user_text_prompt('hi')


# --- resolution against the profile ---------------------------------------------------------------------------


async def test_a_model_that_cannot_reason_is_sent_nothing_for_thinking() -> None:
    body = await send('chat', 'gpt-4o', {'thinking': 'high', 'temperature': 0.5})
    assert 'reasoning_effort' not in body
    assert body['temperature'] == 0.5


async def test_thinking_false_is_ignored_by_a_model_that_always_reasons() -> None:
    """Unless its profile knows its least effort (`openai_reasoning_efforts`: see test_thinking_efforts)."""
    chat = await send('chat', 'gpt-5-codex', {'thinking': False})
    assert 'reasoning_effort' not in chat
    gemini_pro = await send('google', 'gemini-2.5-pro', {'thinking': False})
    assert 'generationConfig' not in gemini_pro


async def test_the_request_parameters_carry_the_resolved_thinking_into_a_stream() -> None:
    stream = (
        b'data: {"id": "c", "model": "gpt-5.1", "choices": [{"index": 0, "delta": {"content": "ok"}, '
        b'"finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    )
    model, sent = model_for('chat', 'gpt-5.1', settings={'thinking': 'low'}, stream=stream)
    async with model.request_stream([_prompt()], None, ModelRequestParameters()) as response:
        async for _ in response:
            pass
    assert sent.bodies[0]['reasoning_effort'] == 'low'
    assert response.model_request_parameters.thinking == 'low'
    assert response.get().parts == [TextPart('ok')]


async def test_settings_of_the_model_the_agent_and_the_run_merge_before_resolution() -> None:
    model, sent = model_for('chat', 'gpt-5.1', settings={'thinking': 'low', 'service_tier': 'flex'})
    agent = Agent(model, model_settings={'thinking': 'high'})
    await agent.run('hi')
    await agent.run('hi', model_settings={'thinking': False, 'temperature': 0.2})
    first, second = sent.bodies
    assert (first['reasoning_effort'], first['service_tier']) == ('high', 'flex')
    assert (second['reasoning_effort'], second['temperature']) == ('none', 0.2)


@pytest.mark.parametrize(
    ('settings', 'message'),
    [
        ({'thinking': 'maximal'}, "`thinking` must be True, False or one of 'minimal', 'low', 'medium', 'high', "),
        ({'thinking': 1}, 'not 1.'),
        ({'service_tier': 'standard'}, "`service_tier` must be one of 'auto', 'default', 'flex', 'priority', not "),
    ],
)
async def test_a_value_outside_the_unified_ones_is_a_user_error(settings: dict[str, Any], message: str) -> None:
    # Refused whatever the model, even one that would ignore the setting.
    model, sent = model_for('chat', 'gpt-4o')
    with pytest.raises(UserError) as caught:
        await model.request([_prompt()], cast(ModelSettings, settings), ModelRequestParameters())
    assert message in str(caught.value)
    assert sent.bodies == []


def test_the_request_parameters_repr_shows_thinking_only_when_set() -> None:
    assert 'thinking' not in repr(ModelRequestParameters())
    assert repr(ModelRequestParameters(thinking='low')).endswith(", thinking='low')")


# --- OpenAI: Chat Completions and Responses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ('thinking', 'effort'),
    [(True, 'medium'), ('minimal', 'minimal'), ('low', 'low'), ('medium', 'medium'), ('high', 'high'),
     ('xhigh', 'xhigh'), ('max', 'xhigh')],
)  # fmt: skip
async def test_openai_reasoning_effort_for_each_level(thinking: Any, effort: str) -> None:
    # (a model whose profile pins no efforts: each level as it is named)
    chat = await send('chat', 'gpt-5.1', {'thinking': thinking})
    responses = await send('responses', 'gpt-5.1', {'thinking': thinking})
    assert chat['reasoning_effort'] == effort
    assert responses['reasoning'] == {'effort': effort}


async def test_openai_thinking_false_is_effort_none_and_sampling_settings_stay() -> None:
    chat = await send('chat', 'gpt-5.1', {'thinking': False, 'temperature': 0.3, 'top_p': 0.9})
    responses = await send('responses', 'gpt-5.1', {'thinking': False, 'temperature': 0.3})
    assert (chat['reasoning_effort'], chat['temperature'], chat['top_p']) == ('none', 0.3, 0.9)
    assert (responses['reasoning'], responses['temperature']) == ({'effort': 'none'}, 0.3)


async def test_openai_thinking_on_drops_sampling_settings() -> None:
    settings = {'thinking': 'low', 'temperature': 0.3, 'top_p': 0.9, 'max_tokens': 20}
    chat = await send('chat', 'gpt-5.1', settings)
    responses = await send('responses', 'gpt-5.1', settings)
    assert 'temperature' not in chat
    assert 'top_p' not in chat
    assert chat['max_completion_tokens'] == 20
    assert 'temperature' not in responses
    assert 'top_p' not in responses
    assert responses['max_output_tokens'] == 20


async def test_openai_reasoning_effort_setting_wins_over_thinking() -> None:
    chat = await send('chat', 'gpt-5.1', {'thinking': 'high', 'openai_reasoning_effort': 'none', 'temperature': 0.3})
    responses = await send(
        'responses',
        'gpt-5',
        {'thinking': 'high', 'openai_reasoning_effort': 'low', 'openai_reasoning_summary': 'concise'},
    )
    assert (chat['reasoning_effort'], chat['temperature']) == ('none', 0.3)
    assert responses['reasoning'] == {'effort': 'low', 'summary': 'concise'}


async def test_responses_thinking_goes_beside_the_reasoning_summary() -> None:
    body = await send('responses', 'gpt-5', {'thinking': 'minimal', 'openai_reasoning_summary': 'auto'})
    assert body['reasoning'] == {'effort': 'minimal', 'summary': 'auto'}


@pytest.mark.parametrize('tier', ['auto', 'default', 'flex', 'priority'])
async def test_openai_service_tier_is_sent_as_is(tier: str) -> None:
    chat = await send('chat', 'gpt-4o', {'service_tier': tier})
    responses = await send('responses', 'gpt-5', {'service_tier': tier})
    assert chat['service_tier'] == responses['service_tier'] == tier


async def test_openai_service_tier_setting_wins_over_the_unified_one() -> None:
    settings = {'service_tier': 'flex', 'openai_service_tier': 'priority'}
    assert (await send('chat', 'gpt-4o', settings))['service_tier'] == 'priority'
    assert (await send('responses', 'gpt-5', settings))['service_tier'] == 'priority'


async def test_a_server_that_takes_no_service_tier_is_sent_none() -> None:
    body = await send('chat', 'llama3.3-70b', {'service_tier': 'flex'}, provider_class=CerebrasProvider)
    assert 'service_tier' not in body


# --- Anthropic -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('thinking', 'budget'),
    [
        (True, 10000),
        ('minimal', 1024),
        ('low', 2048),
        ('medium', 10000),
        ('high', 16384),
        ('xhigh', 32768),
        ('max', 32768),
    ],
)
async def test_anthropic_budget_thinking_for_each_level(thinking: Any, budget: int) -> None:
    body = await send('anthropic', 'claude-sonnet-4-5', {'thinking': thinking, 'max_tokens': 40000})
    assert body['thinking'] == {'type': 'enabled', 'budget_tokens': budget}
    assert 'output_config' not in body  # Sonnet 4.5 takes no effort


@pytest.mark.parametrize(
    ('model_name', 'thinking', 'effort'),
    [
        ('claude-sonnet-4-6', 'minimal', 'low'),
        ('claude-sonnet-4-6', 'medium', 'medium'),
        ('claude-sonnet-4-6', 'high', 'high'),
        ('claude-sonnet-4-6', 'xhigh', 'max'),
        ('claude-sonnet-4-6', 'max', 'max'),
        ('claude-opus-4-7', 'xhigh', 'xhigh'),
        ('claude-opus-4-7', 'max', 'max'),
    ],
)
async def test_anthropic_adaptive_thinking_with_an_effort(model_name: str, thinking: str, effort: str) -> None:
    body = await send('anthropic', model_name, {'thinking': thinking})
    assert body['thinking'] == {'type': 'adaptive'}
    assert body['output_config'] == {'effort': effort}


async def test_anthropic_thinking_true_is_adaptive_without_an_effort() -> None:
    body = await send('anthropic', 'claude-opus-4-6', {'thinking': True})
    assert body['thinking'] == {'type': 'adaptive'}
    assert 'output_config' not in body


async def test_anthropic_budget_model_with_an_effort_gets_both() -> None:
    # Opus 4.5 thinks on a budget but also takes `output_config.effort`.
    body = await send('anthropic', 'claude-opus-4-5', {'thinking': 'low'})
    assert body['thinking'] == {'type': 'enabled', 'budget_tokens': 2048}
    assert body['output_config'] == {'effort': 'low'}


async def test_anthropic_thinking_false_sends_no_thinking() -> None:
    body = await send('anthropic', 'claude-sonnet-4-5', {'thinking': False})
    assert 'thinking' not in body
    assert 'output_config' not in body


async def test_anthropic_own_thinking_and_effort_settings_win() -> None:
    body = await send(
        'anthropic',
        'claude-sonnet-4-6',
        {'thinking': 'high', 'anthropic_thinking': {'type': 'disabled'}, 'anthropic_effort': 'low'},
    )
    assert body['thinking'] == {'type': 'disabled'}
    assert body['output_config'] == {'effort': 'low'}


async def test_anthropic_effort_beside_native_output() -> None:
    schema = {
        'type': 'object',
        'properties': {'x': {'type': 'integer'}},
        'required': ['x'],
        'additionalProperties': False,
    }
    params = ModelRequestParameters(output_mode='native', output_object=OutputObjectDefinition(json_schema=schema))
    body = await send('anthropic', 'claude-sonnet-4-6', {'thinking': 'medium'}, params)
    assert body['output_config'] == {'format': {'type': 'json_schema', 'schema': schema}, 'effort': 'medium'}


async def test_anthropic_budget_thinking_on_an_adaptive_only_model_is_a_user_error() -> None:
    model, sent = model_for('anthropic', 'claude-opus-4-7')
    settings = cast(ModelSettings, {'anthropic_thinking': {'type': 'enabled', 'budget_tokens': 2048}})
    with pytest.raises(UserError) as caught:
        await model.request([_prompt()], settings, ModelRequestParameters())
    assert str(caught.value) == (
        "'claude-opus-4-7' does not support `anthropic_thinking={'type': 'enabled', 'budget_tokens': ...}`. "
        "Use `anthropic_thinking={'type': 'adaptive'}` and `anthropic_effort=...` instead."
    )
    assert sent.bodies == []


@pytest.mark.parametrize(
    ('tier', 'sent'), [('auto', 'auto'), ('default', 'standard_only'), ('flex', None), ('priority', None)]
)
async def test_anthropic_service_tier(tier: str, sent: str | None) -> None:
    body = await send('anthropic', 'claude-sonnet-4-5', {'service_tier': tier})
    assert body.get('service_tier') == sent


async def test_anthropic_service_tier_setting_wins_over_the_unified_one() -> None:
    body = await send('anthropic', 'claude-sonnet-4-5', {'service_tier': 'default', 'anthropic_service_tier': 'auto'})
    assert body['service_tier'] == 'auto'


async def test_anthropic_unified_thinking_refuses_a_forced_tool_call() -> None:
    model, sent = model_for('anthropic', 'claude-sonnet-4-5')
    settings = cast(ModelSettings, {'thinking': True, 'tool_choice': 'required'})
    with pytest.raises(UserError) as caught:
        await model.request([_prompt()], settings, ModelRequestParameters(function_tools=[TOOL]))
    assert str(caught.value) == (
        "Anthropic does not support tool_choice='required' with thinking mode. "
        "Disable thinking or use `tool_choice='auto'`."
    )
    assert sent.bodies == []


async def test_anthropic_unified_thinking_lets_the_model_choose_the_output_tool() -> None:
    params = ModelRequestParameters(
        function_tools=[TOOL], output_tools=[OUTPUT], output_mode='tool', allow_text_output=False
    )
    thinking = await send('anthropic', 'claude-sonnet-4-5', {'thinking': 'low'}, params)
    not_thinking = await send('anthropic', 'claude-sonnet-4-5', {'thinking': False}, params)
    assert thinking['tool_choice'] == {'type': 'auto'}
    assert not_thinking['tool_choice'] == {'type': 'any'}


async def test_anthropic_disabled_thinking_setting_allows_forcing_despite_unified_thinking() -> None:
    settings = {'thinking': 'high', 'anthropic_thinking': {'type': 'disabled'}, 'tool_choice': 'required'}
    body = await send('anthropic', 'claude-sonnet-4-5', settings, ModelRequestParameters(function_tools=[TOOL]))
    assert body['tool_choice'] == {'type': 'any'}


# --- Gemini ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('thinking', 'config'),
    [
        (True, {'includeThoughts': True}),
        (False, {'thinkingBudget': 0}),
        ('minimal', {'includeThoughts': True, 'thinkingBudget': 128}),
        ('low', {'includeThoughts': True, 'thinkingBudget': 2048}),
        ('medium', {'includeThoughts': True, 'thinkingBudget': 8192}),
        ('high', {'includeThoughts': True, 'thinkingBudget': 24576}),
        ('xhigh', {'includeThoughts': True, 'thinkingBudget': 24576}),
        ('max', {'includeThoughts': True, 'thinkingBudget': 24576}),
    ],
)
async def test_gemini_2_5_thinking_budget_for_each_level(thinking: Any, config: dict[str, Any]) -> None:
    body = await send('google', 'gemini-2.5-flash', {'thinking': thinking})
    assert body['generationConfig'] == {'thinkingConfig': config}


@pytest.mark.parametrize(
    ('thinking', 'config'),
    [
        (True, {'includeThoughts': True}),
        (False, {'thinkingLevel': 'MINIMAL'}),
        ('minimal', {'includeThoughts': True, 'thinkingLevel': 'MINIMAL'}),
        ('low', {'includeThoughts': True, 'thinkingLevel': 'LOW'}),
        ('medium', {'includeThoughts': True, 'thinkingLevel': 'MEDIUM'}),
        ('high', {'includeThoughts': True, 'thinkingLevel': 'HIGH'}),
        ('xhigh', {'includeThoughts': True, 'thinkingLevel': 'HIGH'}),
        ('max', {'includeThoughts': True, 'thinkingLevel': 'HIGH'}),
    ],
)
async def test_gemini_3_thinking_level_for_each_level(thinking: Any, config: dict[str, Any]) -> None:
    body = await send('google', 'gemini-3-flash-preview', {'thinking': thinking})
    assert body['generationConfig'] == {'thinkingConfig': config}


async def test_gemini_without_thinking_is_sent_no_thinking_config() -> None:
    assert 'generationConfig' not in await send('google', 'gemini-2.0-flash', {'thinking': 'high'})


async def test_gemini_thinking_config_setting_wins() -> None:
    settings = {'thinking': 'high', 'google_thinking_config': {'thinking_budget': 512}, 'max_tokens': 10}
    body = await send('google', 'gemini-2.5-flash', settings)
    assert body['generationConfig'] == {'maxOutputTokens': 10, 'thinkingConfig': {'thinkingBudget': 512}}


@pytest.mark.parametrize(
    ('tier', 'sent'), [('auto', None), ('default', 'standard'), ('flex', 'flex'), ('priority', 'priority')]
)
async def test_gemini_service_tier(tier: str, sent: str | None) -> None:
    body = await send('google', 'gemini-2.5-flash', {'service_tier': tier})
    assert body.get('serviceTier') == sent
