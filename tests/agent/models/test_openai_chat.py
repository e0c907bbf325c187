"""OpenAIChatModel's wire format: what it sends for each kind of message and setting, and what it makes of answers."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, cast

import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelAPIError, UnexpectedModelBehavior, UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import DEFAULT_PROFILE, ModelProfile
from edgewise.agent.profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage

from ._chat import PARAMS, completion, delta, drain, json_reply, mock_model, sse, sse_reply, user

pytestmark = pytest.mark.anyio


def _s(settings: dict[str, Any]) -> ModelSettings:
    # Settings dicts with keys of several TypedDicts (and `tool_choice`), typed for the model's signature.
    return cast(ModelSettings, settings)


TOOL = ToolDefinition(
    name='get_weather',
    parameters_json_schema={'type': 'object', 'properties': {'city': {'type': 'string'}}},
    description='The weather.',
)
OUTPUT = ToolDefinition(
    name='final_result',
    parameters_json_schema={'type': 'object', 'properties': {'x': {'type': 'integer'}}},
    strict=True,
)


async def test_a_conversation_maps_to_chat_messages() -> None:
    model, recorder = mock_model(json_reply(completion()))
    history: list[ModelMessage] = [
        ModelRequest([SystemPromptPart('Be brief.'), UserPromptPart('Weather in Paris?')]),
        ModelResponse([TextPart('Let me look.'), ToolCallPart('get_weather', {'city': 'Paris'}, 'call_1')]),
        ModelRequest(
            [
                ToolReturnPart('get_weather', {'temp': 21}, 'call_1'),
                RetryPromptPart('City unknown', tool_name='get_weather', tool_call_id='call_2'),
                RetryPromptPart('Answer in French'),
            ],
            instructions='Answer nicely.',
        ),
    ]
    await model.request(history, None, PARAMS)
    assert recorder.bodies[0] == {
        'model': 'gpt-4o',
        'messages': [
            {'role': 'system', 'content': 'Be brief.'},
            {'role': 'system', 'content': 'Answer nicely.'},
            {'role': 'user', 'content': 'Weather in Paris?'},
            {
                'role': 'assistant',
                'content': 'Let me look.',
                'tool_calls': [
                    {
                        'id': 'call_1',
                        'type': 'function',
                        'function': {'name': 'get_weather', 'arguments': '{"city":"Paris"}'},
                    }
                ],
            },
            {'role': 'tool', 'tool_call_id': 'call_1', 'content': '{"temp":21}'},
            {'role': 'tool', 'tool_call_id': 'call_2', 'content': 'City unknown\n\nFix the errors and try again.'},
            {'role': 'user', 'content': 'Validation feedback:\nAnswer in French\n\nFix the errors and try again.'},
        ],
    }
    request = recorder.requests[0]
    assert request.url == 'https://api.openai.com/v1/chat/completions'
    assert request.headers['authorization'] == 'Bearer sk-test-key'


async def test_system_prompt_role_and_single_system_message_per_profile() -> None:
    profile = OpenAIModelProfile(
        openai_system_prompt_role='developer', openai_chat_supports_multiple_system_messages=False
    )
    model, recorder = mock_model(json_reply(completion()), profile=profile)
    await model.request([ModelRequest([SystemPromptPart('A'), UserPromptPart('q')], instructions='B')], None, PARAMS)
    assert recorder.bodies[0]['messages'] == [
        {'role': 'developer', 'content': 'A\n\nB'},
        {'role': 'user', 'content': 'q'},
    ]


async def test_thinking_goes_back_in_its_field_or_in_tags() -> None:
    model, recorder = mock_model(json_reply(completion()))
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('q')]),
        ModelResponse(
            [
                ThinkingPart('from the field', id='reasoning_content', provider_name='openai'),
                ThinkingPart('from elsewhere', provider_name='anthropic'),
                TextPart('a'),
            ]
        ),
        ModelRequest([UserPromptPart('q2')]),
    ]
    await model.request(history, None, PARAMS)
    assert recorder.bodies[0]['messages'][1] == {
        'role': 'assistant',
        'reasoning_content': 'from the field',
        'content': '<think>\nfrom elsewhere\n</think>\n\na',
    }
    field_model, recorder = mock_model(
        json_reply(completion()),
        profile=OpenAIModelProfile(
            openai_chat_thinking_field='reasoning', openai_chat_send_back_thinking_parts='field'
        ),
    )
    await field_model.request(history, None, PARAMS)
    assert recorder.bodies[0]['messages'][1] == {
        'role': 'assistant',
        'reasoning': 'from the field\n\nfrom elsewhere',
        'content': 'a',
    }
    none_model, recorder = mock_model(
        json_reply(completion()), profile=OpenAIModelProfile(openai_chat_send_back_thinking_parts=False)
    )
    await none_model.request(history, None, PARAMS)
    assert recorder.bodies[0]['messages'][1] == {'role': 'assistant', 'content': 'a'}


async def test_an_empty_response_in_the_history_is_left_out() -> None:
    model, recorder = mock_model(json_reply(completion()))
    await model.request(
        [ModelRequest([UserPromptPart('q')]), ModelResponse([]), ModelRequest([UserPromptPart('r')])], None, PARAMS
    )
    assert [m['role'] for m in recorder.bodies[0]['messages']] == ['user', 'user']


async def test_user_content_as_a_list_of_texts() -> None:
    model, recorder = mock_model(json_reply(completion()))
    await model.request([ModelRequest([UserPromptPart(['a', 'b'])])], None, PARAMS)
    assert recorder.bodies[0]['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 'b'}]}
    ]


async def test_unsupported_user_content_is_a_user_error() -> None:
    model, _ = mock_model(json_reply(completion()))
    with pytest.raises(UserError, match=r"Model 'gpt-4o' cannot take bytes in user prompts\."):
        await model.request([ModelRequest([UserPromptPart([b'raw'])])], None, PARAMS)  # type: ignore[list-item]


async def test_tools_strict_schemas_and_tool_choice() -> None:
    model, recorder = mock_model(json_reply(completion()))
    params = ModelRequestParameters(function_tools=[TOOL], output_tools=[OUTPUT], allow_text_output=False)
    await model.request(user('q'), _s({'parallel_tool_calls': False}), params)
    body = recorder.bodies[0]
    assert body['tools'] == [
        {
            'type': 'function',
            'function': {
                'name': 'get_weather',
                'description': 'The weather.',
                'parameters': TOOL.parameters_json_schema,
            },
        },
        {
            'type': 'function',
            'function': {
                'name': 'final_result',
                'description': '',
                'strict': True,
                'parameters': OUTPUT.parameters_json_schema,
            },
        },
    ]
    assert body['tool_choice'] == 'required'
    assert body['parallel_tool_calls'] is False


async def test_no_strict_and_no_forced_tools_where_the_profile_says_so() -> None:
    profile = OpenAIModelProfile(openai_supports_strict_tool_definition=False, supports_forced_tool_choice=False)
    model, recorder = mock_model(json_reply(completion()), profile=profile)
    params = ModelRequestParameters(output_tools=[OUTPUT], allow_text_output=False)
    await model.request(user('q'), None, params)
    assert 'strict' not in recorder.bodies[0]['tools'][0]['function']
    assert recorder.bodies[0]['tool_choice'] == 'auto'
    with_tool = ModelRequestParameters(function_tools=[TOOL], output_tools=[OUTPUT], allow_text_output=False)
    for explicit in ('required', ['get_weather']):
        with pytest.raises(UserError, match=r"tool_choice=.* is not supported by model 'gpt-4o'"):
            await model.request(user('q'), _s({'tool_choice': explicit}), with_tool)
    # Forcing that only the output needs falls back to `auto`, with just the tools the choice allows.
    await model.request(user('q'), _s({'tool_choice': 'none'}), with_tool)
    assert [t['function']['name'] for t in recorder.bodies[-1]['tools']] == ['final_result']
    assert recorder.bodies[-1]['tool_choice'] == 'auto'


@pytest.mark.parametrize(
    ('choice', 'tools', 'tool_choice'),
    [
        ('auto', ['get_weather'], 'auto'),
        ('none', ['get_weather'], 'none'),
        ('required', ['get_weather'], 'required'),
        (['get_weather'], ['get_weather'], 'required'),
    ],
)
async def test_the_tool_choice_setting(choice: Any, tools: list[str], tool_choice: Any) -> None:
    model, recorder = mock_model(json_reply(completion()))
    await model.request(user('q'), _s({'tool_choice': choice}), ModelRequestParameters(function_tools=[TOOL]))
    body = recorder.bodies[0]
    assert [t['function']['name'] for t in body.get('tools', [])] == tools
    assert body.get('tool_choice') == tool_choice


async def test_tool_choice_none_keeps_output_tools_and_unknown_names_are_an_error() -> None:
    model, recorder = mock_model(json_reply(completion()))
    params = ModelRequestParameters(function_tools=[TOOL], output_tools=[OUTPUT], allow_text_output=False)
    await model.request(user('q'), _s({'tool_choice': 'none'}), params)
    # One allowed tool is forced by name, with every tool still sent (the prompt cache holds).
    assert [t['function']['name'] for t in recorder.bodies[0]['tools']] == ['get_weather', 'final_result']
    assert recorder.bodies[0]['tool_choice'] == {'type': 'function', 'function': {'name': 'final_result'}}
    await model.request(user('q'), _s({'tool_choice': ['get_weather', 'final_result']}), params)
    assert recorder.bodies[1]['tool_choice'] == 'required'
    with pytest.raises(UserError, match='Invalid tool names in `tool_choice`'):
        await model.request(user('q'), _s({'tool_choice': ['nope']}), params)


async def test_native_and_prompted_output() -> None:
    model, recorder = mock_model(json_reply(completion('{"x": 1}')))
    schema = {'type': 'object', 'properties': {'x': {'type': 'integer'}}}
    native = ModelRequestParameters(
        output_mode='native',
        output_object=OutputObjectDefinition(json_schema=schema, name='Point', description='A point.', strict=True),
    )
    await model.request(user('q'), None, native)
    assert recorder.bodies[0]['response_format'] == {
        'type': 'json_schema',
        'json_schema': {'name': 'Point', 'schema': schema, 'description': 'A point.', 'strict': True},
    }
    await model.request(
        user('q'),
        None,
        ModelRequestParameters(output_mode='prompted', output_object=OutputObjectDefinition(json_schema=schema)),
    )
    assert recorder.bodies[1]['response_format'] == {'type': 'json_object'}


async def test_settings_map_to_the_body() -> None:
    model, recorder = mock_model(json_reply(completion()), settings={'temperature': 0.1, 'seed': 3})
    await model.request(
        user('q'),
        _s(
            {
                'max_tokens': 50,
                'top_p': 0.9,
                'stop_sequences': ['END'],
                'presence_penalty': 0.5,
                'frequency_penalty': 0.2,
                'logit_bias': {'1': 2},
                'openai_user': 'u1',
                'openai_service_tier': 'flex',
                'openai_logprobs': True,
                'openai_top_logprobs': 2,
                'openai_store': False,
                'openai_prompt_cache_key': 'k',
                'openai_reasoning_effort': 'low',
                'extra_body': {'custom': 1},
                'extra_headers': {'x-trace': 't1'},
            }
        ),
        PARAMS,
    )
    body = recorder.bodies[0]
    assert {k: v for k, v in body.items() if k not in ('model', 'messages')} == {
        'temperature': 0.1,
        'seed': 3,
        'max_completion_tokens': 50,
        'top_p': 0.9,
        'stop': ['END'],
        'presence_penalty': 0.5,
        'frequency_penalty': 0.2,
        'logit_bias': {'1': 2},
        'user': 'u1',
        'service_tier': 'flex',
        'logprobs': True,
        'top_logprobs': 2,
        'store': False,
        'prompt_cache_key': 'k',
        'reasoning_effort': 'low',
        'custom': 1,
    }
    assert recorder.requests[0].headers['x-trace'] == 't1'


async def test_reasoning_models_get_no_sampling_settings() -> None:
    model, recorder = mock_model(json_reply(completion()), model_name='o3-mini')
    await model.request(user('q'), _s({'temperature': 0.3, 'max_tokens': 9}), PARAMS)
    assert 'temperature' not in recorder.bodies[0]
    assert recorder.bodies[0]['max_completion_tokens'] == 9
    model, recorder = mock_model(json_reply(completion()), model_name='gpt-5.1')
    await model.request(user('q'), _s({'temperature': 0.3}), PARAMS)
    assert recorder.bodies[0]['temperature'] == 0.3


async def test_unsupported_settings_are_left_out() -> None:
    model, recorder = mock_model(
        json_reply(completion()),
        profile=OpenAIModelProfile(openai_unsupported_model_settings=('frequency_penalty', 'parallel_tool_calls')),
    )
    await model.request(
        user('q'),
        {'frequency_penalty': 1.0, 'parallel_tool_calls': True},
        ModelRequestParameters(function_tools=[TOOL]),
    )
    assert 'frequency_penalty' not in recorder.bodies[0]
    assert 'parallel_tool_calls' not in recorder.bodies[0]


async def test_a_response_with_text_tool_calls_usage_and_details() -> None:
    usage = {
        'prompt_tokens': 100,
        'completion_tokens': 20,
        'total_tokens': 120,
        'prompt_tokens_details': {'cached_tokens': 64, 'audio_tokens': 1},
        'completion_tokens_details': {'reasoning_tokens': 8, 'audio_tokens': 2, 'accepted_prediction_tokens': 0},
    }
    body = completion(
        'Checking.',
        finish_reason='tool_calls',
        usage=usage,
        tool_calls=[
            {'id': 'call_a', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city":"Oslo"}'}},
            {'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city":"Rome"}'}},
        ],
    )
    model, _ = mock_model(json_reply(body))
    response = await model.request(user('q'), None, PARAMS)
    assert response.parts[:2] == [
        TextPart('Checking.'),
        ToolCallPart('get_weather', '{"city":"Oslo"}', 'call_a'),
    ]
    generated = response.parts[2]
    assert isinstance(generated, ToolCallPart)
    assert generated.tool_call_id.startswith('pyd_ai_')
    assert response.usage == RequestUsage(
        input_tokens=100,
        output_tokens=20,
        cache_read_tokens=64,
        input_audio_tokens=1,
        output_audio_tokens=2,
        details={'reasoning_tokens': 8, 'audio_tokens': 2, 'accepted_prediction_tokens': 0},
    )
    assert response.finish_reason == 'tool_call'
    assert response.provider_details == {
        'finish_reason': 'tool_calls',
        'timestamp': datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc),
    }
    assert (response.model_name, response.provider_name, response.provider_response_id) == (
        'gpt-4o-2024-08-06',
        'openai',
        'chatcmpl-1',
    )


@pytest.mark.parametrize(
    ('raw', 'mapped'),
    [
        ('stop', 'stop'),
        ('length', 'length'),
        ('content_filter', 'content_filter'),
        ('function_call', 'tool_call'),
        ('weird', None),
    ],
)
async def test_finish_reasons(raw: str, mapped: str | None) -> None:
    model, _ = mock_model(json_reply(completion(finish_reason=raw)))
    response = await model.request(user('q'), None, PARAMS)
    assert response.finish_reason == mapped
    assert response.provider_details is not None
    assert response.provider_details['finish_reason'] == raw


async def test_thinking_from_fields_and_tags() -> None:
    model, _ = mock_model(json_reply(completion('<think>hmm</think>The answer', reasoning_content='deep')))
    response = await model.request(user('q'), None, PARAMS)
    assert response.parts == [
        ThinkingPart('deep', id='reasoning_content', provider_name='openai'),
        ThinkingPart('hmm', id='content', provider_name='openai'),
        TextPart('The answer'),
    ]


async def test_a_refusal_is_a_content_filter_finish() -> None:
    model, _ = mock_model(json_reply(completion(None, refusal='I cannot help with that.')))
    response = await model.request(user('q'), None, PARAMS)
    assert response.parts == []
    assert response.finish_reason == 'content_filter'
    assert response.provider_details is not None
    assert response.provider_details['refusal'] == 'I cannot help with that.'


async def test_a_response_that_is_not_a_completion_is_unexpected() -> None:
    model, _ = mock_model(json_reply({'object': 'list'}))
    with pytest.raises(UnexpectedModelBehavior, match='Invalid response from openai chat completions endpoint'):
        await model.request(user('q'), None, PARAMS)
    model, _ = mock_model(lambda _: httpx.Response(200, text='<html>'))
    with pytest.raises(UnexpectedModelBehavior, match='openai chat completions endpoint, expected JSON data'):
        await model.request(user('q'), None, PARAMS)


async def test_a_streamed_response_with_text_tools_thinking_and_usage() -> None:
    body = sse(
        delta(role='assistant', reasoning_content='Let me'),
        delta(reasoning_content=' think.'),
        delta(content='<think>'),
        delta(content='inner</think>'),
        delta(content='Sure: '),
        delta(
            tool_calls=[
                {'index': 0, 'id': 'call_1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': ''}}
            ]
        ),
        delta(
            tool_calls=[
                {'index': 1, 'id': 'call_2', 'type': 'function', 'function': {'name': 'get_', 'arguments': '{"ci'}}
            ]
        ),
        delta(tool_calls=[{'index': 0, 'function': {'arguments': '{"city":"Oslo"}'}}]),
        delta(tool_calls=[{'index': 1, 'function': {'name': 'weather', 'arguments': 'ty":"Rome"}'}}]),
        delta('tool_calls'),
        {'choices': [], 'usage': {'prompt_tokens': 30, 'completion_tokens': 12, 'total_tokens': 42}},
    )
    for seed in range(5):
        model, recorder = mock_model(sse_reply(body, seed))
        async with model.request_stream(user('q'), None, ModelRequestParameters(function_tools=[TOOL])) as stream:
            kinds = [e.event_kind async for e in stream]
        response = stream.get()
        assert response.parts == [
            ThinkingPart('Let me think.', id='reasoning_content', provider_name='openai'),
            ThinkingPart('inner', id='content', provider_name='openai'),
            TextPart('Sure: '),
            ToolCallPart('get_weather', '{"city":"Oslo"}', 'call_1'),
            ToolCallPart('get_weather', '{"city":"Rome"}', 'call_2'),
        ]
        assert kinds.count('part_start') == 5
        assert kinds.count('part_end') == 5
        assert response.usage == RequestUsage(input_tokens=30, output_tokens=12)
        assert response.finish_reason == 'tool_call'
        assert response.provider_response_id == 'chatcmpl-2'
        assert response.model_name == 'gpt-4o-mini'
        assert response.provider_details is not None
        assert response.provider_details['finish_reason'] == 'tool_calls'
        assert recorder.bodies[0]['stream'] is True
        assert recorder.bodies[0]['stream_options'] == {'include_usage': True}
        assert recorder.requests[0].headers['accept'] == 'text/event-stream'


async def test_continuous_usage_keeps_the_last_count_and_leading_whitespace_can_be_ignored() -> None:
    def usage(n: int) -> dict[str, int]:
        return {'prompt_tokens': 5, 'completion_tokens': n, 'total_tokens': 5 + n}

    body = sse(
        {**delta(content='\n\n'), 'usage': usage(1)},
        {**delta(content='Hi'), 'usage': usage(2)},
        {**delta('stop'), 'usage': usage(3)},
    )
    profile = OpenAIModelProfile(ignore_streamed_leading_whitespace=True)
    model, recorder = mock_model(sse_reply(body), profile=profile)
    async with model.request_stream(user('q'), _s({'openai_continuous_usage_stats': True}), PARAMS) as stream:
        async for _ in stream:
            pass
    assert stream.get().parts == [TextPart('Hi')]
    assert stream.get().usage == RequestUsage(input_tokens=5, output_tokens=3)
    assert recorder.bodies[0]['stream_options'] == {'include_usage': True, 'continuous_usage_stats': True}


async def test_a_streamed_refusal_and_errors_in_streams() -> None:
    model, _ = mock_model(sse_reply(sse(delta(refusal='No.'), delta('stop'))))
    async with model.request_stream(user('q'), None, PARAMS) as stream:
        async for _ in stream:
            pass
    assert stream.get().finish_reason == 'content_filter'
    assert stream.get().provider_details == {
        'refusal': 'No.',
        'timestamp': datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc),
    }

    model, _ = mock_model(sse_reply(b'data: {"error": {"message": "overloaded"}}\n\n'))
    with pytest.raises(ModelAPIError, match='Error while streaming: overloaded'):
        await drain(model, user('q'), None, PARAMS)
    model, _ = mock_model(sse_reply(b'data: {not json\n\n'))
    with pytest.raises(UnexpectedModelBehavior, match="Invalid chunk from model 'gpt-4o'"):
        await drain(model, user('q'), None, PARAMS)


async def test_an_agent_runs_tools_through_the_model() -> None:
    answers = iter(
        [
            completion(
                None,
                finish_reason='tool_calls',
                tool_calls=[
                    {
                        'id': 'call_1',
                        'type': 'function',
                        'function': {'name': 'get_weather', 'arguments': '{"city": "Oslo"}'},
                    }
                ],
            ),
            completion('It is sunny in Oslo.'),
        ]
    )
    model, recorder = mock_model(lambda _: httpx.Response(200, json=next(answers)))
    agent = Agent(model, instructions='Be helpful.')

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f'sunny in {city}'

    result = await agent.run('Weather in Oslo?')
    assert result.output == 'It is sunny in Oslo.'
    assert recorder.bodies[1]['messages'][-1] == {'role': 'tool', 'tool_call_id': 'call_1', 'content': 'sunny in Oslo'}
    assert recorder.bodies[0]['messages'][0] == {'role': 'system', 'content': 'Be helpful.'}
    assert result.usage.requests == 2


async def test_the_profiles_schema_transformer_makes_tools_strict_where_it_can() -> None:
    model, recorder = mock_model(json_reply(completion()))
    properties = {'a': {'type': 'string'}}
    tools = [
        ToolDefinition(
            name='closed', parameters_json_schema={'type': 'object', 'properties': properties, 'required': ['a']}
        ),
        ToolDefinition(name='optional', parameters_json_schema={'type': 'object', 'properties': properties}),
    ]
    params = model.customize_request_parameters(ModelRequestParameters(function_tools=tools))
    await model.request(user('q'), None, params)
    closed, optional = (t['function'] for t in recorder.bodies[0]['tools'])
    assert closed['strict'] is True
    assert closed['parameters'] == {
        'type': 'object',
        'properties': properties,
        'required': ['a'],
        'additionalProperties': False,
    }
    assert 'strict' not in optional


async def test_native_output_schema_is_made_strict_and_profiles_can_be_functions() -> None:
    schema = {'type': 'object', 'properties': {'x': {'type': 'integer'}}, 'required': ['x']}
    model, recorder = mock_model(json_reply(completion('{"x": 1}')))
    params = model.customize_request_parameters(
        ModelRequestParameters(output_mode='native', output_object=OutputObjectDefinition(json_schema=schema))
    )
    await model.request(user('q'), None, params)
    assert recorder.bodies[0]['response_format']['json_schema'] == {
        'name': 'final_result',
        'schema': {**schema, 'additionalProperties': False},
        'strict': True,
    }
    seen: list[ModelProfile] = []

    def without_transformer(resolved: ModelProfile) -> ModelProfile:
        seen.append(resolved)
        return {**resolved, 'json_schema_transformer': None}

    # A callable `profile=` gets the provider's resolved profile for the model (pydantic-ai 2.x), and its result is
    # the profile used as it is.
    bare, _ = mock_model(json_reply(completion()), profile=without_transformer)
    assert bare.profile['json_schema_transformer'] is None
    assert bare.profile is bare.profile
    assert seen == [
        {
            **DEFAULT_PROFILE,
            **openai_model_profile('gpt-4o'),
            # OpenAI's own API (not the family) takes these
            'tool_deferral_mode': 'with_tool_search',
            'tool_addition_mode': 'with_definitions',
            'openai_responses_supports_prompt_cache_diagnostics': False,
            'openai_responses_tool_choice_accepts_additional_tools': False,
            'openai_responses_supports_max_reasoning_effort': False,
        }
    ]
    # A dict `profile=` is merged over it.
    merged, _ = mock_model(json_reply(completion()), profile=ModelProfile(supports_json_schema_output=False))
    assert merged.profile['json_schema_transformer'] is OpenAIJsonSchemaTransformer
    assert merged.profile['supports_json_schema_output'] is False
    assert bare.customize_request_parameters(params) is params
    assert bare.base_url == 'https://api.openai.com/v1'
