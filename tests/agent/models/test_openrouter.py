"""`OpenRouterModel`: routing and reasoning settings, the web plugin, reasoning details both ways, its details."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from edgewise.agent.exceptions import ModelHTTPError, UserError
from edgewise.agent.messages import ModelResponse, TextPart, ThinkingPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.openrouter import OpenRouterModel
from edgewise.agent.native_tools import AdvisorTool, CodeExecutionTool, WebSearchTool
from edgewise.agent.providers.openrouter import OpenRouterProvider
from edgewise.agent.usage import RequestUsage

from ._chat import Recorder, completion, delta, drain, json_reply, sse, sse_reply, user

pytestmark = pytest.mark.anyio

PARAMS = ModelRequestParameters()
DETAILS: list[dict[str, Any]] = [
    {'type': 'reasoning.text', 'text': 'Let me think.', 'signature': 'sig-1', 'id': 'r1',
     'format': 'anthropic-claude-v1', 'index': 0},
    {'type': 'reasoning.encrypted', 'data': 'opaque', 'id': 'r2', 'format': 'anthropic-claude-v1', 'index': 1},
    {'type': 'reasoning.summary', 'summary': 'Thought briefly.', 'id': None, 'format': 'openai-responses-v1',
     'index': 2},
]  # fmt: skip


def openrouter(
    respond: Callable[[dict[str, Any]], httpx.Response], model_name: str = 'anthropic/claude-sonnet-4.5'
) -> tuple[OpenRouterModel, Recorder]:
    recorder = Recorder(respond)
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    return OpenRouterModel(model_name, provider=OpenRouterProvider(api_key='or-test', http_client=client)), recorder


def openrouter_completion(content: str = 'Hi.', **message: Any) -> dict[str, Any]:
    body = completion(content, **message)
    body['provider'] = 'Anthropic'
    body['choices'][0]['native_finish_reason'] = 'end_turn'
    body['usage'] = {
        'prompt_tokens': 20, 'completion_tokens': 4, 'total_tokens': 24, 'cost': 0.0012, 'is_byok': False,
        'cost_details': {'upstream_inference_cost': None},
        'prompt_tokens_details': {'cached_tokens': 5, 'cache_write_tokens': 7},
    }  # fmt: skip
    return body


async def test_routing_settings_go_in_the_body() -> None:
    model, recorder = openrouter(json_reply(openrouter_completion()))
    settings: Any = {
        'openrouter_models': ['openai/gpt-4o'],
        'openrouter_provider': {'order': ['anthropic'], 'allow_fallbacks': False, 'max_price': {'prompt': 1}},
        'openrouter_preset': 'fast',
        'openrouter_transforms': ['middle-out'],
        'openrouter_usage': {'include': True},
        'openrouter_reasoning': {'max_tokens': 1000, 'exclude': True},
        'temperature': 0.2,
    }
    await model.request(user('Hi'), settings, PARAMS)
    body = recorder.bodies[0]
    assert {k: v for k, v in body.items() if k != 'messages'} == {
        'model': 'anthropic/claude-sonnet-4.5',
        'models': ['openai/gpt-4o'],
        'provider': {'order': ['anthropic'], 'allow_fallbacks': False, 'max_price': {'prompt': 1}},
        'preset': 'fast',
        'transforms': ['middle-out'],
        'usage': {'include': True},
        'reasoning': {'max_tokens': 1000, 'exclude': True},
        'temperature': 0.2,
    }


@pytest.mark.parametrize(
    ('settings', 'reasoning'),
    [
        ({'thinking': True}, {'effort': 'medium', 'enabled': True}),
        ({'thinking': 'minimal'}, {'effort': 'low', 'enabled': True}),
        ({'thinking': 'xhigh'}, {'effort': 'high', 'enabled': True}),
        ({'thinking': False}, {'effort': 'none'}),
        ({'thinking': True, 'openrouter_reasoning': {'effort': 'high'}}, {'effort': 'high'}),
        ({}, None),
    ],
)
async def test_thinking_becomes_the_reasoning_object(settings: dict[str, Any], reasoning: Any) -> None:
    model, recorder = openrouter(json_reply(openrouter_completion()))
    await model.request(user('Hi'), settings, PARAMS)  # type: ignore[arg-type]
    assert recorder.bodies[0].get('reasoning') == reasoning
    assert 'reasoning_effort' not in recorder.bodies[0]


async def test_an_explicit_reasoning_effort_is_still_sent() -> None:
    model, recorder = openrouter(json_reply(openrouter_completion()), model_name='openai/o3-mini')
    settings: Any = {'openai_reasoning_effort': 'low'}
    await model.request(user('Hi'), settings, PARAMS)
    assert recorder.bodies[0]['reasoning_effort'] == 'low'
    assert 'reasoning' not in recorder.bodies[0]


async def test_web_search_turns_on_the_web_plugin_for_any_model() -> None:
    model, recorder = openrouter(json_reply(openrouter_completion()), model_name='meta-llama/llama-3.3-70b-instruct')
    params = ModelRequestParameters(native_tools=[WebSearchTool(search_context_size='high')])
    settings: Any = {'extra_body': {'plugins': [{'id': 'file-parser'}]}}
    await model.request(user('News?'), settings, params)
    body = recorder.bodies[0]
    assert body['plugins'] == [{'id': 'file-parser'}, {'id': 'web'}]
    assert body['web_search_options'] == {'search_context_size': 'high'}
    assert 'tools' not in body
    assert OpenRouterModel.supported_native_tools() == {WebSearchTool, AdvisorTool}
    with pytest.raises(UserError, match=r"\['CodeExecutionTool'\] not supported by this model"):
        await model.request(user('News?'), None, ModelRequestParameters(native_tools=[CodeExecutionTool()]))


async def test_reasoning_details_become_thinking_parts_and_go_back_as_they_came() -> None:
    reply = openrouter_completion('Hello.', reasoning='Let me think.', reasoning_details=DETAILS)
    model, recorder = openrouter(json_reply(reply))
    response = await model.request(user('Hi'), None, PARAMS)
    assert response.parts == [
        ThinkingPart(
            'Let me think.', id='r1', signature='sig-1', provider_name='openrouter',
            provider_details={'format': 'anthropic-claude-v1', 'index': 0, 'type': 'reasoning.text'},
        ),
        ThinkingPart(
            '', id='r2', signature='opaque', provider_name='openrouter',
            provider_details={'format': 'anthropic-claude-v1', 'index': 1, 'type': 'reasoning.encrypted'},
        ),
        ThinkingPart(
            'Thought briefly.', provider_name='openrouter',
            provider_details={'format': 'openai-responses-v1', 'index': 2, 'type': 'reasoning.summary'},
        ),
        TextPart('Hello.'),
    ]  # fmt: skip
    await model.request([*user('Hi'), response, *user('Again')], None, PARAMS)
    assistant = recorder.bodies[1]['messages'][1]
    assert assistant == {'role': 'assistant', 'content': 'Hello.', 'reasoning_details': DETAILS}


async def test_reasoning_from_elsewhere_goes_back_in_the_reasoning_field() -> None:
    model, recorder = openrouter(json_reply(openrouter_completion()))
    history = [*user('Hi'), ModelResponse(parts=[ThinkingPart('hmm', provider_name='openai'), TextPart('Hi.')])]
    await model.request([*history, *user('Again')], None, PARAMS)
    assert recorder.bodies[0]['messages'][1] == {'role': 'assistant', 'reasoning': 'hmm', 'content': 'Hi.'}


async def test_response_details_name_the_downstream_provider_and_the_cost() -> None:
    model, _ = openrouter(json_reply(openrouter_completion()))
    response = await model.request(user('Hi'), None, PARAMS)
    assert response.provider_details == {
        'finish_reason': 'end_turn',
        'timestamp': response.provider_details['timestamp'],  # type: ignore[index]
        'downstream_provider': 'Anthropic',
        'cost': 0.0012,
        'upstream_inference_cost': None,
        'is_byok': False,
    }
    assert response.finish_reason == 'stop'
    assert response.usage.cache_read_tokens == 5
    assert response.usage.cache_write_tokens == 7


async def test_an_error_finish_and_an_error_body() -> None:
    model, _ = openrouter(json_reply(openrouter_completion(finish_reason='error')))
    assert (await model.request(user('Hi'), None, PARAMS)).finish_reason == 'error'
    failing, _ = openrouter(json_reply({'error': {'code': 502, 'message': 'upstream failed'}, 'model': 'x/y'}))
    with pytest.raises(ModelHTTPError) as caught:
        await failing.request(user('Hi'), None, PARAMS)
    assert (caught.value.status_code, caught.value.model_name, caught.value.body) == (502, 'x/y', 'upstream failed')


async def test_streamed_reasoning_details_and_details() -> None:
    text, encrypted = DETAILS[0], DETAILS[1]
    first = {**text, 'text': 'Let me ', 'signature': None}
    chunks = sse(
        delta(role='assistant', reasoning='Let me ', reasoning_details=[first]),
        delta(reasoning='think.', reasoning_details=[{**text, 'text': 'think.'}]),
        delta(reasoning_details=[encrypted]),
        delta(content='Hello.'),
        {**delta('stop'), 'provider': 'Anthropic', 'choices': [
            {'index': 0, 'delta': {}, 'finish_reason': 'stop', 'native_finish_reason': 'end_turn'}
        ], 'usage': {'prompt_tokens': 20, 'completion_tokens': 4, 'cost': 0.002,
                     'prompt_tokens_details': {'cache_write_tokens': 3}}},
    )  # fmt: skip
    model, _ = openrouter(sse_reply(chunks, seed=7))
    response = (await drain(model, user('Hi'), None, PARAMS)).get()
    assert response.parts == [
        ThinkingPart(
            'Let me think.', id='r1', signature='sig-1', provider_name='openrouter',
            provider_details={'format': 'anthropic-claude-v1', 'index': 0, 'type': 'reasoning.text'},
        ),
        ThinkingPart(
            '', id='r2', signature='opaque', provider_name='openrouter',
            provider_details={'format': 'anthropic-claude-v1', 'index': 1, 'type': 'reasoning.encrypted'},
        ),
        TextPart('Hello.'),
    ]  # fmt: skip
    details = response.provider_details or {}
    assert (details['downstream_provider'], details['finish_reason'], details['cost']) == (
        'Anthropic',
        'end_turn',
        0.002,
    )
    assert response.usage == RequestUsage(input_tokens=20, output_tokens=4, cache_write_tokens=3)
