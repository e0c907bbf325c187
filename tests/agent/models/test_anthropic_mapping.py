"""The Anthropic Messages API mapping: request bodies (validated by the `anthropic` SDK's types), responses, streams."""

from __future__ import annotations

from typing import Any

import pytest
from inline_snapshot import snapshot

from edgewise.agent import (
    FinalResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    RequestUsage,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from edgewise.agent.exceptions import ModelHTTPError, ModelOverloadedError
from edgewise.agent.messages import (
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import (
    AnthropicModelSettings,
    AnthropicStreamedResponse,
    anthropic_model_response,
    anthropic_request_body,
)
from edgewise.agent.models._mapping import customize_request_parameters
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles.anthropic import anthropic_model_profile

from ._helpers import aiter_events, conversation, validate_anthropic_body, weather_tool

PROFILE = anthropic_model_profile('claude-sonnet-4-5')
assert PROFILE is not None


def body(
    messages: list[Any] | None = None,
    settings: AnthropicModelSettings | None = None,
    params: ModelRequestParameters | None = None,
    model: str = 'claude-sonnet-4-5',
    **kwargs: Any,
) -> dict[str, Any]:
    profile = anthropic_model_profile(model)
    assert profile is not None
    params = customize_request_parameters(params or ModelRequestParameters(), profile)
    built = anthropic_request_body(
        model, messages or [ModelRequest.user_text_prompt('hi')], settings, params, profile, **kwargs
    )
    validate_anthropic_body(built)
    return built


def test_conversation_maps_every_part_kind() -> None:
    assert body(conversation('anthropic')) == snapshot(
        {
            'model': 'claude-sonnet-4-5',
            'max_tokens': 4096,
            'messages': [
                {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather in Paris?'}]},
                {
                    'role': 'user',
                    'content': [
                        {
                            'type': 'text',
                            'text': """\
<assistant_thinking>
Foreign thought.
</assistant_thinking>\
""",
                        }
                    ],
                },
                {
                    'role': 'assistant',
                    'content': [
                        {'type': 'thinking', 'thinking': 'Need the tool.', 'signature': 'c2lnLTE='},
                        {'type': 'text', 'text': 'Checking.'},
                        {'type': 'tool_use', 'id': 'call_1', 'name': 'weather', 'input': {'city': 'Paris'}},
                    ],
                },
                {
                    'role': 'user',
                    'content': [
                        {
                            'type': 'tool_result',
                            'tool_use_id': 'call_1',
                            'content': [{'type': 'text', 'text': '{"temp":21}'}],
                            'is_error': False,
                        }
                    ],
                },
                {
                    'role': 'assistant',
                    'content': [{'type': 'tool_use', 'id': 'call_2', 'name': 'weather', 'input': {'town': 1}}],
                },
                {
                    'role': 'user',
                    'content': [
                        {
                            'type': 'tool_result',
                            'tool_use_id': 'call_2',
                            'content': """\
Unknown argument town

Fix the errors and try again.\
""",
                            'is_error': True,
                        }
                    ],
                },
                {'role': 'assistant', 'content': [{'type': 'text', 'text': 'Sunny'}]},
                {
                    'role': 'user',
                    'content': [
                        {
                            'type': 'text',
                            'text': """\
Validation feedback:
Answer in French

Fix the errors and try again.\
""",
                        },
                        {'type': 'text', 'text': 'Merci'},
                        {'type': 'text', 'text': 'Vite'},
                    ],
                },
            ],
            'system': """\
Answer kindly.

Be brief.\
""",
        }
    )


def test_tool_output_forces_a_tool_unless_thinking() -> None:
    params = ModelRequestParameters(function_tools=[weather_tool()], allow_text_output=False, output_mode='tool')
    assert body(params=params, settings={'parallel_tool_calls': False})['tool_choice'] == snapshot(
        {'type': 'any', 'disable_parallel_tool_use': True}
    )
    thinking: AnthropicModelSettings = {'anthropic_thinking': {'type': 'enabled', 'budget_tokens': 1024}}
    assert body(params=params, settings=thinking)['tool_choice'] == snapshot({'type': 'auto'})
    assert body(params=params, model='claude-fable-5')['tool_choice'] == snapshot({'type': 'auto'})


def test_tools_strict_and_cached() -> None:
    params = ModelRequestParameters(function_tools=[weather_tool(), weather_tool(name='other', description=None)])
    built = body(params=params, settings={'anthropic_cache_tool_definitions': '1h'})
    assert built['tools'] == snapshot(
        [
            {
                'name': 'weather',
                'input_schema': {
                    'type': 'object',
                    'properties': {'city': {'type': 'string'}},
                    'required': ['city'],
                    'additionalProperties': False,
                },
                'description': 'The weather in a city.',
            },
            {
                'name': 'other',
                'input_schema': {
                    'type': 'object',
                    'properties': {'city': {'type': 'string'}},
                    'required': ['city'],
                    'additionalProperties': False,
                },
                'cache_control': {'type': 'ephemeral', 'ttl': '1h'},
            },
        ]
    )
    assert built['tool_choice'] == {'type': 'auto'}
    # Strict tools only where the model takes structured output.
    assert 'strict' not in body(params=params, model='claude-3-5-haiku-latest')['tools'][0]


def test_settings_map_to_the_body() -> None:
    settings: AnthropicModelSettings = {
        'max_tokens': 100,
        'temperature': 0.5,
        'top_p': 0.9,
        'stop_sequences': ['END'],
        'anthropic_metadata': {'user_id': 'u1'},
        'anthropic_effort': 'low',
        'anthropic_service_tier': 'auto',
        'anthropic_cache_instructions': True,
        'anthropic_cache_messages': True,
        'extra_body': {'top_k': 3},
    }
    messages = [ModelRequest.user_text_prompt('hi', instructions='Be kind.')]
    assert body(messages, settings, stream=True) == snapshot(
        {
            'model': 'claude-sonnet-4-5',
            'max_tokens': 100,
            'messages': [
                {'role': 'user', 'content': [{'type': 'text', 'text': 'hi', 'cache_control': {'type': 'ephemeral'}}]}
            ],
            'system': [{'type': 'text', 'text': 'Be kind.', 'cache_control': {'type': 'ephemeral'}}],
            'stream': True,
            'temperature': 0.5,
            'top_p': 0.9,
            'stop_sequences': ['END'],
            'metadata': {'user_id': 'u1'},
            'service_tier': 'auto',
            'output_config': {'effort': 'low'},
            'top_k': 3,
        }
    )


def test_latest_models_get_no_sampling_settings() -> None:
    built = body(settings={'temperature': 0.5, 'top_p': 0.5}, model='claude-opus-4-7')
    assert not {'temperature', 'top_p'} & set(built)


def test_native_output_is_an_output_format() -> None:
    schema = {'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']}
    params = ModelRequestParameters(output_mode='native', output_object=OutputObjectDefinition(json_schema=schema))
    assert body(params=params)['output_config'] == snapshot(
        {
            'format': {
                'type': 'json_schema',
                'schema': {'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']},
            }
        }
    )


def test_redacted_thinking_goes_back_as_is() -> None:
    messages = [
        ModelRequest.user_text_prompt('hi'),
        ModelResponse([ThinkingPart('', id='redacted_thinking', signature='opaque', provider_name='anthropic')]),
        ModelRequest.user_text_prompt('again'),
    ]
    assert body(messages)['messages'][1] == snapshot(
        {'role': 'assistant', 'content': [{'type': 'redacted_thinking', 'data': 'opaque'}]}
    )


def test_response_body_maps_to_a_model_response() -> None:
    response = anthropic_model_response(
        {
            'id': 'msg_1',
            'type': 'message',
            'role': 'assistant',
            'model': 'claude-sonnet-4-5-20250929',
            'content': [
                {'type': 'thinking', 'thinking': 'Hmm.', 'signature': 'sig'},
                {'type': 'redacted_thinking', 'data': 'opaque'},
                {'type': 'text', 'text': 'Let me check.'},
                {'type': 'tool_use', 'id': 'toolu_1', 'name': 'weather', 'input': {'city': 'Paris'}},
                {'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': 'web_search', 'input': {}},
            ],
            'stop_reason': 'tool_use',
            'usage': {
                'input_tokens': 10,
                'cache_creation_input_tokens': 5,
                'cache_read_input_tokens': 20,
                'output_tokens': 7,
                'cache_creation': {'ephemeral_5m_input_tokens': 5},
            },
        }
    )
    assert response.parts == snapshot(
        [
            ThinkingPart(content='Hmm.', signature='sig', provider_name='anthropic'),
            ThinkingPart(content='', id='redacted_thinking', signature='opaque', provider_name='anthropic'),
            TextPart(content='Let me check.'),
            ToolCallPart(tool_name='weather', args={'city': 'Paris'}, tool_call_id='toolu_1'),
            NativeToolCallPart(tool_name='web_search', tool_call_id='srvtoolu_1', provider_name='anthropic'),
        ]
    )
    assert response.usage == snapshot(
        RequestUsage(
            input_tokens=35,
            cache_write_tokens=5,
            cache_read_tokens=20,
            output_tokens=7,
            details={
                'input_tokens': 10,
                'cache_creation_input_tokens': 5,
                'cache_read_input_tokens': 20,
                'output_tokens': 7,
            },
        )
    )
    assert (response.finish_reason, response.provider_details, response.provider_response_id, response.model_name) == (
        snapshot(('tool_call', {'finish_reason': 'tool_use'}, 'msg_1', 'claude-sonnet-4-5-20250929'))
    )


@pytest.mark.parametrize(
    ('raw', 'mapped'),
    [
        ('end_turn', 'stop'),
        ('max_tokens', 'length'),
        ('stop_sequence', 'stop'),
        ('tool_use', 'tool_call'),
        ('refusal', 'content_filter'),
        ('pause_turn', 'stop'),
        ('something_new', None),
    ],
)
def test_finish_reasons(raw: str, mapped: str | None) -> None:
    response = anthropic_model_response({'id': 'm', 'content': [], 'stop_reason': raw, 'usage': {}})
    assert (response.finish_reason, response.provider_details) == (mapped, {'finish_reason': raw})


STREAM: list[dict[str, Any]] = [
    {
        'type': 'message_start',
        'message': {
            'id': 'msg_s',
            'model': 'claude-sonnet-4-5',
            'content': [],
            'usage': {'input_tokens': 12, 'output_tokens': 1},
        },
    },
    {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'thinking', 'thinking': '', 'signature': ''}},
    {'type': 'ping'},
    {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'thinking_delta', 'thinking': 'Think'}},
    {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'signature_delta', 'signature': 'sig'}},
    {'type': 'content_block_stop', 'index': 0},
    {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'text', 'text': ''}},
    {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'text_delta', 'text': 'Hel'}},
    {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'text_delta', 'text': 'lo'}},
    {'type': 'content_block_stop', 'index': 1},
    {
        'type': 'content_block_start',
        'index': 2,
        'content_block': {'type': 'tool_use', 'id': 'toolu_9', 'name': 'weather', 'input': {}},
    },
    {'type': 'content_block_delta', 'index': 2, 'delta': {'type': 'input_json_delta', 'partial_json': '{"city": '}},
    {'type': 'content_block_delta', 'index': 2, 'delta': {'type': 'input_json_delta', 'partial_json': '"Paris"}'}},
    {'type': 'content_block_stop', 'index': 2},
    {'type': 'content_block_start', 'index': 3, 'content_block': {'type': 'redacted_thinking', 'data': 'opaque'}},
    {
        'type': 'message_delta',
        'delta': {'stop_reason': 'tool_use', 'stop_sequence': None},
        'usage': {'output_tokens': 30, 'cache_read_input_tokens': 4},
    },
    {'type': 'message_stop'},
]


@pytest.mark.anyio
async def test_stream_maps_events_and_ends_with_the_whole_response() -> None:
    streamed = AnthropicStreamedResponse(
        ModelRequestParameters(), aiter_events(STREAM), model_name='claude', provider_name='anthropic'
    )
    events = [event async for event in streamed]
    assert events == snapshot(
        [
            PartStartEvent(index=0, part=ThinkingPart(content='', signature='')),
            PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta='Think')),
            PartDeltaEvent(index=0, delta=ThinkingPartDelta(signature_delta='sig')),
            PartEndEvent(index=0, part=ThinkingPart(content='Think', signature='sig'), next_part_kind='text'),
            PartStartEvent(index=1, part=TextPart(content='Hel'), previous_part_kind='thinking'),
            FinalResultEvent(tool_name=None, tool_call_id=None),
            PartDeltaEvent(index=1, delta=TextPartDelta(content_delta='lo')),
            PartEndEvent(index=1, part=TextPart(content='Hello'), next_part_kind='tool-call'),
            PartStartEvent(
                index=2, part=ToolCallPart(tool_name='weather', tool_call_id='toolu_9'), previous_part_kind='text'
            ),
            PartDeltaEvent(index=2, delta=ToolCallPartDelta(args_delta='{"city": ', tool_call_id='toolu_9')),
            PartDeltaEvent(index=2, delta=ToolCallPartDelta(args_delta='"Paris"}', tool_call_id='toolu_9')),
            PartEndEvent(
                index=2,
                part=ToolCallPart(tool_name='weather', args='{"city": "Paris"}', tool_call_id='toolu_9'),
                next_part_kind='thinking',
            ),
            PartStartEvent(index=3, part=ThinkingPart(content='', signature='opaque'), previous_part_kind='tool-call'),
            PartEndEvent(index=3, part=ThinkingPart(content='', signature='opaque')),
        ]
    )
    response = streamed.get()
    assert response.parts == snapshot(
        [
            ThinkingPart(content='Think', signature='sig', provider_name='anthropic'),
            TextPart(content='Hello'),
            ToolCallPart(tool_name='weather', args='{"city": "Paris"}', tool_call_id='toolu_9'),
            ThinkingPart(content='', id='redacted_thinking', signature='opaque', provider_name='anthropic'),
        ]
    )
    assert (response.usage, response.finish_reason, response.provider_details, response.model_name) == snapshot(
        (
            RequestUsage(
                input_tokens=16,
                cache_read_tokens=4,
                output_tokens=30,
                details={'input_tokens': 12, 'output_tokens': 30, 'cache_read_input_tokens': 4},
            ),
            'tool_call',
            {'finish_reason': 'tool_use'},
            'claude-sonnet-4-5',
        )
    )
    assert response.provider_response_id == 'msg_s'


@pytest.mark.anyio
async def test_stream_error_event_raises() -> None:
    events = [STREAM[0], {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}]
    streamed = AnthropicStreamedResponse(
        ModelRequestParameters(), aiter_events(events), model_name='claude', provider_name='anthropic'
    )
    # The status `overloaded_error` has outside a stream (pydantic-ai 2.68), and its category.
    with pytest.raises(ModelOverloadedError) as caught:
        async for _ in streamed:
            pass
    assert isinstance(caught.value, ModelHTTPError)
    assert (caught.value.status_code, caught.value.in_stream, caught.value.provider_error_type) == (
        529,
        True,
        'overloaded_error',
    )


def test_parts_of_the_stream_match_a_plain_response() -> None:
    # The same content, unstreamed: thinking keeps its signature and provider, the call its id.
    response = anthropic_model_response(
        {
            'id': 'm',
            'content': [
                {'type': 'thinking', 'thinking': 'Think', 'signature': 'sig'},
                {'type': 'text', 'text': 'Hello'},
                {'type': 'tool_use', 'id': 'toolu_9', 'name': 'weather', 'input': {'city': 'Paris'}},
            ],
        }
    )
    assert response.parts == [
        ThinkingPart('Think', signature='sig', provider_name='anthropic'),
        TextPart('Hello'),
        ToolCallPart('weather', {'city': 'Paris'}, 'toolu_9'),
    ]
