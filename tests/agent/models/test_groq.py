"""`GroqModel`: reasoning formats, Groq-only settings, and the searches of the `compound-` models, both ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError, UserError
from edgewise.agent.messages import (
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.groq import GroqModel
from edgewise.agent.models.openrouter import OpenRouterModel
from edgewise.agent.native_tools import CodeExecutionTool, WebSearchTool
from edgewise.agent.profiles.groq import groq_model_profile
from edgewise.agent.providers.groq import GroqProvider
from edgewise.agent.usage import RequestUsage

from ._chat import Recorder, completion, delta, drain, json_reply, sse, sse_reply, user

pytestmark = pytest.mark.anyio

SEARCH_RESULTS = {
    'results': [{'title': 'Weather', 'url': 'https://example.com/w', 'content': 'Sunny, 21C', 'score': 0.9}],
    'images': [],
}
SEARCH = {'index': 0, 'type': 'search', 'arguments': '{"query": "weather in Utrecht"}'}


def groq(
    respond: Callable[[dict[str, Any]], httpx.Response], model_name: str = 'compound-beta', **kwargs: Any
) -> tuple[GroqModel, Recorder]:
    recorder = Recorder(respond)
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = GroqProvider(api_key='gsk-test', http_client=client)
    return GroqModel(model_name, provider=provider, **kwargs), recorder


def search_params(*tools: Any) -> ModelRequestParameters:
    return ModelRequestParameters(native_tools=list(tools) or [WebSearchTool()])


def test_groq_names_resolve_to_groq_and_openrouter_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GROQ_API_KEY', 'gsk-test')
    monkeypatch.setenv('OPENROUTER_API_KEY', 'or-test')
    model = infer_model('groq:llama-3.3-70b-versatile')
    assert type(model) is GroqModel
    assert (model.system, model.model_name) == ('groq', 'llama-3.3-70b-versatile')
    assert model.base_url == 'https://api.groq.com/openai/v1'
    assert type(infer_model('openrouter:openai/gpt-4o')) is OpenRouterModel
    assert GroqModel.supported_native_tools() == {WebSearchTool}


async def test_compound_model_searches_become_native_call_and_return_parts() -> None:
    message: dict[str, Any] = {
        'executed_tools': [{**SEARCH, 'output': 'Title: Weather...', 'search_results': SEARCH_RESULTS}],
        'reasoning': 'I should look it up.',
    }
    model, recorder = groq(json_reply(completion('Sunny.', **message)))
    response = await model.request(user('Weather?'), None, search_params())
    # Nothing is added to the request: compound models search on their own.
    assert 'tools' not in recorder.bodies[0]
    assert 'web_search_options' not in recorder.bodies[0]
    thinking, call, result, text = response.parts
    assert thinking == ThinkingPart('I should look it up.', id='reasoning', provider_name='groq')
    assert isinstance(call, NativeToolCallPart)
    assert (call.tool_name, call.args, call.provider_name) == ('web_search', {'query': 'weather in Utrecht'}, 'groq')
    assert isinstance(result, NativeToolReturnPart)
    assert (result.tool_name, result.content, result.provider_name) == ('web_search', SEARCH_RESULTS, 'groq')
    assert text == TextPart('Sunny.')
    assert isinstance(call, NativeToolCallPart)
    assert isinstance(result, NativeToolReturnPart)
    assert call.tool_call_id == result.tool_call_id


async def test_a_search_without_results_returns_its_text_output_and_other_kinds_are_left_out() -> None:
    tools = [
        {**SEARCH, 'output': 'nothing found', 'search_results': {'results': [], 'images': []}},
        {'index': 1, 'type': 'python', 'arguments': '{"code": "1+1"}', 'output': '2'},
    ]
    model, _ = groq(json_reply(completion('No luck.', executed_tools=tools)))
    response = await model.request(user('Weather?'), None, search_params())
    assert [p.part_kind for p in response.parts] == ['builtin-tool-call', 'builtin-tool-return', 'text']
    assert response.parts[1].content == 'nothing found'  # type: ignore[union-attr]


async def test_native_parts_are_not_sent_back_to_groq() -> None:
    model, recorder = groq(json_reply(completion('Ok.')))
    history = [
        *user('Weather?'),
        ModelResponse(
            parts=[
                NativeToolCallPart('web_search', {'query': 'q'}, 'c1', provider_name='groq'),
                NativeToolReturnPart('web_search', 'r', 'c1', provider_name='groq'),
                TextPart('Sunny.'),
            ]
        ),
        *user('Thanks'),
    ]
    await model.request(history, None, search_params())
    assert recorder.bodies[0]['messages'][1] == {'role': 'assistant', 'content': 'Sunny.'}


async def test_web_search_needs_a_compound_model_unless_optional() -> None:
    model, recorder = groq(json_reply(completion('Hi.')), model_name='llama-3.3-70b-versatile')
    with pytest.raises(UserError, match=r"Native tool\(s\) \['WebSearchTool'\] not supported by this model"):
        await model.request(user('Hi'), None, search_params())
    with pytest.raises(UserError, match=r"\['CodeExecutionTool'\] not supported"):
        await groq(json_reply(completion('Hi.')))[0].request(user('Hi'), None, search_params(CodeExecutionTool()))
    response = await model.request(user('Hi'), None, search_params(WebSearchTool(optional=True)))
    assert response.text == 'Hi.'
    assert len(recorder.bodies) == 1


@pytest.mark.parametrize(
    ('settings', 'expected'),
    [
        ({'thinking': True}, 'parsed'),
        ({'thinking': 'high'}, 'parsed'),
        ({'thinking': False}, 'hidden'),
        ({'thinking': True, 'groq_reasoning_format': 'raw'}, 'raw'),
        ({'groq_reasoning_format': 'hidden'}, 'hidden'),
        ({}, None),
    ],
)
async def test_thinking_becomes_reasoning_format(settings: dict[str, Any], expected: str | None) -> None:
    model, recorder = groq(
        json_reply(completion('Hi.')), model_name='qwen/qwen3-32b', profile=groq_model_profile('qwen/qwen3-32b')
    )
    await model.request(user('Hi'), settings, ModelRequestParameters())  # type: ignore[arg-type]
    body = recorder.bodies[0]
    assert body.get('reasoning_format') == expected
    assert 'reasoning_effort' not in body


async def test_openai_settings_and_service_tier_are_not_sent_to_groq() -> None:
    model, recorder = groq(json_reply(completion('Hi.')), model_name='llama-3.3-70b-versatile')
    settings: Any = {
        'openai_reasoning_effort': 'low', 'openai_user': 'u1', 'service_tier': 'flex', 'temperature': 0.5,
        'max_tokens': 20, 'extra_body': {'citation_options': 'enabled'},
    }  # fmt: skip
    await model.request(user('Hi'), settings, ModelRequestParameters())
    body = recorder.bodies[0]
    assert {k: v for k, v in body.items() if k not in ('messages', 'model')} == {
        'temperature': 0.5,
        'max_completion_tokens': 20,
        'citation_options': 'enabled',
    }


async def test_streamed_search_pairs_its_call_and_return_and_reads_groq_usage() -> None:
    chunks = sse(
        delta(role='assistant', content=''),
        delta(executed_tools=[SEARCH]),
        delta(executed_tools=[{**SEARCH, 'output': 'Title: Weather...', 'search_results': SEARCH_RESULTS}]),
        delta(content='Sunny'),
        delta(content='.'),
        {**delta('stop'), 'x_groq': {'id': 'req_1', 'usage': {'prompt_tokens': 30, 'completion_tokens': 5}}},
    )
    model, recorder = groq(sse_reply(chunks, seed=3))
    stream = await drain(model, user('Weather?'), None, search_params())
    assert recorder.bodies[0]['stream'] is True
    response = stream.get()
    call, result, text = response.parts
    assert isinstance(call, NativeToolCallPart)
    assert isinstance(result, NativeToolReturnPart)
    assert (call.tool_name, call.args, call.provider_name) == ('web_search', {'query': 'weather in Utrecht'}, 'groq')
    assert (result.tool_name, result.content, result.provider_name) == ('web_search', SEARCH_RESULTS, 'groq')
    assert result.tool_call_id == call.tool_call_id
    assert text == TextPart('Sunny.')
    assert response.usage == RequestUsage(input_tokens=30, output_tokens=5)
    assert response.finish_reason == 'stop'


async def test_two_streamed_searches_each_pair_with_their_own_call() -> None:
    second = {'index': 1, 'type': 'search', 'arguments': '{"query": "rain"}'}
    chunks = sse(
        delta(executed_tools=[SEARCH]),
        delta(executed_tools=[{**SEARCH, 'output': 'first'}]),
        delta(executed_tools=[second]),
        delta(executed_tools=[{**second, 'output': 'second'}]),
        delta('stop', content='Done.'),
    )
    model, _ = groq(sse_reply(chunks))
    parts = (await drain(model, user('Weather?'), None, search_params())).get().parts
    assert [p.part_kind for p in parts] == [
        'builtin-tool-call', 'builtin-tool-return', 'builtin-tool-call', 'builtin-tool-return', 'text'
    ]  # fmt: skip
    ids = [p.tool_call_id for p in parts if isinstance(p, NativeToolCallPart | NativeToolReturnPart)]
    assert ids[0] == ids[1] != ids[2] == ids[3]
    assert [p.content for p in parts if isinstance(p, NativeToolReturnPart)] == ['first', 'second']


def tool_use_failed(generated: str) -> dict[str, Any]:
    return {
        'error': {
            'message': 'Tool call validation failed: parameters for tool weather did not match schema',
            'type': 'invalid_request_error',
            'code': 'tool_use_failed',
            'failed_generation': generated,
        }
    }


@pytest.mark.parametrize(
    ('generated', 'parts'),
    [
        ('{"name": "weather", "arguments": {"town": "Utrecht"}}', [('tool-call', 'weather', {'town': 'Utrecht'})]),
        ('I will not call it.', [('text', 'I will not call it.', None)]),
        ('', []),
    ],
)
async def test_a_refused_tool_call_comes_back_as_an_error_response(generated: str, parts: list[Any]) -> None:
    model, recorder = groq(json_reply(tool_use_failed(generated), status=400), model_name='llama-3.3-70b-versatile')
    response = await model.request(user('Weather?'), None, ModelRequestParameters())
    assert len(recorder.bodies) == 1  # a 400 is not retried
    assert response.finish_reason == 'error'
    assert response.provider_name == 'groq'
    assert response.model_name == 'llama-3.3-70b-versatile'
    seen = [
        (p.part_kind, p.tool_name, p.args) if isinstance(p, ToolCallPart) else (p.part_kind, p.content, None)
        for p in response.parts
        if isinstance(p, ToolCallPart | TextPart)
    ]
    assert seen == parts
    assert len(response.parts) == len(parts)


async def test_other_errors_are_raised() -> None:
    other = {'error': {'message': 'bad', 'type': 'invalid_request_error', 'code': 'invalid_value'}}
    model, _ = groq(json_reply(other, status=400), model_name='llama-3.3-70b-versatile')
    with pytest.raises(ModelHTTPError) as caught:
        await model.request(user('Weather?'), None, ModelRequestParameters())
    assert caught.value.status_code == 400


async def test_a_refused_tool_call_in_a_stream_ends_it_with_that_call() -> None:
    generated = '{"name": "weather", "arguments": {"town": "Utrecht"}}'
    chunks = sse(delta(role='assistant', content='Let me check.'), tool_use_failed(generated), delta(content='late'))
    model, _ = groq(sse_reply(chunks, seed=5), model_name='llama-3.3-70b-versatile')
    parts = (await drain(model, user('Weather?'), None, ModelRequestParameters())).get().parts
    text, call = parts
    assert text == TextPart('Let me check.')
    assert isinstance(call, ToolCallPart)
    assert (call.tool_name, call.args) == ('weather', {'town': 'Utrecht'})


async def test_refused_text_in_a_stream_is_a_text_part_of_its_own() -> None:
    chunks = sse(tool_use_failed('Sorry, no.'), done=False)
    model, _ = groq(sse_reply(chunks), model_name='llama-3.3-70b-versatile')
    parts = (await drain(model, user('Weather?'), None, ModelRequestParameters())).get().parts
    assert parts == [TextPart('Sorry, no.')]


async def test_another_error_in_a_stream_is_raised() -> None:
    other = {'error': {'message': 'overloaded', 'type': 'server_error', 'code': 'tool_use_failed_not'}}
    model, _ = groq(sse_reply(sse(delta(content='Hi'), other)), model_name='llama-3.3-70b-versatile')
    with pytest.raises(ModelAPIError, match='overloaded'):
        await drain(model, user('Weather?'), None, ModelRequestParameters())


async def test_an_agent_asks_the_model_to_fix_a_refused_tool_call() -> None:
    from edgewise.agent import Agent
    from edgewise.agent.messages import RetryPromptPart

    replies = iter(
        [
            httpx.Response(400, json=tool_use_failed('{"name": "weather", "arguments": {"city": "Utrecht"}}')),
            httpx.Response(200, json=completion('Sunny.')),
        ]
    )
    model, recorder = groq(lambda _: next(replies), model_name='llama-3.3-70b-versatile')
    agent = Agent(model)

    @agent.tool_plain
    def weather(town: str) -> str:
        return f'Sunny in {town}'  # pragma: no cover - the model never gets its arguments right here

    result = await agent.run('Weather?')
    assert result.output == 'Sunny.'
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.tool_name == 'weather'
    assert recorder.bodies[1]['messages'][-1]['role'] == 'tool'
